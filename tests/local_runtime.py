"""A module-scoped embedded runtime for tests that need llama.cpp's own parsers (the GBNF grammar
checks): the packaged SmolLM2 file, unchanged, on one thread; skipped where it is not installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


def runtime_fixture() -> Iterator[object]:
    """Yield a :class:`coopeval.agents.local.model.LocalRuntime`, or skip the test module."""
    pytest.importorskip("xllamacpp")
    from coopeval.agents.local import LocalModelMissingError, local_model_path
    from coopeval.agents.local.model import LocalRuntime

    try:
        path = local_model_path("smollm2-135m")
    except LocalModelMissingError as exc:
        pytest.skip(str(exc))
    runtime = LocalRuntime(path, n_ctx=512, n_threads=1, cache_mib=0, gpu_layers=0)
    yield runtime
    runtime.close()
