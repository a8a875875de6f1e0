"""The estimate of a config beside the decisions a run of it recorded in its store (issue 24).

Usage::

    python benchmarks/estimate_vs_store.py --store results/coopeval.duckdb [--configfile FILE]… [--json]

Estimates ``config/config.yaml`` with the overlays in order (as ``coopeval estimate`` does,
from the working directory of the workflow) and reads the store read-only (a copy in a
temporary folder when another process holds it). Per study and per (study, decision kind) it
prints the estimate's ``decisions_min`` and ``decisions_max``, the recorded decisions (rows of
``decisions``; the CoopEval judge's are the ``judgements`` rows, kind ``judge``), the estimate's
input tokens beside the prompt tokens the models reported on first attempts (``llm_calls``,
``attempt = 0``; their ratio, estimate / recorded) and a verdict on the decisions:

* ``exact``: the protocol fixes the count (min = max) and the store holds exactly that many;
* ``in range``: min ≤ recorded ≤ max where the count depends on answers;
* ``OUTSIDE``: anything else (exit code 1).

A ``--store`` that is not a run's DuckDB store, or a config that does not load, exits 2 in one line
before anything is estimated.

The store must hold one run of the same config (the default main job's store for
``config/config.yaml``); cells of other configs in it make the counts disagree.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

__all__ = ["StoreError", "compare", "main", "recorded_decisions", "recorded_prompt_tokens"]


class StoreError(ValueError):
    """The ``--store`` is not a readable coopeval store; the message names the path and why."""


@contextlib.contextmanager
def _read_only(store: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to ``store``, or to a copy of it while a writer holds its lock.

    Raises
    ------
    StoreError
        No such file, a folder, not a DuckDB file, or no ``decisions`` table (not a run's store).
    """
    if not store.is_file():
        raise StoreError(f"--store {store}: {'is a folder' if store.is_dir() else 'no such file'}; give a run's DuckDB store, e.g. results/coopeval.duckdb")
    with tempfile.TemporaryDirectory() as folder:
        try:
            con = duckdb.connect(str(store), read_only=True)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise StoreError(f"--store {store}: not a DuckDB store ({str(exc).splitlines()[0]})") from exc
            copy = Path(folder) / store.name  # held by a writer: read a copy
            shutil.copy2(store, copy)
            con = duckdb.connect(str(copy), read_only=True)
        try:
            if "decisions" not in {r[0] for r in con.execute("SHOW TABLES").fetchall()}:
                raise StoreError(f"--store {store}: no decisions table; give the store of a coopeval run")
            yield con
        finally:
            con.close()


def recorded_decisions(store: Path) -> dict[tuple[str, str], int]:
    """(study, kind) → decisions recorded in ``store``; the judge's as (``coopeval``, ``judge``)."""
    with _read_only(store) as con:
        rows = con.execute("SELECT study, kind, count(*) FROM decisions GROUP BY ALL").fetchall()
        tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
        judged = con.execute("SELECT count(*) FROM judgements").fetchone() if "judgements" in tables else None
    counts = {(str(study), str(kind)): int(n) for study, kind, n in rows}
    if judged and judged[0]:
        counts[("coopeval", "judge")] = int(judged[0])
    return counts


def recorded_prompt_tokens(store: Path) -> dict[tuple[str, str], int]:
    """(study, kind) → prompt tokens the models reported on first attempts (``llm_calls`` rows
    with ``attempt = 0``; bots report none)."""
    with _read_only(store) as con:
        if "llm_calls" not in {r[0] for r in con.execute("SHOW TABLES").fetchall()}:
            return {}
        sql = "SELECT study, kind, sum(prompt_tokens) FROM llm_calls WHERE attempt = 0 AND prompt_tokens > 0 GROUP BY ALL"
        return {(str(study), str(kind)): int(n) for study, kind, n in con.execute(sql).fetchall()}


def _verdict(low: int, high: int, recorded: int) -> str:
    if low == high:
        return "exact" if recorded == high else "OUTSIDE"
    return "in range" if low <= recorded <= high else "OUTSIDE"


