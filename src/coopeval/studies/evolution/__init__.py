"""Cultural evolution of donation strategies: the V&H and Horibe protocols (issue 11).

Modules, one concept each (spec sections in brackets):

* ``schedule``: the bipartite round-robin played twice [docs/protocol/evolution.md#schedule];
* ``traces``: behavioural traces and their rendering [docs/protocol/evolution.md#traces];
* ``game``: the donation game with compounding resources, punishment and refusal [docs/protocol/evolution.md#donation-game, #punishment-variants];
* ``formats``: answer formats (strategy texts, donations) with parse / grammar / bot text [docs/protocol/evolution.md#vh-prompts, #horibe-prompts];
* ``bots``: constant-fraction, reciprocal and always-zero donors [issue 11 §6];
* ``selection``: truncation, roulette, ranks [docs/protocol/evolution.md#vh-generation-loop, #horibe-changes];
* ``matrix``: 11 × 11 strategy matrices and their features [docs/protocol/evolution.md#strategy-matrix, #matrix-features];
* ``robustness``: model-level robustness, Table 1 / Table 2 layouts [docs/protocol/evolution.md#invasion-test, #horibe-results];
* ``summaries``: figure-ready summaries: generation metrics, robustness per generation, mean
  matrices, lineage edges [issue 11 §8];
* ``settings`` / ``config``: resolved run parameters and the ``evolution:`` config section [docs/protocol/evolution.md#reproduction-switches];
* ``prompting``: prompt rendering from ``prompts/evo_*.txt`` [docs/protocol/evolution.md#vh-prompts, #horibe-prompts];
* ``runner``: one run as resumable generation steps, invasion tests, probes [docs/protocol/evolution.md#vh-generation-loop, #invasion-test, #strategy-matrix];
* ``checkpoint``: atomic per-generation checkpoints [issue 11 §5];
* ``records``: table schemas [docs/protocol/evolution.md#storage];
* ``study``: :class:`EvolutionStudy`, the ``Study`` contract.
"""

from coopeval.studies.evolution.study import EvolutionStudy

__all__ = ["EvolutionStudy"]
