"""Where a job writes: derived from the rule's declared outputs, never hard-coded in a script.

The workflow's rules own every output path; a script receives them in ``snakemake.output`` and
hands the library the folder they share (:func:`output_dir`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def output_dir(paths: str | Iterable[str]) -> Path:
    """The one folder holding every file of ``paths`` (a rule's outputs, or a named group).

    Raises
    ------
    ValueError
        If ``paths`` is empty or its files lie in different folders (name the outputs by
        folder in the rule, e.g. ``tables=...`` and ``pages=...``, and pass each group).
    """
    files = [paths] if isinstance(paths, str) else [str(p) for p in paths]
    if not files:
        raise ValueError("output_dir: the rule declares no output here; declare the files the job writes")
    folders = sorted({os.path.dirname(os.path.normpath(f)) for f in files})
    if len(folders) != 1:
        raise ValueError(f"output_dir: the outputs lie in several folders ({', '.join(folders)}); name each group of outputs in the rule")
    return Path(folders[0])
