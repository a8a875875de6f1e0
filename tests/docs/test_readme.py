"""The README and the docs site: the README stays short and its two commands stay first, every
relative link resolves, and mkdocs.yml lists every page (issue 20 item 7).

The strict site build itself (``mkdocs build --strict``) runs in ``.ci/run``; these checks are
the fast part of it that also runs with the tests.
"""

from __future__ import annotations

import importlib.util
import logging
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import coopeval

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

INSTALL_AND_RUN = "./install.sh && . .venv/bin/activate && snakemake --cores 8 all"
INSTALL_AND_TEST = "./install.sh && .venv/bin/python -m pytest -q"

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
# [text](target) and [text](target "title"); images too. Targets in code spans are not links.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    """Every Markdown page of the site (docs/_griffe holds a build extension, not pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "_griffe" not in p.relative_to(DOCS).parts)


def _links(text: str) -> list[str]:
    """Relative link targets of a Markdown text, outside fenced blocks and code spans."""
    text = _CODE_SPAN.sub("", _FENCE.sub("", text))
    out = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # http:, https:, mailto: …, and anchors within the page
        out.append(target)
    return out


def _nav_files(node: Any) -> list[str]:
    """Every page path named anywhere in a mkdocs ``nav`` tree."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [f for item in node for f in _nav_files(item)]
    if isinstance(node, dict):
        return [f for value in node.values() for f in _nav_files(value)]
    return []


def test_readme_is_at_most_250_lines() -> None:
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= 250, f"README.md has {n} lines; move detail into a docs/ page and link it"


def test_readme_starts_with_the_two_commands() -> None:
    blocks = [b.strip() for b in _FENCE.findall(README.read_text(encoding="utf-8"))]
    assert blocks[:2] == [INSTALL_AND_RUN, INSTALL_AND_TEST]


def test_docs_home_repeats_the_two_commands() -> None:
    blocks = [b.strip() for b in _FENCE.findall((DOCS / "index.md").read_text(encoding="utf-8"))]
    assert blocks[:2] == [INSTALL_AND_RUN, INSTALL_AND_TEST]


@pytest.mark.parametrize("page", [README, ROOT / "CONTRIBUTING.md", *_pages()], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in _links(page.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_link_finder_sees_links_but_not_code() -> None:
    text = "See [a](docs/a.md#x), ![b](img.png), [web](https://x.org), [top](#y) and `[c](c.md)`.\n```\n[d](d.md)\n```\n"
    assert _links(text) == ["docs/a.md#x", "img.png"]


def test_nav_lists_every_page_and_only_existing_pages() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_files(config["nav"])
    pages = {str(p.relative_to(DOCS)) for p in _pages()}
    assert sorted(pages - set(nav)) == [], "docs pages missing from mkdocs.yml nav"
    assert sorted(set(nav) - pages) == [], "mkdocs.yml nav names pages that do not exist"
    assert len(nav) == len(set(nav)), "a page is listed twice in the nav"


def test_every_subpackage_has_an_api_page() -> None:
    """Each subpackage of coopeval (and each study) is rendered by a ``::: module`` line."""
    rendered = set()
    for page in (DOCS / "api").glob("*.md"):
        rendered |= set(re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), re.M))
    wanted = {f"coopeval.{m.name}" for m in pkgutil.iter_modules(coopeval.__path__) if m.ispkg}
    studies = importlib.import_module("coopeval.studies")
    wanted |= {f"coopeval.studies.{m.name}" for m in pkgutil.iter_modules(studies.__path__) if m.ispkg}
    missing = sorted(wanted - rendered)
    assert not missing, f"no API page renders {missing}: add docs/api/<name>.md with '::: <module>' and list it in mkdocs.yml"


def _section_end() -> Any:
    pytest.importorskip("griffe", reason="griffe comes with requirements/dev.txt (mkdocstrings)")
    spec = importlib.util.spec_from_file_location("section_end", DOCS / "_griffe" / "section_end.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_paragraph_after_parameters_becomes_notes() -> None:
    doc = "Summary.\n\nParameters\n----------\nfail_after:\n    Raise after n calls.\n\n``calls`` counts calls made.\nSecond line."
    assert _section_end().end_item_sections(doc) == (
        "Summary.\n\nParameters\n----------\nfail_after:\n    Raise after n calls.\n\n"
        "Notes\n-----\n``calls`` counts calls made.\nSecond line."
    )


@pytest.mark.parametrize(
    "doc",
    [
        # items separated by blank lines stay items
        "Parameters\n----------\na:\n    First.\n\nb : int\n    Second.\n\n*args\n    Rest.",
        # a paragraph after a free-text section is left alone
        "Summary.\n\nNotes\n-----\nText.\n\nMore text.",
        # the next section header is not a paragraph
        "Parameters\n----------\na:\n    First.\n\nReturns\n-------\nint\n    The value.",
    ],
)
def test_item_sections_left_alone(doc: str) -> None:
    assert _section_end().end_item_sections(doc) == doc


@pytest.mark.parametrize("fixed", [True, False])
def test_section_end_parses_without_warnings(fixed: bool, caplog: pytest.LogCaptureFixture) -> None:
    """The rewritten docstring parses under griffe's numpy parser with no warning (unrewritten: warns)."""
    griffe = pytest.importorskip("griffe")
    doc = "Summary.\n\nParameters\n----------\nn : int\n    Count.\n\nEach name plays with its own agent."
    text = _section_end().end_item_sections(doc) if fixed else doc
    with caplog.at_level(logging.WARNING, logger="griffe"):
        sections = griffe.Docstring(text, parser="numpy").parse()
    params = next(s for s in sections if s.kind.value == "parameters")
    if fixed:
        assert [p.name for p in params.value] == ["n"]
        assert caplog.records == []
    else:
        assert [p.name for p in params.value] != ["n"]
        assert caplog.records
