"""Runtime hook, used only in a bundle whose torch is a CPU build while the torchvision wheel beside
it is a CUDA build (the Linux CPU bundle: torch 2.13.0+cpu with PyPI's torchvision 0.28.0).

That torchvision's compiled operators (`_C.so`, `image.so`) link against CUDA and are left out of
the bundle. Its pure-Python part, which is all the app uses (transformers' Qwen3-VL video
processor calls `torchvision.transforms.v2.functional` to rescale and normalise frames), works on
CPU torch. Only `torchvision._meta_registrations` fails at import: it registers fake (meta)
kernels for `torchvision::nms` and friends, operators that exist only once `_C` has loaded. Those
fake kernels serve `torch.compile` tracing of detection operators, which the app never does, so
an empty module takes its place. Calling `torchvision.ops.nms` in this bundle would fail with
"operator does not exist"; nothing in the app does.
"""

import sys
import types

_NAME = "torchvision._meta_registrations"
if _NAME not in sys.modules:
    _stub = types.ModuleType(_NAME, "left out of the CPU bundle: see packaging/rthooks")
    sys.modules[_NAME] = _stub
