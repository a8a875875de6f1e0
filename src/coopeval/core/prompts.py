"""Prompt templates: our own wording, kept as files (``resources/prompts/`` for CoopEval, each
study's ``prompts/`` folder for gossip and evolution).

Templates use :class:`string.Template` placeholders (``$name``). A cell's id includes the content
of exactly the templates that cell can render (:meth:`PromptLibrary.content_hash` over the names
its study declares for it), so editing a prompt gives new Snakemake targets for the cells that
read it while every other cell keeps its id and replays from the cache. A library restricted to a
cell's declaration (:meth:`PromptLibrary.restricted`) refuses to render any other template, so the
declaration cannot drift from what is played.

Prompt variants (paraphrases, docs/paraphrases.md): a folder ``variants/<name>/`` beside the base
templates holds reworded copies of some of them (same file names, same placeholders);
:meth:`PromptLibrary.variant` overlays them on the base wording, so a template without a
reworded copy reads as in the base. ``base`` names the base wording itself.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from coopeval.core.errors import ConfigError

BASE_VARIANT = "base"
"""The name of the base wording (the templates of the folder itself)."""

VARIANTS_FOLDER = "variants"
"""The sub-folder of a template folder that holds one folder of reworded templates per variant."""


class UndeclaredTemplateError(KeyError):
    """A template rendered by a cell that did not declare it (its content is not in the cell id)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class PromptLibrary:
    """All ``*.txt`` templates of one directory, rendered by name.

    Parameters
    ----------
    directory:
        The folder holding ``<name>.txt`` files (one trailing newline is stripped from each).
    allowed:
        If given, the only template names :meth:`render` accepts (see :meth:`restricted`).

    Raises
    ------
    FileNotFoundError
        If the directory does not exist or holds no templates.
    KeyError
        If ``allowed`` names a template that does not exist.
    """

    def __init__(self, directory: str | Path, allowed: Iterable[str] | None = None) -> None:
        self.directory = Path(directory)
        files = sorted(self.directory.glob("*.txt"))
        if not files:
            raise FileNotFoundError(f"no prompt templates (*.txt) in {self.directory}")
        self.templates = {f.stem: f.read_text(encoding="utf-8").rstrip("\n") for f in files}
        self.allowed: frozenset[str] | None = None if allowed is None else self._known(allowed)
        self.variant_name = BASE_VARIANT

    def _known(self, names: Iterable[str]) -> frozenset[str]:
        chosen = frozenset(names)
        unknown = sorted(chosen - set(self.templates))
        if unknown:
            raise KeyError(f"prompt template(s) {', '.join(unknown)} not found in {self.directory}")
        return chosen

    def restricted(self, names: Iterable[str]) -> PromptLibrary:
        """A copy of this library that renders only ``names`` (a cell's declared templates).

        Raises
        ------
        KeyError
            If a name is not a template of the library.
        """
        view = object.__new__(PromptLibrary)
        view.directory, view.templates, view.allowed = self.directory, self.templates, self._known(names)
        view.variant_name = self.variant_name
        return view

    def variant(self, name: str) -> PromptLibrary:
        """This library read in the wording of variant ``name``: the templates of
        ``<directory>/variants/<name>/`` replace the base templates of the same name, every other
        template stays as in the base; ``base`` returns the library unchanged.

        The restriction, if any, is kept; :meth:`content_hash` then hashes the variant's texts,
        so a cell's prompt hash changes exactly when it renders a reworded template.

        Raises
        ------
        ValueError
            If the variant does not exist (naming the available ones, :func:`prompt_variants`),
            if the library is already a variant, or if a reworded file has no base template
            of the same name.
        """
        if name == BASE_VARIANT:
            return self
        if self.variant_name != BASE_VARIANT:
            raise ValueError(f"prompt library is already variant {self.variant_name!r}; take variants of the base library")
        available = prompt_variants(self.directory)
        if name not in available:
            raise ValueError(
                f"unknown prompt variant {name!r} for the templates in {self.directory}; available: {', '.join(available)}"
            )
        folder = self.directory / VARIANTS_FOLDER / name
        reworded = {f.stem: f.read_text(encoding="utf-8").rstrip("\n") for f in sorted(folder.glob("*.txt"))}
        orphans = sorted(set(reworded) - set(self.templates))
        if orphans:
            raise ValueError(f"prompt variant {name!r} rewords {', '.join(orphans)}, which are not templates of {self.directory}")
        view = object.__new__(PromptLibrary)
        view.directory, view.templates, view.allowed = self.directory, {**self.templates, **reworded}, self.allowed
        view.variant_name = name
        return view

    def render(self, name: str, /, **values: object) -> str:
        """Render template ``name`` (positional only, so a template may have a ``$name`` placeholder).

        Raises
        ------
        UndeclaredTemplateError
            If the library is :meth:`restricted` and ``name`` is not among its templates.
        KeyError
            Naming the template and the missing placeholder, or an unknown template.
        """
        if self.allowed is not None and name not in self.allowed:
            raise UndeclaredTemplateError(
                f"prompt template {name!r} is rendered but not declared for this cell, so its content is not part "
                f"of the cell id; add it to the study's template declaration"
            )
        if name not in self.templates:
            raise KeyError(f"prompt template {name!r} not found in {self.directory}")
        try:
            return string.Template(self.templates[name]).substitute(values)
        except KeyError as exc:
            raise KeyError(f"prompt template {name!r} needs a value for ${exc.args[0]}") from None

    def content_hash(self, names: Iterable[str] | None = None) -> str:
        """sha256 over the names and texts of the templates ``names`` (default: the
        restriction if any, else all), sorted by name (hex, first 16 chars).

        Raises
        ------
        KeyError
            If a name is not a template of the library.
        """
        chosen = self.allowed if names is None else self._known(names)
        digest = hashlib.sha256()
        for name in sorted(self.templates if chosen is None else chosen):
            digest.update(name.encode() + b"\0" + self.templates[name].encode() + b"\0")
        return digest.hexdigest()[:16]


