"""The selection logic and every fallback path, on machines described by a Hardware value.

Nothing here needs a GPU or a quantization package: the hardware facts are supplied, and the
loaders are fakes that hand back the tiny FP32 model (or raise), so each fallback is exercised.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from marlin_desk.core.errors import BadInput, ModelUnavailable
from marlin_desk.engine.backends import (
    BACKENDS,
    load_best,
    plan,
    planned_precision,
    sources_for,
)
from marlin_desk.engine.hardware import GIB, Hardware

ALL = {"gptqmodel": "7.7.0", "bitsandbytes": "0.50.2", "sdnq": "0.2.8", "fla": None,
       "causal_conv1d": None}
CPU_ONLY = Hardware(cpu_cores=2, ram_total=32 * GIB, ram_available=24 * GIB, packages=ALL)
LAPTOP_6GB = Hardware(cuda=True, cuda_name="RTX 3060 Laptop", cuda_capability=(8, 6),
                      vram_total=6 * GIB, vram_free=int(5.6 * GIB), cpu_cores=8,
                      ram_total=16 * GIB, ram_available=10 * GIB, packages=ALL)
TINY_GPU = Hardware(cuda=True, cuda_name="MX150", cuda_capability=(6, 1), vram_total=2 * GIB,
                    vram_free=int(1.8 * GIB), cpu_cores=4, ram_total=16 * GIB,
                    ram_available=12 * GIB, packages=ALL)
BIG_GPU = Hardware(cuda=True, cuda_name="A100", cuda_capability=(8, 0), vram_total=40 * GIB,
                   vram_free=39 * GIB, cpu_cores=16, ram_total=128 * GIB,
                   ram_available=100 * GIB, packages=ALL)
MAC = Hardware(mps=True, cpu_cores=8, ram_total=16 * GIB, ram_available=10 * GIB,
               packages={**ALL, "gptqmodel": None, "bitsandbytes": None})


def no(hw: Hardware, *packages: str) -> Hardware:
    return Hardware(**{**hw.__dict__, "packages": {**hw.packages, **dict.fromkeys(packages)}})


def steps(model: str, hw: Hardware, backend: str = "auto", device: str = "auto") -> list[str]:
    return [f"{s.backend}@{s.device}" for s in plan(model, backend, device, hw)]


# -- the plan -----------------------------------------------------------------------------------

def test_cpu_only_runs_fp32_then_smaller_cpu_forms() -> None:
    assert steps("NemoStation/Marlin-2B", CPU_ONLY) == ["fp32@cpu", "bf16@cpu", "bnb4@cpu"]


def test_cuda_prefers_gptq_then_nf4_then_16_bit_then_cpu() -> None:
    assert steps("NemoStation/Marlin-2B", LAPTOP_6GB) == [
        "gptq@cuda", "bnb4@cuda", "bf16@cuda", "fp32@cpu", "bf16@cpu", "bnb4@cpu"]


def test_explicit_device_cuda_has_no_cpu_fallback() -> None:
    assert steps("NemoStation/Marlin-2B", LAPTOP_6GB, device="cuda") == [
        "gptq@cuda", "bnb4@cuda", "bf16@cuda"]


def test_mps_runs_16_bit_on_the_apple_gpu() -> None:
    assert steps("NemoStation/Marlin-2B", MAC)[0] == "bf16@mps"
    assert BACKENDS["bf16"].dtype(MAC, "mps") == "float16"


def test_explicit_backend_is_alone_and_its_device_follows_the_machine() -> None:
    assert steps("NemoStation/Marlin-2B", CPU_ONLY, backend="gptq") == ["gptq@cpu"]
    assert steps("NemoStation/Marlin-2B", LAPTOP_6GB, backend="bnb4") == ["bnb4@cuda"]
    assert steps("NemoStation/Marlin-2B", LAPTOP_6GB, backend="fp32") == ["fp32@cpu"]


def test_named_gptq_checkpoint_goes_first_even_on_cpu() -> None:
    assert steps("NemoStation/Marlin-2B-GPTQ", CPU_ONLY)[0] == "gptq@cpu"
    assert steps("tintwotin/Marlin-2B-SDNQ-int8", CPU_ONLY)[0] == "sdnq@cpu"


def test_bad_choices_and_missing_devices_are_clear_errors() -> None:
    with pytest.raises(BadInput):
        plan("NemoStation/Marlin-2B", "int3", "auto", CPU_ONLY)
    with pytest.raises(ModelUnavailable, match="CUDA"):
        plan("NemoStation/Marlin-2B", "auto", "cuda", CPU_ONLY)
    with pytest.raises(ModelUnavailable, match="MPS"):
        plan("NemoStation/Marlin-2B", "auto", "mps", CPU_ONLY)


def test_catalogue_ids_per_backend() -> None:
    assert sources_for("gptq", "NemoStation/Marlin-2B") == [
        "NemoStation/Marlin-2B-GPTQ", "prasannaJagadesh/marlin-2B-GPTQ-4BITS"]
    assert sources_for("gptq", "prasannaJagadesh/marlin-2B-GPTQ-4BITS")[0] == \
        "prasannaJagadesh/marlin-2B-GPTQ-4BITS"
    for name in ("bnb4", "bf16", "fp32"):
        assert sources_for(name, "NemoStation/Marlin-2B-GPTQ") == ["NemoStation/Marlin-2B"]
    assert sources_for("sdnq", "NemoStation/Marlin-2B") == ["tintwotin/Marlin-2B-SDNQ-int8"]
    assert sources_for("bf16", "someone/other-model") == ["someone/other-model"]


def test_precision_for_the_cache_key() -> None:
    model = "NemoStation/Marlin-2B"
    assert planned_precision(model, "auto", "auto", LAPTOP_6GB) == "gptq-int4"
    assert planned_precision(model, "auto", "auto", no(LAPTOP_6GB, "gptqmodel")) == "nf4"
    assert planned_precision(model, "auto", "auto", CPU_ONLY) == "float32"
    assert planned_precision(model, "bf16", "cuda", TINY_GPU) == "float16"  # pre-Ampere card
    assert planned_precision(model, "sdnq", "cpu", CPU_ONLY) == "sdnq-int8"


# -- can_run reasons --------------------------------------------------------------------------

def test_reasons_say_what_is_missing() -> None:
    ok, why = BACKENDS["gptq"].can_run(no(LAPTOP_6GB, "gptqmodel"), "cuda", "x/y")
    assert not ok and "gptqmodel is not installed" in why
    ok, why = BACKENDS["bnb4"].can_run(TINY_GPU, "cuda", "x/y")
    assert not ok and "GiB of GPU memory free" in why
    ok, why = BACKENDS["bf16"].can_run(LAPTOP_6GB, "cuda", "x/y")
    assert not ok and "needs about 8.5 GiB" in why  # 16-bit weights do not fit a 6 GB card
    assert BACKENDS["gptq"].can_run(LAPTOP_6GB, "cuda", "x/y") == (True, "")
    assert BACKENDS["bf16"].can_run(BIG_GPU, "cuda", "x/y") == (True, "")
    small_ram = Hardware(**{**CPU_ONLY.__dict__, "ram_total": 8 * GIB, "ram_available": 6 * GIB})
    ok, why = BACKENDS["fp32"].can_run(small_ram, "cpu", "x/y")
    assert not ok and "RAM" in why
    assert BACKENDS["bf16"].can_run(small_ram, "cpu", "x/y")[0] is False
    assert BACKENDS["bnb4"].can_run(small_ram, "cpu", "x/y") == (True, "")


def test_a_local_folder_decides_by_its_own_config(tiny_src: Path) -> None:
    ok, why = BACKENDS["gptq"].can_run(LAPTOP_6GB, "cuda", str(tiny_src))
    assert not ok and "not a GPTQ checkpoint" in why
    assert BACKENDS["fp32"].can_run(CPU_ONLY, "cpu", str(tiny_src)) == (True, "")


# -- load_best with fake loaders --------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_net(tiny_src: Path) -> tuple[Any, Any]:
    from marlin_desk.engine.loader import load_native

    return load_native(tiny_src, "cpu", "float32")


@dataclass(frozen=True)
class Fake:
    """A backend that can always run (or not) and loads the tiny model (or raises)."""

    name: str
    net: Any
    calls: list[str]
    error: Exception | None = None
    runnable: tuple[bool, str] = (True, "")

    def can_run(self, hw: Hardware, device: str, source: str) -> tuple[bool, str]:
        return self.runnable

    def dtype(self, hw: Hardware, device: str) -> str:
        return "float32"

    def precision(self, hw: Hardware, device: str) -> str:
        return {"gptq": "gptq-int4", "bnb4": "nf4"}.get(self.name, "float32")

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        self.calls.append(f"{self.name}@{device}")
        if self.error is not None:
            raise self.error
        return self.net


def fakes(net: Any, calls: list[str], **overrides: dict[str, Any]) -> dict[str, Fake]:
    return {name: Fake(name, net, calls, **overrides.get(name, {}))
            for name in ("gptq", "bnb4", "bf16", "fp32", "sdnq")}


def test_gptq_load_that_raises_falls_back_to_nf4(tiny_src: Path, tiny_net: Any) -> None:
    calls: list[str] = []
    backends = fakes(tiny_net, calls, gptq={"error": RuntimeError("no kernel for sm_61")})
    engine = load_best(str(tiny_src), hw=LAPTOP_6GB, backends=backends, self_check=False)
    assert calls == ["gptq@cuda", "bnb4@cuda"]
    assert (engine.backend, engine.device, engine.precision) == ("bnb4", "cuda", "nf4")
    assert engine.fallbacks == [
        f"gptq on cuda ({tiny_src}): RuntimeError: no kernel for sm_61"]
    assert "after 1 fallback" in engine.why
    doc = engine.describe()
    assert {"backend", "device", "dtype", "why", "fallbacks", "precision"} <= set(doc)


def test_gptqmodel_missing_is_a_reason_not_an_error(tiny_src: Path, tiny_net: Any) -> None:
    calls: list[str] = []
    backends = fakes(tiny_net, calls, gptq={"runnable": (False, "gptqmodel is not installed")})
    engine = load_best(str(tiny_src), hw=LAPTOP_6GB, backends=backends, self_check=False)
    assert calls == ["bnb4@cuda"] and engine.backend == "bnb4"
    assert engine.fallbacks == ["gptq on cuda: gptqmodel is not installed"]


def test_no_cuda_goes_straight_to_cpu(tiny_src: Path, tiny_net: Any) -> None:
    calls: list[str] = []
    engine = load_best(str(tiny_src), hw=CPU_ONLY, backends=fakes(tiny_net, calls),
                       self_check=False)
    assert calls == ["fp32@cpu"] and (engine.backend, engine.device) == ("fp32", "cpu")
    assert engine.fallbacks == [] and engine.why.startswith("no GPU found")


def test_too_little_vram_skips_every_gpu_backend(tiny_src: Path, tiny_net: Any) -> None:
    """The real can_run rules on a 2 GB card, with fake loads behind them."""
    calls: list[str] = []
    backends = {}
    for name, fake in fakes(tiny_net, calls).items():
        real = BACKENDS[name]

        @dataclass(frozen=True)
        class RealRules(Fake):
            def can_run(self, hw: Hardware, device: str, source: str,
                        _real: Any = real) -> tuple[bool, str]:
                return _real.can_run(hw, device, "hub/id")  # as if the real model

        backends[name] = RealRules(fake.name, fake.net, calls)
    engine = load_best(str(tiny_src), hw=TINY_GPU, backends=backends, self_check=False)
    assert calls == ["fp32@cpu"]
    assert [f.split(":")[0] for f in engine.fallbacks] == ["gptq on cuda", "bnb4 on cuda",
                                                           "bf16 on cuda"]
    assert all("GPU memory free" in f for f in engine.fallbacks)


def test_failed_self_check_falls_back(tiny_src: Path, tiny_net: Any,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from marlin_desk.engine.backends import chain as mod

    seen: list[str] = []

    def check(engine: Any) -> str | None:
        seen.append(engine.backend)
        return "non-finite logits" if engine.backend == "gptq" else None

    monkeypatch.setattr(mod, "check_first_inference", check)
    calls: list[str] = []
    engine = load_best(str(tiny_src), hw=LAPTOP_6GB, backends=fakes(tiny_net, calls))
    assert seen == ["gptq", "bnb4"] and engine.backend == "bnb4"
    assert "failed its first-inference check: non-finite logits" in engine.fallbacks[0]


def test_explicit_backend_never_silently_changes(tiny_src: Path, tiny_net: Any) -> None:
    calls: list[str] = []
    backends = fakes(tiny_net, calls, gptq={"error": ImportError("No module named 'gptqmodel'")})
    with pytest.raises(ModelUnavailable, match="backend gptq cannot run.*gptqmodel"):
        load_best(str(tiny_src), backend="gptq", hw=LAPTOP_6GB, backends=backends,
                  self_check=False)
    assert calls == ["gptq@cuda"]


def test_everything_failing_lists_every_reason(tiny_src: Path, tiny_net: Any) -> None:
    calls: list[str] = []
    boom = {"error": OSError("disk")}
    backends = fakes(tiny_net, calls, **dict.fromkeys(("gptq", "bnb4", "bf16", "fp32"), boom))
    with pytest.raises(ModelUnavailable) as err:
        load_best(str(tiny_src), hw=LAPTOP_6GB, backends=backends, self_check=False)
    assert str(err.value).count("OSError: disk") == 6


def test_the_real_self_check_passes_on_the_tiny_model(tiny_src: Path, tiny_net: Any) -> None:
    from marlin_desk.engine.backends import check_first_inference
    from marlin_desk.engine.loader import LoadedModel, stop_ids

    net, processor = tiny_net
    engine = LoadedModel(model=net, processor=processor, model_id="t", device="cpu",
                         dtype="float32", eos_ids=stop_ids(net), pad_id=net.config.pad_token_id)
    assert check_first_inference(engine) is None


def test_kernel_notes_report_the_optional_extras() -> None:
    from marlin_desk.engine.backends import kernel_notes

    assert "flash-linear-attention, causal-conv1d" in kernel_notes(LAPTOP_6GB, "cuda")[0]
    fast = Hardware(**{**LAPTOP_6GB.__dict__,
                       "packages": {**ALL, "fla": "0.4", "causal_conv1d": "1.5"}})
    assert fast.fast_linear_attention and "are installed" in kernel_notes(fast, "cuda")[0]


def test_static_cpu_estimate_is_plausible() -> None:
    from marlin_desk.engine.backends import measured_estimate, static_estimate

    est = static_estimate(params=2_300_000_000, bytes_per_param=4.0, windows=5,
                          prompt_tokens=23_600, new_tokens=512, cores=2)
    assert 60 * 60 < est.seconds < 60 * 60 * 24  # hours, not seconds, for 10 min on 2 cores
    assert "static" in est.message()
    assert measured_estimate(30.0, 4).seconds == 120.0


def test_hardware_detection_describes_this_machine() -> None:
    from marlin_desk.engine.hardware import detect

    hw = detect()
    assert hw.cpu_cores >= 1 and set(ALL) <= set(hw.packages)
    doc = hw.to_json()
    assert {"cuda", "vram_total_gib", "mps", "packages", "fast_linear_attention"} <= set(doc)
