"""Answer contracts: what JSON object each decision kind must end with (spec §3.2).

An :class:`AnswerFormat` is the machine-readable contract of one decision. The parser
(:mod:`coopeval.decisions.parsing`) validates answers against it and the embedded local model
(:mod:`coopeval.agents.grammar`) compiles it into a grammar, so both read the same contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DecisionKind(StrEnum):
    """The kinds of call an agent answers (spec §3.2, §9.2)."""

    ACTION = "action"
    MEDIATOR_DESIGN = "mediator_design"
    MEDIATOR_VOTE = "mediator_vote"
    CONTRACT_DESIGN = "contract_design"
    CONTRACT_VOTE = "contract_vote"
    SIGN = "sign"
    JUDGE = "judge"


@dataclass(frozen=True)
class AnswerFormat:
    """The exact output contract of a decision.

    Attributes
    ----------
    kind:
        The decision kind.
    keys:
        The exact key set, in display order: action tokens ``A0..`` (ACTION and
        CONTRACT_DESIGN), ``"1".."N"`` (MEDIATOR_DESIGN), ``M1..``/``C1..`` (votes),
        ``("sign",)`` (SIGN), or the judge keys.
    values:
        MEDIATOR_DESIGN: the base-action tokens a mapping may name. JUDGE: the canonical
        category labels. Empty otherwise.
    int_bounds:
        CONTRACT_DESIGN only: optional inclusive (low, high) bounds on contract values.
    """

    kind: DecisionKind
    keys: tuple[str, ...]
    values: tuple[str, ...] = ()
    int_bounds: tuple[int, int] | None = None

    @staticmethod
    def action(tokens: tuple[str, ...]) -> AnswerFormat:
        """Distribution over ``tokens``: integer percents summing to exactly 100."""
        return AnswerFormat(DecisionKind.ACTION, tuple(tokens))

    @staticmethod
    def mediator_design(n_players: int, base_tokens: tuple[str, ...]) -> AnswerFormat:
        """Mapping from the number of delegators 1..N to a base-action token."""
        return AnswerFormat(
            DecisionKind.MEDIATOR_DESIGN, tuple(str(d) for d in range(1, n_players + 1)), tuple(base_tokens)
        )

    @staticmethod
    def vote(prefix: str, n_options: int) -> AnswerFormat:
        """Approval vote ``{"M1": bool, …}`` (prefix ``M``) or ``{"C1": bool, …}`` (prefix ``C``)."""
        kind = DecisionKind.MEDIATOR_VOTE if prefix == "M" else DecisionKind.CONTRACT_VOTE
        return AnswerFormat(kind, tuple(f"{prefix}{i}" for i in range(1, n_options + 1)))

    @staticmethod
    def contract_design(base_tokens: tuple[str, ...], int_bounds: tuple[int, int] | None = None) -> AnswerFormat:
        """One integer transfer per base action."""
        return AnswerFormat(DecisionKind.CONTRACT_DESIGN, tuple(base_tokens), int_bounds=int_bounds)

    @staticmethod
    def sign() -> AnswerFormat:
        """``{"sign": bool}``."""
        return AnswerFormat(DecisionKind.SIGN, ("sign",))

    @staticmethod
    def judge(labels: tuple[str, ...]) -> AnswerFormat:
        """``{"reasoning": str, "confidence": number, "justification_type": "Label, Label"}``."""
        return AnswerFormat(DecisionKind.JUDGE, ("reasoning", "confidence", "justification_type"), tuple(labels))
