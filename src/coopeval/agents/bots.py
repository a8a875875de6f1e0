"""The one family of scripted bots: deterministic reference players behind the agent protocol.

Bots decide from the structured ``request.state`` (never from prompt text) and answer with the
same contract as an LLM, so every answer goes through the same parser. In the style of
Axelrod-Python, each bot is one small class with a behavioural docstring, an Axelrod-style
:class:`Classifier` of its facts and one decision method, :meth:`ScriptedAgent.cooperates`
(or :meth:`Bot.action` for a non-binary strategy).

Every study's bots derive from :class:`ScriptedAgent` (identity ``bot/<name>``, no transport,
never cached). :class:`AlwaysCooperate`, :class:`AlwaysDefect` and :class:`Malformed` are the
same classes in every study; a study whose decisions are not CoopEval's answer formats
registers how a bot's strategy becomes its answers (:func:`register_answerer`: the gossip
study's donor, player, seller, witness … formats), and adds bots only where its strategies
really differ (gossip's honest gossiper, discriminator and attackers; evolution's donors, which
give a percentage of their resources).

CoopEval decisions (no answerer registered for the format) use each game's declared
cooperative and baseline (Nash) actions.

State keys read (see :class:`coopeval.agents.protocol.DecisionRequest`): ``seat`` (0-based),
``n_actions``, ``cooperative_action``, ``baseline_action``, ``history`` (rounds of this
matchup, oldest first, each a list of action indices in seat order; for reputation the
co-players' last known actions), and for mechanism decisions ``delegate_token``,
``enforcing_design``, ``own_option``, ``options`` (designs under vote) and ``contract``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Classifier:
    """Axelrod-style facts of a bot's strategy (after Axelrod-Python's strategy classifier).

    Attributes
    ----------
    memory_depth:
        How many past rounds the strategy reads (0: none, ``math.inf``: all).
    stochastic:
        Whether its answer is random (no bot here is: :class:`UniformRandom` spreads
        probability, it does not sample).
    reads:
        The ``request.state`` keys it decides from, besides the game's facts.
    """

    memory_depth: float = 0
    stochastic: bool = False
    reads: frozenset[str] = field(default_factory=frozenset)


class ScriptedAgent:
    """Base of every scripted bot of every study: identity, facts, no transport.

    ``name`` and ``model`` are ``bot/<bot_name>`` (the class's, or ``bot_name`` given to a
    parametrised bot such as evolution's ``evo-constant-25``); ``style`` is ``scripted``; no
    params; never cached. Anything a bot raises is a bug (``FATAL``, never retried).
    """

    bot_name: ClassVar[str] = ""
    classifier: ClassVar[Classifier] = Classifier()

    def __init__(self, bot_name: str | None = None) -> None:
        self.name = f"{BOT_PREFIX}{bot_name or self.bot_name}"
        self.model = self.name
        self.style = "scripted"
        self.params: Mapping[str, Any] = {}
        self.cacheable = False

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        """The strategy: whether to act cooperatively now, from the structured state."""
        raise NotImplementedError(f"{type(self).__name__} has no binary strategy")

    async def generate(self, request: DecisionRequest) -> Reply:
        """Answer one decision (each family of bots defines how)."""
        raise NotImplementedError

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """Bots raise no transport errors; anything raised is a bug."""
        return ErrorClass.FATAL


Answerer = Callable[[ScriptedAgent, Any, Mapping[str, Any]], dict[str, Any]]
"""``(bot, answer format, state) → JSON answer``: how a study turns a bot's strategy into the
answer of one of its own formats."""

_ANSWERERS: dict[type, Answerer] = {}


def register_answerer(format_type: type, answerer: Answerer) -> None:
    """Let :class:`Bot` answer decisions of ``format_type`` (and its subclasses) with
    ``answerer``; a study calls it for its own formats when its bots module is imported."""
    _ANSWERERS[format_type] = answerer


def answerer_for(fmt: object) -> Answerer | None:
    """The answerer registered for ``fmt``'s type or its nearest base, or ``None``."""
    return next((_ANSWERERS[t] for t in type(fmt).__mro__ if t in _ANSWERERS), None)


class Bot(ScriptedAgent):
    """A bot of the family: answers CoopEval decisions itself and any registered study format
    through that study's answerer; subclasses define :meth:`cooperates` or :meth:`action`.

    ``cooperative`` (class attribute) is the bot's stance in mechanism decisions: non-action
    decisions take the format's default, the cooperation-supporting answer for a cooperative
    bot: propose the enforcing design, approve it, sign it (see :meth:`opinion`).
    Non-cooperative bots propose it too (they must propose something valid) but approve
    nothing and refuse to sign.
    """

    cooperative: ClassVar[bool] = True

    async def generate(self, request: DecisionRequest) -> Reply:
        """Answer from the structured state; the text is the JSON answer.

        A format with a registered answerer (:func:`register_answerer`) is answered by it.
        Otherwise the strategy's :meth:`opinion` first; where it has none, the answer format's
        :meth:`~coopeval.decisions.formats.AnswerFormat.bot_default` given the bot's
        ``cooperative`` trait.

        Raises
        ------
        ValueError
            Neither the strategy nor the format has an answer (e.g. a judge decision).
        """
        fmt = request.answer_format
        state = request.state
        if (answerer := answerer_for(fmt)) is not None:
            return Reply(text=json.dumps(answerer(self, fmt, state)), model_resolved=self.name)
        answer = self.opinion(fmt, state)
        if answer is None:
            answer = fmt.bot_default(state, cooperative=self.cooperative)
        if answer is None:
            raise ValueError(f"{self.name} cannot answer decision kind {fmt.kind}")
        return Reply(text=json.dumps(answer), model_resolved=self.name)

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        """The action distribution (integer percents over ``fmt.keys``): all on the game's
        cooperative action if :meth:`cooperates`, else all on its baseline action."""
        return pure(fmt, int(state["cooperative_action" if self.cooperates(state) else "baseline_action"]))

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
    """Always cooperates (Axelrod's Cooperator): the game's cooperative action; in gossip it
    reports neutrally, never judging."""

    bot_name = "always-cooperate"

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return True


class AlwaysDefect(Bot):
    """Always defects (Axelrod's Defector): the game's Nash-baseline action; rejects all
    designs; in gossip it reports neutrally."""

    bot_name = "always-defect"
    cooperative = False

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return False


class TitForTat(Bot):
    """Cooperates first, then cooperates iff every co-player's last action was cooperative.

    References: Axelrod (1980), "Effective choice in the Prisoner's Dilemma".
    """

    bot_name = "tit-for-tat"
    classifier = Classifier(memory_depth=1, reads=frozenset({"history", "seat"}))

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        last = co_players_last_actions(state)
        return last is None or all(a == int(state["cooperative_action"]) for a in last)


class GrimTrigger(Bot):
    """Cooperates until any co-player plays a non-cooperative action, then defects forever.

    References: Friedman (1971); Axelrod's Grudger.
    """

    bot_name = "grim-trigger"
    classifier = Classifier(memory_depth=math.inf, reads=frozenset({"history", "seat"}))

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        seat, coop = int(state["seat"]), int(state["cooperative_action"])
        return all(a == coop for past in state.get("history") or [] for s, a in enumerate(past) if s != seat)


class UniformRandom(Bot):
    """Spreads probability as evenly as integer percents allow over the base actions."""

    bot_name = "uniform-random"

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        return uniform(fmt, int(state["n_actions"]))


class Malformed(Bot):
    """Always answers invalidly (answer ``attempt`` of :attr:`ANSWERS`, cyclically, in any
    study): exercises re-asks and failure rows."""

    bot_name = "malformed"
    ANSWERS: ClassVar[tuple[str, ...]] = (
        "I would rather not say.",
        '{"A0": 50, "A1": 40}',
        '{"A0": 50.0, "A1": 50.0}',
        "{'A0': 50, 'A1': 50}",
        '{"A0": true, "A1": 100}',
        '{"X": 100}',
    )

    async def generate(self, request: DecisionRequest) -> Reply:
        attempt = int(request.state.get("attempt", 0))
        return Reply(text=self.ANSWERS[attempt % len(self.ANSWERS)], model_resolved=self.name)


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
