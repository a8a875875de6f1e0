"""Issue 46, case R65: a job stopped by Ctrl-C while the embedded model computes a long answer
exits at once, abandoning the call, instead of waiting for it (``asyncio.run`` joins its default
executor's threads, where the call used to run: 44 s on f705bc7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.local_llm

CHILD = textwrap.dedent(
    """
    import asyncio, os
    os.environ["LITELLM_OFFLINE_MODE"] = "true"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm
    from coopeval.agents.local import register_local_provider
    register_local_provider()
    MESSAGES = [{"role": "user", "content": "Say a."}]

    async def main():
        await litellm.acompletion(model="local/smollm2-135m", messages=MESSAGES, max_tokens=1, seed=1)  # load
        print("calling", flush=True)
        # 1,500 forced tokens: ~20 s of decoding on the project machine (13.5 ms per token)
        await litellm.acompletion(model="local/smollm2-135m", messages=MESSAGES, max_tokens=3000,
                                  seed=1, grammar='root ::= ("a "){1500}')
        print("finished", flush=True)

    asyncio.run(main())
    """
)


def test_ctrl_c_during_a_long_embedded_call_ends_the_job_at_once():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "COOPEVAL_LLAMA_THREADS": "1"})
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "calling", child.stderr.read() if child.stderr else ""
    time.sleep(1.0)  # the long call is in llama.cpp
    signalled = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    waited = time.monotonic() - signalled
    assert "finished" not in out  # the call was abandoned, not waited for
    assert waited < 5.0, f"the job took {waited:.1f} s to stop after Ctrl-C"
    assert "KeyboardInterrupt" in err and child.returncode != 0
