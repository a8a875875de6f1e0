"""Bytecode of the package written once per run, so no job compiles coopeval's sources.

Python reads a module's cached bytecode (``__pycache__/*.pyc``) when it is current, but writes it
only when it may: with ``PYTHONDONTWRITEBYTECODE`` set (as on the project machines) or a
read-only ``__pycache__``, an editable install recompiles every coopeval module in every job
process, about 0.3 s of CPU per job (docs/measurements.md). :func:`precompile_package` writes
the current bytecode explicitly (:mod:`compileall` ignores ``PYTHONDONTWRITEBYTECODE``); a module
already compiled costs one ``stat``.
"""

from __future__ import annotations

import compileall
from pathlib import Path

import coopeval

__all__ = ["precompile_package"]


def precompile_package() -> bool:
    """Compile every module of the installed ``coopeval`` package whose bytecode is missing or
    older than its source. Returns False if some file could not be compiled or written (a
    read-only install: the jobs then compile as before; nothing else changes)."""
    return bool(compileall.compile_dir(Path(coopeval.__file__).parent, quiet=2))
