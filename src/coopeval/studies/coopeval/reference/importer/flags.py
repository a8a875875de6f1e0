"""Import flags: findings that do not stop the import but are recorded in ``import_flags``.

Each flag is ``(flag, detail)``; the flag names are

* ``records_missing`` — no ``records.jsonl(.gz)``: decisions, votes and selections are absent;
* ``records_inconsistent`` — recorded points or outcomes disagree with the mechanism's rules;
* ``dr_release_not_reproducible`` — a released ``deviation_ratings.json`` that the authors' own
  code does not reproduce (:data:`KNOWN_DR_RERUN_MISMATCHES`, docs/protocol/evaluation.md#deviation-ratings);
* ``experiment_missing`` — a mostly complete main-study run lacks an experiment folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from coopeval.studies.coopeval.reference.importer.layout import MAIN_STUDY_EXPERIMENTS

__all__ = [
    "KNOWN_DR_RERUN_MISMATCHES",
    "ImportFlag",
    "dr_release_flag",
    "missing_main_experiments",
    "records_inconsistent_flag",
    "records_missing_flag",
]

KNOWN_DR_RERUN_MISMATCHES: frozenset[tuple[int, str]] = frozenset(
    {(1, "mediation_matching_pennies"), (1, "no_mechanism_stag_hunt"), (3, "contracting_prisoners_dilemma")}
)
"""(run number, experiment) whose released ``deviation_ratings.json`` the authors' own code does
not reproduce with gurobipy 13.0.3 (docs/protocol/evaluation.md#deviation-ratings)."""

_RUN_NUMBER = re.compile(r"run(\d+)")


class ImportFlag(NamedTuple):
    """One non-fatal finding of an experiment: flag name and human-readable detail."""

    flag: str
    detail: str


def records_missing_flag() -> ImportFlag:
    """The experiment has no records file."""
    return ImportFlag("records_missing", "no records.jsonl(.gz); decisions, votes and selections are not imported")


def records_inconsistent_flag(findings: list[str]) -> ImportFlag:
    """Some record lines disagree with the mechanism; ``findings`` is non-empty, one per line."""
    return ImportFlag("records_inconsistent", f"{len(findings)} line(s), first: {findings[0]}")


def dr_release_flag(run: str, experiment: str) -> ImportFlag | None:
    """The flag for a known non-reproducible released DR, or None.

    The run number is the first ``run<digits>`` in the run folder name ``run``.
    """
    run_match = _RUN_NUMBER.search(run)
    if run_match and (int(run_match.group(1)), experiment) in KNOWN_DR_RERUN_MISMATCHES:
        return ImportFlag(
            "dr_release_not_reproducible",
            "the released deviation_ratings.json is not reproduced even by the authors' code "
            "with gurobipy 13.0.3 (docs/protocol/evaluation.md#deviation-ratings)",
        )
    return None


def missing_main_experiments(present: Iterable[str]) -> list[str]:
    """Main-study experiment folders missing from a run, sorted; [] for a deliberate subset.

    A main-study run has all 6 mechanisms x 6 games; a folder missing from a mostly complete run
    would silently shrink a table's averages, so it is flagged (``experiment_missing``). Runs
    with fewer than half of the experiments are treated as deliberate subsets (not flagged).
    """
    names = set(present)
    if len(names & MAIN_STUDY_EXPERIMENTS) < len(MAIN_STUDY_EXPERIMENTS) // 2:
        return []
    return sorted(MAIN_STUDY_EXPERIMENTS - names)
