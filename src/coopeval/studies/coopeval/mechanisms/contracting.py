"""Contracting: a voted side-payment contract, active only if every player signs it.

CoopEval (arXiv 2604.15267) docs/protocol/answers.md#re-asks and docs/protocol/mechanisms.md#contracting. Each seated agent designs one contract
``{"A0": int, …}`` per cell; each matchup votes over its N contracts, every player then decides
whether to sign the selected one (``{"sign": bool}``), and one round is played. If everyone
signed, the contract is active: for every player i whose action a_i carries c = contract[a_i],
player i gets +c and every other player −c/(N − 1) (zero-sum). Recorded ``points`` are
post-contract, ``base_points`` the base-game payoffs. Stored discount 1.0.

Wording (docs/protocol/mechanisms.md#contracting item 6, docs/protocol/reference-data.md#compatibility-flags): "the other player" in two-player games; the reference's
plural everywhere with ``compat.contract_plural_text``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from coopeval.agents.protocol import Agent
from coopeval.core.prompts import PromptLibrary
from coopeval.decisions.formats import (
    AnswerFormat,
    ApprovalVote,
    ContractDesign,
    ContractVote,
    Signature,
)
from coopeval.games.base import Game
from coopeval.games.designs import contract_ns, contract_wd
from coopeval.studies.coopeval.mechanisms.base import (
    CellContext,
    CellRecords,
    bot_state,
    game_section,
    position,
    provider_seed,
)
from coopeval.studies.coopeval.mechanisms.catalog import MechanismInfo
from coopeval.studies.coopeval.mechanisms.design_vote import DesignVoteMechanism, points_text
from coopeval.studies.coopeval.mechanisms.selection import Design, Selection

MAX_ENFORCING_VALUE = 1000
"""Largest |value| searched by :func:`enforcing_contract`."""


def contract_adjustments(game: Game, contract: Mapping[str, int], profile: Sequence[int]) -> list[float]:
    """Per-seat transfers of an active contract for a base-action profile (docs/protocol/mechanisms.md#contracting step 4).

    Seat i receives c[a_i] − Σ_{j≠i} c[a_j]/(N − 1); the adjustments sum to zero.
    """
    n = game.n_players
    values = [float(contract[game.tokens[a]]) for a in profile]
    total = sum(values)
    return [values[i] - (total - values[i]) / (n - 1) for i in range(n)]


def contract_points(
    game: Game, contract: Mapping[str, int], active: bool, profile: Sequence[int]
) -> tuple[list[int], list[float], list[float], list[bool]]:
    """(actions, post-contract points, base points, mediated flags) of a sampled profile."""
    base = list(game.payoffs(tuple(profile)))
    if active:
        adjustments = contract_adjustments(game, contract, profile)
        points = [b + a for b, a in zip(base, adjustments, strict=True)]
    else:
        points = list(base)
    return list(profile), points, base, [False] * game.n_players


def _candidates(game: Game, value: int) -> list[dict[str, int]]:
    """Penalty ``-value`` on every non-cooperative action, then bonus ``value`` on cooperation."""
    coop = game.cooperative_action
    penalty = {t: (0 if i == coop else -value) for i, t in enumerate(game.tokens)}
    bonus = {t: (value if i == coop else 0) for i, t in enumerate(game.tokens)}
    return [penalty, bonus]


def enforcing_contract(game: Game, bounds: tuple[int, int] | None = None) -> dict[str, int]:
    """The smallest cooperation-enforcing contract of ``game`` (CoopEval Theorem 1; docs/protocol/design-checks.md#ns-wd).

    Searches value = 1, 2, … (up to :data:`MAX_ENFORCING_VALUE`, within ``bounds``) over two
    shapes, in this order: a penalty of −value on every non-cooperative action, and a bonus of
    +value on the cooperative action. Returns the first contract under which everyone
    cooperating is weakly dominant (WD, which implies NS), checked by brute force with
    :func:`coopeval.games.designs.contract_wd`. If no WD contract exists in range, the
    first Nash-stable one (value 0 included) is returned.

    Raises
    ------
    ValueError
        If the seats do not share one cooperative action, or no contract in range is even NS.
    """
    if len(set(game.cooperative_profile)) != 1:
        raise ValueError(f"{game.name}: seats must share one cooperative action")
    low, high = bounds if bounds is not None else (-MAX_ENFORCING_VALUE, MAX_ENFORCING_VALUE)

    def in_bounds(c: Mapping[str, int]) -> bool:
        return all(low <= v <= high for v in c.values())

    for value in range(1, MAX_ENFORCING_VALUE + 1):
        for contract in _candidates(game, value):
            if in_bounds(contract) and contract_wd(game, contract):
                return contract
    for value in range(MAX_ENFORCING_VALUE + 1):
        for contract in _candidates(game, value):
            if in_bounds(contract) and contract_ns(game, contract):
                return contract
    raise ValueError(f"{game.name}: no penalty or bonus contract within {bounds} makes cooperation Nash-stable")


class Contracting(DesignVoteMechanism):
    """Contracting (CoopEval docs/protocol/answers.md#re-asks; docs/protocol/mechanisms.md#contracting): design, approval vote, signature, play.

    Parameter (``ctx.params``): ``value_bounds`` — optional inclusive [low, high] bounds on
    contract values (off by default). Bots receive ``enforcing_design``
    (:func:`enforcing_contract`), the vote ``options``, and ``contract`` (the selected contract)
    for the signature and the action; ``contract_active`` for the action.
    """

    vote_format: ClassVar[type[ApprovalVote]] = ContractVote
    templates: ClassVar[tuple[str, ...]] = (
        "contracting_sign", "contracting_active", "contracting_inactive", "contracting_receive_from_plural",
        "contracting_receive_from_single", "contracting_pay_to_plural", "contracting_pay_to_single", "contracting_receives",
        "contracting_pays", "contracting_no_payment", "contracting_term", "points_one", "points_many", "contracting_rejecter",
        "contracting_rejecters",
    )

    @classmethod
    def prompt_templates(cls, info: MechanismInfo, params: Mapping[str, Any]) -> frozenset[str]:
        """Also ``contracting_bounds_note`` when ``value_bounds`` is set."""
        bounded = info.parse_params(params).value_bounds is not None
        return super().prompt_templates(info, params) | ({"contracting_bounds_note"} if bounded else set())

    def bounds(self, ctx: CellContext) -> tuple[int, int] | None:
        raw = self.params(ctx).value_bounds
        return (int(raw[0]), int(raw[1])) if raw else None

    def design_format(self, ctx: CellContext) -> AnswerFormat:
        return ContractDesign(ctx.game.tokens, int_bounds=self.bounds(ctx))

    def enforcing_design(self, ctx: CellContext) -> Design:
        return enforcing_contract(ctx.game, self.bounds(ctx))

    def _plural(self, ctx: CellContext) -> bool:
        return ctx.game.n_players > 2 or bool(ctx.compat.get("contract_plural_text", False))

    def _receive_from(self, ctx: CellContext) -> str:
        return ctx.prompts.render("contracting_receive_from_plural" if self._plural(ctx) else "contracting_receive_from_single")

    def _pay_to(self, ctx: CellContext) -> str:
        return ctx.prompts.render("contracting_pay_to_plural" if self._plural(ctx) else "contracting_pay_to_single")

    def rules_text(self, ctx: CellContext) -> str:
        return ctx.prompts.render("contracting_rules", receive_from=self._receive_from(ctx), pay_to=self._pay_to(ctx))

    def design_task(self, ctx: CellContext, fmt: AnswerFormat) -> str:
        note = ""
        bounds = self.bounds(ctx)  # the bounds of ``fmt`` (see design_format)
        if bounds is not None:
            note = ctx.prompts.render("contracting_bounds_note", low=bounds[0], high=bounds[1])
        return ctx.prompts.render(
            "contracting_design",
            base_tokens=", ".join(ctx.game.tokens),
            keys=", ".join(f'"{k}"' for k in fmt.keys),
            example="{" + ", ".join(f'"{k}": <INT>' for k in fmt.keys) + "}",
            bounds_note=note,
        )

    def design_hints(self, ctx: CellContext, fmt: AnswerFormat) -> dict[str, str]:
        """Per action key, what its number means (docs/protocol/mechanisms.md#contracting step 4, as
        :func:`contract_adjustments` pays it), in the words of the rules the prompt shows: a player
        who plays the action receives X points from the other player(s), or pays |X| to them."""
        bounds = self.bounds(ctx)
        number = f"a whole number from {bounds[0]} to {bounds[1]}" if bounds is not None else "a whole number"
        receive_from, pay_to = self._receive_from(ctx), self._pay_to(ctx)
        return {
            token: (
                f"Points X ({number}) attached to {label} ({token}): a player who plays it receives X points, {receive_from}, "
                f"if X is above 0; pays |X| points, {pay_to}, if X is below 0; nothing if X is 0. Paid only if every player "
                "signs the contract."
            )
            for token, label in zip(ctx.game.tokens, ctx.game.actions, strict=True)
        }

    def describe_option(self, ctx: CellContext, design: Design) -> str:
        game = ctx.game
        lines = []
        for token, label in zip(game.tokens, game.actions, strict=True):
            value = int(design[token])
            if value > 0:
                effect = ctx.prompts.render("contracting_receives", points=points_text(ctx, value), receive_from=self._receive_from(ctx))
            elif value < 0:
                effect = ctx.prompts.render("contracting_pays", points=points_text(ctx, -value), pay_to=self._pay_to(ctx))
            else:
                effect = ctx.prompts.render("contracting_no_payment")
            lines.append(ctx.prompts.render("contracting_term", token=token, label=label, effect=effect))
        return "\n".join(lines)

    async def after_vote(
        self, ctx: CellContext, seated: tuple[Agent, ...], mid: str, selection: Selection, records: CellRecords
    ) -> str:
        game = ctx.game
        n = game.n_players
        enforcing = self.enforcing_design(ctx)
        proposer = selection.designer.rsplit("#P", 1)[1]
        contract_text = self.describe_option(ctx, selection.design)
        fmt = Signature()
        sign_task = ctx.prompts.render("contracting_sign", proposer=proposer, contract=contract_text)
        positions = [position(ctx, self.name, seated, 0, seat, "sign") for seat in range(n)]
        sign_form = {  # for a person's form: the contract beside the yes/no, and what yes means
            "option_texts": {"sign": f"The contract to sign (proposed by Player {proposer}):\n{contract_text}"},
            "field_hints": {"sign": "yes: sign this contract; it comes into force only if every player signs it, "
                                    "otherwise the game is played without any payments"},
        }
        outcomes = await asyncio.gather(
            *(
                ctx.maker.decide(
                    agent,
                    "\n\n".join([game_section(ctx, seat), self.rules_text(ctx), sign_task]),
                    fmt,
                    positions[seat],
                    state=bot_state(ctx, seat, [], enforcing_design=enforcing, contract=selection.design, **sign_form),
                    seed=provider_seed(ctx, positions[seat]),
                )
                for seat, agent in enumerate(seated)
            )
        )
        for seat, (agent, outcome) in enumerate(zip(seated, outcomes, strict=True)):
            records.record(outcome, agent, fmt, mid, 0, seat)
        if not all(o.ok for o in outcomes):  # a failed signature fails only this matchup
            self.append_selection(ctx, mid, selection, records)
            return "failed"
        signatures = [bool(o.parsed["sign"]) for o in outcomes if o.parsed is not None]
        active = all(signatures)
        selection.signatures, selection.active = signatures, active
        self.append_selection(ctx, mid, selection, records)
        if active:
            section = ctx.prompts.render("contracting_active", proposer=proposer, contract=contract_text)
        else:
            rejecting = [s + 1 for s, ok in enumerate(signatures) if not ok]
            section = ctx.prompts.render(
                "contracting_inactive", proposer=proposer, contract=contract_text, rejecters=seat_list(ctx.prompts, rejecting)
            )
        states = [
            bot_state(ctx, seat, [], enforcing_design=enforcing, contract=selection.design, contract_active=active)
            for seat in range(n)
        ]
        return await self.play_round(
            ctx,
            seated,
            mid,
            game.tokens,
            [section] * n,
            states,
            lambda drawn: contract_points(game, selection.design, active, drawn),
            records,
        )


def seat_list(prompts: PromptLibrary, seats: Sequence[int]) -> str:
    """``Player 2`` / ``Players 1 and 3`` / ``Players 1, 2 and 3`` (templates
    ``contracting_rejecter`` and ``contracting_rejecters``)."""
    if len(seats) == 1:
        return prompts.render("contracting_rejecter", seat=seats[0])
    return prompts.render("contracting_rejecters", seats=", ".join(str(s) for s in seats[:-1]), last=seats[-1])
