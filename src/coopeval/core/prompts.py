"""Prompt templates: our own wording, kept as files in ``resources/prompts/``.

Templates use :class:`string.Template` placeholders (``$name``). Their content hash enters
every cell hash, so editing a prompt gives new Snakemake targets while unchanged prompts keep
replaying from the cache.
"""

from __future__ import annotations

import hashlib
import string
from pathlib import Path



class PromptLibrary:
    """All ``*.txt`` templates of one directory, rendered by name.

    Raises
    ------
    FileNotFoundError
        If the directory does not exist or holds no templates.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        files = sorted(self.directory.glob("*.txt"))
        if not files:
            raise FileNotFoundError(f"no prompt templates (*.txt) in {self.directory}")
        self.templates = {f.stem: f.read_text(encoding="utf-8").rstrip("\n") for f in files}

    def render(self, name: str, **values: object) -> str:
        """Render template ``name``.

        Raises
        ------
        KeyError
            Naming the template and the missing placeholder.
        """
        if name not in self.templates:
            raise KeyError(f"prompt template {name!r} not found in {self.directory}")
        try:
            return string.Template(self.templates[name]).substitute(values)
        except KeyError as exc:
            raise KeyError(f"prompt template {name!r} needs a value for ${exc.args[0]}") from None

    def content_hash(self) -> str:
        """sha256 over template names and texts (hex, first 16 chars)."""
        digest = hashlib.sha256()
        for name in sorted(self.templates):
            digest.update(name.encode() + b"\0" + self.templates[name].encode() + b"\0")
        return digest.hexdigest()[:16]


def number_text(x: float) -> str:
    """A number as a prompt states it: the value the engine computes with, to 12 significant
    digits (relative error below 1e-12, so float noise such as ``3.3000000000000003`` reads
    ``3.3``): ``3``, ``-2``, ``1.5``, ``0.333``, ``1e-07``. Never rounded to a display precision,
    so a stated payoff equals the paid one (issue 13 kind 11b).

    Raises
    ------
    ValueError
        For NaN or an infinite value (no payoff is stated as one).
    """
    value = float(x)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"cannot state {x!r} as a payoff number")
    return f"{value:.12g}"
