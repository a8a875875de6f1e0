"""The explorer driven in a real headless Chromium (Debian's ``chromium``) from ``file://``.

A reader's click path reaches a decision of each study and finds its prompt and replies exactly
as stored; a deep link opens the same decision; the side-by-side view shows both episodes; the
failed-decision filters list exactly the failed decision; a reply holding markup or 100 KB of
text is shown as text and never run; the exported LaTeX parses; the run-wide search finds a word
of one reply. Screenshots of the landing page, a CoopEval round, a gossip timeline and a lineage
tree are written to ``results/explorer/screenshots/`` (``COOPEVAL_SCREENSHOTS`` overrides).

Skipped when ``/usr/bin/chromium`` is absent, except under ``COOPEVAL_REQUIRE_BROWSER=1``
(set by ``.ci/run``), where its absence fails them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from coopeval.core.environment import env_value
from coopeval.explorer import build_site
from tests.explorer.browser import Chromium, require_chromium
from tests.explorer.fake_store import (
    BIG_REPLY,
    FAILED,
    JUDGE_REASONING,
    JUDGED,
    REASKED,
    SCRIPT_REPLY,
    make_store,
    prompt_text,
)

SCREENSHOTS = Path(env_value("COOPEVAL_SCREENSHOTS") or Path(__file__).resolve().parents[2] / "results" / "explorer" / "screenshots")
"""Where the tests put their screenshots (the explorer's build keeps this folder of its output)."""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    require_chromium()
    root = tmp_path_factory.mktemp("explorer")
    build_site(make_store(root / "coopeval.duckdb"), root / "site")
    return root / "site"


@pytest.fixture(scope="module")
def browser(site, tmp_path_factory):
    with Chromium(tmp_path_factory.mktemp("profile")) as chromium:
        yield chromium


def href(**params: object) -> str:
    """The page's hash for ``params`` (as explorer.js builds it, encodeURIComponent)."""
    keep = "-_.!~*'()"
    return "#" + "&".join(quote(k, safe="") + "=" + quote(str(v), safe=keep) for k, v in params.items())


def link(params: dict[str, object]) -> str:
    return f'a[href="{href(**params)}"]'


def card(browser: Chromium, decision_id: str) -> dict[str, list[str]]:
    """Texts of a decision card: prompt messages and raw replies, in page order."""
    selector = json.dumps(f'.decision[data-decision="{decision_id}"]')
    browser.wait(f"document.querySelector({selector})", f"decision {decision_id}")
    return browser.evaluate(
        f"(function(){{var c=document.querySelector({selector});"
        "function t(s){return Array.prototype.map.call(c.querySelectorAll(s),function(e){return e.textContent;});}"
        "return {prompts: t('pre.msg'), replies: t('pre.reply')};})()"
    )


def go(browser: Chromium, site: Path, hash_: str) -> None:
    """Open ``index.html<hash_>`` after emptying the page, so no wait can match the previous page."""
    browser.evaluate("document.getElementById('main') && (document.getElementById('main').textContent = '')")
    browser.open((site / "index.html").as_uri() + hash_)


def landing(browser: Chromium, site: Path) -> None:
    browser.open((site / "index.html").as_uri())
    browser.wait("document.querySelector('main h2') && document.querySelector('main h2').textContent === 'Run overview'", "the overview")


def click_to_round(browser: Chromium, study: str, cell: str, matchup: str, rnd: int) -> None:
    """Landing page → study's cells → cell → episode → round, by clicking links."""
    browser.click(link({"view": "cells", "study": study}))
    browser.wait(f"document.querySelector('{link({'view': 'cell', 'cell': cell})}')", f"the cell list of {study}")
    browser.click(link({"view": "cell", "cell": cell}))
    episode = link({"view": "ep", "cell": cell, "m": matchup})
    browser.wait(f"document.querySelector('{episode}')", f"the episodes of {cell}")
    browser.click(episode)
    round_link = link({"view": "ep", "cell": cell, "m": matchup, "round": rnd})
    browser.wait(f"document.querySelector('{round_link}')", f"the rounds of {matchup}")
    browser.click(round_link)


def assert_inert(browser: Chromium) -> None:
    assert browser.evaluate("typeof window.PWNED") == "undefined"
    assert browser.evaluate("document.querySelectorAll('main script, main img').length") == 0


def test_click_path_reaches_a_decision_of_each_study_as_stored(site, browser):
    landing(browser, site)
    browser.screenshot(SCREENSHOTS / "landing.png")
    click_to_round(browser, "coopeval", "cellA", "x|y", 1)
    texts = card(browser, FAILED)
    assert texts["prompts"][0] == prompt_text("cellA", 1, 1)
    assert texts["replies"] == [SCRIPT_REPLY, BIG_REPLY]  # markup and 100 KB shown as text
    # the re-ask shows the messages added to the first prompt: the rejected reply and the re-ask
    assert texts["prompts"][1:] == [SCRIPT_REPLY, "Your answer had no JSON object. Answer again."]
    assert_inert(browser)
    browser.screenshot(SCREENSHOTS / "coopeval_round.png")
    for study, cell, matchup, rnd, decision in (("gossip", "cellG", "donation/align/r1", 2, "dG-r2"), ("evolution", "cellE", "g1/evolution/game0", 0, "dE-1")):
        landing(browser, site)
        click_to_round(browser, study, cell, matchup, rnd)
        texts = card(browser, decision)
        assert texts["prompts"] == [prompt_text(cell, rnd, 2)]  # both decisions sit in seat 2
        expected = json.dumps({"tone": "praising", "gossip": "John helped me."}) if study == "gossip" else "Strategy 1_2: donate half."
        assert texts["replies"] == [expected]


def test_deep_link_opens_the_same_decision(site, browser):
    go(browser, site, href(decision=REASKED))
    texts = card(browser, REASKED)
    assert texts["prompts"][0] == prompt_text("cellA", 2, 2)
    assert texts["replies"] == ["I pick A0", '{"A0": 100, "A1": 0}']


def compare_with(browser: Chromium, cell: str) -> None:
    """Pick the first entry of the episode page's compare menu that opens ``cell``."""
    browser.wait("document.getElementById('compare-with')", "the compare menu")
    browser.evaluate(
        "(function(){var s=document.getElementById('compare-with');"
        f"for (var i=s.options.length-1;i>0;i--) if (s.options[i].value.split('\\n')[0]==={json.dumps(cell)}) s.selectedIndex=i;"
        "s.dispatchEvent(new Event('change'));})()"
    )
    browser.wait("document.querySelector('.side .card')", "the side-by-side grid")


def side_by_side(browser: Chromium) -> tuple[list[str], list[str], list[str]]:
    """Heads, decision ids and last replies of the side-by-side grid, in grid order."""
    return browser.evaluate(
        "(function(){function t(s,f){return Array.prototype.map.call(document.querySelectorAll(s),f);}"
        "return [t('.side-head b',function(e){return e.textContent;}), t('.side .card',function(e){return e.getAttribute('data-decision');}),"
        " t('.side .card pre.reply',function(e){return e.textContent;})];})()"
    )


def test_side_by_side_of_two_mechanisms_aligned_by_round(site, browser):
    go(browser, site, href(view="ep", cell="cellA", m="x|y"))
    compare_with(browser, "cellB")
    heads, shown, _ = side_by_side(browser)
    assert heads == ["coopeval · Repetition · prisoners_dilemma · r1", "coopeval · Mediation · prisoners_dilemma · r1"]
    # grid order: round 1 left (dA seats 1, 2), round 1 right (dB …), then round 2
    assert shown == ["dA-r1-s1", "dA-r1-s2", "dB-r1-s1", "dB-r1-s2", "dA-r2-s1", "dA-r2-s2", "dB-r2-s1", "dB-r2-s2"]
    assert_inert(browser)


def test_side_by_side_of_two_models_shows_both(site, browser):
    """The same gossip run (testbed, condition, seed) under model-g and model-h, round by round."""
    go(browser, site, href(view="ep", cell="cellG", m="donation/align/r1"))
    compare_with(browser, "cellH")
    heads, shown, replies = side_by_side(browser)
    assert heads == ["gossip · align · donation · r1 · model-g", "gossip · align · donation · r1 · model-h"]
    assert shown == ["dG-r1", "dH-r1", "dG-r2", "dH-r2"]
    cooperate = json.dumps({"donor_action": "cooperate"})
    assert replies == [cooperate, cooperate, json.dumps({"tone": "praising", "gossip": "John helped me."}), json.dumps({"tone": "praising", "gossip": "Kate was kind."})]


def search(browser: Chromium) -> list[str]:
    """The decision ids the search page lists once it has read every candidate episode."""
    browser.wait("document.getElementById('search-progress') && document.getElementById('search-progress').className === 'done'", "the end of the search")
    return browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.search tr td:first-child a'), function(e){return e.textContent;})")


def test_search_from_the_landing_page_finds_a_word_of_one_reply(site, browser):
    landing(browser, site)
    browser.evaluate("document.getElementById('find-q').value = 'HELPED'")
    browser.evaluate("document.getElementById('find').requestSubmit()")
    assert search(browser) == ["dG-r2"]  # the one reply holding the word, in the whole run
    browser.click('table.search a[href="#decision=dG-r2"]')
    assert card(browser, "dG-r2")["replies"] == [json.dumps({"tone": "praising", "gossip": "John helped me."})]
    go(browser, site, href(view="search", q="praising kind"))
    assert search(browser) == ["dH-r2"]  # every word must be in the decision's replies
    go(browser, site, href(view="search", q="pwned"))
    assert search(browser) == [FAILED]  # a rejected attempt's reply counts
    go(browser, site, href(view="search", q="helped kind"))
    assert search(browser) == []


def listed(browser: Chromium) -> list[str]:
    browser.wait("document.querySelector('table.hits')", "a list of decisions")
    return browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.hits tr td:first-child a'), function(e){return e.textContent;})")


def test_failed_filters_list_exactly_the_failed_decisions(site, browser):
    browser.open((site / "index.html").as_uri())
    browser.wait("document.querySelector('header a[href=\"#view=flags&status=failed\"]')", "the header")
    browser.click('header a[href="#view=flags&status=failed"]')
    assert listed(browser) == [FAILED]
    go(browser, site, href(view="cell", cell="cellA", apply=1, status="reasked"))
    assert sorted(listed(browser)) == [FAILED, REASKED]
    go(browser, site, href(view="cell", cell="cellB", apply=1, status="failed", text="pwned"))
    assert listed(browser) == []
    go(browser, site, href(view="cell", cell="cellA", apply=1, text="pwned"))
    assert listed(browser) == [FAILED]  # text search over every attempt's reply, case-insensitive


def test_judge_labels_are_shown_and_filter_decisions(site, browser):
    go(browser, site, href(view="cell", cell="cellA", apply=1, label="reciprocity"))
    assert listed(browser) == [JUDGED]
    go(browser, site, href(decision=JUDGED))
    browser.wait("document.querySelector('.judge')", "the judge's labels")
    text = browser.evaluate("document.querySelector('.judge').textContent")
    assert text.startswith("Judge: reciprocity, fairness (confidence 0.900, ok, judge-m)") and text.endswith(JUDGE_REASONING)


SPECIALS = re.compile(r"[#$%&_^~<>]")
COMMANDS = re.compile(r"\\(textbackslash|textasciitilde|textasciicircum|textless|textgreater)\{\}|\\[#$%&_{}]")


def check_latex(text: str) -> None:
    """Balanced environments and braces, and no special character outside a command."""
    stack: list[str] = []
    for kind, name in re.findall(r"\\(begin|end)\{([^}]*)\}", text):
        if kind == "begin":
            stack.append(name)
        else:
            assert stack and stack.pop() == name, f"\\end{{{name}}} closes {stack}"
    assert stack == []
    plain = COMMANDS.sub("", text)
    depth = 0
    for ch in plain:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    body = re.sub(r"\\[a-zA-Z]+\*?", "", plain)
    assert SPECIALS.findall(body) == []


def test_exported_latex_parses_and_markdown_keeps_the_texts(site, browser):
    go(browser, site, href(view="export", cell="cellA", m="x|y"))
    browser.wait("document.getElementById('export-LaTeX')", "the export page")
    latex = browser.evaluate("document.getElementById('export-LaTeX').value")
    markdown = browser.evaluate("document.getElementById('export-Markdown').value")
    check_latex(latex)
    assert latex.startswith("\\documentclass{article}") and latex.rstrip().endswith("\\end{document}")
    assert "We \\& they: 100\\% \\{sure\\} \\$5 \\#1 a\\_b \\textasciitilde{} \\textasciicircum{} \\textbackslash{} \\textless{}b\\textgreater{}bold" in latex
    assert BIG_REPLY in markdown and SCRIPT_REPLY in markdown and prompt_text("cellA", 2, 2) in markdown


def test_check_latex_rejects_broken_documents():
    with pytest.raises(AssertionError):
        check_latex("\\begin{document} 100% \\end{document}")
    with pytest.raises(AssertionError):
        check_latex("\\begin{document}\\begin{flushleft}\\end{document}")
    with pytest.raises(AssertionError):
        check_latex("\\begin{document} \\{ } \\end{document}")


def test_study_views_gossip_timeline_and_lineage_tree(site, browser):
    go(browser, site, href(view="cell", cell="cellG"))
    browser.wait("document.querySelector('table.timeline')", "the gossip timeline")
    attacker = browser.evaluate("document.querySelector('table.timeline .attacker').textContent")
    assert attacker == "Kate [attacker]"
    heads = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.timeline th'), function(e){return e.textContent;})")
    # the testbed's role names; the columns no round fills (the recipient's action and amount in
    # the donation game, and this store's unset amounts and rewards) are left out
    assert heads == ["round", "donor", "recipient", "donor action", "recipient's tone", "recipient's message", "status"]
    first_row = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.timeline tr:nth-child(2) td'), function(e){return e.textContent;})")
    assert first_row == ["1", "John", "Kate [attacker]", "cooperate", "praising", "John helped me.", "ok"]
    browser.screenshot(SCREENSHOTS / "gossip_timeline.png")
    go(browser, site, href(view="cell", cell="cellE"))
    browser.wait("document.querySelector('ul.lineage')", "the lineage tree")
    tree = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('ul.lineage li ul li > b'), function(e){return e.textContent;})")
    assert tree == ["2_1"]  # 2_1 is drawn under its parent 1_1
    cells = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.heat td'), function(e){return e.textContent;})")
    assert cells == ["20", "30", "30", "40"]  # 10 (i + j) for i, j in 1..2
    browser.screenshot(SCREENSHOTS / "lineage.png")


def test_leaderboard_sorts_by_a_clicked_column(site, browser):
    go(browser, site, href(view="board", study="coopeval"))
    browser.wait("document.querySelector('table.board')", "the leaderboard")
    browser.evaluate("Array.prototype.filter.call(document.querySelectorAll('table.board th'), function(e){return e.textContent === 'Mean';})[0].click()")
    first = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.board tr:nth-child(2) td'), function(e){return e.textContent;})")
    assert first[:4] == ["Repetition", "stag_hunt", "model-x", "4.000"]  # highest Mean first (a metric: three decimals, issue 47)
