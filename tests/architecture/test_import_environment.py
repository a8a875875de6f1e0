"""Importing the package changes no environment variable: only the entry points do, through
:func:`coopeval.core.environment.use_offline_litellm` (the CLI's ``main`` and every workflow
script's :func:`~coopeval.pipeline.joblog.log_to`).

Each check runs in a fresh interpreter, so modules imported by other tests do not hide a change.
Third-party libraries may set variables when imported (polars sets ``_RJEM_MALLOC_CONF``): a
first run lists the third-party modules the package imports, a second imports them before the
snapshot, so only the package's own changes are compared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"

_IMPORT_ALL = r"""
import importlib, json, os, pkgutil, sys
for name in PRELOAD:
    try:
        importlib.import_module(name)
    except Exception:
        pass
before = dict(os.environ)
import coopeval
names = sorted(m.name for m in pkgutil.walk_packages(coopeval.__path__, "coopeval."))
failed = {}
for name in names:
    if name.endswith("__main__"):
        continue
    try:
        importlib.import_module(name)
    except ImportError as exc:  # an optional dependency missing here: not an environment change
        failed[name] = repr(exc)
after = dict(os.environ)
changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
third_party = sorted({m.split(".")[0] for m in sys.modules if not m.startswith(("coopeval", "_"))} - set(sys.stdlib_module_names))
print(json.dumps({"modules": len(names), "failed": failed, "changed": changed, "third_party": third_party}))
"""


def _run(code: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _clean_env() -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "COOPEVAL_"))}
    return {**keep, "PYTHONPATH": str(SRC)}


def test_importing_every_module_leaves_the_environment_unchanged() -> None:
    first = _run("PRELOAD = []\n" + _IMPORT_ALL, _clean_env())
    assert first["modules"] > 50
    result = _run(f"PRELOAD = {first['third_party']!r}\n" + _IMPORT_ALL, _clean_env())
    assert result["changed"] == [], f"importing coopeval changed {result['changed']}"


def test_the_entry_point_function_sets_litellm_offline_and_keeps_given_values() -> None:
    code = (
        "import json, os\n"
        "from coopeval.core.environment import use_offline_litellm\n"
        "use_offline_litellm(); use_offline_litellm()\n"
        "print(json.dumps({k: os.environ.get(k) for k in ('LITELLM_OFFLINE_MODE', 'LITELLM_LOCAL_MODEL_COST_MAP')}))\n"
    )
    assert _run(code, _clean_env()) == {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    given = {**_clean_env(), "LITELLM_OFFLINE_MODE": "false"}
    assert _run(code, given)["LITELLM_OFFLINE_MODE"] == "false"
