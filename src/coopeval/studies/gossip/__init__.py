"""ALIGN gossip study: gossip-driven indirect reciprocity (Zhu et al., arXiv 2602.07777).

Spec: ``docs/protocol/gossip.md``; issue 10. One module per concept:

* :mod:`.names` — agent names in seat order (docs/protocol/gossip.md#donation-game);
* :mod:`.schedules` — matching policies ``align_sweep`` / ``random_alternating``, the PD circle
  schedule, Max's schedule and the market order (docs/protocol/gossip.md#matching, #testbeds, #greedy-defector);
* :mod:`.testbeds` — parameters and payoffs of the four testbeds (docs/protocol/gossip.md#donation-game, #testbeds);
* :mod:`.tones` — the five tones and their ranks (docs/protocol/gossip.md#tones);
* :mod:`.formats` — answer formats (validation, grammar, bot default) (docs/protocol/gossip.md#prompts, #parsing-and-failures);
* :mod:`.memory` — private memory and the public log with their text rendering (docs/protocol/gossip.md#memory);
* :mod:`.bots` — scripted players (docs/protocol/gossip.md#greedy-defector, #collusive-attackers);
* :mod:`.metrics` — the docs/protocol/gossip.md#metrics metrics and the attack metrics;
* :mod:`.rounds` — the round loop of each testbed (docs/protocol/gossip.md#round-loop, #testbeds);
* :mod:`.conditions`, :mod:`.config` — experimental conditions and the ``gossip:`` config section;
* :mod:`.population` — who plays a run: seat names and kinds, schedule, the agent per seat;
* :mod:`.records` — the store tables; :mod:`.study` — :class:`GossipStudy`.
"""

STUDY = "gossip"
"""The study's name: its registry key, config section, results folder and RNG stream namespace."""
