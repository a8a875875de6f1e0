"""Import adapter for the authors' released CoopEval data (``Xiao215/CoopEval`` layout).

Reads one run folder (experiment folders such as ``no_mechanism_prisoners_dilemma/``) or a folder
of run folders (each run = one replicate) into polars frames with the schemas of our own runs
(:mod:`coopeval.core.schemas`: ``matchups``, ``scores``, ``decisions``, ``designs``,
``votes``, ``selections``) plus the reference-only tables of :mod:`coopeval.studies.coopeval.reference.schemas`
(``released_metrics``, ``experiments``, ``import_flags``). Every row carries
``source = "reference"``, ``run`` = the run folder name and ``cell_id`` =
``"<run>/<experiment folder>"``.

Formats and every schema variant: docs/protocol/reference-data.md#layout and ``data/README.md``. Variants accepted:

* ``records.jsonl`` or ``records.jsonl.gz`` (gzip), or no records at all (flagged; metrics still
  come from ``matchup_payoffs.json``);
* moves with or without ``"response"``; ``"mediated": true`` only on delegated moves;
* design files with or without ``"response"``;
* vote dicts keyed ``"1".."N"`` (also ``M1``/``C1``);
* Mediation/Contracting record lines as ``[{…}]`` or a bare ``{…}``.

Validation is strict and happens entirely in memory before anything is returned: a missing or
malformed file raises :class:`ReferenceImportError`, whose message names every offending file and
what was expected. Nothing is written by this package (see :mod:`coopeval.studies.coopeval.reference.store`).

Entry points: :func:`import_reference` (a whole data folder) and :func:`import_experiment` (one
experiment folder). Modules, one concept each, in reading order:

* :mod:`.layout` — experiment-folder names and run discovery;
* :mod:`.errors` — :class:`ImportProblem`, :class:`ReferenceImportError`;
* :mod:`.fields` — the JSON reader and field validators;
* :mod:`.config` — ``config.json`` → experiment config (game checked against docs/protocol/games.md);
* :mod:`.matchups` — ``matchup_payoffs.json`` → ``matchups`` and ``scores`` rows;
* :mod:`.metrics` — summary files → ``released_metrics`` rows;
* :mod:`.designs` — design files → ``designs`` rows;
* :mod:`.moves`, :mod:`.records`, :mod:`.votes` — record lines → ``decisions``, ``votes``,
  ``selections`` rows;
* :mod:`.flags` — non-fatal findings (``import_flags``);
* :mod:`.rows` — row accumulation and conformed frames (:data:`IMPORTED_TABLES`);
* :mod:`.experiment` — one experiment folder; :mod:`.dataset` — the whole data folder.
"""

from __future__ import annotations

from coopeval.studies.coopeval.reference.importer.dataset import ReferenceData, import_reference
from coopeval.studies.coopeval.reference.importer.errors import ImportProblem, ReferenceImportError
from coopeval.studies.coopeval.reference.importer.experiment import import_experiment
from coopeval.studies.coopeval.reference.importer.fields import agent_type_string
from coopeval.studies.coopeval.reference.importer.flags import KNOWN_DR_RERUN_MISMATCHES
from coopeval.studies.coopeval.reference.importer.layout import (
    GAME_STEMS,
    MECHANISM_STEMS,
    discover_runs,
)
from coopeval.studies.coopeval.reference.importer.rows import IMPORTED_TABLES

__all__ = [
    "GAME_STEMS",
    "IMPORTED_TABLES",
    "KNOWN_DR_RERUN_MISMATCHES",
    "MECHANISM_STEMS",
    "ImportProblem",
    "ReferenceData",
    "ReferenceImportError",
    "agent_type_string",
    "discover_runs",
    "import_experiment",
    "import_reference",
]
