"""CoopEval's answer format of each decision kind (docs/protocol/answers.md#output-formats,
docs/protocol/design-checks.md#what-is-judged), built from a game's action tokens and its
number of players: the one map from a kind to its format's constructor, read by
``coopeval check-answer`` and ``coopeval schemas``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from coopeval.decisions.formats import (
    ActionDistribution,
    AnswerFormat,
    ContractDesign,
    ContractVote,
    MediatorDesign,
    MediatorVote,
    Signature,
)
from coopeval.decisions.taxonomy import load_taxonomy

__all__ = ["GAME_KIND_FORMATS", "coopeval_answer_format"]

GAME_KIND_FORMATS: dict[str, Callable[[tuple[str, ...], int], AnswerFormat]] = {
    "action": lambda tokens, n: ActionDistribution(tokens),
    "mediator_design": lambda tokens, n: MediatorDesign.for_players(n, tokens),
    "mediator_vote": lambda tokens, n: MediatorVote.over(n),
    "contract_design": lambda tokens, n: ContractDesign(tokens),
    "contract_vote": lambda tokens, n: ContractVote.over(n),
    "sign": lambda tokens, n: Signature(),
    "judge": lambda tokens, n: load_taxonomy().answer_format(),
}
"""Kind (the name each format class declares as its ``kind``) → its format's constructor from
(action tokens, number ``n``): players for a mediator design, options for a vote (as many as
the game has players in a run); unused by the others. ``judge`` is the packaged taxonomy's labels."""


def coopeval_answer_format(kind: str, tokens: Sequence[str] = (), n: int = 2) -> AnswerFormat:
    """The answer format of CoopEval decision ``kind`` over the action ``tokens`` (under
    Mediation the delegate token included) with ``n`` players or vote options.

    Raises
    ------
    KeyError
        If ``kind`` is not a CoopEval decision kind (:class:`~coopeval.decisions.formats.DecisionKind`).
    """
    return GAME_KIND_FORMATS[kind](tuple(tokens), n)
