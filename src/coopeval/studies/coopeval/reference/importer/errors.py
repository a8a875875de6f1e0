"""Errors of the reference import: one :class:`ImportProblem` per offending file.

Every reader of this package raises :class:`ReleasedFileError` (file + what was expected) on the
first problem of a file; :func:`~coopeval.studies.coopeval.reference.importer.import_reference`
collects them, at most one per experiment, into one :class:`ReferenceImportError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ImportProblem", "ReferenceImportError", "ReleasedFileError"]


@dataclass(frozen=True)
class ImportProblem:
    """One validation failure: the file and what was expected there."""

    path: Path
    expected: str

    def __str__(self) -> str:
        return f"{self.path}: {self.expected}"


class ReferenceImportError(ValueError):
    """The reference data could not be imported; nothing was imported.

    ``problems`` lists every failing file (one per experiment at most) with what was expected.
    """

    def __init__(self, problems: Sequence[ImportProblem]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"reference import failed ({len(self.problems)} problem(s)); nothing imported:\n{lines}")


class ReleasedFileError(Exception):
    """A released file is missing or malformed; ``problem`` names it and what was expected.

    Internal to the importer: the public functions turn it into :class:`ReferenceImportError`.
    """

    def __init__(self, path: Path, expected: str) -> None:
        super().__init__(f"{path}: {expected}")
        self.problem = ImportProblem(path, expected)