def compare(
    estimate: Mapping[str, Any], recorded: Mapping[tuple[str, str], int], prompt_tokens: Mapping[tuple[str, str], int] | None = None
) -> list[dict[str, Any]]:
    """One row per study (kind ``*``) and per (study, kind) of the estimate's JSON object or the
    store: ``study``, ``kind``, ``decisions_min``, ``decisions_max``, ``recorded``, ``verdict``,
    and ``input_tokens`` (the estimate's), ``recorded_prompt_tokens`` (``prompt_tokens``, from
    :func:`recorded_prompt_tokens`; 0 when not given) and ``token_ratio`` (their ratio, None
    where nothing was recorded)."""
    tokens = prompt_tokens or {}
    ranges: dict[tuple[str, str], list[int]] = {}
    for row in estimate["rows"]:
        bounds = ranges.setdefault((row["study"], row["kind"]), [0, 0, 0])
        bounds[0] += int(row["decisions_min"])
        bounds[1] += int(row["decisions_max"])
        bounds[2] += int(row["input_tokens"] or 0)

    def token_columns(estimated: int, seen: int) -> dict[str, Any]:
        return {"input_tokens": estimated, "recorded_prompt_tokens": seen, "token_ratio": round(estimated / seen, 4) if seen else None}

    out = []
    for study, bounds in sorted(estimate["studies"].items()):
        total = sum(n for (s, _), n in recorded.items() if s == study)
        low, high = int(bounds["decisions_min"]), int(bounds["decisions_max"])
        estimated = sum(b[2] for (s, _), b in ranges.items() if s == study)
        out.append({"study": study, "kind": "*", "decisions_min": low, "decisions_max": high, "recorded": total,
                    "verdict": _verdict(low, high, total),
                    **token_columns(estimated, sum(n for (s, _), n in tokens.items() if s == study))})
    for key in sorted(set(ranges) | set(recorded)):
        low, high, estimated = ranges.get(key, [0, 0, 0])
        n = int(recorded.get(key, 0))
        out.append({"study": key[0], "kind": key[1], "decisions_min": low, "decisions_max": high, "recorded": n,
                    "verdict": _verdict(low, high, n), **token_columns(estimated, int(tokens.get(key, 0)))})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="the run's DuckDB store (read only)")
    parser.add_argument("--configfile", action="extend", nargs="+", default=[], type=Path, metavar="FILE",
                        help="config overlays on config/config.yaml, as the run was given them")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    from coopeval.core.errors import ConfigError
    from coopeval.estimate.cli import DEFAULT_CONFIG
    from coopeval.estimate.report import estimate_config
    from coopeval.pipeline.config import load_config

    try:
        recorded, prompt_tokens = recorded_decisions(args.store), recorded_prompt_tokens(args.store)
        config = load_config([DEFAULT_CONFIG, *args.configfile])
    except (StoreError, ConfigError, OSError) as exc:  # before the estimate's seconds are spent
        print(f"estimate_vs_store: {exc}", file=sys.stderr)
        return 2
    with contextlib.redirect_stderr(io.StringIO()):  # the simulated cells' progress lines
        estimate = estimate_config(config).to_json()
    rows = compare(estimate, recorded, prompt_tokens)
    if args.json:
        print(json.dumps({"configs": [str(p) for p in args.configfile], "store": str(args.store), "rows": rows}, indent=1))
    else:
        print(f"{'study':<10} {'kind':<18} {'min':>8} {'max':>8} {'recorded':>9}  {'verdict':<9} {'input tok':>11} {'recorded':>11} {'ratio':>6}")
        for r in rows:
            ratio = "" if r["token_ratio"] is None else f"{r['token_ratio']:.3f}"
            print(f"{r['study']:<10} {r['kind']:<18} {r['decisions_min']:>8,} {r['decisions_max']:>8,} {r['recorded']:>9,}  {r['verdict']:<9}"
                  f" {r['input_tokens']:>11,} {r['recorded_prompt_tokens']:>11,} {ratio:>6}")
    return 1 if any(r["verdict"] == "OUTSIDE" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
