"""Names of the deviation-rating rules (docs/protocol/evaluation.md#deviation-ratings), without
dependencies, so that the command lines can offer them as choices without loading the LP
solver; the rules themselves are computed by :mod:`coopeval.evaluation.deviation`.

* ``"strictest"``: the unique strictest-CCE rule (face test);
* ``"reference-vertex"`` (alias ``"coopeval_vertex"``): the reference's rule.
"""

from __future__ import annotations

__all__ = ["DR_RULES", "DR_RULE_ALIASES"]

DR_RULE_ALIASES: dict[str, str] = {
    "strictest": "strictest",
    "reference-vertex": "reference-vertex",
    "coopeval_vertex": "reference-vertex",
}
"""Every accepted rule name or alias → its canonical name."""

DR_RULES: tuple[str, ...] = tuple(dict.fromkeys(DR_RULE_ALIASES.values()))
"""The canonical rule names, the default first: what a config's ``evaluation.dr_rule`` accepts."""
