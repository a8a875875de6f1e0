"""A small store with every study, built with the registered table schemas (tests of the explorer).

Cells: CoopEval ``cellA`` (Repetition) and ``cellB`` (Mediation), both with match-up
``x|y`` over two rounds; gossip ``cellG`` (model-g) and ``cellH`` (model-h: the same run
under another model, for the side-by-side view of two models); evolution ``cellE``. Decision ``dA-r1-s1`` failed
after two attempts whose replies are markup (:data:`SCRIPT_REPLY`) and 100 KB of text
(:data:`BIG_REPLY`); ``dA-r2-s2`` was re-asked and accepted; the judge labelled ``dA-r2-s1``.
The word "helped" is in one reply only (``dG-r2``'s), for the run-wide search.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from coopeval.core.schemas import SCHEMAS
from coopeval.core.store_tables import NEUTRAL_COLUMNS, NEUTRAL_TABLES
from coopeval.explorer.scripts import read_payload
from coopeval.pipeline.store import build_store

SCRIPT_REPLY = '<script>window.PWNED = 1</script><img src=x onerror="window.PWNED=2"> {"A0": 50'
BIG_REPLY = "We & they: 100% {sure} $5 #1 a_b ~ ^ \\ <b>bold</b>\n" * 2000  # 100 KB, every LaTeX special
FAILED = "dA-r1-s1"
REASKED = "dA-r2-s2"
JUDGED = "dA-r2-s1"
JUDGE_REASONING = "It mirrors what the partner did."


def _prompt(text: str, *extra: tuple[str, str]) -> str:
    messages = [{"role": "user", "content": text}] + [{"role": r, "content": c} for r, c in extra]
    return json.dumps(messages)


def prompt_text(cell: str, rnd: int, seat: int) -> str:
    """The single user message of the first attempt of a decision (unique per decision)."""
    return f"You are player {seat} in round {rnd} of cell {cell}.\nChoose A0 or A1 & answer in JSON."


def _coopeval(cell: str, mechanism: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    decisions, calls = [], []
    for rnd in (1, 2):
        for seat, agent in ((1, "model-x"), (2, "model-y")):
            did = f"d{cell[-1]}-r{rnd}-s{seat}"
            base = {"cell_id": cell, "source": "ours", "run": "r1", "mechanism": mechanism, "game": "prisoners_dilemma", "study": "coopeval",
                    "decision_id": did, "matchup_id": "x|y", "round": rnd, "seat": seat, "agent": agent}  # fmt: skip
            replies = [f'{{"A0": {40 + seat}, "A1": {60 - seat}}}']
            errors = [""]
            if did == FAILED:
                replies, errors = [SCRIPT_REPLY, BIG_REPLY], ["no JSON object", "no JSON object"]
            elif did == REASKED:
                replies, errors = ["I pick A0", '{"A0": 100, "A1": 0}'], ["no JSON object", ""]
            failed = did == FAILED
            decisions.append({**base, "kind": "action", "status": "failed" if failed else "ok", "parsed": None if failed else replies[-1],
                              "action": None if failed else 0, "action_token": None if failed else "A0", "points": 3.0 if not failed else None,
                              "n_attempts": len(replies), "response": replies[-1], "error": errors[-1], "truncated": False})  # fmt: skip
            first = prompt_text(cell, rnd, seat)
            for attempt, (reply, error) in enumerate(zip(replies, errors, strict=True)):
                extra = [("assistant", replies[0]), ("user", "Your answer had no JSON object. Answer again.")] if attempt else []
                calls.append({**base, "attempt": attempt, "model": agent, "kind": "action", "prompt": _prompt(first, *extra),
                              "response": reply, "error": error, "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.001})  # fmt: skip
    return decisions, calls


def _gossip(cell: str = "cellG", model: str = "model-g", message: str = "John helped me.") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    base = {"cell_id": cell, "source": "ours", "run": "r1", "mechanism": "align", "game": "donation", "study": "gossip", "matchup_id": "donation/align/r1"}
    decisions, calls = [], []
    for rnd, (_donor, kind) in enumerate((("John", "donor_action"), ("Kate", "gossip")), start=1):
        did = f"d{cell[-1]}-r{rnd}"
        reply = json.dumps({"donor_action": "cooperate"} if kind == "donor_action" else {"tone": "praising", "gossip": message})
        row = {**base, "decision_id": did, "round": rnd, "seat": rnd, "agent": model}
        decisions.append({**row, "kind": kind, "status": "ok", "parsed": reply, "n_attempts": 1, "response": reply, "error": "", "truncated": False})
        calls.append({**row, "attempt": 0, "model": model, "kind": kind, "prompt": _prompt(prompt_text(cell, rnd, rnd)), "response": reply, "error": ""})
    return decisions, calls


def _evolution() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    base = {"cell_id": "cellE", "source": "ours", "run": "r1", "mechanism": "evolution/vh", "game": "donor_game", "study": "evolution"}
    decisions, calls = [], []
    for n, agent_id in enumerate(("1_1", "1_2")):
        did = f"dE-{n}"
        reply = f"Strategy {agent_id}: donate half."
        row = {**base, "decision_id": did, "matchup_id": "g1/evolution/game0", "round": 0, "seat": n + 1, "agent": "model-e"}
        decisions.append({**row, "kind": "strategy", "status": "ok", "parsed": json.dumps({"strategy": reply}), "n_attempts": 1, "response": reply, "error": "", "truncated": False})
        calls.append({**row, "attempt": 0, "model": "model-e", "kind": "strategy", "prompt": _prompt(prompt_text("cellE", 0, n + 1)), "response": reply, "error": ""})
    return decisions, calls


def _extras() -> dict[str, list[dict[str, Any]]]:
    evo = {"cell_id": "cellE", "source": "ours", "run": "r1", "protocol": "vh", "model": "model-e", "variant": "default"}
    return {
        "metrics": [
            {"cell_id": c, "source": "ours", "run": "r1", "mechanism": "Repetition", "game": g, "agent": a, "metric": "Mean", "value": v}
            for c, g, a, v in (("cellA", "prisoners_dilemma", "model-x", 2.0), ("cellA", "prisoners_dilemma", "model-y", 1.0),
                               ("cellC", "stag_hunt", "model-x", 4.0), ("cellC", "stag_hunt", "model-y", 1.0))
        ],
        "judgements": [
            {"cell_id": "cellA", "source": "ours", "run": "r1", "decision_id": JUDGED, "status": "ok", "labels": ["reciprocity", "fairness"],
             "confidence": 0.9, "reasoning": JUDGE_REASONING, "judge_model": "judge-m"},
        ],
        "gossip_rounds": [
            {"cell_id": "cellG", "run": "r1", "testbed": "donation", "condition": "align", "model": "model-g", "round": 1, "first_role": "donor",
             "second_role": "recipient", "first_agent": "John", "second_agent": "Kate", "first_kind": "honest", "second_kind": "attacker",
             "first_index": 0, "second_index": 1, "first_action": "cooperate", "second_tone": "praising", "second_message": "John helped me.",
             "status": "ok"},
        ],
        "gossip_run_metrics": [
            {"cell_id": c, "run": r, "testbed": "donation", "condition": "align", "model": "model-g", "cooperation_ratio_mean": v, "gini": 0.1,
             "image_score_mean": image}
            for c, r, v, image in (("cellG", "r1", 0.5, float("nan")), ("cellG2", "r2", 0.7, 2.0))
        ],
        "evo_strategies": [
            {**evo, "generation": 1, "agent_id": "1_1", "born_generation": 1, "parent_id": None, "text": "Donate half.", "score": 10.0, "rank": 1},
            {**evo, "generation": 2, "agent_id": "2_1", "born_generation": 2, "parent_id": "1_1", "parent_rank": 1, "text": "Donate half, punish defectors.", "score": 12.0, "rank": 1},
        ],
        "evo_generations": [{**evo, "generation": g, "mean_final": m, "donation_fraction": 0.5} for g, m in ((1, 20.0), (2, 30.0))],
        "strategy_matrix": [
            {**evo, "generation": 2, "strategy_id": "2_1", "i": i, "j": j, "sample": 0, "percentage": 10.0 * (i + j), "parse_status": "ok"}
            for i in (1, 2) for j in (1, 2)
        ],
    }


def _insert(con: duckdb.DuckDBPyConnection, table: str, records: Iterable[dict[str, Any]]) -> None:
    schema = SCHEMAS[table]
    frame = pl.DataFrame([{k: r.get(k) for k in schema} for r in records], schema=schema)
    con.register("src", frame.to_arrow())
    renamed = f" RENAME ({', '.join(f'{old} AS {new}' for new, old in NEUTRAL_COLUMNS.items())})" if table in NEUTRAL_TABLES else ""
    con.execute(f"INSERT INTO {table} BY NAME SELECT *{renamed} FROM src")
    con.unregister("src")


def make_store(path: Path, *, drop: Iterable[str] = ()) -> Path:
    """Build the fake store at ``path`` (tables in ``drop`` removed) and return its path."""
    build_store({}, path)
    decisions, calls = [], []
    for part in (_coopeval("cellA", "Repetition"), _coopeval("cellB", "Mediation"), _gossip(), _gossip("cellH", "model-h", "Kate was kind."), _evolution()):
        decisions += part[0]
        calls += part[1]
    con = duckdb.connect(str(path))
    try:
        _insert(con, "decisions", decisions)
        _insert(con, "llm_calls", calls)
        for table, records in _extras().items():
            _insert(con, table, records)
        for table in drop:
            con.execute(f"DROP TABLE {table}")
    finally:
        con.close()
    return path


def read_data(site: Path, relative: str) -> Any:
    """The payload a data script registers (packed or not)."""
    return read_payload((site / relative).read_text(encoding="ascii"))[1]


def site_text(site: Path) -> str:
    """Every data file's text, packed episode parts unpacked (what a reader of the site can see)."""
    texts = []
    for path in sorted((site / "data").rglob("*.js")):
        text = path.read_text(encoding="ascii")
        texts.append(json.dumps(read_payload(text)[1]) if text.startswith("CE.registerPacked(") else text)
    return "".join(texts)
