"""Count the model decisions a config asks for, per mechanism and decision kind, without a model.

Not a test: a planning tool. Every cell of the config is played with scripted stand-ins that
carry the LLM agents' names (answering like tit-for-tat), so the counts equal a real run's
first-attempt decisions (re-asks come on top). Usage::

    .venv/bin/python benchmarks/decision_counts.py config/config.yaml [overlay.yaml ...]
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import polars as pl

from coopeval.agents.bots import TitForTat
from coopeval.agents.registry import agent_name, is_scripted, make_agent
from coopeval.core.prompts import PromptLibrary
from coopeval.pipeline.config import load_config
from coopeval.studies.coopeval.cells import build_cells
from coopeval.studies.coopeval.play import play_cell


class StandIn(TitForTat):
    """Answers like tit-for-tat under an LLM agent's name (for counting only)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = self.model = name


def main(paths: list[str]) -> None:
    config = load_config(paths or ["config/config.yaml"])
    counts: collections.Counter[tuple[str, str, str]] = collections.Counter()
    for cell in build_cells(config):
        agents = [make_agent(a) if is_scripted(a["model"]) else StandIn(agent_name(a)) for a in cell["agents"]]
        tables, _ = play_cell(cell, None, PromptLibrary(Path(__file__).resolve().parents[1] / "resources" / "prompts"), agents=agents)
        llm = tables["llm_calls"].filter(~pl.col("agent").str.starts_with("bot/"))
        for kind, agent in zip(llm["kind"], llm["agent"], strict=True):
            counts[(cell["mechanism"], agent, kind)] += 1
    per_mechanism: collections.Counter[str] = collections.Counter()
    for (mechanism, agent, kind), n in sorted(counts.items()):
        per_mechanism[mechanism] += n
        print(f"{mechanism:22s} {agent:32s} {kind:16s} {n:6d}")
    print("total per mechanism:", dict(per_mechanism), "=", sum(per_mechanism.values()))


if __name__ == "__main__":
    main(sys.argv[1:])
