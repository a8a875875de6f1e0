"""Action distribution: ``{"A0": <INT>, "A1": <INT>, …}`` (docs/protocol/answers.md#output-formats, #parsing "Action distribution")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats.base import AnswerFormat, DecisionKind
from coopeval.decisions.formats.messages import bad_values, check_exact_keys, is_int, value_problem
from coopeval.decisions.gbnf import lit, number_trie
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = ["TOTAL_PERCENT", "ActionDistribution"]

TOTAL_PERCENT = 100
"""Action distributions are integer percentage points summing to exactly this."""


@dataclass(frozen=True)
class ActionDistribution(AnswerFormat):
    """A probability distribution over the available action tokens, in integer percents.

    Validates (docs/protocol/answers.md#parsing): the key set equals ``keys`` exactly (including the delegate token
    under Mediation); every value is a JSON integer (no booleans, no ``50.0``, no ``"50"``) in
    0..100; the values sum to exactly 100 → ``{token: int}`` in token order.

    Grammar: tracks the remaining sum, so only distributions summing to 100 are admitted.
    Nonterminal ``n<k>-<r>`` reads the number of key ``k`` given ``r`` percentage points left and
    the last key is forced to the remainder. The number is spelled as a digit trie (first digit,
    then optionally a second, ``100`` as a third), so while the sampler is inside a number it
    follows at most ~11 grammar stacks instead of the ``r + 1`` stacks of a flat
    ``"0" | "1" | … | "r"`` alternation. This factoring is exact (the language is unchanged) and
    keeps five-action formats fast; see ``benchmarks/local_model.py``. The grammar for five keys
    is ~0.3 MB.

    Bot default: none. Every scripted bot's strategy is a rule for this decision.

    Attributes
    ----------
    keys:
        The action tokens ``A0, A1, …`` the agent may play.
    """

    kind: ClassVar[str] = DecisionKind.ACTION
    keys: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(self.keys))

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        keys = self.keys
        check_exact_keys(obj, keys)
        bad = bad_values(obj, keys, is_int)
        if bad:
            raise AnswerError(ENGINE_TEXTS.render("error_action_type", problems="; ".join(bad)), code="type")
        out_of_range = [value_problem(k, obj[k], typed=False) for k in keys if not 0 <= obj[k] <= TOTAL_PERCENT]
        if out_of_range:
            raise AnswerError(ENGINE_TEXTS.render("error_range", low=0, high=TOTAL_PERCENT, problems="; ".join(out_of_range)), code="range")
        total = sum(obj[k] for k in keys)
        if total != TOTAL_PERCENT:
            raise AnswerError(ENGINE_TEXTS.render("error_action_sum", total=total, expected=TOTAL_PERCENT), code="sum")
        return {k: int(obj[k]) for k in keys}

    def answer_rules(self) -> list[str]:
        keys = self.keys
        m = len(keys)
        if m == 1:
            return ["answer ::= " + lit(f'{{"{keys[0]}": {TOTAL_PERCENT}}}')]
        rules = ["answer ::= " + lit(f'{{"{keys[0]}": ') + f" n0-{TOTAL_PERCENT}"]
        # n<k>-<r>: number for key k (< m-1) with r points left, followed by c<k>-<rest>.
        # c<k>-<x>: ", " + key k+1 + (its number n<k+1>-<x>, or the forced remainder for the last key).
        needed_n: set[tuple[int, int]] = {(0, TOTAL_PERCENT)}
        frontier = [(0, TOTAL_PERCENT)]
        needed_c: set[tuple[int, int]] = set()
        while frontier:
            k, r = frontier.pop()
            for x in range(r + 1):
                if (k, x) not in needed_c:
                    needed_c.add((k, x))
                    if k + 1 < m - 1 and (k + 1, x) not in needed_n:
                        needed_n.add((k + 1, x))
                        frontier.append((k + 1, x))
        for k, r in sorted(needed_n):
            rules.append(f"n{k}-{r} ::= " + number_trie({str(v): f"c{k}-{r - v}" for v in range(r + 1)}))
        for k, x in sorted(needed_c):
            key = keys[k + 1]
            if k + 1 == m - 1:
                rules.append(f"c{k}-{x} ::= " + lit(f', "{key}": {x}}}'))
            else:
                rules.append(f"c{k}-{x} ::= " + lit(f', "{key}": ') + f" n{k + 1}-{x}")
        return rules

    def max_value_chars(self) -> int:
        return 3 * len(self.keys)

    def value_schema(self) -> dict[str, Any] | None:
        return {"type": "integer", "minimum": 0, "maximum": TOTAL_PERCENT}

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        return None
