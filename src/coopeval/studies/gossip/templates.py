"""Which prompt templates a gossip cell can render (issue 20): the cell id hashes exactly these,
and the cell plays with a library restricted to them (:meth:`PromptLibrary.restricted`), so a
template rendered without being declared here fails the cell instead of escaping its id.

The testbed's own templates come from its registry entry (:data:`.testbeds.REGISTRY`); the rest
follows from the condition's flags, the horizon, the matching policy, the model's style and the
caps, mirroring the choices of :mod:`.rounds.prompting` and :mod:`.rounds.loop`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.agents.registry import is_scripted
from coopeval.decisions.texts import answer_texts_hash
from coopeval.studies.gossip.bots import BOT_TEXTS
from coopeval.studies.gossip.conditions import Condition
from coopeval.studies.gossip.formats import ERRORS
from coopeval.studies.gossip.testbeds import TestbedEntry, testbed_entry
from coopeval.studies.gossip.tones import TONES


def _own(entry: TestbedEntry, names: tuple[str, ...]) -> set[str]:
    """Registry template names → file stems (``=name`` is shared, else ``<key>_<name>``)."""
    return {n[1:] if n.startswith("=") else f"{entry.key}_{n}" for n in names}


def cell_templates(
    testbed: str,
    condition: Condition,
    horizon: str,
    matching: str,
    style: str | None,
    memory_cap: int = 0,
    log_cap: int = 0,
) -> frozenset[str]:
    """The templates a cell of ``testbed`` under ``condition`` can render.

    ``horizon`` is the resolved horizon (``infinite``/``finite``); ``style`` the population's
    style (``IO``/``CoT``), None for a scripted population (bots get no style line and write no
    attacker messages).

    Raises
    ------
    ValueError
        Unknown testbed.
    """
    entry = testbed_entry(testbed)
    key, cond = entry.key, condition
    names = {"rules", "action", "memory_empty", f"{key}_overview", f"{key}_title", f"pairing_{matching}",
             f"length_{horizon}", f"horizon_{horizon}"}
    names |= _own(entry, entry.templates)
    if horizon == "finite":
        names.add("length_note_finite")
    if cond.equilibrium_knowledge:
        names.add(f"equilibrium_{horizon}")
    if cond.reflection:
        which = "_".join(("equilibrium",) * cond.equilibrium_knowledge + ("gossip",) * cond.gossip) or "plain"
        names |= {"guidelines_reflect", f"reflect_items_{which}", "memory_reasoning"}
    else:
        names.add("guidelines_plain")
    if cond.reflection_call:
        names |= {"reflect", "reflection_shown"}
    if style is not None:
        names.add(f"style_{style}")
    if memory_cap and cond.attacker != "max":  # under Max each honest agent meets only Max, once
        names.add("older_entries")
    if not cond.gossip:
        return frozenset(names | {"information_none", "accountability_none"})
    names |= {"community", "log_empty", "log_entry", "published", "witness", "accountability_observed", f"{key}_who_posts"}
    names |= _own(entry, entry.gossip_templates)
    tone = cond.signal == "tone"
    if tone:
        names |= {"information_gossip", "task_gossip", "tone_line", "signal_word_tone", *(f"tone_meaning_{t}" for t in TONES)}
        if cond.show_tone:
            names.add("log_toned")
    else:
        names |= {"information_signal", "task_signal", "signal_word_binary", "log_signal"}
        if cond.signal == "binary_convention":
            names.add("convention")
    other = dict(zip(entry.prompt_roles, reversed(entry.prompt_roles), strict=False))
    if any(other[role] not in entry.witnesses for role in entry.acting):  # an action nobody reports on
        names.add("accountability_partner")
    if cond.reflection and set(entry.acting) & set(entry.witnesses):  # own action and own assessment
        names.add("memory_justifications")
    if log_cap:
        names.add("older_entries")
    if cond.attacker == "max":
        names.add("max_post")
    if cond.attacker == "collusive" and cond.attacker_messages == "llm" and tone and style is not None:
        names.add("attacker_gossip")
    return frozenset(names)


def answer_texts() -> str:
    """The ``answer_texts_hash`` of every gossip cell: the engine's re-ask and error texts, the
    gossip formats' error messages and the bots' log messages (:mod:`coopeval.decisions.texts`)."""
    return answer_texts_hash(ERRORS, BOT_TEXTS)


def spec_templates(spec: Mapping[str, Any]) -> frozenset[str]:
    """:func:`cell_templates` of a cell spec (``testbed``, ``testbed_params`` with the resolved
    horizon, ``condition``, ``matching``, ``model``, ``memory_cap``, ``log_cap``)."""
    model = spec["model"]
    return cell_templates(
        spec["testbed"],
        Condition.from_json(spec["condition"]),
        str(spec["testbed_params"]["horizon"]),
        str(spec["matching"]),
        None if is_scripted(str(model["model"])) else str(model.get("style", "IO")),
        int(spec.get("memory_cap", 0)),
        int(spec.get("log_cap", 0)),
    )
