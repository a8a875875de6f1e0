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
