"""Cultural evolution of donation strategies: the V&H and Horibe protocols (issue 11).

Modules, one concept each (spec sections in brackets):

* ``schedule``: the bipartite round-robin played twice [§1.1];
* ``traces``: behavioural traces and their rendering [§1.2];
* ``game``: the donation game with compounding resources, punishment and refusal [§1, §2.4];
* ``formats``: answer formats (strategy texts, donations) with parse / grammar / bot text [§2.3, §3.2];
* ``bots``: constant-fraction, reciprocal and always-zero donors [issue 11 §6];
* ``selection``: truncation, roulette, ranks [§2.2, §3.1];
* ``matrix``: 11 × 11 strategy matrices and their features [§3.4, §3.5];
* ``robustness``: model-level robustness, Table 1 / Table 2 layouts [§3.3, §3.6];
* ``summaries``: figure-ready summaries: generation metrics, robustness per generation, mean
  matrices, lineage edges [issue 11 §8];
* ``settings`` / ``config``: resolved run parameters and the ``evolution:`` config section [§5];
* ``prompting``: prompt rendering from ``prompts/evo_*.txt`` [§2.3, §3.2];
* ``runner``: one run as resumable generation steps, invasion tests, probes [§2.2, §3.3, §3.4];
* ``checkpoint``: atomic per-generation checkpoints [issue 11 §5];
* ``records``: table schemas [§6];
* ``study``: :class:`EvolutionStudy`, the ``Study`` contract.
"""

from coopeval.studies.evolution.study import EvolutionStudy

__all__ = ["EvolutionStudy"]
