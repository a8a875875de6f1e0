"""ALIGN gossip study: gossip-driven indirect reciprocity (Zhu et al., arXiv 2602.07777).

Spec: ``shared/spec/gossip.md``; issue 10. One module per concept:

* :mod:`.names` — agent names in seat order (spec §2);
* :mod:`.schedules` — matching policies ``align_sweep`` / ``random_alternating``, the PD circle
  schedule, Max's schedule and the market order (spec §3, §6, §8.1);
* :mod:`.testbeds` — parameters and payoffs of the four testbeds (spec §2, §6);
* :mod:`.tones` — the five tones and their ranks (spec §4.3);
* :mod:`.formats` — answer formats (validation, grammar, bot default) (spec §4.2, §4.5);
* :mod:`.memory` — private memory and the public log with their text rendering (spec §4.4);
* :mod:`.bots` — scripted players (spec §8.1, §8.2);
* :mod:`.metrics` — the §5 metrics and the attack metrics;
* :mod:`.rounds` — the round loop of each testbed (spec §4.1, §6);
* :mod:`.conditions`, :mod:`.config` — experimental conditions and the ``gossip:`` config section;
* :mod:`.records` — the store tables; :mod:`.study` — :class:`GossipStudy`.
"""
