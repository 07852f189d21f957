"""Where the picture sits in the player's video item: the upright frame fitted, aspect kept,
centred (letterboxed or pillarboxed). One rule for the overlays drawn over the picture (the
reframe crop, the captions), which must land where the player draws it."""

from __future__ import annotations

from PySide6.QtCore import QRectF


def fitted(area: QRectF, frame_w: float, frame_h: float) -> QRectF:
    """A frame_w x frame_h picture fitted into `area`; `area` itself for an unknown size."""
    if frame_w <= 0 or frame_h <= 0:
        return QRectF(area)
    scale = min(area.width() / frame_w, area.height() / frame_h)
    w, h = frame_w * scale, frame_h * scale
    return QRectF(area.center().x() - w / 2, area.center().y() - h / 2, w, h)
