"""Contract signature: ``{"sign": <bool>}`` (docs/protocol/answers.md#output-formats, #parsing "Signature", docs/protocol/tournament.md#tournament-driver)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats.base import DecisionKind
from coopeval.decisions.formats.messages import show, type_name
from coopeval.decisions.formats.vote import BooleanValues
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = ["Signature"]


@dataclass(frozen=True)
class Signature(BooleanValues):
    """Whether to sign the selected contract.

    Validates (docs/protocol/answers.md#parsing): key ``sign`` holding a JSON boolean; other keys are tolerated (and
    may repeat) → ``{"sign": bool}``.

    Grammar: ``{"sign": true}`` or ``{"sign": false}``.

    Bot default: sign iff the bot is cooperative and ``state["contract"]`` equals
    ``state["enforcing_design"]``.
    """

    kind: ClassVar[str] = DecisionKind.SIGN
    keys: ClassVar[tuple[str, ...]] = ("sign",)
    extra_keys_ignored: ClassVar[bool] = True

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        if "sign" not in obj:
            raise AnswerError(ENGINE_TEXTS.render("error_sign_missing"), code="keys")
        value = obj["sign"]
        if not isinstance(value, bool):
            raise AnswerError(ENGINE_TEXTS.render("error_sign_type", value=show(value), type=type_name(value)), code="type")
        return {"sign": value}

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        return {"sign": bool(cooperative and state.get("contract") == state.get("enforcing_design"))}
