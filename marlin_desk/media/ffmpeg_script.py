"""Filter graphs too long for a command line go to a file FFmpeg reads them from.

A reframed clip's crop expression grows with the clip (about 60 characters a linear piece of
the path; a 60 s walk across the frame took 737): Windows allows 32,767 characters for a whole
command line and Linux 128 KiB for one argument, so a long clip that reframes all the time
could not start. Past `LONG_GRAPH` characters the `-filter_complex` graph is written to a
temporary file and passed as `-/filter_complex FILE` (FFmpeg 7 and later) or
`-filter_complex_script FILE` (older ones), then the file is removed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence

from marlin_desk.media.ffmpeg_bin import reads_option_files

LONG_GRAPH = 8_000  # characters: well inside Windows' limit with the rest of the command


@contextlib.contextmanager
def graphs_in_files(cmd: Sequence[str]) -> Iterator[list[str]]:
    """`cmd` (`cmd[0]` the executable) with each long `-filter_complex` value in a file."""
    out = list(cmd)
    files: list[str] = []
    try:
        for i in range(1, len(out) - 1):
            if out[i] == "-filter_complex" and len(out[i + 1]) > LONG_GRAPH:
                fd, name = tempfile.mkstemp(prefix="marlin-graph-", suffix=".txt")
                files.append(name)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(out[i + 1])
                new = reads_option_files(out[0])
                out[i] = "-/filter_complex" if new else "-filter_complex_script"
                out[i + 1] = name
        yield out
    finally:
        for name in files:
            with contextlib.suppress(OSError):
                os.unlink(name)
