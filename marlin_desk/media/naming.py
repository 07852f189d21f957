"""Output file names: a template filled per clip, made safe for every OS, never clobbering.

The default template `{video}_{index:02d}_{start}-{end}_{slug}` gives names such as
`Beach day_03_01m12.500s-01m20.000s_dog-runs-into-the-sea.mp4`: sorted by clip order, readable
in a file browser, and unique per span. Fields: video (source file stem), index (1-based), slug
(description slug), start, end (as `00m12.500s`), preset, mode.

Safety rules (the strictest of Windows, macOS and Linux): no `<>:"/\\|?*` or control characters,
no trailing dots or spaces, no reserved device names (CON, NUL, COM1...), Unicode in NFC form, and
at most 200 UTF-8 bytes so that a suffix and a temporary extension still fit in 255.
"""

from __future__ import annotations

import os
import re
import secrets
import unicodedata
from pathlib import Path
from string import Formatter

from marlin_desk.core.errors import BadInput, MarlinError

DEFAULT_TEMPLATE = "{video}_{index:02d}_{start}-{end}_{slug}"
TEMPLATE_FIELDS = ("video", "index", "slug", "start", "end", "preset", "mode")
MAX_NAME_BYTES = 200

_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
             *(f"LPT{i}" for i in range(1, 10))}


def time_for_name(seconds: float) -> str:
    """12.5 -> `00m12.500s`; 3725 -> `1h02m05.000s` (no colons: Windows forbids them)."""
    ms = int(round(max(0.0, seconds) * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    core = f"{m:02d}m{s:02d}.{milli:03d}s"
    return f"{h}h{core}" if h else core


def slugify(text: str, max_len: int = 40) -> str:
    """Lower-case words joined by dashes; letters of every script are kept, punctuation is not."""
    text = unicodedata.normalize("NFKC", text).lower()
    words = re.findall(r"\w+", text)
    slug = "-".join(w.replace("_", "-") for w in words)
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0] or slug[:max_len]
    return slug.strip("-")


def safe_filename(name: str, max_bytes: int = MAX_NAME_BYTES) -> str:
    """`name` (a single path component) made valid on Windows, macOS and Linux."""
    name = unicodedata.normalize("NFC", name)
    name = re.sub(r"\s+", " ", name)  # tabs and newlines become spaces, not underscores
    name = _UNSAFE.sub("_", name).strip().rstrip(". ")
    name = name.lstrip("-")  # never looks like a command-line option
    stem, dot, ext = name.rpartition(".")
    if not dot or len(ext) > 8:
        stem, ext = name, ""
    if stem.split(".")[0].upper() in _RESERVED:
        stem = "_" + stem
    ext_part = f".{ext}" if ext else ""
    budget = max_bytes - len(ext_part.encode("utf-8"))
    stem_bytes = stem.encode("utf-8")[:max(budget, 1)]
    stem = stem_bytes.decode("utf-8", errors="ignore").rstrip(". ")
    return (stem or "clip") + ext_part


def render_name(template: str, *, video: str, index: int, description: str = "",
                start: float, end: float, preset: str = "", mode: str = "",
                ext: str = ".mp4") -> str:
    """The file name of one clip: template fields filled, separators tidied, made safe."""
    for _, field, _, _ in Formatter().parse(template):
        if field is not None and field.split("!")[0].split(":")[0] not in TEMPLATE_FIELDS:
            raise BadInput(f"unknown field {{{field}}} in the name template; "
                           f"use {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}")
    values: dict[str, object] = {
        "video": Path(video).stem, "index": index, "slug": slugify(description),
        "start": time_for_name(start), "end": time_for_name(end), "preset": preset, "mode": mode}
    # An empty field takes the separator before it away (no "clip__.mp4"); the marker cannot
    # come from a value (control characters are stripped from names anyway).
    values = {k: ("\x00" if v == "" else v) for k, v in values.items()}
    try:
        name = template.format(**values)
    except (ValueError, IndexError, KeyError) as exc:
        raise BadInput(f"bad name template {template!r}: {exc}") from exc
    name = re.sub(r"[_\- .]?\x00", "", name).strip("_- ")
    return safe_filename(name + ext)


def candidate_names(final: Path):
    """`name.mp4`, `name (2).mp4`, `name (3).mp4`, ... for choosing a free name."""
    yield final
    n = 2
    while True:
        yield final.with_name(f"{final.stem} ({n}){final.suffix}")
        n += 1


def place_without_overwrite(tmp: Path, final: Path) -> Path:
    """Move the finished `tmp` to `final` or a suffixed free name; returns the name used.

    A hard link fails if the target exists, so the rename is atomic and can never replace a file
    that appeared meanwhile. Where hard links are unsupported (FAT, some network disks) we fall
    back to `os.rename`, which refuses existing targets on Windows and is checked first elsewhere.
    """
    for cand in candidate_names(final):
        try:
            os.link(tmp, cand)
        except FileExistsError:
            continue
        except OSError:
            if cand.exists():
                continue
            try:
                os.rename(tmp, cand)
            except FileExistsError:
                continue
            return cand
        os.unlink(tmp)
        return cand
    raise AssertionError("unreachable")  # pragma: no cover


def write_atomically(final: Path, data: bytes, *, overwrite: bool = False) -> Path:
    """`data` at `final` through a temporary name beside it, then a rename: `final` is replaced
    only with `overwrite`, else the data goes to the first free `final (n)` name. A failure
    leaves no temporary file; a disk error becomes one plain sentence. Returns the name used."""
    tmp = temp_name(final, secrets.token_hex(4))
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        if overwrite:
            os.replace(tmp, final)
            return final
        return place_without_overwrite(tmp, final)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise MarlinError(f"cannot write {final}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def temp_name(final: Path, tag: str) -> Path:
    """A hidden partial name beside `final` (same disk, so the final rename is atomic)."""
    return final.with_name(f".{final.stem}.{tag}.partial{final.suffix}")
