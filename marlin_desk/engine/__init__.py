"""The model: loading, per-video sessions with prefill reuse, and the tiny test-model builder.

torch and transformers are imported only inside this package, and lazily by the callers, so the
app and the CLI start fast.
"""
