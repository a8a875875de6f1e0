"""Answer-format classes: recorded grammars, bot defaults, and the one-file extension point.

The grammar digests below were recorded from the code before the formats became classes (one
``if kind == …`` chain per concern); every format must keep producing byte-identical grammar
text and token bounds, since the grammar steers the embedded model (a changed grammar changes
its answers and so the cached runs).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from coopeval.agents.bots import make_bot
from coopeval.agents.grammar import gbnf_for, max_tokens_for
from coopeval.agents.protocol import DecisionRequest
from coopeval.decisions import AnswerError, parse_answer
from coopeval.decisions.formats import (
    ActionDistribution,
    AnswerFormat,
    ContractDesign,
    ContractVote,
    DecisionKind,
    JudgeLabels,
    MediatorDesign,
    MediatorVote,
    Signature,
)
from coopeval.decisions.formats.messages import check_exact_keys, quote
from coopeval.decisions.gbnf import JSON_TEXT_CHAR, lit

LABELS = ("Reciprocity", "Risk aversion", "Trust evaluation", "Exploration-exploitation trade-off")


def _tokens(n: int) -> tuple[str, ...]:
    return tuple(f"A{i}" for i in range(n))


FORMATS: dict[str, AnswerFormat] = {
    "act1": ActionDistribution(("A0",)),
    "act2": ActionDistribution(_tokens(2)),
    "act3": ActionDistribution(_tokens(3)),
    "act5": ActionDistribution(_tokens(5)),
    "actXY": ActionDistribution(("X", "Y")),
    "med2": MediatorDesign.for_players(2, _tokens(2)),
    "med3b": MediatorDesign.for_players(3, _tokens(4)),
    "mv2": MediatorVote.over(2),
    "cv3": ContractVote.over(3),
    "con2": ContractDesign(_tokens(2)),
    "conb": ContractDesign(_tokens(2), (-5, 5)),
    "conh": ContractDesign(_tokens(2), (-1000, 1000)),
    "conhuge": ContractDesign(_tokens(2), (-300000, 300000)),
    "sign": Signature(),
    "judge": JudgeLabels(LABELS),
    "judge2": JudgeLabels(("Alpha", "Beta")),
    "judgeO": JudgeLabels(("Alpha", "other")),
}

# (sha256 of gbnf_for text, max_tokens_for) for IO, CoT with cap 0, CoT with cap 320.
# The CoT-320 digests were re-recorded for issue 13, 12(b) (the reasoning now ends with a sentence
# terminator, COT_GRAMMAR_VERSION 2); IO, CoT-0 and every token bound are unchanged.
RECORDED: dict[str, tuple[tuple[str, int], tuple[str, int], tuple[str, int]]] = {
    "act1": (("5d8527ed78559531c38c325f3b2e932a77d842a2bdb31aa388043d6a14265778", 12), ("7a631b822d8f1f83c4bb88c83827b4b497e9c213539a8412096e786cae40f404", 13), ("5df8c795fceb78498fb617ca07f3ac7e7ac57c916359e5324674038d34862809", 333)),
    "act2": (("0410db538c950075f5bda193f24d396dc892266afbb38f7541d9a9fefb06f9c2", 23), ("e0a730bc19a1b14cac406e626799020eb71a287c2536f0760ba4d68ad8fc4369", 24), ("5f153796bf478c5f3aaeef0f04af23156643f686861737147e729de3795e677d", 344)),
    "act3": (("f265b8cb60992a0fb3ba884b6c3e101c0a1038c9b43fb4dcf3816eebaec7309e", 34), ("d6a1a5946c9da29bde3083b616f7c2027917735dd03c73125cd3971cbdddb4c1", 35), ("c9e2060fd4fc972ef40da731c1da0c967302039209a649fca46f65f818509bcc", 355)),
    "act5": (("5147e8c30dfcef52d0756041040094bba471578bb992f981a84f915d1614c24d", 56), ("ac0edb4bf4639ff400dbbbef02092484379ac7b75c1d15f2cb2f6791490c094d", 57), ("2c35d12d6cc4f2f9b6117103b889b8d32c6da1f0fd03098538bbaa3a01fac348", 377)),
    "actXY": (("f62ea755a82d55e454104f1dc2cb3031aced03dff3b7fee479e85b501462ee23", 21), ("aaa78cf3050ee604cb1ec3f19735e1bf48a06a5f20ea5a52698fa92744cbf3c7", 22), ("5b2ee99fb149cf39397d91a49de0b46adae77028047739f4b233056ab3845a0a", 342)),
    "med2": (("350d579da4a7390cb506c8247f31c50484850a8943820c82a6d465198cb7fe59", 23), ("8ae908f0ea51e47bbed8544cf9c9eb262da40bfa3d0ff4b6dc9a996458c2136c", 24), ("0a717ab6bdf1b757903ca89cf6c12621bcda104b57a59833a627e9a1852ce5cf", 344)),
    "med3b": (("1103d8d66fda55d2050a123282fcfaaf9d5afad3a53e8cdfb1d4cfdb0b552c5e", 34), ("3f2831415a74a9f6b48adb9720d9748a500618b7ce44a4b523cfb1e835f34ec9", 35), ("2f745965874eb92a2c7d4ebab3b1149694e781932f8464000b6464322d2001cc", 355)),
    "mv2": (("2ad35389c405c467c196fac6285d4c3c504abd53b0e72847b33bc412e1a5ecc3", 27), ("41a0cad96ca3b2fbe5080e8e8261c3ac1a7dbea6a37ca5d4bcf8f3a934903ebe", 28), ("eea748912f1ad03a4425b7dd12aff0b12d0071b651c5fc40529b97f271f7c475", 348)),
    "cv3": (("5e41973095f6e2cf9d67dfcc882fa1d461015a85986b2950b88024ddf914e9c1", 40), ("b8547732fda1e1e67e1264da328e8f936919e1117cf21ac16b2818cea8e40892", 41), ("138432bb491070a9946051eb22d44b39c2a4e68479c8db63d218c765dd5786f8", 361)),
    "con2": (("64f29026845353beb8e886980451d96cde4fe1a3d1cc1f1affb6c1bcd789f0f9", 23), ("755f76092b6f1308b714fe4b12a954e1322be216936b171f02cea4a8ea1f1914", 24), ("83f77c9458197d1531e5c06ea7037ecb19452ec31d5dab1d9321d9b207b83a09", 344)),
    "conb": (("b501aa8a40bd2083254c8f795ba70ccbbb683c005b7491701f48014f887cce4c", 21), ("fd6ff1c39f8bc1d70c9b026a0ebf0b19fe036dbfaf3cdff0c7fd80cde891cd8b", 22), ("e8d5720f0d88825d49988403fde8aeb83c1727d84c63f5f3bc3e360d1065d548", 342)),
    "conh": (("170bd9b488ca6207439cd454123edff93246acfed9bf00878abccd678013df3f", 27), ("72df79206b9f7c2920fecae948d1b0b2761d94d07412ece0fe416cc393824675", 28), ("4a64242ec9bb6c013b9ab63c3843253d2f904db0e1fe7238ad4364279e304005", 348)),
    "conhuge": (("1e52eed29c04300fc59250d1a4fe4d3b0fd16ae9fbed99b27a3df8488d5ae32e", 31), ("61ab2bdc5f434df40a7e0631b66f0460e117679c5c1e633cc9b813da6b923255", 32), ("a10b6c99b90b24f3c9f13009acf42792b2ef3a05a26acc9bf4eadd63685b8b04", 352)),
    "sign": (("eed99dc0181be1aea5941f0f7b6583feb6aeefb84079e8afaa8ca18c070cfd31", 16), ("63e5e019d0729d6b077b45e63a86d04dd49e1ed150f13da987c8027d351c7916", 17), ("ba9370f47ca4e421f49bd8fecdfb1de3959bfc909afeeed7c55174bc94d9011a", 337)),
    "judge": (("5323a037a8afbb69badce3699b7ec5dda59f97ff3f454c82274255da0d486b7d", 410), ("b1adcdc70b30f4ccbc403ab1eca413a5d947f574f5c9007c2cfaa075cb8936d8", 411), ("a3aba76c193b65dbdfa9469635d83b0ef4a3f0fb7ec2587eada0d172acebbe82", 731)),
    "judge2": (("0d44a4d52227e711b401666e91a5de8cbcb9fd093bcaad006a58ad5922dbe39d", 323), ("f6127f6e9e622f8a6ed8f05f19ed012ec1c8dd3e1b096a6b04eb3e952da0b6ca", 324), ("5c61b1c2370eaff820ae367709d4c99c764e08c200c9f18eaf300cddb98032c3", 644)),
    "judgeO": (("814463ae14678897da312e6519b8924580df97592287002e277563aeb594b4ee", 323), ("c7f4d6da1518f0758a162debc7421ab663a6f6649f662afff44eff4d3296d299", 324), ("8f305c50f00635fa6e15e5eee4db92a031b3c71605b5eba6cdf040a18b82aa12", 644)),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_grammar_and_token_bound_match_the_recorded_ones(name: str) -> None:
    fmt = FORMATS[name]
    got = []
    for style, cap in (("IO", 320), ("CoT", 0), ("CoT", 320)):
        text = gbnf_for(fmt, style, cap)
        got.append((hashlib.sha256(text.encode()).hexdigest(), max_tokens_for(fmt, style, cap)))
    assert tuple(got) == RECORDED[name]


def test_small_grammars_verbatim() -> None:
    assert gbnf_for(Signature()) == 'root ::= answer\nbool ::= "true" | "false"\nanswer ::= "{\\"sign\\": " bool "}"\n'
    assert gbnf_for(MediatorVote.over(2)) == (
        'root ::= answer\nbool ::= "true" | "false"\nanswer ::= "{\\"M1\\": " bool ", \\"M2\\": " bool "}"\n'
    )
    assert gbnf_for(MediatorDesign.for_players(2, ("A0", "A1"))) == (
        'root ::= answer\nvalue ::= "\\"A0\\"" | "\\"A1\\""\nanswer ::= "{\\"1\\": " value ", \\"2\\": " value "}"\n'
    )
    assert gbnf_for(ContractDesign(("A0", "A1"), (-2, 12))) == (
        'root ::= answer\nint ::= ("-" ("2" | "1") | "0" | "1" ("0" | "1" | "2")? | "2" | "3" | "4" | "5" | "6" '
        '| "7" | "8" | "9")\nanswer ::= "{\\"A0\\": " int ", \\"A1\\": " int "}"\n'
    )
    assert gbnf_for(ActionDistribution(("A0",)), "CoT", 7) == (
        'root ::= ([\\x20-\\x7A\\x7C-\\x7E\\n]{0,6} [.!?:])? "\\n" answer\nanswer ::= "{\\"A0\\": 100}"\n'
    )


def test_kinds_and_keys() -> None:
    assert [FORMATS[n].kind for n in ("act2", "med2", "mv2", "cv3", "con2", "sign", "judge")] == [
        DecisionKind.ACTION,
        DecisionKind.MEDIATOR_DESIGN,
        DecisionKind.MEDIATOR_VOTE,
        DecisionKind.CONTRACT_VOTE,
        DecisionKind.CONTRACT_DESIGN,
        DecisionKind.SIGN,
        DecisionKind.JUDGE,
    ]
    assert FORMATS["med3b"].keys == ("1", "2", "3") and FORMATS["med3b"].values == _tokens(4)
    assert FORMATS["cv3"].keys == ("C1", "C2", "C3") and Signature().keys == ("sign",)
    assert JudgeLabels(LABELS).keys == ("reasoning", "confidence", "justification_type")
    # lists are frozen to tuples, so formats stay hashable (grammars are cached per format)
    assert ActionDistribution(["A0", "A1"]) == ActionDistribution(("A0", "A1"))  # type: ignore[arg-type]
    assert hash(ActionDistribution(["A0", "A1"])) == hash(ActionDistribution(("A0", "A1")))  # type: ignore[arg-type]
    # same keys, different contract: never equal (grammar cache, request equality)
    assert MediatorVote(("X1",)) != ContractVote(("X1",)) and ActionDistribution(_tokens(2)) != ContractDesign(_tokens(2))


ENFORCING = {"1": "A1", "2": "A0"}


@pytest.mark.parametrize(
    ("fmt", "state", "cooperative", "expected"),
    [
        (MediatorDesign.for_players(2, _tokens(2)), {"enforcing_design": ENFORCING}, False, ENFORCING),
        (ContractDesign(_tokens(2)), {"enforcing_design": {"A0": 3, "A1": 0}}, True, {"A0": 3, "A1": 0}),
        (MediatorVote.over(2), {"enforcing_design": ENFORCING, "options": [ENFORCING, {}]}, True, {"M1": True, "M2": False}),
        (ContractVote.over(2), {"enforcing_design": ENFORCING, "options": [ENFORCING, {}]}, False, {"C1": False, "C2": False}),
        (Signature(), {"enforcing_design": ENFORCING, "contract": ENFORCING}, True, {"sign": True}),
        (Signature(), {"enforcing_design": ENFORCING, "contract": {}}, True, {"sign": False}),
        (Signature(), {"enforcing_design": ENFORCING, "contract": ENFORCING}, False, {"sign": False}),
        (ActionDistribution(_tokens(2)), {}, True, None),
        (JudgeLabels(LABELS), {}, True, None),
    ],
)
def test_bot_defaults(fmt: AnswerFormat, state: dict[str, Any], cooperative: bool, expected: dict[str, Any] | None) -> None:
    answer = fmt.bot_default(state, cooperative=cooperative)
    assert answer == expected
    if answer is not None:
        assert fmt.parse(json.dumps(answer)) == answer  # a bot default is always a valid answer


def test_a_bot_cannot_judge() -> None:
    request = DecisionRequest(({"role": "user", "content": "judge"},), JudgeLabels(LABELS))
    with pytest.raises(ValueError, match="bot/always-cooperate cannot answer decision kind judge"):
        asyncio.run(make_bot("always-cooperate").generate(request))


# --------------------------------------------------------------------------------------------
# a new format is one class: parser, grammar and bots pick it up with no other edit


@dataclass(frozen=True)
class Gossip(AnswerFormat):
    """Test format: ``{"about": "<name>", "message": "<text>"}`` (a gossip-like message)."""

    kind: ClassVar[str] = "gossip"
    keys: ClassVar[tuple[str, ...]] = ("about", "message")
    names: tuple[str, ...]

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        check_exact_keys(obj, self.keys)
        if obj["about"] not in self.names:
            raise AnswerError(f'"about" must name a player, not {quote(str(obj["about"]))}', code="type")
        return {"about": obj["about"], "message": str(obj["message"])}

    def answer_rules(self) -> list[str]:
        return [
            "name ::= " + " | ".join(lit(n) for n in self.names),
            f"text ::= {JSON_TEXT_CHAR}{{1,80}}",
            "answer ::= " + lit('{"about": "') + " name " + lit('", "message": "') + " text " + lit('"}'),
        ]

    def max_value_chars(self) -> int:
        return max(len(n) for n in self.names) + 2 + 80 + 2

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        return {"about": self.names[0], "message": "nothing to report" if cooperative else "cheater"}


def test_a_new_format_is_one_class() -> None:
    fmt = Gossip(("Ann", "Bob"))
    assert parse_answer(fmt, 'I say {"about": "Bob", "message": "kind"}') == {"about": "Bob", "message": "kind"}
    with pytest.raises(AnswerError, match='"about" must name a player'):
        parse_answer(fmt, '{"about": "Eve", "message": "x"}')
    grammar = gbnf_for(fmt, "CoT", 10)
    assert grammar.startswith("root ::= ") and 'name ::= "Ann" | "Bob"' in grammar
    assert max_tokens_for(fmt) == len('{"about": "", "message": ""}') + 3 + 80 + 1
    request = DecisionRequest(({"role": "user", "content": "gossip"},), fmt)
    reply = asyncio.run(make_bot("always-defect").generate(request))
    assert json.loads(reply.text) == {"about": "Ann", "message": "cheater"}


def test_no_decision_kind_switch_outside_the_format_classes() -> None:
    """Behaviour per kind lives in the format classes; elsewhere a kind is only a stored value."""
    src = Path(__file__).resolve().parents[2] / "src" / "coopeval"
    formats = src / "decisions" / "formats"
    mock = src / "agents" / "mock.py"  # the shipped test double answers every CoopEval kind on purpose
    offenders = [
        f"{path.relative_to(src)}:{n}"
        for path in src.rglob("*.py")
        if formats not in path.parents and path != mock
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"DecisionKind\.|\.kind\s*(==|is|in\b)", line)
    ]
    assert offenders == []
