"""Prompt texts of the evolution study, rendered from ``prompts/evo_*.txt`` (docs/protocol/evolution.md#vh-prompts, #horibe-prompts).

Our own wording; only the answer formats are fixed by the spec. Every call is one user message:
the rules text (the reference's system prompt) opens it unless ``no_system`` is set
(``compat.vh_gemini_no_system``), because the shared decision loop sends single-turn prompts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from coopeval.core.prompts import PromptLibrary, number_text
from coopeval.studies.evolution.amounts import percent_limit, shown_units
from coopeval.studies.evolution.settings import EvolutionSettings
from coopeval.studies.evolution.traces import Trace, TraceEvent, render_trace

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
TRACE_KINDS = ("donate", "punish", "refuse", "invalid", "no_history", "empty")


def evolution_prompts(library: PromptLibrary | None = None) -> PromptLibrary:
    """``library`` if it holds the evolution templates, else the study's own folder."""
    if library is not None and "evo_donation_vh" in library.templates:
        return library
    return PromptLibrary(PROMPTS_DIR)


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"\n\s*\n(?=- )", "\n", text)).strip()


def prompt_templates(s: EvolutionSettings) -> frozenset[str]:
    """The templates a cell with settings ``s`` can render (issue 20): its cell id hashes exactly
    these, and it plays with a library restricted to them. Mirrors :class:`EvolutionPrompts`:
    the protocol's strategy and donation prompts, the rules text unless ``no_system`` (with the
    observation rule and its example unless Horibe leaves it unstated), the punishment variant's
    rule and question, the plain donation question (the run's, or the strategy-matrix probes',
    which always ask it), the V&H advice lines, the too-long re-ask under a word limit, and
    every trace line (read when the prompts are set up)."""
    names = {f"evo_strategy_first_{s.protocol}", f"evo_strategy_later_{s.protocol}", f"evo_donation_{s.protocol}",
             "evo_player_name", "evo_no_strategy", *(f"evo_trace_{kind}" for kind in TRACE_KINDS)}
    if not s.no_system:
        names |= {f"evo_system_{s.protocol}", f"evo_rule_{s.punishment}"}
        if not (s.protocol == "horibe" and s.horibe_observation_unstated):
            names |= {"evo_rule_observation", "evo_example_names"}
    if s.punishment != "none":
        names.add(f"evo_question_{s.punishment}")
    if s.amount_unit == "percent":
        names |= {"evo_question_percent", f"evo_percent_base_{s.percent_base}"}
    else:
        names.add("evo_question_units")
    if s.protocol == "vh":
        names |= {"evo_advice_scored", "evo_with_scores"} if s.show_scores else {"evo_advice"}
    if s.word_limit is not None:
        names.add("evo_strategy_too_long")
    return frozenset(names)


EXAMPLE_PERCENTS = (20.0, 60.0, 10.0, 40.0, 80.0, 30.0, 0.0, 50.0, 90.0, 70.0)
"""The donations of the rules' example chain, most recent first (cycled)."""


def example_trace(length: int, names: Sequence[str]) -> Trace:
    """The rules' example: a donor in round ``length + 1`` sees ``length`` events, most recent
    first: ``names[0]`` gave to ``names[1]`` in round ``length``, ``names[1]`` to ``names[2]``
    in round ``length − 1``, … (the chain of docs/protocol/evolution.md#traces).

    Raises
    ------
    ValueError
        Fewer than ``length + 1`` names (add names to ``evo_example_names.txt``).
    """
    if len(names) < length + 1:
        raise ValueError(f"a trace of {length} events needs {length + 1} example names, evo_example_names.txt has {len(names)}; add names")
    events = tuple(
        TraceEvent(length - k, names[k], names[k + 1], "donate", EXAMPLE_PERCENTS[k % len(EXAMPLE_PERCENTS)], 0.0) for k in range(length)
    )
    return Trace(events, "")


