"""Who is speaking, when two people talk and one crop cannot hold both.

The samples of a shot carry, for each face when there are several, how much the lower middle
of the face (mouth and jaw) changed since the sample before (`FaceBox.talk`, from
media/motion_subject). Faces are followed from sample to sample by their position along the
crop's axis (people in an interview stay in their seats); a face is the speaker at a sample
when its mouth moved clearly more than every other's over the second around it. Where no one
clearly speaks (both still, both moving their heads alike) the path keeps its usual rule: the
face nearest the last target among the largest.

A mouth also moves in a laugh, a smile or a bite. When the video's transcript is known, a face
is taken for the speaker only while someone is heard (the transcript's stretches of speech,
widened by `_HEARD_S` for the word times' error): in silence nobody speaks, whatever moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from marlin_desk.media.reframe_detect import Sample

_SAME_FACE = 0.08  # a face this near (fraction of the frame) to a track's last place is its face
_WINDOW_S = 1.0  # the talk of a face is averaged over this long either side of a sample
_MIN_TALK = 1.5  # grey levels: less is a still face (compression noise)
_CLEARLY = 1.5  # the speaker's talk is at least this many times every other face's
_HEARD_S = 0.3  # speech stretches widened by this much either side


@dataclass
class _Track:
    place: float
    talk: list[tuple[float, float]] = field(default_factory=list)  # (time, talk)

    def mean_talk(self, t: float) -> float:
        near = [v for when, v in self.talk if abs(when - t) <= _WINDOW_S]
        return sum(near) / len(near) if near else 0.0


def speakers(samples: Sequence[Sample], axis: str,
             speech: Sequence[tuple[float, float]] | None = None) -> list[float | None]:
    """Per sample, the place (centre along the axis) of the face that speaks, or None.
    `speech`: the stretches in which someone is heard (None: not known, mouths alone)."""
    tracks: list[_Track] = []
    placed: list[list[tuple[float, _Track]]] = []  # per sample: (face's place, its track)
    for s in samples:
        here: list[tuple[float, _Track]] = []
        if len(s.faces) > 1:
            for f in s.faces:
                place = f.cx if axis == "x" else f.cy
                track = min(tracks, key=lambda k: abs(k.place - place), default=None)
                if track is None or abs(track.place - place) > _SAME_FACE or \
                        any(track is other for _, other in here):
                    track = _Track(place)
                    tracks.append(track)
                track.place = place
                track.talk.append((s.t, f.talk))
                here.append((place, track))
        placed.append(here)
    out: list[float | None] = []
    for s, here in zip(samples, placed, strict=True):
        scored = sorted(((track.mean_talk(s.t), place) for place, track in here), reverse=True)
        clear = len(scored) > 1 and scored[0][0] >= _MIN_TALK and \
            scored[0][0] >= _CLEARLY * scored[1][0] and _heard(s.t, speech)
        out.append(scored[0][1] if clear else None)
    return out


def _heard(t: float, speech: Sequence[tuple[float, float]] | None) -> bool:
    return speech is None or any(a - _HEARD_S <= t <= b + _HEARD_S for a, b in speech)
