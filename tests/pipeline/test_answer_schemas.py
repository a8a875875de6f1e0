"""``coopeval schemas``: every answer format of the three studies, and only enforced keywords."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from coopeval.agents.grammar import gbnf_for
from coopeval.cli import main
from coopeval.decisions.formats import TextAnswerFormat
from coopeval.decisions.schema import unenforced_keywords
from coopeval.pipeline import answer_schemas
from coopeval.pipeline.answer_schemas import answer_formats, kinds

ENTRIES = answer_formats()


def test_the_catalogue_covers_every_kind_of_the_three_studies() -> None:
    by_study: dict[str, set[str]] = {}
    for entry in ENTRIES:
        by_study.setdefault(entry.study, set()).add(str(entry.fmt.kind))
    assert by_study == {
        "coopeval": {"action", "mediator_design", "contract_design", "mediator_vote", "contract_vote", "sign", "judge"},
        "gossip": {
            "donor_action", "player_action", "seller_action", "buyer_action", "gossip", "signal", "reflection",
            "investor_action", "responder_action",
        },
        "evolution": {"strategy", "donation"},
    }
    actions = {e.fmt.keys for e in ENTRIES if e.fmt.kind == "action"}
    # 2 actions, 2 + delegate, the Traveller's Dilemma's 4, 4 + delegate
    assert actions == {("A0", "A1"), ("A0", "A1", "A2"), ("A0", "A1", "A2", "A3"), ("A0", "A1", "A2", "A3", "A4")}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e.study}-{e.fmt.kind}-{len(getattr(e.fmt, 'keys', ()))}")
@pytest.mark.parametrize("style", ["IO", "CoT"])
def test_every_emitted_schema_uses_only_keywords_the_converter_enforces(entry: Any, style: str) -> None:
    sent = answer_schemas.emitted(entry.fmt)["json_schema"][style]
    if isinstance(entry.fmt, TextAnswerFormat):
        assert sent is None  # free text: no schema exists, nothing is sent (counted per call as not applied)
        return
    assert unenforced_keywords(sent) == []
    jsonschema.Draft202012Validator.check_schema(sent)



def test_cli_prints_one_object_per_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas", "--kind", "judge", "--kind", "donation", "--max-reasoning-chars", "100"]) == 0
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(o["kind"], o["study"], len(o["formats"])) for o in objects] == [("judge", "coopeval", 1), ("donation", "evolution", 6)]
    judge = objects[0]["formats"][0]
    assert judge["json_schema"]["CoT"]["properties"]["reasoning"] == {"type": "string", "maxLength": 100}
    assert "pattern" not in json.dumps(judge["json_schema"])
    assert judge["grammar"]["IO"].startswith("root ::= answer\n")
    donation = objects[1]["formats"][0]
    assert donation["json_schema"] == {"IO": None, "CoT": None}
    fmt = next(e.fmt for e in ENTRIES if e.fmt.kind == "donation")
    assert donation["grammar"]["IO"] == gbnf_for(fmt, "IO")


def test_cli_refuses_an_unknown_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas", "--kind", "actoin"]) == 2
    assert "--kind actoin: no answer format has this kind" in capsys.readouterr().err


def test_every_kind_is_printed_without_kind() -> None:
    assert {o["kind"] for o in kinds()} == {str(e.fmt.kind) for e in ENTRIES}


def test_cli_fails_on_a_schema_keyword_the_converter_drops(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from coopeval.decisions.formats import Signature

    monkeypatch.setattr(Signature, "value_schema", lambda self: {"type": "boolean", "format": "yes-no"})
    assert main(["schemas", "--kind", "sign"]) == 1
    assert "$.sign: format on a boolean" in capsys.readouterr().err