class EvolutionPrompts:
    """Renders every evolution prompt for one run's settings."""

    def __init__(self, library: PromptLibrary, settings: EvolutionSettings) -> None:
        self.library = library
        self.s = settings
        self.trace_templates = {kind: library.templates[f"evo_trace_{kind}"] for kind in TRACE_KINDS}

    def system(self) -> str:
        """The rules text (empty under ``no_system``)."""
        if self.s.no_system:
            return ""
        # The game's numbers exactly as the engine pays them (never rounded; issue 13 kind 11b).
        rule = self.library.render(f"evo_rule_{self.s.punishment}", loss=number_text(self.s.punishment_loss))
        text = self.library.render(
            f"evo_system_{self.s.protocol}",
            endowment=number_text(self.s.endowment),
            multiplier=number_text(self.s.multiplier),
            trace_length=self.s.trace_length,
            observation_rule=self.observation_rule(),
            variant_rule=rule,
        )
        return _tidy(text)

    def observation_rule(self) -> str:
        """What a donor observes, with an example trace of exactly ``trace_length`` events
        rendered by the same templates as the real traces (empty for Horibe under
        ``compat.horibe_observation_unstated``: the paper's printed system prompt)."""
        if self.s.protocol == "horibe" and self.s.horibe_observation_unstated:
            return ""
        return self.library.render(
            "evo_rule_observation",
            trace_length=self.s.trace_length,
            example_round=self.s.trace_length + 1,
            example=self.trace(example_trace(self.s.trace_length, self.example_names())),
        ).strip()

    def example_names(self) -> list[str]:
        """The actors of the rules' example chain (``evo_example_names``, one per line)."""
        return [line.strip() for line in self.library.templates["evo_example_names"].splitlines() if line.strip()]

    def player_name(self, number: int) -> str:
        """The neutral name of player ``number`` (1-based), e.g. ``Player 3``."""
        return self._line("evo_player_name", number=number)

    def strategy_first(self, name: str) -> str:
        return _tidy(
            self.library.render(
                f"evo_strategy_first_{self.s.protocol}", system=self.system(), agent_name=name, word_limit=self.s.word_limit or ""
            )
        )

    def strategy_later_vh(self, name: str, survivors: Sequence[tuple[str, float]]) -> str:
        """V&H newcomer prompt: the survivors' texts, with their scores unless ``show_scores``
        is off (the reference's behaviour)."""
        line = "evo_advice_scored" if self.s.show_scores else "evo_advice"
        advice = "\n".join(self._line(line, text=text, score=shown_units(score)) for text, score in survivors)
        return _tidy(
            self.library.render(
                "evo_strategy_later_vh",
                system=self.system(),
                agent_name=name,
                with_scores=self._line("evo_with_scores") if self.s.show_scores else "",
                advice=advice,
            )
        )

    def _line(self, template: str, **values: object) -> str:
        """A one-line template without its final newline."""
        return self.library.render(template, **values).rstrip("\n")

    def strategy_later_horibe(self, name: str, parent_strategy: str, parent_rank: int) -> str:
        return _tidy(
            self.library.render(
                "evo_strategy_later_horibe",
                system=self.system(),
                agent_name=name,
                word_limit=self.s.word_limit or "",
                parent_strategy=parent_strategy,
                parent_rank=parent_rank,
                n_agents=self.s.n_agents,
            )
        )

    def strategy_too_long(self, original: str, words: int) -> str:
        return self.library.render("evo_strategy_too_long", original=original, words=words, word_limit=self.s.word_limit)

    def trace(self, trace: Trace) -> str:
        return render_trace(trace, self.trace_templates, self.s.punishment_loss)

    def donation(
        self,
        name: str,
        strategy: str,
        generation: int,
        round_: int,
        recipient: str,
        recipient_units: float,
        trace: Trace,
        donor_units: float,
        punishment: str | None = None,
    ) -> str:
        """The donor prompt (docs/protocol/evolution.md#vh-prompts donor prompt, docs/protocol/evolution.md#horibe-prompts prompt 3); ``punishment`` overrides the
        run's variant (matrix probes ask the plain donation question)."""
        variant = self.s.punishment if punishment is None else punishment
        if variant != "none":
            question = self.library.render(f"evo_question_{variant}", donor_units=shown_units(donor_units))
        elif self.s.amount_unit == "percent":
            base = self.library.render(f"evo_percent_base_{self.s.percent_base}", endowment=shown_units(self.s.endowment)).strip()
            limit = percent_limit(donor_units, self.s.donation_game.percent_base_units(donor_units))
            question = self.library.render("evo_question_percent", base=base, limit=shown_units(limit))
        else:
            question = self.library.render("evo_question_units", donor_units=shown_units(donor_units))
        return _tidy(
            self.library.render(
                f"evo_donation_{self.s.protocol}",
                system=self.system(),
                agent_name=name,
                strategy=strategy or self._line("evo_no_strategy"),
                generation=generation,
                round=round_,
                recipient=recipient,
                recipient_units=shown_units(recipient_units),
                trace=self.trace(trace),
                donor_units=shown_units(donor_units),
                question=question,
            )
        )
