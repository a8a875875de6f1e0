"""Answer formats: one class per kind of decision, owning its validation, grammar and bot default.

See :mod:`coopeval.decisions.formats.base` for the contract and how to add a format.

========================  ======================  ===========================================
class                     kind                    JSON answer (docs/protocol/answers.md#output-formats, docs/protocol/design-checks.md#what-is-judged)
========================  ======================  ===========================================
:class:`ActionDistribution`  ``action``           ``{"A0": 30, "A1": 70}``
:class:`MediatorDesign`   ``mediator_design``     ``{"1": "A0", "2": "A1"}``
:class:`MediatorVote`     ``mediator_vote``       ``{"M1": true, "M2": false}``
:class:`ContractDesign`   ``contract_design``     ``{"A0": -3, "A1": 12}``
:class:`ContractVote`     ``contract_vote``       ``{"C1": true}``
:class:`Signature`        ``sign``                ``{"sign": true}``
:class:`JudgeLabels`      ``judge``               ``{"reasoning": "…", "confidence": 0.85,
                                                  "justification_type": "Label, Label"}``
========================  ======================  ===========================================

Free-text answers (a study's prose formats) subclass :class:`TextAnswerFormat`: they own their
parser, their complete grammar and their token bound.
"""

from coopeval.decisions.formats.action import TOTAL_PERCENT, ActionDistribution
from coopeval.decisions.formats.base import AnswerFormat, DecisionKind
from coopeval.decisions.formats.contract_design import DEFAULT_CONTRACT_BOUNDS, ContractDesign
from coopeval.decisions.formats.judge import (
    DEFAULT_JUDGE_REASONING_CHARS,
    FALLBACK_LABEL,
    JUDGE_MAX_LABELS,
    JudgeLabels,
    normalise_label,
)
from coopeval.decisions.formats.mediator_design import MediatorDesign
from coopeval.decisions.formats.signature import Signature
from coopeval.decisions.formats.text import TextAnswerFormat
from coopeval.decisions.formats.vote import ApprovalVote, ContractVote, MediatorVote

__all__ = [
    "DEFAULT_CONTRACT_BOUNDS",
    "DEFAULT_JUDGE_REASONING_CHARS",
    "FALLBACK_LABEL",
    "JUDGE_MAX_LABELS",
    "TOTAL_PERCENT",
    "ActionDistribution",
    "AnswerFormat",
    "ApprovalVote",
    "ContractDesign",
    "ContractVote",
    "DecisionKind",
    "JudgeLabels",
    "MediatorDesign",
    "MediatorVote",
    "Signature",
    "TextAnswerFormat",
    "normalise_label",
]
