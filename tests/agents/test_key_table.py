"""Reading litellm's API-key table contacts no server (coopeval.agents.litellm_client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# A fresh Python records every name look-up and connection while it reads the table in its own
# process (the facts child's path; the child-Python path runs the same loop in the same
# environment, coopeval.agents.litellm_client.KEY_TABLE_ENVIRONMENT).
_AUDITED_READ = """
import json, sys
seen = []
def hook(event, args):
    if event == "socket.getaddrinfo":
        seen.append(["lookup", str(args[0]), args[1]])
    elif event == "socket.connect":
        seen.append(["connect", repr(args[1])])
sys.addaudithook(hook)
from coopeval.agents import litellm_client
table = litellm_client.read_key_table_here()
print(json.dumps({"seen": seen, "copilot": list(table.get("github_copilot", ["absent"]))}))
"""


def test_the_key_table_is_read_without_reaching_any_server():
    """litellm's ``validate_environment`` for ``github_copilot`` starts a device-code log-in
    with GitHub (it looked up github.com before this fix, and on a networked machine waited for
    a user for minutes); behind the unreachable proxy the only address touched is the proxy's."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    child = subprocess.run([sys.executable, "-c", _AUDITED_READ], capture_output=True, text=True, env=env, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    found = json.loads(child.stdout.strip().splitlines()[-1])
    hosts = {entry[1] for entry in found["seen"] if entry[0] == "lookup"}
    connects = {entry[1] for entry in found["seen"] if entry[0] == "connect"}
    assert hosts <= {"127.0.0.1"}, hosts
    assert connects <= {"('127.0.0.1', 9)"}, connects
    assert found["copilot"] == []


def test_the_key_table_is_read_once_per_litellm_version(tmp_path, monkeypatch):
    """The first process saves the table under ``key_table_file()`` (named by litellm's
    version); a later process reads that file and starts no child Python; a torn file is read
    again from litellm and overwritten."""
    import importlib.metadata

    from coopeval.agents import litellm_client

    monkeypatch.setenv("COOPEVAL_KEY_TABLE_DIR", str(tmp_path))
    monkeypatch.setattr(litellm_client, "_PRESET_KEY_TABLE", {})
    litellm_client.litellm_key_table.cache_clear()
    path = litellm_client.key_table_file()
    assert path == tmp_path / f"litellm-key-table-{importlib.metadata.version('litellm')}.json"
    try:
        first = litellm_client.litellm_key_table()
        assert first["openrouter"] == ("OPENROUTER_API_KEY",) and path.is_file()
        litellm_client.litellm_key_table.cache_clear()
        with monkeypatch.context() as m:
            m.setattr(litellm_client.subprocess, "run", None)  # no child Python: the file answers
            assert litellm_client.litellm_key_table() == first
        litellm_client.litellm_key_table.cache_clear()
        path.write_text('{"openrouter": ["OPENROUTER_', encoding="utf-8")  # torn by a crash
        assert litellm_client.litellm_key_table() == first
        assert json.loads(path.read_text(encoding="utf-8"))["openrouter"] == ["OPENROUTER_API_KEY"]
    finally:
        litellm_client.litellm_key_table.cache_clear()
