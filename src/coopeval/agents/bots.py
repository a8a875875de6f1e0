"""Scripted strategy bots: deterministic reference players behind the agent protocol.

Bots decide from the structured ``request.state`` (never from prompt text), using each game's
declared cooperative and baseline (Nash) actions, and answer with the same JSON contract as an
LLM, so every answer goes through the same parser. In the style of Axelrod-Python, each bot is
one small class with a behavioural docstring, declarative traits and one decision method.

State keys read (see :class:`coopeval.agents.protocol.DecisionRequest`): ``seat`` (0-based),
``n_actions``, ``cooperative_action``, ``baseline_action``, ``history`` (rounds of this
matchup, oldest first, each a list of action indices in seat order; for reputation the
co-players' last known actions), and for mechanism decisions ``delegate_token``,
``enforcing_design``, ``own_option``, ``options`` (designs under vote) and ``contract``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.agents.provider import Provider
from coopeval.decisions.formats import ActionDistribution, AnswerFormat


BOT_PREFIX = "bot/"
"""The model-string prefix of every scripted bot (CoopEval's here, and the gossip and evolution
studies' own, which those studies build from the same ``bot/<name>`` strings)."""


def pure(fmt: AnswerFormat, index: int) -> dict[str, int]:
    """All probability on action ``index`` (keys from ``fmt``)."""
    return {token: (100 if i == index else 0) for i, token in enumerate(fmt.keys)}


def uniform(fmt: AnswerFormat, n: int | None = None) -> dict[str, int]:
    """Integer percents as equal as possible over the first ``n`` keys (remainder on the first)."""
    n = n or len(fmt.keys)
    share, rest = divmod(100, n)
    return {token: (share + (rest if i == 0 else 0) if i < n else 0) for i, token in enumerate(fmt.keys)}


def co_players_last_actions(state: Mapping[str, Any]) -> list[int] | None:
    """Co-players' actions in the previous round, or None in round 1."""
    history = state.get("history") or []
    if not history:
        return None
    seat = int(state["seat"])
    last = history[-1]
    return [a for s, a in enumerate(last) if s != seat]


class Bot:
    """Base class: answers every decision a format has a bot default for; subclasses override
    :meth:`action`.

    Traits (class attributes): ``stochastic`` (False for all bots here), ``needs_history`` and
    ``cooperative``. Non-action decisions take the format's default, the cooperation-supporting
    answer for a cooperative bot: propose the enforcing design, approve it, sign it (see
    :meth:`opinion`). Non-cooperative bots propose it too (they must propose something valid)
    but approve nothing and refuse to sign.
    """

    bot_name: ClassVar[str] = ""
    stochastic: ClassVar[bool] = False
    needs_history: ClassVar[bool] = False
    cooperative: ClassVar[bool] = True

    def __init__(self) -> None:
        self.name = f"{BOT_PREFIX}{self.bot_name}"
        self.model = self.name
        self.style = "scripted"
        self.params: dict[str, Any] = {}
        self.cacheable = False

    async def generate(self, request: DecisionRequest) -> Reply:
        """Answer from the structured state; the text is the JSON answer.

        The strategy's :meth:`opinion` first; where it has none, the answer format's
        :meth:`~coopeval.decisions.formats.AnswerFormat.bot_default` given the bot's
        ``cooperative`` trait.

        Raises
        ------
        ValueError
            Neither the strategy nor the format has an answer (e.g. a judge decision).
        """
        fmt = request.answer_format
        state = request.state
        answer = self.opinion(fmt, state)
        if answer is None:
            answer = fmt.bot_default(state, cooperative=self.cooperative)
        if answer is None:
            raise ValueError(f"{self.name} cannot answer decision kind {fmt.kind}")
        return Reply(text=json.dumps(answer), model_resolved=self.name)

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """Bots raise no transport errors; anything raised is a bug."""
        return ErrorClass.FATAL

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        """The action distribution (integer percents over ``fmt.keys``)."""
        raise NotImplementedError

    def opinion(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, Any] | None:
        """The strategy's own answer, or None to leave the decision to the format's default.

        Bots here have opinions on action distributions only: a cooperative bot offered an
        enforcing mediator delegates to it (all probability on ``state["delegate_token"]``);
        otherwise :meth:`action` decides. Designs, votes and signatures take the format's
        default (propose the enforcing design; approve and sign it iff cooperative).
        """
        if not isinstance(fmt, ActionDistribution):
            return None
        if state.get("delegate_token") in fmt.keys and state.get("mediator_enforcing") and self.cooperative:
            return pure(fmt, fmt.keys.index(state["delegate_token"]))
        return self.action(fmt, state)


class AlwaysCooperate(Bot):
    """Always plays the game's cooperative action (Axelrod's Cooperator)."""

    bot_name = "always-cooperate"

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        return pure(fmt, int(state["cooperative_action"]))


class AlwaysDefect(Bot):
    """Always plays the game's Nash-baseline action (Axelrod's Defector); rejects all designs."""

    bot_name = "always-defect"
    cooperative = False

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        return pure(fmt, int(state["baseline_action"]))


class TitForTat(Bot):
    """Cooperates first, then cooperates iff every co-player's last action was cooperative.

    References: Axelrod (1980), "Effective choice in the Prisoner's Dilemma".
    """

    bot_name = "tit-for-tat"
    needs_history = True

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        last = co_players_last_actions(state)
        coop = int(state["cooperative_action"])
        if last is None or all(a == coop for a in last):
            return pure(fmt, coop)
        return pure(fmt, int(state["baseline_action"]))


class GrimTrigger(Bot):
    """Cooperates until any co-player plays a non-cooperative action, then defects forever.

    References: Friedman (1971); Axelrod's Grudger.
    """

    bot_name = "grim-trigger"
    needs_history = True

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        seat = int(state["seat"])
        coop = int(state["cooperative_action"])
        for past in state.get("history") or []:
            if any(a != coop for s, a in enumerate(past) if s != seat):
                return pure(fmt, int(state["baseline_action"]))
        return pure(fmt, coop)


class UniformRandom(Bot):
    """Spreads probability as evenly as integer percents allow over the base actions."""

    bot_name = "uniform-random"
    stochastic = True

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        return uniform(fmt, int(state["n_actions"]))


class Malformed(Bot):
    """Always answers invalidly (a different defect per attempt): exercises re-asks and failures."""

    bot_name = "malformed"
    _ANSWERS: ClassVar[tuple[str, ...]] = (
        "I would rather not say.",
        '{"A0": 50, "A1": 40}',
        '{"A0": 50.0, "A1": 50.0}',
        "{'A0': 50, 'A1': 50}",
        '{"A0": true, "A1": 100}',
        '{"X": 100}',
    )

    async def generate(self, request: DecisionRequest) -> Reply:
        attempt = int(request.state.get("attempt", 0))
        return Reply(text=self._ANSWERS[attempt % len(self._ANSWERS)], model_resolved=self.name)

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        raise AssertionError("unreachable")


BOTS: dict[str, type[Bot]] = {
    cls.bot_name: cls for cls in (AlwaysCooperate, AlwaysDefect, TitForTat, GrimTrigger, UniformRandom, Malformed)
}


def make_bot(name: str) -> Bot:
    """Instantiate ``bot/<name>`` or ``<name>``.

    Raises
    ------
    KeyError
        Naming the known bots, if ``name`` is unknown.
    """
    short = name.removeprefix(BOT_PREFIX)
    if short not in BOTS:
        raise KeyError(f"unknown bot {name!r}; known bots: {', '.join(BOT_PREFIX + b for b in BOTS)}")
    return BOTS[short]()


def make_bot_agent(spec: Mapping[str, Any]) -> Bot:
    """The bot of a config entry: ``model`` ``bot/<name>``; with a ``label`` (a second copy of
    the same strategy) the bot is named ``bot/<label>``.

    Raises
    ------
    KeyError
        For an unknown bot (naming the known ones).
    """
    bot = make_bot(str(spec["model"]))
    if spec.get("label"):
        bot.name = bot.model = f"{BOT_PREFIX}{spec['label']}"
    return bot


def _bot_names() -> tuple[str, ...]:
    return tuple(BOTS)


BOT = Provider(
    name="bot",
    prefix=BOT_PREFIX,
    factory=make_bot_agent,
    scripted=True,
    model_kind="bot",
    known_label="known bots",
    known_models=_bot_names,
)
"""The scripted strategy bots (no options, no key, never retried: anything raised is a bug)."""
