"""Load the native libraries that carry their own LLVM before Qt loads the GL driver.

Mesa's GL driver (llvmpipe, and the radeonsi/i915 shader compilers) is opened with RTLD_GLOBAL
and brings a shared libLLVM whose symbols then take precedence for every library loaded after
it. triton's `libtriton.so` links its own, different LLVM: loaded after Mesa, its LLVM calls bind
to Mesa's and the process dies with SIGSEGV (measured: a current QOpenGLContext, then `import
triton`). torch imports triton as soon as anything touches `torch._dynamo` (torchvision does, in
the model thread), so whether the app crashed depended on whether the video view created its GL
context before the model thread got there. Loaded first, triton binds to its own LLVM and Mesa
to its own, in whatever order the video, the model and the backend come later.

triton is only a Python import here (about 90 ms; no CUDA, no torch): the GUI stays free of
torch. Bundles without triton (the CPU build) skip it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys

log = logging.getLogger(__name__)

# Python packages whose extension modules link a private LLVM, in the order to load them.
LLVM_CARRIERS = ("triton",)


def load_before_gl() -> list[str]:
    """Import every installed LLVM carrier now; call before the first QApplication. Returns the
    modules loaded. A carrier that fails to import is logged and skipped: torch then sees it
    as missing too, which is safe."""
    loaded = []
    for name in LLVM_CARRIERS:
        if name in sys.modules:
            loaded.append(name)
            continue
        try:
            if importlib.util.find_spec(name) is None:
                continue
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a broken optional package must not stop the app
            log.warning("could not preload %s before the GL driver: %s", name, exc)
            continue
        loaded.append(name)
    if loaded:
        log.info("loaded before the GL driver: %s", ", ".join(loaded))
    return loaded
