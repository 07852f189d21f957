"""One entry point: a request and a target name in, the file's bytes out (no file is written
here: the caller places them, never overwriting; see marlin_desk.handoff_export)."""

from __future__ import annotations

from collections.abc import Callable

import opentimelineio as otio

from marlin_desk.handoff import edl, fcp7, fcpxml, resolve_markers
from marlin_desk.handoff.otio_build import build_timeline
from marlin_desk.handoff.plan import HandoffRequest, Plan, make_plan
from marlin_desk.handoff.targets import target


def _otio(plan: Plan) -> bytes:
    text = otio.adapters.write_to_string(build_timeline(plan, audio=True), "otio_json")
    return text.encode("utf-8")


_WRITERS: dict[str, Callable[[Plan], bytes]] = {
    "premiere": fcp7.render,
    "resolve": fcp7.render,
    "fcpx": fcpxml.render,
    "edl": edl.render,
    "otio": _otio,
    "resolve-markers": resolve_markers.render,
}


def render_timeline(target_name: str, request: HandoffRequest) -> tuple[bytes, Plan]:
    """The file for `target_name` and the plan it was drawn from (ValueError: unknown target
    or no clip)."""
    target(target_name)
    plan = make_plan(request)
    return _WRITERS[target_name](plan), plan
