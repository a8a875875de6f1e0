"""Property: every answer format, whatever its parameters, emits only keywords the converter
enforces (:data:`coopeval.decisions.schema.ENFORCED_KEYWORDS`), in IO and CoT, and its schema
admits the canonical answers and refuses what the format's bounds refuse."""

from __future__ import annotations

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.agents.structured import structured_output_kwargs
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
from coopeval.decisions.schema import unenforced_keywords
from coopeval.studies.gossip.formats import (
    AmountFormat,
    ChoiceFormat,
    GossipFormat,
    investor_format,
)

tokens = st.integers(1, 6).map(lambda n: tuple(f"A{i}" for i in range(n)))
labels = st.lists(st.text("abcdefghij -", min_size=1, max_size=12).map(str.strip).filter(bool), min_size=1, max_size=6, unique=True)
bounds = st.tuples(st.integers(-1000, 1000), st.integers(0, 2000)).map(lambda t: (t[0], t[0] + t[1]))

formats: st.SearchStrategy[AnswerFormat] = st.one_of(
    tokens.map(ActionDistribution),
    st.tuples(tokens, bounds).map(lambda t: ContractDesign(t[0], int_bounds=t[1])),
    st.tuples(st.integers(1, 4), tokens).map(lambda t: MediatorDesign.for_players(t[0], t[1])),
    st.integers(1, 5).map(MediatorVote.over),
    st.integers(1, 5).map(ContractVote.over),
    st.just(Signature()),
    labels.map(lambda v: JudgeLabels(tuple(v))),
    st.floats(0, 200, allow_nan=False).map(investor_format),
    st.tuples(st.floats(-50, 50, allow_nan=False), st.floats(0, 50, allow_nan=False)).map(
        lambda t: AmountFormat("amount", "amount", t[0], t[0] + t[1])
    ),
    st.lists(st.sampled_from(["C", "D", "H", "L", "none"]), min_size=1, max_size=4, unique=True).map(
        lambda o: ChoiceFormat("choice", "choice", tuple(o))
    ),
    st.just(GossipFormat()),
)


@settings(max_examples=150, deadline=None)
@given(fmt=formats, style=st.sampled_from(["IO", "CoT"]), cap=st.integers(0, 2000))
def test_every_format_emits_only_enforced_keywords(fmt: AnswerFormat, style: str, cap: int) -> None:
    sent = structured_output_kwargs("json_schema", fmt, style, cap)["response_format"]["json_schema"]["schema"]
    assert unenforced_keywords(sent) == []
    jsonschema.Draft202012Validator.check_schema(sent)


@settings(max_examples=100, deadline=None)
@given(keys=tokens, lo_hi=bounds)
def test_contract_bounds_are_the_schemas_and_the_validators(keys: tuple[str, ...], lo_hi: tuple[int, int]) -> None:
    fmt = ContractDesign(keys, int_bounds=lo_hi)
    schema = fmt.json_schema()
    lo, hi = lo_hi
    jsonschema.validate(dict.fromkeys(keys, lo), schema)
    jsonschema.validate(dict.fromkeys(keys, hi), schema)
    for outside in (lo - 1, hi + 1):
        assert not jsonschema.Draft202012Validator(schema).is_valid(dict.fromkeys(keys, outside))
