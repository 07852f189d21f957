"""The hand-off targets, defined once: the CLI's choices, the GUI's menu and the writers all
come from TARGETS."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str  # what `--to` takes
    suffix: str  # the file's extension, with the dot
    label: str  # what a menu shows
    help: str  # one line: what the file is for


TARGETS: tuple[Target, ...] = (
    Target("premiere", ".xml", "Adobe Premiere Pro (FCP7 XML)",
           "Final Cut Pro 7 XML (xmeml): File > Import in Premiere Pro"),
    Target("resolve", ".xml", "DaVinci Resolve (FCP7 XML)",
           "Final Cut Pro 7 XML (xmeml): File > Import > Timeline in Resolve"),
    Target("fcpx", ".fcpxml", "Final Cut Pro (FCPXML)",
           "FCPXML 1.8: File > Import > XML in Final Cut Pro"),
    Target("edl", ".edl", "CMX 3600 EDL",
           "CMX 3600 edit decision list: any NLE, one video track, markers as LOC comments"),
    Target("otio", ".otio", "OpenTimelineIO (.otio)",
           "OpenTimelineIO's native JSON: every field, for scripts and other OTIO tools"),
    Target("resolve-markers", ".edl", "DaVinci Resolve markers (EDL)",
           "Resolve's marker EDL: right-click the timeline in the Media Pool > Timelines > "
           "Import > Timeline Markers from EDL"),
)

TARGET_NAMES: tuple[str, ...] = tuple(t.name for t in TARGETS)


def target(name: str) -> Target:
    """The target called `name` (ValueError with the known names otherwise)."""
    for t in TARGETS:
        if t.name == name:
            return t
    raise ValueError(f"unknown hand-off target {name!r}; use one of {', '.join(TARGET_NAMES)}")
