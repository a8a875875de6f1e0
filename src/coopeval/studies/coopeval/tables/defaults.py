"""Dependency-free defaults of the evaluation and table settings, and :class:`TableSettings`
that carries them (imported by the CLI without numpy/polars).

The replicator settings and the bootstrap size are read from the study's config schema
(``config.schema.yaml``, keys ``evaluation.steps``, ``evaluation.lr``, ``tables.bootstrap``),
where they are declared once; library functions and the CLI take their defaults from here.
Replicator defaults: CoopEval (arXiv 2604.15267) docs/protocol/answers.md (uniform start, 1000 steps, η = 0.1).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from coopeval.core.packaged import packaged_yaml

if TYPE_CHECKING:  # frames imports polars; this module stays dependency-free
    from coopeval.studies.coopeval.tables.frames import AgentColumns


@functools.cache
def _schema_properties() -> dict[str, Any]:
    properties: dict[str, Any] = packaged_yaml("coopeval.studies.coopeval", "config.schema.yaml")["properties"]
    return properties


def schema_default(section: str, key: str) -> Any:
    """The default of ``<section>.<key>`` in the CoopEval config schema.

    Raises
    ------
    KeyError
        Naming the key, if the schema declares no such key or no default for it.
    """
    try:
        return _schema_properties()[section]["properties"][key]["default"]
    except KeyError:
        raise KeyError(f"config.schema.yaml declares no default for {section}.{key}") from None


REPLICATOR_STEPS: int = schema_default("evaluation", "steps")
"""Replicator-dynamics updates (schema ``evaluation.steps``)."""

REPLICATOR_LR: float = schema_default("evaluation", "lr")
"""Replicator learning rate η (schema ``evaluation.lr``)."""

DEFAULT_RESAMPLES: int = schema_default("tables", "bootstrap")
"""Default number of bootstrap resamples (schema ``tables.bootstrap``)."""

DEFAULT_SEED = 20260415
"""Default bootstrap seed of ``coopeval reproduce`` (any fixed integer; recorded in the store
metadata and table notes). The workflow uses the config's ``seed``."""


@dataclass(frozen=True)
class TableSettings:
    """How the result tables are computed and laid out: one value per config key, shared by the ``tables``
    rule (:func:`coopeval.studies.coopeval.tables.from_store.tables_from_store`), ``coopeval
    reproduce`` (:func:`coopeval.studies.coopeval.reference.cli.reproduce`) and
    :func:`coopeval.studies.coopeval.tables.builder.build_tables`.

    Attributes
    ----------
    dr_rule:
        Rule whose ``DR_rank`` is used for ``DR`` where no released ratings exist
        (``evaluation.dr_rule``).
    n_bootstrap, seed:
        Bootstrap resamples of the Mean/Fitness intervals (0 disables them; ``tables.bootstrap``)
        and seed (``seed``).
    steps, lr:
        Replicator settings of the bootstrap; pass the ones the ``metrics`` were computed with
        (``evaluation.steps`` / ``evaluation.lr``), so the Fitness intervals match the point
        estimates.
    columns:
        Column order and labels of the agent types (from the config's roster, see
        :func:`coopeval.studies.coopeval.tables.roster.table_agents`; agents not listed follow,
        sorted; ``None``: sorted type strings).
    """

    dr_rule: str = "strictest"
    n_bootstrap: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    steps: int = REPLICATOR_STEPS
    lr: float = REPLICATOR_LR
    columns: AgentColumns | None = None


DEFAULT_TABLE_SETTINGS = TableSettings()
"""Every table setting at its default (the schema's; :data:`DEFAULT_SEED`)."""
