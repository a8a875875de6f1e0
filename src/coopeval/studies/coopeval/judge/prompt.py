"""The judge prompt (docs/protocol/design-checks.md#what-is-judged): the game's name, the numbered categories with their
definitions, and the judged response text.

The template is our own wording, kept as a file (default ``resources/prompts/judge/judge.txt``,
a subfolder so that editing it never changes the play cells' prompt hash). It uses
:class:`string.Template` placeholders: ``$game`` (the game's title), ``$categories`` (one
numbered line per label, "n. Name: definition"), ``$fallback`` (the fallback label) and
``$response`` (the judged text, trimmed).
"""

from __future__ import annotations

import os
import string
from pathlib import Path

from coopeval.decisions.taxonomy import Taxonomy

__all__ = ["JudgePrompt", "category_lines"]

_PLACEHOLDERS = ("game", "categories", "fallback", "response")


def category_lines(taxonomy: Taxonomy) -> str:
    """The numbered category list of the prompt: ``"1. Name: definition"`` per label, fallback last."""
    return "\n".join(f"{n}. {name}: {definition}" for n, name, definition in taxonomy.numbered())


class JudgePrompt:
    """A judge prompt template bound to a taxonomy.

    Parameters
    ----------
    taxonomy:
        The labels and definitions listed in the prompt (and accepted in answers).
    template:
        Path of the template file (the workflow passes ``<prompts_dir>/judge/judge.txt``).

    Raises
    ------
    FileNotFoundError
        If the template file does not exist.
    ValueError
        If the template lacks ``$categories`` or ``$response``, or uses an unknown placeholder.
    """

    def __init__(self, taxonomy: Taxonomy, template: str | os.PathLike[str]) -> None:
        path = Path(template)
        self.path = path
        self.text = path.read_text(encoding="utf-8").rstrip("\n")
        self.template = string.Template(self.text)
        names = {
            m.group("named") or m.group("braced") for m in self.template.pattern.finditer(self.text)
        } - {None}
        unknown = sorted(names - set(_PLACEHOLDERS))
        if unknown:
            raise ValueError(
                f"{path}: unknown placeholder ${unknown[0]} (allowed: {', '.join('$' + p for p in _PLACEHOLDERS)})"
            )
        missing = [p for p in ("categories", "response") if p not in names]
        if missing:
            raise ValueError(f"{path}: the judge template needs ${missing[0]}")
        self.taxonomy = taxonomy
        self._categories = category_lines(taxonomy)

    def render(self, game_title: str, response: str) -> str:
        """The prompt body for one judged response (the style instruction is added by the
        decision loop)."""
        return self.template.substitute(
            game=game_title,
            categories=self._categories,
            fallback=self.taxonomy.fallback,
            response=response.strip(),
        )
