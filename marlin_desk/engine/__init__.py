"""The model: loading, the backends and their fallback chain, per-video sessions with prefill
reuse (the tiny test-model builder is development tooling: marlin_desk.dev.tiny_model).

torch and transformers are imported only inside this package, and lazily by the callers, so the
app and the CLI start fast.
"""
