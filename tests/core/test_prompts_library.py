"""PromptLibrary: rendering, the content hash of a set of templates, and the restricted view a
cell plays with (issue 20)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from coopeval.core.prompts import PromptLibrary, UndeclaredTemplateError


@pytest.fixture()
def library(tmp_path: Path) -> PromptLibrary:
    (tmp_path / "a.txt").write_text("Hello $name.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Bye.\n", encoding="utf-8")
    (tmp_path / "c.txt").write_text("\nLeading line kept, trailing newline stripped\n\n", encoding="utf-8")
    return PromptLibrary(tmp_path)


def _expected(*pairs: tuple[str, str]) -> str:
    digest = hashlib.sha256()
    for name, text in sorted(pairs):
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()[:16]


def test_render_and_whitespace(library: PromptLibrary) -> None:
    assert library.render("a", name="Kate") == "Hello Kate."
    assert library.render("c") == "\nLeading line kept, trailing newline stripped"
    with pytest.raises(KeyError, match=r"'a' needs a value for \$name"):
        library.render("a")


def test_content_hash_of_named_templates(library: PromptLibrary) -> None:
    assert library.content_hash(["a"]) == _expected(("a", "Hello $name."))
    assert library.content_hash(["b", "a"]) == _expected(("a", "Hello $name."), ("b", "Bye."))
    everything = _expected(("a", "Hello $name."), ("b", "Bye."), ("c", "\nLeading line kept, trailing newline stripped"))
    assert library.content_hash() == everything
    with pytest.raises(KeyError, match="zzz"):
        library.content_hash(["a", "zzz"])


def test_restricted_view_renders_only_its_templates(library: PromptLibrary) -> None:
    view = library.restricted(["a"])
    assert view.render("a", name="Jack") == "Hello Jack."
    assert view.content_hash() == library.content_hash(["a"])
    with pytest.raises(UndeclaredTemplateError, match="'b' is rendered but not declared"):
        view.render("b")
    assert library.render("b") == "Bye."  # the full library is unchanged
    with pytest.raises(KeyError, match="nope"):
        library.restricted(["a", "nope"])
