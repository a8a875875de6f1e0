"""Which play cells each judge job reads: the judge's shards.

Judging every eligible decision (``judge.sample_size: 0``, the paper grid) is one job per
(mechanism, game) pair, named ``"<mechanism>-<game>"``: the judging of a finished pair overlaps
the play of the others, so a run against a rate-limited provider keeps its calls in flight
instead of waiting for the last cell (issue 12: at the paper's scale the judge is ~40 % of the
calls). Eligibility is decided row by row (:func:`~.selection.eligible_decisions`), so the union
of the shards' selections is the selection over all cells, and the ``judge`` rule's gather
(:func:`gather_judgements`) gives the same tables as one job would. A sample
(``sample_size > 0``) is drawn over all eligible decisions at once, so it stays one shard,
:data:`ALL`.

Only cells with a CoT agent are read: no other cell has an eligible decision, and each
decision's sampling key is its own (:func:`~.selection.sample_decisions`), so the sample is
the same. The judge then starts as soon as those cells are played (in the default config the
six NoMechanism cells) and runs beside the rest of the play instead of after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.io import write_parquet_atomic
from coopeval.studies.coopeval.prompt_use import agent_styles

ALL = "all"
"""The one shard of a sampled judge: every judged cell."""


def judge_shards(cells: Sequence[Mapping[str, Any]], sample_size: int) -> dict[str, list[Mapping[str, Any]]]:
    """The judge's shards: shard name → the default-variant cells it reads, in input order.

    Parameters
    ----------
    cells:
        CoopEval cells (keys ``mechanism``, ``game``, ``variant``, ``agents``); ablation variants
        and cells with no CoT agent are never judged.
    sample_size:
        The config's ``judge.sample_size`` (0: judge every eligible decision).

    Returns
    -------
    ``{"<mechanism>-<game>": cells}`` per pair when ``sample_size`` is 0, else ``{"all": cells}``;
    ``{"all": []}`` when no default-variant cell has a CoT agent (the judge then writes empty
    tables).
    """
    judged = [c for c in cells if c["variant"] == "default" and "CoT" in agent_styles(c)]
    if sample_size > 0 or not judged:
        return {ALL: judged}
    shards: dict[str, list[Mapping[str, Any]]] = {}
    for cell in judged:
        shards.setdefault(f"{cell['mechanism']}-{cell['game']}", []).append(cell)
    return shards


def gather_judgements(
    shard_outputs: Mapping[str, Sequence[str | Path]], outputs: Mapping[str, str | Path]
) -> dict[str, int]:
    """Concatenate the shards' ``judgements`` and ``llm_calls`` Parquet files into ``outputs``
    (same keys), judgements sorted by (cell_id, decision_id) and calls by (decision_id,
    attempt), as one job over all cells writes them. Returns the row count per table."""
    sort_keys = {"judgements": ["cell_id", "decision_id"], "llm_calls": ["decision_id", "attempt"]}
    counts: dict[str, int] = {}
    for table, paths in shard_outputs.items():
        frame = pl.concat([pl.read_parquet(p) for p in paths]).sort(sort_keys[table], maintain_order=True)
        write_parquet_atomic(frame, outputs[table])
        counts[table] = frame.height
    return counts
