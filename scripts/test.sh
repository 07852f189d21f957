#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian/Ubuntu machine, then run lint and tests.
# This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# System libraries: FFmpeg (export, torchcodec) and what Qt needs offscreen (QtMultimedia
# fails to import without libpulse0); Xvfb and Mesa's GL driver for the tests on a real X
# server (tests/desktop, and the GUI suite again at the end); espeak-ng speaks the test videos'
# sentences (tests/speech, bench/transcribe.py).
APT_PACKAGES="espeak-ng ffmpeg libegl1 libgl1 libglib2.0-0 libfontconfig1 libdbus-1-3 libxkbcommon0
  libxkbcommon-x11-0 libx11-6 libx11-xcb1 libxext6 libxrandr2 libdrm2 libpulse0 libxcb-cursor0
  libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libnss3 fonts-dejavu-core xvfb libgl1-mesa-dri"
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $APT_PACKAGES \
    >/dev/null
elif command -v apt-get >/dev/null; then
  sudo apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    $APT_PACKAGES >/dev/null
fi

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
# vLLM's CPU build in its own environment (.venv-vllm) for the real-server tests in tests/remote/:
# about 3 minutes and 3.5 GB the first time, seconds once it exists.
bash scripts/vllm_env.sh

export QT_QPA_PLATFORM=offscreen
.venv/bin/ruff check marlin_desk tests bench training
.venv/bin/lint-imports
.venv/bin/python -m pytest -q -p no:xvfb --durations=15 "$@"
# The GUI suite once more on a real X server with GL: offscreen Qt loads no GL driver, and that
# once hid a crash (tests/desktop/test_real_display.py).
if [ $# -eq 0 ]; then
  .venv/bin/python -m tests.xserver .venv/bin/python -m pytest -q -p no:xvfb tests/gui
fi
