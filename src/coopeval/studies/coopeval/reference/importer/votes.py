"""Votes, signatures and selections of Mediation/Contracting record lines.

One record line holds every player's approval vote over the N designs of the matchup, the
selected design (index and designer), for Contracting each player's signature, and the moves
(docs/protocol/reference-data.md#layout). Vote dicts are keyed ``"1".."N"`` (also ``M1``/``C1``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info
from coopeval.studies.coopeval.reference.importer.config import ExperimentConfig
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.fields import (
    POINT_TOL,
    action_token,
    seated_agent,
)
from coopeval.studies.coopeval.reference.importer.matchups import ReleasedMatch
from coopeval.studies.coopeval.reference.importer.moves import ReleasedMove
from coopeval.studies.coopeval.reference.importer.rows import CellRows

__all__ = ["read_vote_record"]


def read_vote_record(
    path: Path,
    where: str,
    record: Mapping[str, Any],
    cfg: ExperimentConfig,
    match: ReleasedMatch,
    moves: list[ReleasedMove],
    designs: dict[str, dict[str, Any]],
    rows: CellRows,
    inconsistent: list[str],
) -> None:
    """Validate a Mediation/Contracting record's votes, selection and signatures; append rows.

    Appends ``votes`` (one per voter and option), vote and sign ``decisions``, and one
    ``selections`` row whose ``details`` match our own runs' payload (approvals per option,
    tied options, signatures). A selection outside the most approved options, delegated moves
    that ignore the selected mediator, or points that differ from the mechanism's payoffs
    (contract transfer: c(a_i) − Σ_{j≠i} c(a_j)/(N − 1), docs/protocol/mechanisms.md#contracting) are appended to
    ``inconsistent`` instead of raising.
    """
    game, n = cfg.game, cfg.game.n_players
    mediation = mechanism_info(cfg.mechanism_type).delegates_actions
    label = "mediator" if mediation else "contract"
    prefix = "M" if mediation else "C"
    votes = record["votes"]
    if not isinstance(votes, list) or len(votes) != n:
        raise ReleasedFileError(path, f"{where}.votes must list {n} voter entries")
    voters = set()
    counts = [0] * n  # approvals per option (design index in seat order)
    for i, vote in enumerate(votes):
        vwhere = f"{where}.votes[{i}]"
        if not isinstance(vote, Mapping) or "voter_name" not in vote or not isinstance(vote.get("votes"), Mapping):
            raise ReleasedFileError(path, f"{vwhere} must be {{'voter_name', 'votes': {{'1': bool, …}}, 'trace_id'}}")
        agent, seat = seated_agent(vote["voter_name"], cfg.roster, n, path, f"{vwhere}.voter_name")
        if vote["voter_name"] != match.seated[seat - 1]:
            raise ReleasedFileError(path, f"{vwhere}.voter_name {vote['voter_name']!r} is not a player of this matchup")
        voters.add(seat)
        approvals: dict[int, bool] = {}
        for key, value in vote["votes"].items():
            digits = key[1:] if isinstance(key, str) and key[:1] in ("M", "C") else key
            if not isinstance(digits, str) or not digits.isdigit() or not 1 <= int(digits) <= n or not isinstance(value, bool):
                raise ReleasedFileError(path, f"{vwhere}.votes has {key!r}: {value!r}; expected keys '1'..'{n}' with true/false")
            approvals[int(digits)] = value
        if set(approvals) != set(range(1, n + 1)):
            raise ReleasedFileError(path, f"{vwhere}.votes must have exactly the keys '1'..'{n}'")
        for option in range(1, n + 1):
            counts[option - 1] += approvals[option]
            rows.add("votes", matchup_id=match.matchup_id, voter_seat=seat, agent=agent, option=option, approve=approvals[option])
        _add_seat_decision(
            rows, match, seat, agent, "vote", f"{label}_vote", {f"{prefix}{k}": approvals[k] for k in range(1, n + 1)}
        )
    if voters != set(range(1, n + 1)):
        raise ReleasedFileError(path, f"{where}.votes must have one voter per seat 1..{n}")
    index_key, name_key = f"selected_{label}_index", f"selected_{label}_designer_name"
    index = record.get(index_key)
    if not isinstance(index, int) or isinstance(index, bool) or not 1 <= index <= n:
        raise ReleasedFileError(path, f"{where}.{index_key} is {index!r}; expected 1..{n}")
    designer = record.get(name_key)
    if designer != match.seated[index - 1]:
        raise ReleasedFileError(path, f"{where}.{name_key} is {designer!r}; expected {match.seated[index - 1]!r} (seat {index})")
    all_signed: bool | None = None
    agrees: list[bool] = []
    if not mediation:
        signatures = record.get("signatures")
        if not isinstance(signatures, Mapping) or set(signatures) != set(match.seated):
            raise ReleasedFileError(path, f"{where}.signatures must map each player of the matchup to {{'agree': bool, 'trace_id'}}")
        for name in match.seated:
            sig = signatures[name]
            if not isinstance(sig, Mapping) or not isinstance(sig.get("agree"), bool):
                raise ReleasedFileError(path, f"{where}.signatures[{name!r}] must be {{'agree': true/false, 'trace_id'}}")
            agent, seat = seated_agent(name, cfg.roster, n, path, f"{where}.signatures key")
            agrees.append(sig["agree"])
            _add_seat_decision(rows, match, seat, agent, "sign", "sign", {"sign": sig["agree"]})
        all_signed = record.get("all_signed")
        if not isinstance(all_signed, bool) or all_signed != all(agrees):
            raise ReleasedFileError(path, f"{where}.all_signed is {all_signed!r}; expected {all(agrees)} (every signature agrees)")
    # Same payload as our own runs' selections (approvals per option, tied options, signatures).
    tied = [k + 1 for k, c in enumerate(counts) if c == max(counts)]
    details: dict[str, Any] = {"approvals": counts, "tied_options": tied}
    if not mediation:
        details.update(signatures=agrees, all_signed=all_signed, active=all_signed,
                       rejecting_seats=[s + 1 for s, ok in enumerate(agrees) if not ok])
    design = designs.get(designer)
    rows.add(
        "selections",
        matchup_id=match.matchup_id,
        design_kind=label,
        selected_index=index,
        selected_designer=designer,
        all_signed=all_signed,
        design=None if design is None else json.dumps(design),
        details=json.dumps(details),
    )
    # Consistency of the recorded outcome with the vote and the selected design (flagged, not fatal).
    if index not in tied:
        inconsistent.append(f"{where}: selected design {index} is not among the most approved {tied}")
    profile = tuple(m.action for m in moves)
    base = game.payoffs(profile)
    if mediation:
        d = sum(m.mediated for m in moves)
        if design is not None and d and any(m.mediated and action_token(m.action) != design[str(d)] for m in moves):
            inconsistent.append(f"{where}: delegated moves do not play the selected mediator's action for d = {d}")
        expected = list(base)
    elif all_signed and design is not None:
        c = [float(design[action_token(i)]) for i in range(game.n_actions)]
        total = sum(c[a] for a in profile)
        expected = [base[i] + c[profile[i]] - (total - c[profile[i]]) / (n - 1) for i in range(n)]
    else:
        expected = list(base)
    if any(abs(m.points - expected[m.seat - 1]) > POINT_TOL for m in moves):
        inconsistent.append(f"{where}: points {[m.points for m in moves]} differ from the mechanism's payoffs {expected}")


def _add_seat_decision(
    rows: CellRows, match: ReleasedMatch, seat: int, agent: str, step: str, kind: str, parsed: Any
) -> None:
    """Append one valid round-0 ``decisions`` row of a seat (a vote or a signature) with the
    decision id ``<cell_id>/<matchup_id>/<step>/P<seat>`` and ``parsed`` as JSON."""
    rows.add_decision(f"{rows.cell_id}/{match.matchup_id}/{step}/P{seat}", matchup_id=match.matchup_id, round=0,
                      seat=seat, agent=agent, kind=kind, parsed=parsed)
