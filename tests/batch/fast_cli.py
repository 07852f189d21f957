"""`python -m tests.batch.fast_cli ARGS`: `marlin-desk ARGS` with the tests' small caption cap,
for tests that need a real process (signals)."""

from __future__ import annotations

import dataclasses
import signal
import sys

from marlin_desk.cli import batch_cmd
from marlin_desk.cli.main import main
from tests.batch.conftest import CAPTION_TOKENS

_settings = batch_cmd._job_settings
batch_cmd._job_settings = lambda args: dataclasses.replace(_settings(args),
                                                           caption_tokens=CAPTION_TOKENS)

if __name__ == "__main__":
    # A test run started in the background (`cmd &` in a script) ignores SIGINT, and a child
    # inherits that: Python then never raises KeyboardInterrupt. The test sends SIGINT on purpose.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    raise SystemExit(main(sys.argv[1:]))
