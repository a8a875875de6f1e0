"""The gossip study's figures and tables: file stems, report placement and captions (issue 10
item 7). Import-light (no Altair, polars or duckdb): the workflow reads it at parse time and the
renderers (:mod:`.figures`) use the same stems, so every file name is defined once.

Report placement: category ``"Gossip"``; subcategory the figure's subject. Captions live in
``workflow/report/`` under the caption name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from coopeval.studies.gossip.testbeds import TESTBEDS

CATEGORY = "Gossip"


@dataclass(frozen=True)
class Entry:
    """One figure or table page: file stem, report subcategory, caption file."""

    stem: str
    subcategory: str
    caption: str


FIGURES: tuple[Entry, ...] = (
    Entry("gossip_cooperation_by_round", "Cooperation", "gossip_cooperation_by_round.rst"),
    Entry("gossip_tone_by_action", "Gossip tones", "gossip_tone_by_action.rst"),
    Entry("gossip_max_cooperation", "Attacks", "gossip_max_cooperation.rst"),
    Entry("gossip_attack_returns", "Attacks", "gossip_attack_returns.rst"),
    Entry("gossip_ablations", "Ablations", "gossip_ablations.rst"),
    Entry("gossip_gamma_sweep", "Ablations", "gossip_gamma_sweep.rst"),
)
"""Every figure (written as ``results/figures/<stem>.<format>`` for each configured format)."""

TABLE_FORMATS = ("csv", "md", "tex")
"""The Tables 1–2 layout is written as ``results/tables/gossip_<testbed>.<format>``."""


def table_stems(testbeds: Sequence[str]) -> list[str]:
    """One Tables 1–2 layout per configured testbed, ``gossip_<testbed>``, in the registry's
    order (:data:`.testbeds.TESTBEDS`)."""
    return [f"gossip_{testbed}" for testbed in TESTBEDS if testbed in testbeds]


def table_entry(stem: str) -> Entry:
    """The report page of a table stem (``results/report/tables/<stem>.html``)."""
    return Entry(stem, "Tables", "gossip_table.rst")
