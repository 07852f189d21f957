"""A crop path as FFmpeg `crop` expressions: the window moves frame by frame in one pass.

The crop filter evaluates its x and y expressions for every frame, with `t` the frame's time.
The path (piecewise linear between samples, stepping at cuts) is written as a balanced tree of
`if(lt(t,T),A,B)` over its linear pieces (depth log2 of the pieces, not their count), after
dropping points that a straight line through their neighbours reproduces to a tenth of a pixel
(a still shot is one number, a steady pan two points). The expression rounds exactly as
CropPath.crop_at does, so the preview's rectangle is the exported crop. Nothing else changes in
the export: same decode, same scale, same encoder, so it costs what the centre crop costs
(bench/reframe.py measures both in one run).

Times: the export's filters see clip time, 0 at the clip's first frame; `first_frame` is that
frame's video time (the detection pass saw it as its first sample). A cut switches shots half a
frame before the new shot's first frame, so rounding in the fps filter cannot move the jump.
"""

from __future__ import annotations

from dataclasses import dataclass

from marlin_desk.media.reframe_path import CropPath, ShotPath

_TOLERANCE_PX = 0.1


def _num(v: float) -> str:
    text = f"{v:.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def _pieces(path: CropPath, first_frame: float, fps: float,
            scale: float) -> list[tuple[float, str]]:
    """(clip time from which it holds, expression of the centre) in time order."""
    half_frame = 0.5 / fps if fps > 0 else 0.0
    pieces: list[tuple[float, str]] = []
    for index, shot in enumerate(path.shots):
        begin = -1e9 if index == 0 else shot.start - first_frame - half_frame
        pts = [(t - first_frame, c) for t, c in shot.turning_points(scale, _TOLERANCE_PX)]
        pieces.append((begin, _num(pts[0][1])))
        for (t0, c0), (t1, c1) in zip(pts, pts[1:], strict=False):
            if t1 <= t0:
                continue
            slope = (c1 - c0) / (t1 - t0)
            expr = _num(c0) if abs(slope) * scale < 1e-9 else \
                f"{_num(c0)}+{_num(slope)}*(t-{_num(t0)})" if t0 >= 0 else \
                f"{_num(c0)}+{_num(slope)}*(t+{_num(-t0)})"
            pieces.append((max(begin, t0), expr))
        pieces.append((max(begin, pts[-1][0]), _num(pts[-1][1])))
    # Later pieces win where two start at the same time.
    merged: list[tuple[float, str]] = []
    for start, expr in pieces:
        if merged and start <= merged[-1][0]:
            merged[-1] = (merged[-1][0], expr)
        elif merged and expr == merged[-1][1]:
            continue
        else:
            merged.append((start, expr))
    return merged


def _tree(pieces: list[tuple[float, str]]) -> str:
    if len(pieces) == 1:
        return pieces[0][1]
    mid = len(pieces) // 2
    return f"if(lt(t,{_num(pieces[mid][0])}),{_tree(pieces[:mid])},{_tree(pieces[mid:])})"


@dataclass(frozen=True)
class MovingCrop:
    """What the export renders: the path, the video time of the clip's first frame, and the
    fill kept for the shots where nobody was found (None: every shot is cropped; "blur" or
    "pad": the editor chose that fill, so shots without a subject keep it)."""

    path: CropPath
    first_frame: float
    fill_elsewhere: str | None = None

    def expressions(self, fps: float) -> tuple[str, str]:
        return crop_expressions(self.path, self.first_frame, fps)

    def cropped_when(self, fps: float) -> str | None:
        """FFmpeg's `enable` expression for the frames that are cropped (clip time), or None
        when all are."""
        if self.fill_elsewhere is None:
            return None
        half = 0.5 / fps if fps > 0 else 0.0
        spans = []
        for index, shot in enumerate(self.path.shots):
            if not shot_is_cropped(self.path, shot):
                continue
            a = -1e9 if index == 0 else shot.start - self.first_frame - half
            last = index == len(self.path.shots) - 1
            b = 1e9 if last else self.path.shots[index + 1].start - self.first_frame - half
            spans.append(f"between(t,{_num(a)},{_num(b - 1e-6)})")
        return "+".join(spans) if spans else "0"


def shot_is_cropped(path: CropPath, shot: ShotPath) -> bool:
    """A shot gets the moving crop when a subject was found in it or the editor pinned it."""
    return shot.subject or any(shot.start <= p.t < shot.end or p.t == shot.end == path.end
                               for p in path.pins)


def crop_expressions(path: CropPath, first_frame: float, fps: float) -> tuple[str, str]:
    """(x, y) expressions for FFmpeg's crop filter on frames in clip time."""
    centre_x = (path.frame_w - path.crop_w) // 2 // 2 * 2
    centre_y = (path.frame_h - path.crop_h) // 2 // 2 * 2
    if path.axis is None:
        return str(centre_x), str(centre_y)
    frame, crop = (path.frame_w, path.crop_w) if path.axis == "x" else (path.frame_h,
                                                                        path.crop_h)
    centre = _tree(_pieces(path, first_frame, fps, float(frame)))
    # CropPath._place: floor(c * frame - crop / 2 + 0.5), kept inside, on an even pixel.
    moving = (f"floor(clip(floor(({centre})*{frame}-{_num(crop / 2)}+0.5),0,"
              f"{frame - crop})/2)*2")
    return (moving, str(centre_y)) if path.axis == "x" else (str(centre_x), moving)
