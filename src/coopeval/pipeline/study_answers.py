"""The gossip and evolution decision kinds of ``coopeval check-answer`` (issue 21 item 13).

``coopeval check-answer --kind K`` runs the decision loop's own parser
(:func:`coopeval.decisions.parsing.check_answer`) on one answer. CoopEval's kinds are built in
:mod:`coopeval.decisions.kinds`; this module builds the answer format of every other study's kind from the
context the kind needs, exactly as the study builds it during a run:

* gossip (docs/protocol/gossip.md#testbeds): the actions of the donation game, PD and market,
  the trust game's investment (``--resources``, the investor's holdings) and return
  (``--received``, three times the investment), the witness's toned message, the binary signal
  and the separate reflection;
* evolution (docs/protocol/evolution.md#vh-prompts, #horibe-prompts): a strategy text
  (``--protocol``), a donation (``--protocol``, ``--holdings``, optionally ``--variant`` and
  ``--percent-base``/``--endowment``) and a strategy-matrix probe (a donation without
  punishment at the probe's resources, 10 units unless ``--holdings`` says otherwise).

For donations the verdict's ``parsed`` also holds ``amount``, the units the answer gives
(:func:`coopeval.studies.evolution.donations.resolve_donation`), and for a percent answer
(Horibe) ``percent``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coopeval.core.errors import ConfigError

__all__ = ["CONTEXT_OPTIONS", "STUDY_KINDS", "StudyAnswerContext", "donation_extras", "study_answer_format"]

STUDY_KINDS: dict[str, str] = {
    "donor_action": "gossip, donation game: the donor's cooperate or defect",
    "player_action": "gossip, prisoner's dilemma: C or D",
    "seller_action": "gossip, market: the seller's quality H or L",
    "buyer_action": "gossip, market: the buyer's c, s or none",
    "investor_action": "gossip, trust game: the investment in [0, --resources]",
    "responder_action": "gossip, trust game: the return in [0, --received]",
    "gossip": "gossip: the witness's tone and public message",
    "signal": "gossip: the witness's binary signal",
    "reflection": "gossip: the separate reflection before an action",
    "strategy": "evolution: a strategy text (--protocol vh or horibe)",
    "donation": "evolution: a donation (--protocol, --holdings; --variant, --percent-base, --endowment)",
    "matrix_probe": "evolution: a strategy-matrix probe (a donation without punishment; --holdings default 10)",
}
"""Every study decision kind ``check-answer`` reads, with what it is and the flags it needs."""

CONTEXT_OPTIONS: dict[str, tuple[type[str] | type[float], str, str]] = {
    "protocol": (str, "P", "evolution kinds: vh or horibe"),
    "holdings": (float, "UNITS", "donation, matrix_probe: the donor's holdings"),
    "variant": (str, "V", "donation: none, costly_punishment or partner_choice (default none)"),
    "percent_base": (str, "B", "donation (horibe): current or endowment (default current)"),
    "endowment": (float, "UNITS", "donation: the endowment (default 10)"),
    "resources": (float, "UNITS", "investor_action: the investor's holdings"),
    "received": (float, "UNITS", "responder_action: the amount received (3 x investment)"),
}
"""The ``check-answer`` flag of each :class:`StudyAnswerContext` field (``--percent-base`` for
``percent_base``): its value type, metavar and help."""


@dataclass(frozen=True)
class StudyAnswerContext:
    """What a kind's answer format depends on (the ``check-answer`` flags; None where unset).

    Attributes
    ----------
    protocol:
        Evolution protocol, ``vh`` or ``horibe``.
    holdings:
        Evolution donor's holdings in units (the prompt shows them rounded to two decimals).
    variant:
        Evolution punishment variant (``none``, ``costly_punishment``, ``partner_choice``).
    percent_base:
        Evolution ``percent_base`` (``current`` or ``endowment``).
    endowment:
        Evolution endowment in units (default 10).
    resources:
        Gossip trust game: the investor's holdings in units.
    received:
        Gossip trust game: the amount the responder received (3 × the investment), in units.
    """

    protocol: str | None = None
    holdings: float | None = None
    variant: str | None = None
    percent_base: str | None = None
    endowment: float | None = None
    resources: float | None = None
    received: float | None = None


_EVOLUTION_KINDS = ("strategy", "donation", "matrix_probe")


def _require(value: float | str | None, flag: str, kind: str, example: str) -> Any:
    if value is None:
        raise ConfigError(f"{flag}: required for --kind {kind}; pass it, e.g. {flag} {example}")
    return value


def _units(value: float | None, flag: str, kind: str, example: str, *, positive: bool = False) -> float:
    """A number of units from flag ``flag``: required, finite, >= 0 (> 0 with ``positive``)."""
    units = float(_require(value, flag, kind, example))
    if not (math.isfinite(units) and (units > 0 if positive else units >= 0)):
        raise ConfigError(f"{flag}: {units} must be a finite number of units {'> 0' if positive else '>= 0'}, e.g. {flag} {example}")
    return units


def _settings(kind: str, ctx: StudyAnswerContext) -> Any:
    from coopeval.studies.evolution.settings import PROTOCOLS, EvolutionSettings

    protocol = _require(ctx.protocol, "--protocol", kind, "vh")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"--protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    if kind == "matrix_probe" and ctx.variant not in (None, "none"):
        raise ConfigError(f"--variant: a strategy-matrix probe has no punishment; leave --variant out (not {ctx.variant!r})")
    params: dict[str, Any] = {"protocol": protocol, "punishment": ctx.variant, "percent_base": ctx.percent_base}
    if ctx.endowment is not None:
        params["endowment"] = _units(ctx.endowment, "--endowment", kind, "10", positive=True)
    try:
        return EvolutionSettings.from_params(params)
    except ValueError as exc:  # an unknown variant or percent base, named by the settings
        raise ConfigError(str(exc).replace("evolution.punishment", "--variant").replace("evolution.percent_base", "--percent-base")) from None


def _holdings(kind: str, ctx: StudyAnswerContext, settings: Any) -> float:
    holdings = settings.matrix_resources if kind == "matrix_probe" and ctx.holdings is None else ctx.holdings
    return _units(holdings, "--holdings", kind, "2414.797")


def study_answer_format(kind: str, ctx: StudyAnswerContext) -> Any:
    """The answer format of study kind ``kind`` in context ``ctx``, as the study builds it.

    Raises
    ------
    ConfigError
        An unknown kind, a flag the kind needs but ``ctx`` lacks, or a value out of its domain
        (the message names the flag and an example).
    """
    if kind not in STUDY_KINDS:
        raise ConfigError(f"--kind: {kind!r} is not a study decision kind; use one of {', '.join(STUDY_KINDS)}")
    if kind in _EVOLUTION_KINDS:
        settings = _settings(kind, ctx)
        if kind == "strategy":
            from coopeval.studies.evolution.strategies import strategy_format_for

            return strategy_format_for(settings)
        from coopeval.studies.evolution.donations import donation_format_for

        variant = "none" if kind == "matrix_probe" else None
        return donation_format_for(settings, _holdings(kind, ctx, settings), variant)
    from coopeval.studies.gossip import formats as gossip

    if kind == "investor_action":
        return gossip.investor_format(_units(ctx.resources, "--resources", kind, "10"))
    if kind == "responder_action":
        return gossip.responder_format(_units(ctx.received, "--received", kind, "15"))
    fixed = {
        "donor_action": gossip.DONOR,
        "player_action": gossip.PD_ACTION,
        "seller_action": gossip.SELLER,
        "buyer_action": gossip.BUYER,
        "gossip": gossip.GOSSIP,
        "signal": gossip.SIGNAL,
        "reflection": gossip.REFLECTION,
    }
    return fixed[kind]


def donation_extras(kind: str, ctx: StudyAnswerContext, fmt: Any, parsed: Mapping[str, Any]) -> dict[str, Any]:
    """For a valid donation or probe answer: ``amount`` (units given) and, for a percent answer,
    ``percent``; an empty dict for other kinds (docs/protocol/evolution.md#donation-game)."""
    if kind not in ("donation", "matrix_probe"):
        return {}
    from coopeval.studies.evolution.donations import resolve_donation

    settings = _settings(kind, ctx)
    action = resolve_donation(settings, parsed, fmt, _holdings(kind, ctx, settings))
    extras: dict[str, Any] = {"amount": action.amount}
    if fmt.unit == "percent":
        extras["percent"] = float(parsed["value"])
    return extras
