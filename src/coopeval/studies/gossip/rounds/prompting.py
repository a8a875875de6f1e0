"""The prompts of one run: rules, action, witness and reflection prompts and the quoted
assessments of memories (docs/protocol/gossip.md#prompts, #memory, #ablations, #decisions).

Every word comes from the study's templates (``studies/gossip/prompts/*.txt``); the code only
chooses which template to render and fills in names and numbers, so a reworded prompt changes
the cell ids of the cells that render it (issue 20).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.core.prompts import PromptLibrary, number_text
from coopeval.studies.gossip.conditions import Condition
from coopeval.studies.gossip.formats import REFLECTION
from coopeval.studies.gossip.memory import Channel, Gossip, PublicLog
from coopeval.studies.gossip.testbeds import (
    DonationGame,
    Market,
    PrisonersDilemma,
    Testbed,
    TrustGame,
    testbed_entry,
)


def stated_numbers(tb: Testbed) -> dict[str, object]:
    """The numbers the ``<testbed>_overview`` prompt states, taken from the testbed the engine
    pays with (``number_text``: never rounded for display; issue 13 kind 11b), read off its
    ``payoff`` where it states a reward: ``initial``; donation and PD ``c``, ``b`` and PD
    ``cc`` (the both-cooperate reward); trust
    ``multiplier``; market sizes and each (quality, offer) payoff pair."""
    values: dict[str, object] = {"initial": number_text(tb.initial_resources)}
    if isinstance(tb, DonationGame):
        donor, recipient = tb.payoff("cooperate")
        values.update(c=number_text(-donor), b=number_text(recipient))
    if isinstance(tb, PrisonersDilemma):
        sucker, temptation = tb.payoff("C", "D")
        values.update(c=number_text(-sucker), b=number_text(temptation), cc=number_text(tb.payoff("C", "C")[0]))
    if isinstance(tb, TrustGame):
        values.update(multiplier=number_text(tb.multiplier))
    if isinstance(tb, Market):
        values.update(
            n_sellers=tb.n_sellers,
            n_buyers=tb.n_buyers,
            **{k.lower(): ", ".join(number_text(x) for x in tb.payoff(k[0], k[1:])) for k in ("Hc", "Hs", "Lc", "Ls")},
        )
    return values


class RunPrompts:
    """Prompt composition of a run (the base of :class:`~.loop.RunLoop`, which owns the state
    read here: the testbed, condition, names, matching policy, memories and public log)."""

    testbed: Testbed
    cond: Condition
    names: tuple[str, ...]
    prompts: PromptLibrary
    matching: str
    memory: Mapping[str, Channel]
    log: PublicLog

    @property
    def key(self) -> str:
        return self.testbed.key

    @property
    def roles(self) -> tuple[str, str]:
        """The two agents' roles as the prompts name them (the registry entry's ``prompt_roles``),
        e.g. donor, recipient; investor, responder."""
        return testbed_entry(self.key).prompt_roles

    @property
    def signal_mode(self) -> str:
        return self.cond.signal

    def rules(self, name: str) -> str:
        """The rules section (the reference's system message) for ``name`` (docs/protocol/gossip.md#prompts)."""
        tb = self.testbed
        values = {**stated_numbers(tb), "pairing_phrase": self.prompts.render(f"pairing_{self.matching}")}
        overview = self.prompts.render(f"{self.key}_overview", **values)
        horizon = tb.horizon
        length = self.prompts.render(f"length_{horizon}", n_rounds=tb.n_rounds)
        if not self.cond.gossip:
            information = self.prompts.render("information_none")
        elif self.signal_mode == "tone":
            information = self.prompts.render("information_gossip", who_posts=self.prompts.render(f"{self.key}_who_posts"))
        else:
            information = self.prompts.render(
                "information_signal", who_posts=self.prompts.render(f"{self.key}_who_posts"), convention=self.convention()
            )
        return self.prompts.render(
            "rules",
            agent=name,
            n_agents=len(self.names),
            horizon_phrase=self.prompts.render(f"horizon_{horizon}"),
            game_title=self.prompts.render(f"{self.key}_title"),
            gamma=f"{tb.gamma:g}",
            overview=overview,
            length=length,
            information=information,
        )

    def convention(self) -> str:
        """The stated meaning of 1 and 0 under ``binary_convention`` ("" otherwise)."""
        return self.prompts.render("convention") if self.signal_mode == "binary_convention" else ""

    def _common(self, name: str, partner: str, gossip_visible: bool = True) -> dict[str, object]:
        tb = self.testbed
        community = ""
        if self.cond.gossip and gossip_visible:
            community = self.prompts.render("community", partner=partner, log=self.log.render())
        equilibrium = self.prompts.render(f"equilibrium_{tb.horizon}") if self.cond.equilibrium_knowledge else ""
        if self.cond.reflection:
            which = "_".join(("equilibrium",) * self.cond.equilibrium_knowledge + ("gossip",) * self.cond.gossip) or "plain"
            reflect_items = self.prompts.render(f"reflect_items_{which}")
            guidelines = self.prompts.render("guidelines_reflect", reflect_items=reflect_items, partner=partner)
        else:
            guidelines = self.prompts.render("guidelines_plain")
        return {
            "gamma": f"{tb.gamma:g}",
            "length_note": self.prompts.render("length_note_finite", n_rounds=tb.n_rounds) if tb.horizon == "finite" else "",
            "memory": self.memory[name].render(),
            "community": community,
            "equilibrium": equilibrium,
            "guidelines": guidelines,
        }

    def action_body(
        self, name: str, partner: str, round_: int, situation: str, choice: str, output: str, observed: bool, reflection: str = ""
    ) -> str:
        """Rules + the action prompt (one user message; the maker appends the style line).
        ``reflection`` is the agent's own reflection of a separate call (``reflection_call``)."""
        if not self.cond.gossip:
            accountability = self.prompts.render("accountability_none")
        elif observed:
            word = self.prompts.render("signal_word_tone" if self.signal_mode == "tone" else "signal_word_binary")
            accountability = self.prompts.render("accountability_observed", partner=partner, signal_word=word)
        else:  # nobody reports on this action, but the partner learns it (the market's buyer)
            accountability = self.prompts.render("accountability_partner", partner=partner)
        shown = self.prompts.render("reflection_shown", reflection=reflection) + "\n" if reflection else ""
        return self._with_rules(
            name, partner, "action", round_, situation, choice=choice, output=output, accountability=accountability, reflection=shown
        )

    def reflection_body(self, name: str, partner: str, round_: int, situation: str) -> str:
        """Rules + the separate reflection prompt (docs/protocol/gossip.md#decisions, ``reflection_call``)."""
        return self._with_rules(name, partner, "reflect", round_, situation, partner=partner, output=REFLECTION.instruction())

    def _with_rules(self, name: str, other: str, template: str, round_: int, situation: str, **values: object) -> str:
        """The rules, a blank line, then ``template`` filled with the round, the situation, the
        sections of :meth:`_common` for ``name`` meeting ``other`` (memory, community log,
        equilibrium, guidelines) and ``values``."""
        body = self.prompts.render(template, round=round_, situation=situation, **values, **self._common(name, other))
        return self.rules(name) + "\n\n" + body

    def witness_body(self, name: str, partner: str, round_: int, situation: str, fmt: Any) -> str:
        """Rules + the gossip (or signal) prompt."""
        if self.signal_mode == "tone":
            tone_list = "\n".join(self.prompts.render("tone_line", tone=t, meaning=self.tone_meaning(t)) for t in fmt.tones)
            task = self.prompts.render("task_gossip", partner=partner, tone_list=tone_list)
        else:
            task = self.prompts.render("task_signal", partner=partner, convention=self.convention())
        return self._with_rules(name, partner, "witness", round_, situation, partner=partner, task=task, output=fmt.instruction())

    def tone_meaning(self, tone: str) -> str:
        """What ``tone`` means, as the prompts state it (``tone_meaning_<tone>``)."""
        return self.prompts.render(f"tone_meaning_{tone}")

    def published(self, g: Gossip | None) -> str:
        """How a published assessment reads inside a memory entry ("" if none)."""
        if g is None or not g.ok or g.entry is None:
            return ""
        return self.prompts.render("published", shown=g.entry.content(self.cond.show_tone, self.prompts))

    def post(self, template: str, g: Gossip | None, **values: object) -> str:
        """Template ``template`` quoting the published assessment ``g`` ("" if none)."""
        shown = self.published(g)
        return self.prompts.render(template, post=shown, **values) if shown else ""
