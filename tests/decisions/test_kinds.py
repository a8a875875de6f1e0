"""One map from a CoopEval decision kind to its answer format (coopeval.decisions.kinds), read
by ``coopeval check-answer`` and ``coopeval schemas``: every kind is covered, each built format
has its kind, and the tokens and the number of players or options reach the format."""

from __future__ import annotations

import pytest

from coopeval.decisions.formats import (
    ActionDistribution,
    ContractDesign,
    ContractVote,
    DecisionKind,
    MediatorDesign,
    MediatorVote,
    Signature,
)
from coopeval.decisions.kinds import coopeval_answer_format


@pytest.mark.parametrize("kind", list(DecisionKind))
def test_every_kind_builds_a_format_of_that_kind(kind: DecisionKind) -> None:
    assert str(coopeval_answer_format(str(kind), ("A0", "A1"), 3).kind) == str(kind)


def test_tokens_and_counts_reach_the_format() -> None:
    tokens = ("A0", "A1", "A2")
    assert coopeval_answer_format("action", tokens, 2) == ActionDistribution(tokens)
    assert coopeval_answer_format("mediator_design", tokens, 3) == MediatorDesign.for_players(3, tokens)
    assert coopeval_answer_format("contract_design", tokens, 2) == ContractDesign(tokens)
    assert coopeval_answer_format("mediator_vote", tokens, 4) == MediatorVote.over(4)
    assert coopeval_answer_format("contract_vote", tokens, 2) == ContractVote.over(2)
    assert coopeval_answer_format("sign") == Signature()


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(KeyError):
        coopeval_answer_format("donor_action", ("C", "D"), 2)
