"""Who plays one gossip run (docs/protocol/gossip.md#testbeds, #matching, #greedy-defector,
#collusive-attackers): the names in seat order, each seat's kind (``honest``, ``attacker`` or
``max``), the schedule of pairs and the agent in each seat.

The population's model plays every honest seat; the scripted Max and collusive attackers
(:mod:`.bots`) play theirs. Random draws come from the run's named streams
(:func:`coopeval.core.rng.rng_for` of seed, study, testbed, replicate and purpose).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.agents.protocol import Agent
from coopeval.agents.registry import is_scripted, make_agent
from coopeval.core.rng import rng_for
from coopeval.studies.gossip import STUDY
from coopeval.studies.gossip.bots import CollusiveAttacker, Max, make_gossip_bot
from coopeval.studies.gossip.conditions import Condition
from coopeval.studies.gossip.names import MAX_NAME, agent_names
from coopeval.studies.gossip.schedules import (
    Pair,
    align_sweep,
    circle_schedule,
    market_schedule,
    max_schedule,
    random_alternating,
)
from coopeval.studies.gossip.testbeds import Testbed, testbed_entry

__all__ = ["population", "population_agent", "seat_agents"]


def population(testbed: Testbed, condition: Condition, seed: int, replicate: int, matching: str) -> tuple[tuple[str, ...], dict[str, str], list[Pair]]:
    """Names in seat order, kind per name and the schedule of one run.

    * Max (docs/protocol/gossip.md#greedy-defector): n − 1 agents plus ``Max`` in the last seat; only Max's interactions are played.
    * Collusive attackers (docs/protocol/gossip.md#collusive-attackers): two seats drawn from the named stream ``"attackers"``.
    * Schedules: donation/trust ``align_sweep`` or ``random_alternating`` (stream ``"matching"``);
      PD the circle method under ``align_sweep``, else a random alternating order; market always
      a seeded shuffle of all seller–buyer pairs.
    """
    key = testbed.key
    schedule_kind = testbed_entry(key).schedule
    stream = lambda purpose: rng_for(seed, STUDY, key, replicate, purpose)  # noqa: E731
    n = testbed.n
    if condition.attacker == "max":
        names = (*agent_names(n)[: n - 1], MAX_NAME) if n - 1 >= 2 else (agent_names(2)[0], MAX_NAME)
        kinds = dict.fromkeys(names, "honest")
        kinds[MAX_NAME] = "max"
        return names, kinds, max_schedule(len(names) - 1, len(names) - 1, pd=schedule_kind == "circle")
    names = agent_names(n)
    kinds = dict.fromkeys(names, "honest")
    if condition.attacker == "collusive":
        for seat in sorted(int(s) for s in stream("attackers").choice(n, size=2, replace=False)):
            kinds[names[seat]] = "attacker"
    if schedule_kind == "bipartite":
        sellers = testbed.n_sellers
        schedule = market_schedule(range(sellers), range(sellers, n), stream("matching"))
    elif matching == "align_sweep":
        schedule = circle_schedule(n) if schedule_kind == "circle" else align_sweep(n)
    else:
        schedule = random_alternating(n, stream("matching"))
    return names, kinds, schedule


def population_agent(entry: Mapping[str, Any]) -> Agent:
    """The agent of a population entry: a scripted model (the registry says which) is built by
    the study's bot factory (:data:`.bots.GOSSIP_BOT_MODELS`), anything else by the registry."""
    if is_scripted(str(entry["model"])):
        return make_gossip_bot(str(entry["model"]))  # type: ignore[return-value]
    return make_agent(entry)


def seat_agents(names: tuple[str, ...], kinds: Mapping[str, str], population_model: Agent) -> dict[str, Agent]:
    """Name → the agent in that seat: Max and the collusive attackers are scripted
    (:mod:`.bots`), every honest seat is ``population_model``."""
    cast: dict[str, Agent] = {}
    for name in names:
        if kinds[name] == "max":
            cast[name] = Max()  # type: ignore[assignment]
        elif kinds[name] == "attacker":
            cast[name] = CollusiveAttacker()  # type: ignore[assignment]
        else:
            cast[name] = population_model
    return cast
