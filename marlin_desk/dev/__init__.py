"""Development tooling, not product code: the synthetic-video maker (`videos`), the tiny-model
builder (`tiny_model`) and the vLLM test server (`vllm_server`). Tests, bench and training
import it; in the app only `marlin-desk dev ...` (cli/dev_cmd.py) does, and it never imports
tests (both rules are import-linter contracts)."""
