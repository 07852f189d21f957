#!/usr/bin/env bash
# Build the one-folder PyInstaller bundle from a clean build environment (packaging/.buildenv),
# print its size by component, then smoke-test the frozen app offline with an empty HOME.
# CI runs this after scripts/test.sh (which installs the system libraries Qt needs).
# Arguments go to packaging/build.py, e.g. `bash scripts/package.sh --skip-env`.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
"$PYTHON" packaging/build.py "$@"
"$PYTHON" packaging/smoke_test.py
