"""Records: ``records.jsonl(.gz)`` → action ``decisions`` (and, via votes, mechanism rows).

Line formats (docs/protocol/reference-data.md#layout): NoMechanism — the moves of one match; Repetition — a list of rounds of
moves; Mediation/Contracting — ``[{votes, selected_…, moves}]`` or a bare ``{…}``; reputation —
one line listing every round's matches. Lines are checked against ``matchup_payoffs.json``.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from coopeval.studies.coopeval.reference.importer.config import ExperimentConfig
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.fields import POINT_TOL
from coopeval.studies.coopeval.reference.importer.flags import (
    ImportFlag,
    records_inconsistent_flag,
    records_missing_flag,
)
from coopeval.studies.coopeval.reference.importer.layout import REPUTATION_MECHANISMS
from coopeval.studies.coopeval.reference.importer.matchups import ReleasedMatch
from coopeval.studies.coopeval.reference.importer.moves import (
    add_action_decisions,
    moves_in_seat_order,
)
from coopeval.studies.coopeval.reference.importer.rows import CellRows
from coopeval.studies.coopeval.reference.importer.votes import read_vote_record

__all__ = ["iter_records", "read_records", "read_reputation_records", "records_path"]


def records_path(folder: Path) -> tuple[Path | None, list[Path]]:
    """(the records file if exactly one exists, every records file present)."""
    plain, gz = folder / "records.jsonl", folder / "records.jsonl.gz"
    present = [p for p in (plain, gz) if p.is_file()]
    return (present[0] if len(present) == 1 else None), present


def iter_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON value) of each non-blank line; plain or gzip by suffix."""
    try:
        handle = gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")  # noqa: SIM115 (closed by the with below)
        with handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield lineno, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ReleasedFileError(path, f"line {lineno}: invalid JSON ({exc.msg}); expected one JSON value per line") from None
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise ReleasedFileError(path, f"unreadable ({exc}); expected {'gzip-compressed ' if path.suffix == '.gz' else ''}JSON lines") from None


