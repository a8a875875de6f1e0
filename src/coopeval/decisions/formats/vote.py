"""Approval votes: ``{"M1": <bool>, …}`` and ``{"C1": <bool>, …}`` (docs/protocol/answers.md#output-formats, #parsing "Votes", docs/protocol/mechanisms.md#mediation)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats.base import AnswerFormat, DecisionKind
from coopeval.decisions.formats.messages import bad_values, check_exact_keys
from coopeval.decisions.gbnf import object_rule
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = ["ApprovalVote", "BooleanValues", "ContractVote", "MediatorVote"]

BOOL_RULE = 'bool ::= "true" | "false"'


class BooleanValues(AnswerFormat):
    """The grammar, length bound and JSON Schema of a format whose every value is a JSON
    boolean (votes, the signature); mixed in before :class:`AnswerFormat`."""

    def answer_rules(self) -> list[str]:
        return [BOOL_RULE, object_rule(self.keys, "bool")]

    def max_value_chars(self) -> int:
        return 5 * len(self.keys)  # "false"

    def value_schema(self) -> dict[str, Any] | None:
        return {"type": "boolean"}


@dataclass(frozen=True)
class ApprovalVote(BooleanValues):
    """An approval vote over the N designs proposed in a matchup (one boolean per option).

    Validates (docs/protocol/answers.md#parsing): the key set equals ``keys`` exactly; every value is a JSON boolean →
    ``{key: bool}``.

    Grammar: ``{"M1": true, "M2": false}``.

    Bot default: approve exactly the options equal to ``state["enforcing_design"]`` if the bot is
    cooperative; approve nothing otherwise.

    Subclasses set the option prefix; build one with :meth:`over`.

    Attributes
    ----------
    keys:
        ``<prefix>1 .. <prefix>N``.
    """

    prefix: ClassVar[str]
    keys: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(self.keys))

    @classmethod
    def over(cls, n_options: int) -> ApprovalVote:
        """The vote over ``n_options`` options, keys ``<prefix>1 .. <prefix>N``."""
        return cls(tuple(f"{cls.prefix}{i}" for i in range(1, n_options + 1)))

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        check_exact_keys(obj, self.keys)
        bad = bad_values(obj, self.keys, lambda v: isinstance(v, bool))
        if bad:
            raise AnswerError(ENGINE_TEXTS.render("error_vote_type", problems="; ".join(bad)), code="type")
        return {k: bool(obj[k]) for k in self.keys}

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        options = state.get("options", [])
        enforcing = state.get("enforcing_design")
        return {key: bool(cooperative and options[i] == enforcing) for i, key in enumerate(self.keys)}


@dataclass(frozen=True)
class MediatorVote(ApprovalVote):
    """Approval vote over proposed mediators: ``{"M1": <bool>, …}`` (docs/protocol/mechanisms.md#contracting)."""

    kind: ClassVar[str] = DecisionKind.MEDIATOR_VOTE
    prefix: ClassVar[str] = "M"


@dataclass(frozen=True)
class ContractVote(ApprovalVote):
    """Approval vote over proposed contracts: ``{"C1": <bool>, …}`` (docs/protocol/tournament.md#tournament-driver)."""

    kind: ClassVar[str] = DecisionKind.CONTRACT_VOTE
    prefix: ClassVar[str] = "C"
