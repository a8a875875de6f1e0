"""Agent type strings of the authors' released data: ``"{llm.model}({CoT|IO})"`` (docs/protocol/games.md#roster).

The released files name agents by their config (``{"llm": {"model": …}, "type": "CoTAgent"}``);
the summary files (``agent_average_payoff.json`` …) key them by this type string.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["reference_type_string"]

_PROMPTING = {"CoTAgent": "CoT", "IOAgent": "IO"}


def reference_type_string(player: Mapping[str, Any]) -> str:
    """Type string of a reference agent config: ``"{llm.model}({CoT|IO})"``.

    ``{"llm": {"model": "openai/gpt-5.2", …}, "type": "CoTAgent", "player_id": 2}`` →
    ``"openai/gpt-5.2(CoT)"`` (the keys of ``agent_average_payoff.json``; docs/protocol/games.md#roster).

    Raises
    ------
    ValueError
        If the config lacks ``llm.model`` or has an unknown agent ``type``.
    """
    try:
        model = player["llm"]["model"]
        kind = player["type"]
    except (KeyError, TypeError):
        raise ValueError(f"agent config {player!r} lacks llm.model or type") from None
    if kind not in _PROMPTING:
        raise ValueError(f"agent config type {kind!r}; expected one of {sorted(_PROMPTING)}")
    return f"{model}({_PROMPTING[kind]})"
