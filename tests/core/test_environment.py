"""The environment-variable table (:mod:`coopeval.core.environment`): defaults, validation with
messages naming the variable and the fix, and that every ``COOPEVAL_*`` name the package or its
tests mention is declared in it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coopeval.agents.local.catalogue import cache_mib, n_threads
from coopeval.agents.slots import slots_from_env
from coopeval.core.environment import ENVIRONMENT, EnvironmentSettingError, env_value

REPO = Path(__file__).resolve().parents[2]
SHELL_ONLY = {"COOPEVAL_PYTHON", "COOPEVAL_SLURM_TIMEOUT", "COOPEVAL_SLURM_NETNS"}
"""Read by benchmarks/slurm_smoke.sh itself, never by Python (see the module docstring)."""


def test_defaults_when_unset_or_blank() -> None:
    assert env_value("COOPEVAL_LLAMA_THREADS", {}) == 2
    assert env_value("COOPEVAL_LLAMA_CACHE_MIB", {"COOPEVAL_LLAMA_CACHE_MIB": "  "}) == 256
    assert env_value("COOPEVAL_LLAMA_CTX", {}) == 4096
    assert env_value("COOPEVAL_LLAMA_GPU_LAYERS", {}) == -1
    assert env_value("COOPEVAL_LOCAL_ENCODING", {}) == "Q8_0"
    assert env_value("COOPEVAL_PROVIDER_SLOTS", {}) is None
    assert env_value("COOPEVAL_PROVIDER_SLOTS_DIR", {}) == "results/.slots"
    assert env_value("COOPEVAL_STORE_MEMORY", {}) == "1GB"
    assert env_value("COOPEVAL_PRICES", {}) is None
    assert env_value("COOPEVAL_REQUIRE_SHARED", {}) is False


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("COOPEVAL_LLAMA_THREADS", "4", 4),
        ("COOPEVAL_LLAMA_CACHE_MIB", "0", 0),
        ("COOPEVAL_LOCAL_ENCODING", "q4_0", "Q4_0"),
        ("COOPEVAL_LOCAL_ENCODING", "Shipped", "shipped"),
        ("COOPEVAL_PROVIDER_SLOTS", "64", 64),
        ("COOPEVAL_STORE_MEMORY", "512MB", "512MB"),
        ("COOPEVAL_STORE_MEMORY", "1.5GiB", "1.5GiB"),
        ("COOPEVAL_REQUIRE_BROWSER", "1", True),
        ("COOPEVAL_REQUIRE_SHARED", "false", False),
        ("COOPEVAL_PRICES", "/tmp/p.yaml", "/tmp/p.yaml"),
    ],
)
def test_good_values_are_parsed(name: str, raw: str, value: object) -> None:
    assert env_value(name, {name: raw}) == value


@pytest.mark.parametrize(
    ("name", "raw", "fix"),
    [
        ("COOPEVAL_LLAMA_THREADS", "two", "give a whole number of threads >= 1"),
        ("COOPEVAL_LLAMA_THREADS", "0", "give a whole number of threads >= 1"),
        ("COOPEVAL_LLAMA_CACHE_MIB", "-1", "give a whole number of MiB >= 0"),
        ("COOPEVAL_LLAMA_CTX", "100", "give a whole number of tokens >= 256"),
        ("COOPEVAL_LOCAL_ENCODING", "Q4_1", "write Q8_0, Q4_0 or shipped"),
        ("COOPEVAL_PROVIDER_SLOTS", "many", "give the number of provider calls in flight, e.g. 64"),
        ("COOPEVAL_PROVIDER_SLOTS", "0", "give the number of provider calls in flight, e.g. 64"),
        ("COOPEVAL_STORE_MEMORY", "lots", "write an amount like 1GB or 512MB"),
        ("COOPEVAL_REQUIRE_SHARED", "maybe", "write 1 or 0"),
    ],
)
def test_bad_values_name_the_variable_and_the_fix(name: str, raw: str, fix: str) -> None:
    with pytest.raises(EnvironmentSettingError) as info:
        env_value(name, {name: raw})
    assert str(info.value).startswith(f"{name}={raw!r}: {fix}")


def test_readers_go_through_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COOPEVAL_LLAMA_THREADS", "3")
    monkeypatch.setenv("COOPEVAL_LLAMA_CACHE_MIB", "0")
    monkeypatch.setattr("coopeval.agents.local.catalogue.usable_cpus", lambda: 4)
    assert (n_threads(), cache_mib()) == (3, 0)
    monkeypatch.setenv("COOPEVAL_LLAMA_THREADS", "0")  # was silently raised to 1
    with pytest.raises(EnvironmentSettingError, match="COOPEVAL_LLAMA_THREADS='0'"):
        n_threads()
    monkeypatch.setenv("COOPEVAL_PROVIDER_SLOTS", "-3")
    with pytest.raises(EnvironmentSettingError, match="COOPEVAL_PROVIDER_SLOTS='-3'"):
        slots_from_env()


def test_an_undeclared_variable_is_refused() -> None:
    with pytest.raises(KeyError, match=r"declare it in coopeval.core.environment.ENVIRONMENT"):
        env_value("COOPEVAL_NOT_A_SETTING", {})


def test_every_coopeval_variable_mentioned_is_declared() -> None:
    mentioned: set[str] = set()
    for folder in ("src", "tests", "workflow", ".ci"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".smk", ".yaml", "") and "__pycache__" not in path.parts:
                mentioned |= set(re.findall(r"\bCOOPEVAL_[A-Z][A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8", errors="ignore")))
    mentioned -= {"COOPEVAL_NOT_A_SETTING"}  # the refusal test above
    assert mentioned - SHELL_ONLY <= set(ENVIRONMENT), sorted(mentioned - SHELL_ONLY - set(ENVIRONMENT))
    assert set(ENVIRONMENT) <= mentioned  # nothing declared that no file reads