def read_records(
    folder: Path,
    cfg: ExperimentConfig,
    matches: list[ReleasedMatch],
    designs: dict[str, dict[str, Any]],
    rows: CellRows,
    flags: list[ImportFlag],
) -> str | None:
    """Validate the records file against the matches and append its rows.

    Appends action ``decisions`` per round and, for Mediation/Contracting, votes, signatures
    and selections (:func:`~coopeval.studies.coopeval.reference.importer.votes.read_vote_record`).
    Every line must match the next unused match of ``matchup_payoffs.json`` with the same
    seating, with equal points. Returns the records file name, or None (flag
    ``records_missing``) if there is none. Disagreements with the mechanism's payoffs are
    flagged (``records_inconsistent``), not fatal.
    """
    path, present = records_path(folder)
    if len(present) > 1:
        raise ReleasedFileError(present[0], "both records.jsonl and records.jsonl.gz exist; expected exactly one")
    if path is None:
        flags.append(records_missing_flag())
        return None
    if cfg.mechanism_type in REPUTATION_MECHANISMS:
        read_reputation_records(path, cfg, matches, rows)
        return path.name
    by_key: dict[tuple[str, ...], list[ReleasedMatch]] = defaultdict(list)
    for match in matches:
        by_key[match.seated].append(match)
    used: dict[tuple[str, ...], int] = defaultdict(int)
    n_lines = 0
    inconsistent: list[str] = []
    for lineno, value in iter_records(path):
        n_lines += 1
        where = f"line {lineno}"
        extra: Mapping[str, Any] | None = None
        if cfg.mechanism_type == "NoMechanism":
            rounds = [value]
        elif cfg.mechanism_type == "Repetition":
            if not isinstance(value, list) or len(value) != cfg.n_rounds:
                raise ReleasedFileError(path, f"{where} must be a list of {cfg.n_rounds} rounds of moves")
            rounds = value
        else:
            extra = value[0] if isinstance(value, list) and len(value) == 1 else value
            if not isinstance(extra, Mapping) or "moves" not in extra or "votes" not in extra:
                raise ReleasedFileError(path, f"{where} must be [{{'votes', 'selected_…_index', …, 'moves'}}]")
            rounds = [extra["moves"]]
        parsed_rounds = [moves_in_seat_order(r, cfg, path, f"{where} round {t + 1}") for t, r in enumerate(rounds)]
        seated = tuple(f"{m.agent}#P{m.seat}" for m in parsed_rounds[0])
        for t, moves in enumerate(parsed_rounds[1:], start=2):
            if tuple(f"{m.agent}#P{m.seat}" for m in moves) != seated:
                raise ReleasedFileError(path, f"{where} round {t}: players change within a matchup")
        candidates = by_key.get(seated, [])
        if used[seated] >= len(candidates):
            raise ReleasedFileError(
                path,
                f"{where}: matchup {list(seated)} has no (further) match in matchup_payoffs.json; "
                "expected records and matchup_payoffs.json to describe the same matches",
            )
        match = candidates[used[seated]]
        used[seated] += 1
        for t, moves in enumerate(parsed_rounds):
            for m in moves:
                if abs(m.points - match.payoffs[t][m.seat - 1]) > POINT_TOL:
                    raise ReleasedFileError(
                        path,
                        f"{where} round {t + 1} seat {m.seat}: points {m.points} differ from "
                        f"matchup_payoffs.json ({match.payoffs[t][m.seat - 1]}); expected the same match",
                    )
            round_id = f"{rows.cell_id}/{match.matchup_id}/r{t + 1:02d}"
            add_action_decisions(rows, cfg, t + 1, moves, lambda m: (f"{round_id}/P{m.seat}", match.matchup_id))  # noqa: B023
        if extra is not None:
            read_vote_record(path, where, extra, cfg, match, parsed_rounds[0], designs, rows, inconsistent)
        elif any(abs(m.points - cfg.game.payoffs(tuple(x.action for x in moves))[m.seat - 1]) > POINT_TOL
                 for moves in parsed_rounds for m in moves):
            inconsistent.append(f"{where}: points differ from the base payoffs of the actions")
    if n_lines != len(matches):
        raise ReleasedFileError(
            path,
            f"{n_lines} matchup line(s) but matchup_payoffs.json has {len(matches)} match(es); expected one line per match",
        )
    if inconsistent:
        flags.append(records_inconsistent_flag(inconsistent))
    return path.name


def read_reputation_records(path: Path, cfg: ExperimentConfig, matches: list[ReleasedMatch], rows: CellRows) -> None:
    """Validate a reputation records file (one line listing rounds × roster matches).

    Each seated agent plays once per round with the points of its ``matchup_payoffs.json``
    history; appends one action ``decisions`` row per move.
    """
    per_round = len(cfg.roster)
    total = cfg.n_rounds * per_round
    lines = list(iter_records(path))
    if len(lines) != 1:
        raise ReleasedFileError(path, f"{len(lines)} lines; expected exactly one line holding the {total} reputation matches")
    lineno, value = lines[0]
    if not isinstance(value, list) or len(value) != total:
        raise ReleasedFileError(path, f"line {lineno} must list {total} matches ({cfg.n_rounds} rounds × {per_round})")
    history = {m.seated[0]: m for m in matches}
    counts: dict[str, int] = defaultdict(int)
    for i, raw in enumerate(value):
        round_index = i // per_round + 1
        moves = moves_in_seat_order(raw, cfg, path, f"line {lineno} match {i}")
        for m in moves:
            name = f"{m.agent}#P{m.seat}"
            t = counts[name]
            counts[name] += 1
            if t >= cfg.n_rounds or round_index != t + 1:
                raise ReleasedFileError(path, f"match {i}: {name} plays more than once in round {round_index}")
            if abs(m.points - history[name].payoffs[t][0]) > POINT_TOL:
                raise ReleasedFileError(
                    path,
                    f"match {i}: {name} has points {m.points} in round {round_index}; matchup_payoffs.json has "
                    f"{history[name].payoffs[t][0]}",
                )
        match_id = f"{rows.cell_id}/r{round_index:02d}.m{i % per_round}"
        add_action_decisions(
            rows, cfg, round_index, moves,
            lambda m: (f"{match_id}/P{m.seat}", history[f"{m.agent}#P{m.seat}"].matchup_id),  # noqa: B023
        )
