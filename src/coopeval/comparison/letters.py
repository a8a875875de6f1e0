"""Rank tie groups as a compact letter display (Piepho 2004, J. Comput. Graph. Stat. 13(2)).

Rule: two agents share at least one letter if and only if their paired difference is *not*
significant after the multiplicity correction (adjusted p ≥ α); two agents whose difference is
significant share no letter. Letters come from Piepho's insert-and-absorb algorithm: start with
one group holding every agent; for each significant pair (i, j), split every group holding both
into the group without i and the group without j; then drop every group contained in another.
Groups are lettered a, b, c, … in the order of their best-ranked member (ties broken by the
next member), so the top agent always carries "a". A pair with no test (p None) counts as not
significant.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence

__all__ = ["letter_groups"]


def _absorb(groups: list[frozenset[str]]) -> list[frozenset[str]]:
    unique = list(dict.fromkeys(groups))
    return [g for g in unique if not any(g < other for other in unique)]


def _letter(index: int) -> str:
    letters = string.ascii_lowercase
    name = ""
    index += 1
    while index > 0:
        index, rest = divmod(index - 1, len(letters))
        name = letters[rest] + name
    return name


def letter_groups(ranked: Sequence[str], significant: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Compact letter display of ``ranked`` agents.

    Parameters
    ----------
    ranked:
        Agents, best first (the table's rank order); distinct.
    significant:
        Pairs whose corrected difference is significant (order within a pair does not matter;
        pairs naming other agents are ignored).

    Returns
    -------
    dict[str, str]
        Agent → its letters (e.g. ``"ab"``), in ``ranked`` order.

    Raises
    ------
    ValueError
        If ``ranked`` repeats an agent.
    """
    order = list(ranked)
    if len(set(order)) != len(order):
        raise ValueError(f"ranked: repeated agent in {order}; list each agent once")
    members = set(order)
    groups = [frozenset(order)] if order else []
    for i, j in significant:
        if i not in members or j not in members or i == j:
            continue
        split: list[frozenset[str]] = []
        for group in groups:
            if i in group and j in group:
                split += [group - {i}, group - {j}]
            else:
                split.append(group)
        groups = _absorb([g for g in split if g])
    position = {agent: n for n, agent in enumerate(order)}
    groups.sort(key=lambda g: sorted(position[a] for a in g))
    labels = dict.fromkeys(order, "")
    for n, group in enumerate(groups):
        for agent in group:
            labels[agent] += _letter(n)
    return labels
