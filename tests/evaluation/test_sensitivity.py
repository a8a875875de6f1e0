"""Prompt sensitivity statistics (:mod:`coopeval.evaluation.sensitivity`): a hand-computed design,
and the sums of squares against an independent least-squares computation (the drop in residual
sum of squares as each term's dummy columns are added to the model, which equals the classical
sum of squares in a balanced design)."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from coopeval.evaluation.sensitivity import SOURCES, prompt_sensitivity


def frame(cube: np.ndarray) -> pl.DataFrame:
    rows = [
        {"model": f"m{m}", "prompt_variant": f"v{v}", "context": f"c{c}", "value": float(cube[m, v, c])}
        for m, v, c in itertools.product(*map(range, cube.shape))
    ]
    return pl.DataFrame(rows)


def test_hand_computed_design() -> None:
    # model 0: v0 (1, 3), v1 (2, 4); model 1: v0 (5, 7), v1 (4, 6); grand mean 4
    y = np.array([[[1, 3], [2, 4]], [[5, 7], [4, 6]]], dtype=float)
    result = prompt_sensitivity(frame(y))
    # SS: model 2·2·(1.5² + 1.5²) = 18; variant 0 (both variant means 4); interaction 2·4·0.5² = 2;
    # context 2·2·(1² + 1²) = 8; total 28; residual 0
    assert result.shares["sum_sq"].to_list() == pytest.approx([18, 0, 2, 8, 0])
    assert result.shares["share"].to_list() == pytest.approx([18 / 28, 0, 2 / 28, 8 / 28, 0])
    assert result.shares["df"].to_list() == [1, 1, 1, 1, 3]
    assert result.per_variant.sort(["model", "prompt_variant"])["value"].to_list() == [2, 3, 6, 5]
    assert result.orderings["delta"].to_list() == [-4, -2] and result.orderings["holds"].all()
    assert (result.contexts_used, result.contexts_dropped) == (2, 0)


def test_an_ordering_that_flips_under_one_variant_does_not_hold() -> None:
    y = np.array([[[1, 3], [6, 6]], [[5, 7], [4, 6]]], dtype=float)  # model 0 ahead under v1 only
    result = prompt_sensitivity(frame(y))
    assert result.orderings["delta"].to_list() == [-4, 1] and not result.orderings["holds"].any()


def test_equal_values_give_zero_shares_and_no_ordering() -> None:
    result = prompt_sensitivity(frame(np.full((2, 3, 2), 0.5)))
    assert result.shares["share"].to_list() == [0.0] * 5
    assert not result.orderings["holds"].any()  # a tie is no ordering


def _dummies(labels: np.ndarray) -> np.ndarray:
    levels = np.unique(labels)
    return (labels[:, None] == levels[None, 1:]).astype(float)


def _rss(x: np.ndarray, y: np.ndarray) -> float:
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(((y - x @ beta) ** 2).sum())


@pytest.mark.parametrize("seed", range(5))
def test_sums_of_squares_match_least_squares(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (3, 3, 4)
    y = rng.normal(size=shape) + np.arange(3)[:, None, None] * 0.7 + rng.normal(size=shape[:2])[:, :, None]
    values = frame(y).with_row_index()
    m, v, c = (np.array([int(s[1:]) for s in values[col]]) for col in ("model", "prompt_variant", "context"))
    target = values["value"].to_numpy()
    blocks = {"model": _dummies(m), "prompt variant": _dummies(v), "context": _dummies(c)}
    blocks["model × prompt variant"] = np.einsum("ni,nj->nij", blocks["model"], blocks["prompt variant"]).reshape(len(m), -1)
    design = np.ones((len(m), 1))
    expected = {}
    for source in ("model", "prompt variant", "context", "model × prompt variant"):
        before = _rss(design, target)
        design = np.hstack([design, blocks[source]])
        expected[source] = before - _rss(design, target)
    expected["residual"] = _rss(design, target)
    result = prompt_sensitivity(values.drop("index"))
    assert result.shares["sum_sq"].to_list() == pytest.approx([expected[s] for s in SOURCES])
    assert sum(result.shares["share"]) == pytest.approx(1.0)


def test_incomplete_contexts_are_left_out_and_missing_columns_refused() -> None:
    y = np.array([[[1, 3, 9], [2, 4, 9]], [[5, 7, 9], [4, 6, 9]]], dtype=float)
    values = frame(y).filter(~((pl.col("context") == "c2") & (pl.col("model") == "m1") & (pl.col("prompt_variant") == "v1")))
    result = prompt_sensitivity(values)
    assert (result.models, result.contexts_used, result.contexts_dropped) == (["m0", "m1"], 2, 1)
    assert result.shares["sum_sq"].to_list() == pytest.approx([18, 0, 2, 8, 0])  # as without context 2
    # model 0's means use all three of its contexts: v0 (1 + 3 + 9) / 3, v1 (2 + 4 + 9) / 3
    assert result.per_variant.filter(pl.col("model") == "m0")["value"].to_list() == pytest.approx([13 / 3, 5])
    assert result.per_variant["n_contexts"].to_list() == [3, 3, 2, 2]
    with pytest.raises(ValueError, match="columns"):
        prompt_sensitivity(values.drop("context"))
    with pytest.raises(ValueError, match="no context has a value"):
        prompt_sensitivity(values.filter(pl.col("prompt_variant") == "v0").vstack(frame(y[1:, :1, :1]).with_columns(pl.lit("v1").alias("prompt_variant"), pl.lit("cx").alias("context"))))


def test_an_agent_playing_only_some_contexts_leaves_the_decomposition_but_keeps_its_means() -> None:
    """As in config/config.yaml, where two agents play every mechanism and two only NoMechanism."""
    y = np.array([[[1, 3, 5, 7], [2, 4, 6, 8]], [[5, 7, 1, 1], [4, 6, 1, 1]], [[0, 1, 0, 0], [2, 3, 0, 0]]], dtype=float)
    values = frame(y).filter(~((pl.col("model") == "m2") & pl.col("context").is_in(["c2", "c3"])))
    result = prompt_sensitivity(values)
    assert (result.models, result.contexts_used, result.contexts_dropped) == (["m0", "m1"], 4, 0)
    assert result.per_variant.filter(pl.col("model") == "m2")["value"].to_list() == pytest.approx([0.5, 2.5])
    pair = result.orderings.filter((pl.col("a") == "m1") & (pl.col("b") == "m2"))
    assert pair["delta"].to_list() == pytest.approx([5.5, 2.5]) and pair["n_contexts"].to_list() == [2, 2] and pair["holds"].all()
