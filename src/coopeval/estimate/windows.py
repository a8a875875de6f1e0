"""Warn before a run when a study's prompts will outgrow a model's context window (issue 25 kind 2).

A model's window is known from, first found wins:

* ``params.num_ctx`` of its config entry (Ollama's window; any provider that takes it);
* the embedded ``local/`` model: the ``n_ctx`` it is loaded with (``$COOPEVAL_LLAMA_CTX``,
  default :data:`coopeval.agents.local.DEFAULT_N_CTX`);
* litellm's bundled model map (``max_input_tokens``, read offline; Ollama models are not looked
  up, :func:`coopeval.estimate.tokens.price_of` explains why).

Ollama entries without ``num_ctx`` are not checked: each request states the window it needs
(:mod:`coopeval.agents.context_window`). The prompts are those of one simulated run with
cooperative stand-ins (:mod:`.simulate`, the fast path of ``coopeval estimate``), only of the
studies that use a model with a known window; the largest prompt per study and model is counted
with :func:`coopeval.estimate.tokens.count_tokens` (the embedded model's own tokenizer; else
``litellm.token_counter``, the model's tokenizer where litellm knows it, else ``cl100k_base``:
an approximation, see :mod:`coopeval.agents.context_window`). A window that
holds the answer too (``num_ctx``, ``n_ctx``) must fit the prompt plus the entry's
``max_tokens``. Real answers make histories and logs longer or shorter than the stand-ins', so
the check is a warning, printed before the first call; the per-request checks of
:mod:`coopeval.agents.context_window` still guard every call.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from coopeval.agents.registry import is_scripted, uses_local_llm

__all__ = ["Window", "WindowWarning", "model_window", "print_window_warnings", "window_warnings"]


@dataclass(frozen=True)
class Window:
    """A model's context window in tokens; ``source`` names where it comes from; ``with_answer``:
    the window holds the answer too (the prompt and ``max_tokens`` must fit together)."""

    tokens: int
    source: str
    with_answer: bool


@dataclass(frozen=True)
class WindowWarning:
    """A study whose largest prompt (``prompt_tokens``, estimated, plus ``answer_tokens`` when the
    window holds the answer) exceeds ``model``'s ``window``."""

    study: str
    model: str
    prompt_tokens: int
    answer_tokens: int
    window: Window

    def message(self) -> str:
        """The line printed before the run."""
        need = f"about {self.prompt_tokens:,} tokens"
        if self.answer_tokens:
            need += f" + {self.answer_tokens:,} for the answer (max_tokens)"
        return (
            f"warning: the {self.study} study's largest prompt for {self.model} needs {need} (estimate: "
            f"`coopeval estimate`), more than its context window of {self.window.tokens:,} tokens "
            f"({self.window.source}): the model would see a cut prompt or refuse it. Give it a larger "
            "window or shorten the study's prompts"
        )


def _budget(params: Mapping[str, Any]) -> int:
    return int(params.get("max_tokens") or params.get("max_completion_tokens") or 0)


def model_window(entry: Mapping[str, Any]) -> Window | None:
    """The context window of config entry ``entry`` (``model``, ``params``) if known (see the
    module docstring), else None."""
    from coopeval.estimate.tokens import litellm_model_info

    model, params = str(entry["model"]), entry.get("params") or {}
    if is_scripted(model):
        return None
    if params.get("num_ctx") is not None:
        return Window(int(params["num_ctx"]), "params.num_ctx", True)
    if uses_local_llm(model):
        from coopeval.agents.local.catalogue import n_ctx

        return Window(n_ctx(), "the embedded model's n_ctx, COOPEVAL_LLAMA_CTX", True)
    info = litellm_model_info(model) or {}
    if info.get("max_input_tokens"):
        return Window(int(info["max_input_tokens"]), "litellm's model map, max_input_tokens", False)
    return None


def _entries(config: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(study, model entry) of every language model the config's studies call: CoopEval's
    ``agents`` and ``judge``, and each other study's ``<study>.models``."""
    for study in config["studies"]:
        if study == "coopeval":
            yield from (("coopeval", e) for e in config.get("agents") or [])
            if config.get("judge"):
                yield "coopeval", config["judge"]
        else:
            yield from ((study, e) for e in (config.get(study) or {}).get("models") or [])


def window_warnings(config: Mapping[str, Any], largest: Mapping[tuple[str, str], str] | None = None) -> list[WindowWarning]:
    """The studies of the validated ``config`` whose largest simulated prompt will not fit a
    model's known window (see the module docstring); empty when no model's window is known
    (nothing is simulated then). ``largest``: the largest prompt per (study, model) of a
    cooperative simulation already made (``coopeval estimate``'s), instead of a new one."""
    from coopeval.estimate.simulate import simulate
    from coopeval.estimate.standin import Stance
    from coopeval.estimate.tokens import count_tokens

    known: dict[tuple[str, str], tuple[Window, int]] = {}
    for study, entry in _entries(config):
        window = model_window(entry)
        if window is None:
            continue
        key = (study, str(entry["model"]))
        answer = _budget(entry.get("params") or {}) if window.with_answer else 0
        if key not in known or window.tokens - answer < known[key][0].tokens - known[key][1]:
            known[key] = (window, answer)  # the tightest entry of a model string
    if not known:
        return []
    if largest is None:
        largest = simulate(config, Stance.COOPERATIVE, studies={study for study, _ in known}).largest
    out = []
    for (study, model), (window, answer) in sorted(known.items()):
        prompt = largest.get((study, model))
        if prompt is None:
            continue
        tokens = count_tokens(model, prompt)
        if tokens + answer > window.tokens:
            out.append(WindowWarning(study, model, tokens, answer, window))
    return out


def print_window_warnings(
    config: Mapping[str, Any], file: TextIO | None = None, largest: Mapping[tuple[str, str], str] | None = None
) -> list[WindowWarning]:
    """Print each of :func:`window_warnings` of ``config`` on ``file`` (default stderr), one line
    each, and return them: the workflow's ``onstart`` calls it before the first job, and
    ``coopeval estimate`` after its tables, with the prompts it simulated (``largest``)."""
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):  # the simulated cells' progress lines
        found = window_warnings(config, largest)
    for warning in found:
        print(warning.message(), file=file or sys.stderr, flush=True)
    return found
