#!/usr/bin/env python3
"""Build the one-folder Marlin Desk bundle from a clean environment and report its size.

    python packaging/build.py                   # fresh packaging/.buildenv, then the bundle
    python packaging/build.py --skip-env        # reuse packaging/.buildenv as it is
    python packaging/build.py --torch cuda      # a CUDA bundle (multi-GB; see below)
    python packaging/build.py --torch-index https://download.pytorch.org/whl/cpu

Output: packaging/dist/marlin-desk/ (run `marlin-desk` / `marlin-desk.exe` in it), a size report
by component on stdout and in packaging/build/size-report.json. Then check it with
`python packaging/smoke_test.py`.

Which torch goes into the bundle (`--torch`, default cpu):

- Linux, cpu (the default): torch 2.13.0+cpu with torchvision 0.28.0. The development venv's
  torch 2.14.1 is PyPI's CUDA build: 1.2 GB of torch plus 3.2 GB of nvidia-* libraries that
  torch's own libraries link against (they cannot be left out of a bundle that imports torch),
  a 4-5 GB bundle. The CPU wheel is 750 MB of torch and no nvidia-* at all. The app needs
  torchvision beside it (transformers' Qwen3-VL video processor exists only with torchvision,
  and calls torchvision.transforms.v2.functional to rescale and normalise the frames even with
  do_resize=False). With `--torch-index https://download.pytorch.org/whl/cpu` both come from
  PyTorch's CPU index as a matching pair. Without it (this project's machines, where that index
  is out of reach and only the torch CPU wheel is on disk), torchvision 0.28.0 comes from PyPI,
  a CUDA build: its compiled operators (nms, roi_align, image decoding) are left out of the
  bundle and a runtime hook (rthooks/rthook_torchvision_cpu.py) stands in for the module that
  registers their fake kernels; its pure-Python transforms, all the app uses, work unchanged.
  Measured here: the CPU bundle is 1,237 MiB, of which torch 627 MiB, built in 3-6 minutes;
  the CUDA one would carry torch's 1.2 GB plus 3.2 GB of nvidia-* (not built: 4.5-5 GB).
- Linux, cuda: torch 2.14.1 + torchvision 0.29.1 from PyPI (CUDA 13 wheels with nvidia-*
  libraries), as in the development venv: runs on CPU too, needs only the NVIDIA driver for
  the GPU, and is several GB.
- Windows: `--torch cuda --torch-index https://download.pytorch.org/whl/cu130` (or the CUDA tag
  that PyTorch's site lists for the release) bundles CUDA torch; the user needs only the NVIDIA
  driver. `--torch cpu` takes PyPI's torch, which is a CPU build on Windows.
- macOS: PyPI's torch (CPU and Apple GPU through MPS); `--torch` makes no difference.

The bundle is built from this checkout: the spec puts the repository root on the import path, so
the app is not installed into the build environment.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPEC = HERE / "marlin_desk.spec"
DIST = HERE / "dist"
WORK = HERE / "build"
APP = DIST / "marlin-desk"

TORCH_RELEASE = {"cpu-linux": ("2.13.0", "0.28.0"), "default": ("2.14.1", "0.29.1")}

# Size report: top-level entries of the bundle's _internal folder, grouped.
COMPONENTS = [
    ("torch (libtorch + Python)", ("torch", "functorch", "torchgen")),
    ("nvidia CUDA libraries", ("nvidia",)),
    ("Qt / PySide6", ("PySide6", "shiboken6")),
    ("FFmpeg binary (imageio-ffmpeg)", ("imageio_ffmpeg",)),
    ("PyAV + its FFmpeg libraries", ("av", "av.libs")),
    ("transformers", ("transformers",)),
    ("torchvision", ("torchvision", "torchvision.libs")),
    ("tokenizers / safetensors / hub", ("tokenizers", "safetensors", "huggingface_hub",
                                        "hf_xet")),
    ("numpy", ("numpy", "numpy.libs")),
    ("Pillow", ("PIL", "pillow.libs")),
    ("sympy / networkx (torch deps)", ("sympy", "networkx", "mpmath")),
    ("resources (demo video, tiny model)", ("resources",)),
    ("Python runtime", ("base_library.zip", "lib-dynload", "python3", "libpython")),
]


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def env_python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def run(cmd: list[str], **kw) -> None:
    log("$ " + " ".join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def make_env(env: Path, python: str, torch_kind: str, torch_index: str | None) -> None:
    if env.exists():
        log(f"removing the old build environment {env}")
        shutil.rmtree(env)
    run([python, "-m", "venv", env])
    py = env_python(env)
    pip = [py, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    run([*pip, "--upgrade", "pip"])
    linux = sys.platform.startswith("linux")
    if linux and torch_kind == "cpu":
        torch_v, tv_v = TORCH_RELEASE["cpu-linux"]
        if torch_index:
            run([*pip, "--index-url", torch_index, f"torch=={torch_v}+cpu",
                 f"torchvision=={tv_v}+cpu"])
        else:
            # The CPU wheel of torch (a local file here, or a wheel found through pip's own
            # configuration); PyPI's torchvision beside it without its dependencies (it would
            # pull the CUDA torch back in). See the module docstring.
            run([*pip, f"torch=={torch_v}+cpu"])
            run([*pip, "--no-deps", f"torchvision=={tv_v}"])
    else:
        torch_v, tv_v = TORCH_RELEASE["default"]
        extra = ["--index-url", torch_index] if torch_index else []
        run([*pip, *extra, f"torch=={torch_v}", f"torchvision=={tv_v}"])
    run([*pip, "-r", HERE / "requirements.txt"])


def dir_size(path: Path) -> tuple[int, int]:
    """(bytes, files), symbolic links not followed nor counted."""
    if path.is_symlink():
        return 0, 0
    if path.is_file():
        return path.stat().st_size, 1
    total = count = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            p = Path(dirpath) / name
            if not p.is_symlink():
                total += p.stat().st_size
                count += 1
    return total, count


def size_report(app: Path) -> dict:
    internal = app / "_internal"
    groups: dict[str, int] = {}
    top: list[tuple[str, int]] = []
    for entry in sorted(internal.iterdir()):
        size, _ = dir_size(entry)
        top.append((entry.name, size))
        for label, names in COMPONENTS:
            if any(entry.name == n or entry.name.startswith(n) for n in names):
                groups[label] = groups.get(label, 0) + size
                break
        else:
            groups["other Python packages and libraries"] = \
                groups.get("other Python packages and libraries", 0) + size
    exe_size = sum(dir_size(p)[0] for p in app.iterdir() if p.name != "_internal")
    groups["executable + bytecode archive (PYZ)"] = exe_size
    total, files = dir_size(app)
    return {"total_bytes": total, "files": files,
            "components": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
            "largest_entries": dict(sorted(top, key=lambda kv: -kv[1])[:15])}


def print_report(rep: dict, seconds: float | None) -> None:
    mb = 1024 * 1024
    total = rep["total_bytes"]
    print(f"\nBundle {APP}: {total / mb:,.0f} MiB in {rep['files']:,} files")
    print(f"{'component':<42} {'MiB':>8} {'share':>6}")
    for label, size in rep["components"].items():
        if size:
            print(f"{label:<42} {size / mb:>8,.1f} {100 * size / total:>5.1f}%")
    print("\nlargest entries of _internal/:")
    for name, size in rep["largest_entries"].items():
        print(f"  {name:<40} {size / mb:>8,.1f}")
    if seconds is not None:
        print(f"\nPyInstaller build time: {seconds:.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", type=Path, default=HERE / ".buildenv",
                    help="build environment folder (default packaging/.buildenv)")
    ap.add_argument("--skip-env", action="store_true",
                    help="reuse the build environment as it is (no installs)")
    ap.add_argument("--python", default=None,
                    help="Python 3.11 to create the environment with (default: this one if it "
                         "is 3.11, else python3.11)")
    ap.add_argument("--torch", choices=("cpu", "cuda"), default="cpu",
                    help="which torch build to bundle (default cpu; see the docstring)")
    ap.add_argument("--torch-index", default=None,
                    help="a PyTorch wheel index, e.g. https://download.pytorch.org/whl/cpu")
    ap.add_argument("--report-only", action="store_true",
                    help="print the size report of the existing bundle and stop")
    args = ap.parse_args()

    if args.report_only:
        print_report(size_report(APP), None)
        return 0

    t0 = time.monotonic()
    env = args.env.resolve()
    if args.skip_env:
        if not env_python(env).exists():
            sys.exit(f"no build environment at {env}: run without --skip-env first")
        log(f"reusing {env}")
    else:
        python = args.python or (sys.executable if sys.version_info[:2] == (3, 11)
                                 else "python3.11")
        make_env(env, python, args.torch, args.torch_index)
    t_env = time.monotonic() - t0

    for folder in (APP, WORK):
        if folder.exists():
            shutil.rmtree(folder)
    t1 = time.monotonic()
    run([env_python(env), "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", DIST, "--workpath", WORK, SPEC], cwd=ROOT)
    t_build = time.monotonic() - t1

    rep = size_report(APP)
    rep.update({"environment_seconds": round(t_env, 1), "pyinstaller_seconds": round(t_build, 1),
                "platform": f"{platform.system()} {platform.machine()}",
                "torch": args.torch})
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "size-report.json").write_text(json.dumps(rep, indent=2), encoding="utf-8")
    print_report(rep, t_build)
    if not args.skip_env:
        print(f"build environment: {t_env:.0f} s")
    print(f"total: {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
