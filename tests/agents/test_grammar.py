"""Grammar text for the embedded model: exact languages, token bounds, llama.cpp acceptance.

The language tests use a tiny GBNF interpreter for the subset :mod:`coopeval.agents.grammar`
emits (literals, character classes, rule references, groups, ``|``, ``?``, ``{m,n}``), so they
run without llama.cpp. One test checks that llama.cpp's own parser accepts every grammar.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable
from typing import ClassVar

import pytest

from coopeval.agents.grammar import (
    DEFAULT_CONTRACT_BOUNDS,
    DEFAULT_JUDGE_REASONING_CHARS,
    gbnf_for,
    max_output_chars,
    max_tokens_for,
)
from coopeval.decisions.formats import (
    ActionDistribution,
    AnswerFormat,
    ContractDesign,
    ContractVote,
    JudgeLabels,
    MediatorDesign,
    MediatorVote,
    Signature,
)

# --------------------------------------------------------------------------------------------
# a small GBNF interpreter (test helper)
# --------------------------------------------------------------------------------------------

Matcher = Callable[[str, int], frozenset[int]]


class Gbnf:
    """Parse a GBNF subset and report whether a string is in the language of ``root``."""

    _TOKEN = re.compile(
        r'\s*(?:(?P<lit>"(?:\\.|[^"\\])*")|(?P<cls>\[(?:\\.|[^\]\\])*\])|(?P<name>[A-Za-z0-9-]+)'
        r"|(?P<rep>\{\d+(?:,\d*)?\})|(?P<op>[()|?*+]))"
    )

    def __init__(self, text: str) -> None:
        self.rules: dict[str, Matcher] = {}
        self._sources: dict[str, str] = {}
        for line in text.splitlines():
            if line.strip():
                name, _, body = line.partition("::=")
                self._sources[name.strip()] = body.strip()
        for name, body in self._sources.items():
            self.rules[name] = self._compile(body)

    def accepts(self, s: str) -> bool:
        self._memo: dict[tuple[str, int], frozenset[int]] = {}
        return len(s) in self._ref("root")(s, 0)

    # parsing -----------------------------------------------------------------------------

    def _compile(self, body: str) -> Matcher:
        tokens = [(m.lastgroup, m.group(m.lastgroup or "")) for m in self._TOKEN.finditer(body)]
        assert "".join(v for _, v in tokens).replace(" ", "") == body.replace(" ", ""), body
        self._toks, self._i = tokens, 0
        matcher = self._alt()
        assert self._i == len(tokens), body
        return matcher

    def _peek(self) -> tuple[str | None, str] | None:
        return self._toks[self._i] if self._i < len(self._toks) else None

    def _alt(self) -> Matcher:
        options = [self._seq()]
        while (t := self._peek()) is not None and t == ("op", "|"):
            self._i += 1
            options.append(self._seq())
        if len(options) == 1:
            return options[0]
        return lambda s, p: frozenset().union(*(o(s, p) for o in options))

    def _seq(self) -> Matcher:
        items: list[Matcher] = []
        while (t := self._peek()) is not None and t not in (("op", "|"), ("op", ")")):
            items.append(self._postfix())

        def run(s: str, p: int) -> frozenset[int]:
            positions = frozenset({p})
            for item in items:
                positions = (
                    frozenset().union(*(item(s, q) for q in positions)) if positions else positions
                )
            return positions

        return run

    def _postfix(self) -> Matcher:
        atom = self._atom()
        t = self._peek()
        if t is None:
            return atom
        kind, value = t
        if kind == "op" and value in "?*+":
            self._i += 1
            lo, hi = {"?": (0, 1), "*": (0, None), "+": (1, None)}[value]
            return _repeat(atom, lo, hi)
        if kind == "rep":
            self._i += 1
            inner = value[1:-1]
            if "," in inner:
                a, b = inner.split(",")
                return _repeat(atom, int(a), int(b) if b else None)
            return _repeat(atom, int(inner), int(inner))
        return atom

    def _atom(self) -> Matcher:
        kind, value = self._toks[self._i]
        self._i += 1
        if kind == "lit":
            lit = _unescape(value[1:-1])
            return lambda s, p: frozenset({p + len(lit)}) if s.startswith(lit, p) else frozenset()
        if kind == "cls":
            pattern = re.compile(_class_regex(value))
            return (
                lambda s, p: frozenset({p + 1})
                if p < len(s) and pattern.fullmatch(s[p])
                else frozenset()
            )
        if kind == "name":
            return self._ref(value)
        if (kind, value) == ("op", "("):
            inner = self._alt()
            assert self._toks[self._i] == ("op", ")")
            self._i += 1
            return inner
        raise AssertionError(f"unexpected token {value!r}")

    def _ref(self, name: str) -> Matcher:
        def run(s: str, p: int) -> frozenset[int]:
            key = (name, p)
            if key not in self._memo:
                self._memo[key] = self.rules[name](s, p)
            return self._memo[key]

        return run


def _repeat(atom: Matcher, lo: int, hi: int | None) -> Matcher:
    def run(s: str, p: int) -> frozenset[int]:
        current, result, n = frozenset({p}), set(), 0
        if lo == 0:
            result.add(p)
        while current and (hi is None or n < hi):
            current = frozenset().union(*(atom(s, q) for q in current)) - set(current)
            n += 1
            if n >= lo:
                result |= current
        return frozenset(result)

    return run


def _unescape(text: str) -> str:
    return re.sub(r"\\(x[0-9A-Fa-f]{2}|.)", lambda m: _escape_char(m.group(1)), text)


def _escape_char(code: str) -> str:
    if code.startswith("x"):
        return chr(int(code[1:], 16))
    return {"n": "\n", "t": "\t", "r": "\r"}.get(code, code)


def _class_regex(cls: str) -> str:
    body = cls[1:-1]
    negate = body.startswith("^")
    if negate:
        body = body[1:]
    chars = _unescape(body)
    out = "".join("\\" + c if c in "\\]^[" else c for c in chars)
    return f"[{'^' if negate else ''}{out}]"


@functools.cache
def language(fmt: AnswerFormat, style: str = "IO", cap: int = 480) -> Gbnf:
    return Gbnf(gbnf_for(fmt, style, cap))


def dist(values: list[int], keys: tuple[str, ...] | None = None) -> str:
    keys = keys or tuple(f"A{i}" for i in range(len(values)))
    return "{" + ", ".join(f'"{k}": {v}' for k, v in zip(keys, values, strict=True)) + "}"


# --------------------------------------------------------------------------------------------
# action distributions
# --------------------------------------------------------------------------------------------

A2 = ActionDistribution(("A0", "A1"))
A3 = ActionDistribution(("A0", "A1", "A2"))
A5 = ActionDistribution(tuple(f"A{i}" for i in range(5)))


def test_two_actions_language_is_exact() -> None:
    g = language(A2)
    for a in range(101):
        assert g.accepts(dist([a, 100 - a]))
    for a, b in [(50, 49), (50, 51), (0, 0), (100, 1), (101, 0), (-1, 101)]:
        assert not g.accepts(dist([a, b]))
    assert g.accepts('{"A0": 30, "A1": 70}')
    for bad in [
        '{"A0": 030, "A1": 70}',
        '{"A0":30, "A1": 70}',
        '{"A1": 70, "A0": 30}',
        '{"A0": 30.0, "A1": 70}',
        '{"A0": 30, "A1": 70} ',
        '{"A0": 100}',
        "",
        '{"A0": 30, "A1": 70, "A2": 0}',
    ]:
        assert not g.accepts(bad), bad


def test_three_actions_accepts_exactly_the_simplex() -> None:
    g = language(A3)
    for a in range(0, 101, 7):
        for b in range(0, 101 - a, 9):
            assert g.accepts(dist([a, b, 100 - a - b]))
            assert not g.accepts(dist([a, b, 101 - a - b]))
            if a + b > 0:
                assert not g.accepts(dist([a, b, 99 - a - b]))


def test_five_actions_random_points() -> None:
    g = language(A5)
    rng = random.Random(5)
    for _ in range(60):
        cuts = sorted(rng.randint(0, 100) for _ in range(4))
        values = [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]
        assert g.accepts(dist(values))
        i = rng.randrange(5)
        off = values.copy()
        off[i] += 1 if off[i] < 100 else -1
        assert not g.accepts(dist(off))
    assert g.accepts(dist([0, 0, 0, 0, 100]))
    assert g.accepts(dist([100, 0, 0, 0, 0]))
    assert not g.accepts(dist([20, 20, 20, 20]))


def test_single_action_and_custom_tokens() -> None:
    assert language(ActionDistribution(("A0",))).accepts('{"A0": 100}')
    g = language(ActionDistribution(("X", "Y")))
    assert g.accepts('{"X": 1, "Y": 99}')
    assert not g.accepts('{"A0": 1, "A1": 99}')


def test_action_grammar_is_compact() -> None:
    # the digit-trie factoring keeps the 5-action grammar well below the naive ~0.6 MB
    assert len(gbnf_for(A5)) < 300_000
    assert len(gbnf_for(A2)) < 10_000


# --------------------------------------------------------------------------------------------
# CoT
# --------------------------------------------------------------------------------------------


def test_cot_reasoning_then_json() -> None:
    g = language(A2, "CoT", 40)
    assert g.accepts('Defect pays more.\nSo A1.\n{"A0": 0, "A1": 100}')
    assert g.accepts('\n{"A0": 0, "A1": 100}')
    # issue 13, 12(b): the reasoning ends with a sentence terminator, within the cap
    assert g.accepts("x" * 39 + '.\n{"A0": 0, "A1": 100}')
    assert g.accepts('Is A1 better? Yes!\n{"A0": 0, "A1": 100}')
    assert g.accepts('My answer:\n{"A0": 0, "A1": 100}')
    assert not g.accepts("x" * 40 + '\n{"A0": 0, "A1": 100}')  # stops mid-sentence
    assert not g.accepts('So A1 it is, because\n{"A0": 0, "A1": 100}')
    assert not g.accepts('```json\n{"A0": 0, "A1": 100}')  # a fence preamble is not a sentence
    assert not g.accepts("x" * 40 + '.\n{"A0": 0, "A1": 100}')  # 41 characters
    assert not g.accepts('draft {"A0": 1}\n{"A0": 0, "A1": 100}')  # no "{" in the reasoning
    assert not g.accepts('reasoning {"A0": 0, "A1": 100}')  # newline required
    assert not g.accepts('{"A0": 0, "A1": 100}')
    assert not g.accepts('r\u00e9sum\u00e9\n{"A0": 0, "A1": 100}')  # ASCII only
    io = language(A2, "IO")
    assert not io.accepts('reasoning\n{"A0": 0, "A1": 100}')


def test_style_validation_and_caching() -> None:
    with pytest.raises(ValueError, match="style"):
        gbnf_for(A2, "chain")
    with pytest.raises(ValueError):
        gbnf_for(A2, "CoT", -1)
    assert gbnf_for(A5) is gbnf_for(A5)
    assert gbnf_for(A2, "IO", 10) == gbnf_for(A2, "IO", 999)  # cap ignored for IO


# --------------------------------------------------------------------------------------------
# other decision kinds
# --------------------------------------------------------------------------------------------


def test_mediator_design() -> None:
    fmt = MediatorDesign.for_players(3, ("A0", "A1"))
    g = language(fmt)
    assert g.accepts('{"1": "A0", "2": "A1", "3": "A1"}')
    assert not g.accepts('{"1": "A0", "2": "A2", "3": "A1"}')
    assert not g.accepts('{"1": "A0", "2": "A1"}')


def test_votes_and_sign() -> None:
    g = language(MediatorVote.over(2))
    assert g.accepts('{"M1": true, "M2": false}')
    assert not g.accepts('{"M1": 1, "M2": false}')
    assert language(ContractVote.over(1)).accepts('{"C1": false}')
    s = language(Signature())
    assert s.accepts('{"sign": true}') and s.accepts('{"sign": false}')
    assert not s.accepts('{"sign": "yes"}')


def test_contract_design_bounds() -> None:
    g = language(ContractDesign(("A0", "A1")))
    lo, hi = DEFAULT_CONTRACT_BOUNDS
    for v in range(lo, hi + 1):
        assert g.accepts(f'{{"A0": {v}, "A1": 0}}')
    for bad in (lo - 1, hi + 1, "-0", "05", "1.5", "+3"):
        assert not g.accepts(f'{{"A0": {bad}, "A1": 0}}'), bad
    wide = language(ContractDesign(("A0",), int_bounds=(-3, 250)))
    assert wide.accepts('{"A0": 250}') and wide.accepts('{"A0": -3}') and wide.accepts('{"A0": 0}')
    assert not wide.accepts('{"A0": 251}') and not wide.accepts('{"A0": -4}')
    with pytest.raises(ValueError):
        gbnf_for(ContractDesign(("A0",), int_bounds=(3, 2)))


def test_judge() -> None:
    fmt = JudgeLabels(("Reciprocity", "Risk aversion", "Trust evaluation"))
    g = language(fmt)
    ok = '{"reasoning": "Mirrors the opponent.", "confidence": 0.85, "justification_type": "Reciprocity, Risk aversion"}'
    assert g.accepts(ok)
    assert json.loads(ok)["confidence"] == 0.85
    assert g.accepts('{"reasoning": "x", "confidence": 1.0, "justification_type": "Other"}')
    assert g.accepts(
        '{"reasoning": "x", "confidence": 0.5, "justification_type": "Trust evaluation"}'
    )
    for bad in [
        '{"reasoning": "x", "confidence": 1.5, "justification_type": "Other"}',
        '{"reasoning": "x", "confidence": 0.5, "justification_type": "Greed"}',
        '{"reasoning": "say \\"hi\\"", "confidence": 0.5, "justification_type": "Other"}',
        '{"reasoning": "", "confidence": 0.5, "justification_type": "Other"}',
        '{"reasoning": "x", "confidence": 0.5, "justification_type": "Other, Other, Other, Other"}',
    ]:
        assert not g.accepts(bad), bad
    long_text = "y" * DEFAULT_JUDGE_REASONING_CHARS
    assert g.accepts(
        f'{{"reasoning": "{long_text}", "confidence": 0.1, "justification_type": "Other"}}'
    )
    assert not g.accepts(
        f'{{"reasoning": "{long_text}y", "confidence": 0.1, "justification_type": "Other"}}'
    )


def test_formats_without_values_are_rejected() -> None:
    with pytest.raises(ValueError):
        gbnf_for(JudgeLabels(()))
    with pytest.raises(ValueError):
        gbnf_for(MediatorDesign.for_players(2, ()))


# --------------------------------------------------------------------------------------------
# token bounds
# --------------------------------------------------------------------------------------------


def test_max_tokens_cover_the_longest_answers() -> None:
    longest_a5 = dist([100, 0, 0, 0, 0])
    assert max_output_chars(A5) >= len(longest_a5)
    assert max_output_chars(A2, "CoT", 300) >= 300 + 1 + len(dist([100, 0]))
    assert max_tokens_for(A2, "CoT", 300) == max_output_chars(A2, "CoT", 300) + 1
    contract = ContractDesign(("A0", "A1"))
    assert max_output_chars(contract) >= len('{"A0": -20, "A1": -20}')
    judge = JudgeLabels(("Reciprocity", "Risk aversion"))
    text = "y" * DEFAULT_JUDGE_REASONING_CHARS
    worst = (
        f'{{"reasoning": "{text}", "confidence": 0.85, '
        '"justification_type": "Risk aversion, Risk aversion, Risk aversion"}'
    )
    assert language(judge).accepts(worst)
    assert max_output_chars(judge) >= len(worst)
    med = MediatorDesign.for_players(3, ("A0", "A1"))
    assert max_output_chars(med) >= len('{"1": "A0", "2": "A1", "3": "A1"}')
    vote = MediatorVote.over(3)
    assert max_output_chars(vote) >= len('{"M1": false, "M2": false, "M3": false}')


# --------------------------------------------------------------------------------------------
# llama.cpp accepts every grammar
# --------------------------------------------------------------------------------------------

ALL_FORMATS = [
    A2,
    A5,
    MediatorDesign.for_players(3, ("A0", "A1", "A2", "A3")),
    MediatorVote.over(3),
    ContractVote.over(2),
    ContractDesign(("A0", "A1")),
    ContractDesign(("A0", "A1"), int_bounds=(-1000, 1000)),
    Signature(),
    JudgeLabels(("Reciprocity", "Exploration-exploitation trade-off")),
]


@pytest.fixture(scope="module")
def runtime() -> object:
    from tests.local_runtime import runtime_fixture

    yield from runtime_fixture()


@pytest.mark.parametrize("style", ["IO", "CoT"])
@pytest.mark.parametrize("fmt", ALL_FORMATS, ids=lambda f: f"{f.kind}-{len(f.keys)}")
def test_llama_cpp_parses_grammar(runtime: object, fmt: AnswerFormat, style: str) -> None:
    assert runtime.grammar_error(gbnf_for(fmt, style, 480)) is None  # type: ignore[attr-defined]


def test_llama_cpp_rejects_broken_grammar(runtime: object) -> None:
    error = runtime.grammar_error('root ::= "x')  # type: ignore[attr-defined]
    assert error is not None and "could not parse the GBNF grammar" in error


def test_a_text_format_brings_its_complete_grammar_and_bound():
    """Free-text formats (TextAnswerFormat) are used as they are, whatever the style; the
    shared decision loop parses them with their own parse."""
    import asyncio
    from dataclasses import dataclass

    from coopeval.agents.maker import DecisionMaker
    from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
    from coopeval.decisions.errors import AnswerError
    from coopeval.decisions.formats import TextAnswerFormat

    @dataclass(frozen=True)
    class YesNo(TextAnswerFormat):
        kind = "yes_no"

        def parse(self, text, *, lenient=False):
            if text not in ("yes", "no"):
                raise AnswerError("answer yes or no", code="invalid")
            return {"yes": text == "yes"}

        def complete_grammar(self):
            return 'root ::= "yes" | "no"\n'

        def max_output_chars(self):
            return 3

        def bot_text(self, state):
            return "yes"

    fmt = YesNo()
    assert gbnf_for(fmt, "CoT", 50) == gbnf_for(fmt, "IO") == 'root ::= "yes" | "no"\n'
    assert max_tokens_for(fmt, "CoT", 50) == max_tokens_for(fmt) == 4
    assert fmt.bot_default({}, cooperative=True) is None
    with pytest.raises(TypeError):
        fmt.validate({"yes": True})

    class Flaky:
        name = model = "fake/yes-no"
        style = "IO"
        params: ClassVar[dict] = {}
        cacheable = False

        async def generate(self, request: DecisionRequest) -> Reply:
            return Reply(text="maybe" if request.state["attempt"] == 0 else "no")

        def classify_error(self, exc):
            return ErrorClass.FATAL

    outcome = asyncio.run(DecisionMaker(None, {}).decide(Flaky(), "Yes or no?", fmt, {"k": 1}))
    assert outcome.ok and outcome.parsed == {"yes": False} and len(outcome.attempts) == 2
    assert outcome.attempts[0]["error"] == "answer yes or no"
