"""The LLM judge of reasoning (docs/protocol/design-checks.md#judge): prompt, selection of what is judged, the judge stage,
and label aggregation with the correct denominator."""

from coopeval.studies.coopeval.judge.aggregate import DIMENSIONS, label_shares
from coopeval.studies.coopeval.judge.prompt import JudgePrompt, category_lines
from coopeval.studies.coopeval.judge.selection import (
    DEFAULT_MIN_CHARS,
    cot_agent_names,
    eligible_decisions,
    sample_decisions,
)

__all__ = [
    "DEFAULT_MIN_CHARS",
    "DIMENSIONS",
    "JudgePrompt",
    "category_lines",
    "cot_agent_names",
    "eligible_decisions",
    "label_shares",
    "sample_decisions",
]
