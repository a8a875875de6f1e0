"""Matchup payoffs: ``matchup_payoffs.json`` → matches, and the ``matchups`` / ``scores`` rows.

Two formats (docs/protocol/reference-data.md#layout): matchup mechanisms list ``{"players": [configs in seat order],
"payoffs": [matches of rounds × seats]}``; reputation mechanisms list one ``{"player": config,
"points": [per-round points]}`` per seated agent. A matchup's score is the δ-weighted average of
its per-round points with the stored discount (docs/protocol/tournament.md#delta-weighted-score).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from coopeval.evaluation.scores import discounted_average
from coopeval.studies.coopeval.reference.importer.config import ExperimentConfig
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.fields import (
    agent_type_string,
    finite_number,
    read_json,
)
from coopeval.studies.coopeval.reference.importer.layout import REPUTATION_MECHANISMS
from coopeval.studies.coopeval.reference.importer.rows import CellRows

__all__ = ["ReleasedMatch", "add_matchup_rows", "read_matchup_payoffs"]


@dataclass
class ReleasedMatch:
    """One released match (reputation: one seated agent's history).

    Attributes
    ----------
    matchup_id:
        ``m<entry>`` or ``m<entry>.<match>`` when an entry holds several matches; for
        reputation, the seated name ``"<type>#P<seat>"``.
    seated:
        Seated names ``"<type>#P<seat>"`` in seat order (reputation: the one agent).
    agents:
        Agent type strings in the same order.
    payoffs:
        Points, shape rounds × seats (reputation: rounds × 1).
    """

    matchup_id: str
    seated: tuple[str, ...]
    agents: tuple[str, ...]
    payoffs: list[list[float]]


def read_matchup_payoffs(folder: Path, cfg: ExperimentConfig) -> tuple[float, list[ReleasedMatch]]:
    """(discount δ in [0, 1], matches in file order) of ``folder/matchup_payoffs.json``.

    Raises ReleasedFileError on a malformed entry, a roster or seat mismatch with ``cfg``, a
    repeated seating, or (reputation) a missing type and seat.
    """
    path = folder / "matchup_payoffs.json"
    n = cfg.game.n_players
    reputation = cfg.mechanism_type in REPUTATION_MECHANISMS
    shape = (
        '{"discount": δ, "profile": [{"player": agent config + player_id, "points": [per-round points]}, …]}'
        if reputation
        else '{"discount": δ, "profile": [{"players": [agent config + player_id, … in seat order], "payoffs": [rounds × seats], …]}, …]}'
    )
    data = read_json(path, shape)
    if not isinstance(data, Mapping) or "discount" not in data or not isinstance(data.get("profile"), list):
        raise ReleasedFileError(path, f"expected {shape}")
    discount = finite_number(data["discount"], path, "discount")
    if not 0.0 <= discount <= 1.0:
        raise ReleasedFileError(path, f"discount is {discount}; expected a value in [0, 1]")
    if cfg.discount is not None and abs(discount - cfg.discount) > 1e-12:
        raise ReleasedFileError(path, f"discount is {discount}; expected {cfg.discount} as in config.json mechanism.kwargs")
    if not data["profile"]:
        raise ReleasedFileError(path, "profile is empty; expected at least one entry")
    matches: list[ReleasedMatch] = []
    seen: set[tuple[str, ...]] = set()
    for index, entry in enumerate(data["profile"]):
        where = f"profile[{index}]"
        if not isinstance(entry, Mapping):
            raise ReleasedFileError(path, f"{where} is not an object; expected {shape}")
        if reputation:
            if "player" not in entry or "points" not in entry:
                raise ReleasedFileError(path, f"{where} lacks 'player'/'points'; expected the reputation per-agent format {shape}")
            players = [entry["player"]]
        else:
            if "players" not in entry or "payoffs" not in entry:
                raise ReleasedFileError(path, f"{where} lacks 'players'/'payoffs'; expected the matchup format {shape}")
            players = entry["players"]
            if not isinstance(players, list) or len(players) != n:
                raise ReleasedFileError(path, f"{where}.players must list {n} agent configs in seat order")
        seated = []
        agents = []
        for seat0, player in enumerate(players):
            try:
                agent = agent_type_string(player)
            except ValueError as exc:
                raise ReleasedFileError(path, f"{where}: {exc}") from None
            if agent not in cfg.roster:
                raise ReleasedFileError(path, f"{where} names agent {agent!r}, which is not in config.json's agents")
            pid = player.get("player_id")
            if reputation:
                if not isinstance(pid, int) or isinstance(pid, bool) or not 1 <= pid <= n:
                    raise ReleasedFileError(path, f"{where}.player.player_id is {pid!r}; expected 1..{n}")
            elif pid != seat0 + 1:
                raise ReleasedFileError(path, f"{where}.players[{seat0}].player_id is {pid!r}; expected {seat0 + 1} (seat order)")
            seated.append(f"{agent}#P{pid}")
            agents.append(agent)
        key = tuple(seated)
        if key in seen:
            raise ReleasedFileError(path, f"{where} repeats the seated agents {list(key)}; expected each once")
        seen.add(key)
        if reputation:
            points = entry["points"]
            if not isinstance(points, list) or len(points) != cfg.n_rounds:
                raise ReleasedFileError(path, f"{where}.points must list {cfg.n_rounds} per-round points")
            rounds = [[finite_number(v, path, f"{where}.points[{t}]")] for t, v in enumerate(points)]
            matches.append(ReleasedMatch(seated[0], key, tuple(agents), rounds))
            continue
        raw = entry["payoffs"]
        if not isinstance(raw, list) or not raw:
            raise ReleasedFileError(path, f"{where}.payoffs must be a non-empty list of matches (rounds × {n} arrays)")
        for j, match in enumerate(raw):
            mwhere = f"{where}.payoffs[{j}]"
            if not isinstance(match, list) or len(match) != cfg.n_rounds:
                raise ReleasedFileError(path, f"{mwhere} must have {cfg.n_rounds} round(s) of {n} payoffs")
            rounds = []
            for t, row in enumerate(match):
                if not isinstance(row, list) or len(row) != n:
                    raise ReleasedFileError(path, f"{mwhere}[{t}] must list {n} seat payoffs")
                rounds.append([finite_number(v, path, f"{mwhere}[{t}][{s}]") for s, v in enumerate(row)])
            matchup_id = f"m{index:03d}" if len(raw) == 1 else f"m{index:03d}.{j}"
            matches.append(ReleasedMatch(matchup_id, key, tuple(agents), rounds))
    if reputation:
        expected = {f"{a}#P{s}" for a in cfg.roster for s in range(1, n + 1)}
        got = {m.seated[0] for m in matches}
        if got != expected:
            missing = sorted(expected - got)
            raise ReleasedFileError(path, f"expected one entry per type and seat ({len(expected)}); missing {missing}")
    return discount, matches



def add_matchup_rows(
    rows: CellRows, cfg: ExperimentConfig, discount: float, matches: list[ReleasedMatch]
) -> None:
    """Append one ``matchups`` row per match and one ``scores`` row per seat.

    A score is the δ-weighted average of the seat's per-round points (docs/protocol/tournament.md#delta-weighted-score); for
    reputation the seat is the one in the seated name.
    """
    reputation = cfg.mechanism_type in REPUTATION_MECHANISMS
    for match in matches:
        rows.add("matchups", matchup_id=match.matchup_id, agents=list(match.agents), n_rounds=cfg.n_rounds,
                 discount=discount, status="complete")
        for seat0, agent in enumerate(match.agents):
            seat = int(match.seated[seat0].rsplit("#P", 1)[1]) if reputation else seat0 + 1
            score = discounted_average([r[seat0] for r in match.payoffs], discount)
            rows.add("scores", matchup_id=match.matchup_id, seat=seat, agent=agent, score=score, status="complete")