def prompt_variants(directory: str | Path) -> tuple[str, ...]:
    """The prompt variants of a template folder: ``base`` first, then the names of the folders
    under ``<directory>/variants/`` that hold at least one ``*.txt`` template, sorted."""
    root = Path(directory) / VARIANTS_FOLDER
    found = sorted(d.name for d in root.iterdir() if d.is_dir() and any(d.glob("*.txt"))) if root.is_dir() else []
    return (BASE_VARIANT, *found)


def variant_position(spec: Mapping[str, Any]) -> dict[str, str]:
    """What a cell's prompt variant adds to each decision's position (and so to its cache key,
    :class:`~coopeval.agents.maker.DecisionMaker`): ``{"prompt_variant": name}``, or nothing for
    a base-wording cell (its keys stay as they were before variants existed)."""
    name = str(spec.get("prompt_variant", BASE_VARIANT))
    return {} if name == BASE_VARIANT else {"prompt_variant": name}


def check_prompt_variants(names: Sequence[str], directory: str | Path, study: str) -> None:
    """Refuse a configured prompt variant (config key ``prompt_variants``) that ``study``'s
    template folder ``directory`` does not have, before any model call.

    Raises
    ------
    ConfigError
        Naming the key, the unknown variant(s) and the available ones.
    """
    available = prompt_variants(directory)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ConfigError(
            f"config prompt_variants: {', '.join(map(repr, unknown))} is not a prompt variant of the {study} study "
            f"(templates in {directory}); use one of {', '.join(available)}, or add the folder "
            f"{Path(directory) / VARIANTS_FOLDER / unknown[0]} (docs/paraphrases.md)."
        )


class TemplateFolder:
    """The templates of one folder, loaded on first use (texts the engine writes itself: re-asks,
    error messages, bot messages, payoff descriptions), hashed from disk on demand.

    Parameters
    ----------
    directory:
        A folder of ``<name>.txt`` :class:`string.Template` files (see :class:`PromptLibrary`).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._library: PromptLibrary | None = None

    def render(self, name: str, /, **values: object) -> str:
        """Render template ``name``.

        Raises
        ------
        KeyError
            An unknown template or a missing placeholder value (naming it).
        """
        if self._library is None:
            self._library = PromptLibrary(self.directory)
        return self._library.render(name, **values)

    def content_hash(self) -> str:
        """:meth:`PromptLibrary.content_hash` of every template, read from disk now."""
        return PromptLibrary(self.directory).content_hash()


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
