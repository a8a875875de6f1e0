"""Fixtures for the reference-import tests: ``reproduce`` on the full released run1 data (a
full-run check, skipped when the full folder is absent) and a builder of small synthetic run
folders in the reference layout, one per schema variant."""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coopeval.evaluation.deviation import deviation_ratings
from coopeval.evaluation.replicator import replicator_dynamics
from coopeval.evaluation.scores import discounted_average
from coopeval.evaluation.tensor import build_payoff_tensor, mean_payoff
from coopeval.games import Game, get_game
from coopeval.studies.coopeval.reference.importer.layout import reference_enum_members
from coopeval.studies.coopeval.tables.defaults import TableSettings


@pytest.fixture(scope="session")
def run1_reproduced(full_run1_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``reproduce`` on the full run1 once per session (100 bootstrap resamples to keep the
    suite light), columns ordered and labelled by config/paper.yaml's roster. Full-run check:
    it needs every experiment's records."""
    from coopeval.studies.coopeval.reference.cli import reproduce
    from coopeval.studies.coopeval.tables.roster import roster_file_agents

    columns = roster_file_agents(Path(__file__).resolve().parents[4] / "config" / "paper.yaml")
    out = tmp_path_factory.mktemp("run1_out")
    return reproduce(full_run1_dir, out, settings=TableSettings(n_bootstrap=100, columns=columns), progress=None)


# ----------------------------------------------------------------------------------------------
# Synthetic reference folders

AGENT_CONFIGS = [
    {"llm": {"provider": "OpenRouter", "model": "test/alpha", "kwargs": {"temperature": 1}}, "type": "CoTAgent"},
    {"llm": {"provider": "OpenRouter", "model": "test/beta", "kwargs": {"temperature": 1}}, "type": "IOAgent"},
]
TYPES = ["test/alpha(CoT)", "test/beta(IO)"]
"""alpha always plays the cooperative action (A0); beta plays A1 (defects), except in
Repetition rounds ≥ 2 where it cooperates."""

STEM_TYPES = {
    "no_mechanism": "NoMechanism",
    "repetition": "Repetition",
    "reputation": "Reputation",
    "reputation_first_order": "ReputationFirstOrder",
    "mediation": "Mediation",
    "contracting": "Contracting",
}


def _enum(game: Game, action: int) -> str:
    return f"{game.name}Action.{reference_enum_members(game)[action]}"


def _game_kwargs(game: Game) -> dict[str, Any]:
    if game.name == "PublicGoods":
        return {"num_players": 3, "multiplier": 1.5}
    if game.name == "TravellersDilemma":
        return {"min_claim": 2, "num_actions": 4, "claim_spacing": 1, "bonus": 2.0}
    letters = [m[0] for m in reference_enum_members(game)]
    return {
        "payoff_matrix": {
            letters[a] + letters[b]: list(game.payoffs((a, b))) for a in range(game.n_actions) for b in range(game.n_actions)
        }
    }


def _move(game: Game, seated: str, action: int, points: float, *, response: bool, mediated: bool = False) -> dict[str, Any]:
    move: dict[str, Any] = {"player": seated, "action": _enum(game, action), "points": points, "trace_id": "0badc0de"}
    if response:
        move["response"] = f'{{"A{action}": 100}}'
    if mediated:
        move["mediated"] = True
    return move


def write_experiment(
    run_dir: Path,
    stem: str,
    game_key: str = "prisoners_dilemma",
    *,
    records: str | None = "plain",
    response: bool = False,
    design_response: bool = False,
    vote_prefix: bool = False,
    bare_record: bool = False,
    n_rounds: int = 3,
) -> Path:
    """Write one experiment folder ``{stem}_{game_key}`` in the reference layout.

    ``records``: "plain" (records.jsonl), "gz" (records.jsonl.gz) or None (absent).
    Summary files are computed from the written matchup payoffs with coopeval's evaluation.
    """
    game = get_game(game_key)
    mechanism = STEM_TYPES[stem]
    folder = run_dir / f"{stem}_{game_key}"
    folder.mkdir(parents=True)
    n = game.n_players
    rounds = n_rounds if mechanism in ("Repetition", "Reputation", "ReputationFirstOrder") else 1
    mech_kwargs: dict[str, Any] = {}
    if mechanism == "Repetition":
        mech_kwargs = {"num_rounds": rounds, "discount": 0.8, "lookup_depth": 3, "include_prior_distributions": False}
    elif mechanism in ("Reputation", "ReputationFirstOrder"):
        mech_kwargs = {"num_rounds": rounds, "discount": 0.8, "lookup_depth": 3,
                       "max_recursion_depth": 3 if mechanism == "Reputation" else 1, "include_prior_distributions": False}
    methods = [{"type": "evolutionary_dynamics", "kwargs": {"initial_population": "uniform", "steps": 1000}}]
    if mechanism not in ("Reputation", "ReputationFirstOrder"):
        methods.append({"type": "deviation_rating", "kwargs": {"tolerance": "1e-14"}})
    config = {
        "game": {"type": game.name, "kwargs": _game_kwargs(game)},
        "mechanism": {"type": mechanism, "kwargs": mech_kwargs},
        "agents": AGENT_CONFIGS,
        "evaluation": {"methods": methods},
        "concurrency": {"max_workers": 1, "tournament_workers": 1},
        "name": folder.name,
    }
    discount = 0.8 if mechanism in ("Repetition", "Reputation", "ReputationFirstOrder") else 1.0
    lines: list[Any] = []
    observations = []
    if mechanism in ("Reputation", "ReputationFirstOrder"):
        per_round = len(TYPES)
        points: dict[str, list[float]] = {f"{t}#P{s}": [] for t in TYPES for s in range(1, n + 1)}
        matches = []
        for r in range(rounds):
            for i in range(per_round):
                seats = [TYPES[(i + r * s) % per_round] for s in range(n)]
                seated = [f"{t}#P{s + 1}" for s, t in enumerate(seats)]
                actions = tuple(0 if t == TYPES[0] else 1 for t in seats)
                pay = game.payoffs(actions)
                for s in range(n):
                    points[seated[s]].append(pay[s])
                matches.append([_move(game, seated[s], actions[s], pay[s], response=response) for s in range(n)])
        lines = [matches]
        profile = [
            {"player": {**AGENT_CONFIGS[TYPES.index(name.split("#P")[0])], "player_id": int(name.split("#P")[1])}, "points": pts}
            for name, pts in sorted(points.items())
        ]
        observations = [((name.split("#P")[0],), [discounted_average(pts, discount)]) for name, pts in points.items()]
    else:
        profile = []
        designs: dict[str, Any] = {}
        for combo in itertools.product(range(len(TYPES)), repeat=n):
            for s, t in enumerate(combo):
                designs[f"{TYPES[t]}#P{s + 1}"] = None
        mapping = {d: (game.cooperative_action if d == n else 1) for d in range(1, n + 1)}
        contract = {a: (2 if a == game.cooperative_action else 0) for a in range(game.n_actions)}
        for combo in sorted(itertools.product(range(len(TYPES)), repeat=n), key=lambda c: [f"{TYPES[t]}#P{s + 1}" for s, t in enumerate(c)]):
            seated = [f"{TYPES[t]}#P{s + 1}" for s, t in enumerate(combo)]
            is_alpha = [t == 0 for t in combo]
            match_rows: list[list[float]] = []
            record_rounds = []
            extra: dict[str, Any] = {}
            for r in range(rounds):
                if mechanism == "Mediation":
                    d = sum(is_alpha)
                    actions = tuple(mapping[d] if a else 1 for a in is_alpha)
                    pay = list(game.payoffs(actions))
                    moves = [_move(game, seated[s], actions[s], pay[s], response=response, mediated=is_alpha[s]) for s in range(n)]
                else:
                    actions = tuple(0 if a or (mechanism == "Repetition" and r >= 1) else 1 for a in is_alpha)
                    pay = list(game.payoffs(actions))
                    if mechanism == "Contracting":
                        signed = [not (s == 0 and not is_alpha[s]) for s in range(n)]  # beta in seat 1 refuses
                        if all(signed):
                            total = sum(contract[a] for a in actions)
                            pay = [pay[i] + contract[actions[i]] - (total - contract[actions[i]]) / (n - 1) for i in range(n)]
                        extra = {
                            "selected_contract_index": 1,
                            "selected_contract_designer_name": seated[0],
                            "signatures": {seated[s]: {"trace_id": "5157", "agree": signed[s]} for s in range(n)},
                            "all_signed": all(signed),
                        }
                    moves = [_move(game, seated[s], actions[s], pay[s], response=response) for s in range(n)]
                match_rows.append(pay)
                record_rounds.append(moves)
            profile.append({"players": [{**AGENT_CONFIGS[t], "player_id": s + 1} for s, t in enumerate(combo)], "payoffs": [match_rows]})
            observations.append((tuple(TYPES[t] for t in combo), [discounted_average([row[s] for row in match_rows], discount) for s in range(n)]))
            if mechanism == "NoMechanism":
                lines.append(record_rounds[0])
            elif mechanism == "Repetition":
                lines.append(record_rounds)
            else:
                prefix = ("M" if mechanism == "Mediation" else "C") if vote_prefix else ""
                votes = [{"voter_name": seated[s], "votes": {f"{prefix}{k}": True for k in range(1, n + 1)}, "trace_id": "70e5"} for s in range(n)]
                record = {"votes": votes, **extra, "moves": record_rounds[0]}
                if mechanism == "Mediation":
                    record = {"votes": votes, "selected_mediator_index": 1, "selected_mediator_designer_name": seated[0], "moves": record_rounds[0]}
                lines.append(record if bare_record else [record])
        lines.reverse()  # records are in completion order, not in matchup_payoffs order
        if mechanism == "Mediation":
            med = {name: {"trace_id": "de51", "mediator": [[d, _enum(game, mapping[d])] for d in range(1, n + 1)]} for name in designs}
            if design_response:
                for entry in med.values():
                    entry["response"] = json.dumps({str(d): f"A{mapping[d]}" for d in range(1, n + 1)})
            (folder / "mediator_design.json").write_text(json.dumps(med))
        if mechanism == "Contracting":
            con = {name: {"contract": {_enum(game, a): v for a, v in contract.items()}, "trace_id": "c047"} for name in designs}
            if design_response:
                for entry in con.values():
                    entry["response"] = json.dumps({f"A{a}": v for a, v in contract.items()})
            (folder / "contract_design.json").write_text(json.dumps(con))
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "matchup_payoffs.json").write_text(json.dumps({"discount": discount, "profile": profile}))
    means = mean_payoff(observations)
    (folder / "agent_average_payoff.json").write_text(json.dumps(means))
    if mechanism not in ("Reputation", "ReputationFirstOrder"):
        agents, tensor = build_payoff_tensor(observations)
        rd = replicator_dynamics(tensor)
        (folder / "replicator_dynamics_fitness.json").write_text(
            json.dumps({a: {"fitness": float(rd.fitness[i]), "final_population": float(rd.final_population[i])} for i, a in enumerate(agents)})
        )
        dr = deviation_ratings(tensor)
        (folder / "deviation_ratings.json").write_text(json.dumps(dict(zip(agents, dr.ratings, strict=True))))
    text = "".join(json.dumps(line) + "\n" for line in lines)
    if records == "plain":
        (folder / "records.jsonl").write_text(text)
    elif records == "gz":
        with gzip.open(folder / "records.jsonl.gz", "wt", encoding="utf-8") as handle:
            handle.write(text)
    return folder


ALL_STEMS = tuple(STEM_TYPES)


def write_run(run_dir: Path, stems: tuple[str, ...] = ALL_STEMS, **kwargs: Any) -> Path:
    """A run folder with one PD experiment per mechanism stem."""
    for stem in stems:
        write_experiment(run_dir, stem, **kwargs)
    return run_dir


@pytest.fixture
def make_experiment() -> Callable[..., Path]:
    return write_experiment


@pytest.fixture
def make_run() -> Callable[..., Path]:
    return write_run
