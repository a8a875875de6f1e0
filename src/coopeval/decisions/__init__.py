"""Answer contracts: extraction, validation and re-asks for every decision (docs/protocol/answers.md, docs/protocol/design-checks.md#what-is-judged).

Import-light: only the standard library is imported here (pyyaml is imported when a taxonomy
is loaded).
"""

from coopeval.decisions import formats
from coopeval.decisions.errors import AnswerError
from coopeval.decisions.extract import extract_first_json_object, extract_last_json_object
from coopeval.decisions.formats import *  # noqa: F403 (the answer formats: formats.__all__)
from coopeval.decisions.parsing import PARSER_VERSION, parse_answer, validate_answer
from coopeval.decisions.reask import MAX_ATTEMPTS, MAX_REASKS, reask_messages
from coopeval.decisions.taxonomy import Taxonomy, TaxonomyError, load_taxonomy

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_REASKS",
    "PARSER_VERSION",
    "AnswerError",
    "Taxonomy",
    "TaxonomyError",
    "extract_first_json_object",
    "extract_last_json_object",
    "load_taxonomy",
    "parse_answer",
    "reask_messages",
    "validate_answer",
]
__all__ += formats.__all__
