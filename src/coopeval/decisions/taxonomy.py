"""The judge's justification taxonomy as data (docs/protocol/design-checks.md#categories).

The categories live in ``coopeval/data/justification_taxonomy.yaml``; :func:`load_taxonomy`
reads and validates that file (or another one with the same shape) into a :class:`Taxonomy`.
Its :attr:`Taxonomy.labels` (the 15 categories in prompt order, then the fallback ``Other``)
are the canonical labels of the judge's :class:`AnswerFormat`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from coopeval.decisions.formats import JudgeLabels

__all__ = ["DEFAULT_TAXONOMY", "Taxonomy", "TaxonomyError", "load_taxonomy"]

DEFAULT_TAXONOMY = "data/justification_taxonomy.yaml"  # inside the coopeval package


@dataclass(frozen=True)
class Taxonomy:
    """Judge labels in prompt order.

    Attributes
    ----------
    labels:
        The category names in prompt order followed by the fallback label (numbered 1..16 in
        the judge prompt).
    definitions:
        One definition per label, aligned with :attr:`labels`.
    source:
        Where the taxonomy was read from (for messages and provenance).
    """

    labels: tuple[str, ...]
    definitions: tuple[str, ...]
    source: str = "<memory>"

    @property
    def categories(self) -> tuple[str, ...]:
        """The category names without the fallback."""
        return self.labels[:-1]

    @property
    def fallback(self) -> str:
        """The explicit fallback label (``"Other"``)."""
        return self.labels[-1]

    def definition_of(self, label: str) -> str:
        """The definition of a canonical label; ``KeyError`` for an unknown one."""
        try:
            return self.definitions[self.labels.index(label)]
        except ValueError:
            raise KeyError(label) from None

    def numbered(self) -> tuple[tuple[int, str, str], ...]:
        """``(n, name, definition)`` for n = 1..len(labels), as the judge prompt lists them."""
        return tuple((i + 1, name, d) for i, (name, d) in enumerate(zip(self.labels, self.definitions, strict=False)))

    def answer_format(self) -> JudgeLabels:
        """The judge's answer contract over these labels (docs/protocol/design-checks.md#what-is-judged "Our contract")."""
        return JudgeLabels(self.labels)


class TaxonomyError(ValueError):
    """The taxonomy file is missing, unreadable or malformed; the message names file and field."""


_ALLOWED_KEYS = ("categories", "fallback", "fallback_definition")
_NUMERIC_NAME = re.compile(r"(?:category\s*)?[0-9]+", re.IGNORECASE)


def load_taxonomy(path: str | os.PathLike[str] | None = None) -> Taxonomy:
    """Read and validate a taxonomy YAML file (default: the packaged docs/protocol/design-checks.md#categories taxonomy).

    The file must be a mapping with ``categories`` (a non-empty list of ``{name, definition}``
    mappings, in prompt order), ``fallback`` (the fallback label, e.g. ``Other``) and optionally
    ``fallback_definition``. Names must be non-empty, unique after case/whitespace
    normalisation, free of commas and not look like a numeric alias (``3``, ``Category3``).

    Raises
    ------
    TaxonomyError
        The file cannot be read or parsed, or a field is missing or invalid; the message is
        ``"<file>: <field>: <problem>"``.
    """
    import yaml  # lazy: keep `import coopeval.decisions` light

    if path is None:
        resource = resources.files("coopeval").joinpath(DEFAULT_TAXONOMY)
        source = f"coopeval/{DEFAULT_TAXONOMY}"
        try:
            text = resource.read_text(encoding="utf-8")
        except OSError as exc:
            raise TaxonomyError(f"{source}: cannot read the packaged taxonomy: {exc}") from exc
    else:
        source = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise TaxonomyError(f"{source}: cannot read file: {exc.strerror or exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TaxonomyError(f"{source}: not valid YAML: {exc}") from exc
    return _taxonomy_from_data(data, source)


def _taxonomy_from_data(data: Any, source: str) -> Taxonomy:
    def fail(field: str, problem: str) -> TaxonomyError:
        return TaxonomyError(f"{source}: {field}: {problem}")

    if not isinstance(data, dict):
        raise fail("<top level>", "expected a mapping with keys 'categories' and 'fallback'")
    unknown = sorted(str(k) for k in data if k not in _ALLOWED_KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown key (allowed: {', '.join(_ALLOWED_KEYS)})")
    categories = data.get("categories")
    if not isinstance(categories, list) or not categories:
        raise fail("categories", "must be a non-empty list of {name, definition} mappings")

    names: list[str] = []
    definitions: list[str] = []
    seen: dict[str, str] = {}

    def check_name(field: str, name: Any) -> str:
        if not isinstance(name, str) or not name.strip():
            raise fail(field, "must be a non-empty string")
        name = " ".join(name.split())
        if "," in name:
            raise fail(field, f"{name!r} contains a comma (labels are comma-separated in answers)")
        if _NUMERIC_NAME.fullmatch(name):
            raise fail(field, f"{name!r} looks like a numeric category alias")
        key = name.casefold()
        if key in seen:
            raise fail(field, f"{name!r} duplicates {seen[key]}")
        seen[key] = field
        return name

    for i, item in enumerate(categories):
        field = f"categories[{i}]"
        if not isinstance(item, dict):
            raise fail(field, "must be a mapping with 'name' and 'definition'")
        extra = sorted(str(k) for k in item if k not in ("name", "definition"))
        if extra:
            raise fail(f"{field}.{extra[0]}", "unknown key (allowed: name, definition)")
        names.append(check_name(f"{field}.name", item.get("name")))
        definition = item.get("definition")
        if not isinstance(definition, str) or not definition.strip():
            raise fail(f"{field}.definition", "must be a non-empty string")
        definitions.append(" ".join(definition.split()))

    names.append(check_name("fallback", data.get("fallback")))
    fallback_definition = data.get("fallback_definition", "Nothing else fits.")
    if not isinstance(fallback_definition, str) or not fallback_definition.strip():
        raise fail("fallback_definition", "must be a non-empty string")
    definitions.append(" ".join(fallback_definition.split()))
    return Taxonomy(labels=tuple(names), definitions=tuple(definitions), source=source)
