"""The reframing crop drawn over the player: the rectangle the export will keep at the frame on
screen, the rest of the picture darkened a little so the editor sees the vertical (or square)
picture, and a drag along the crop's axis to move it (the controller turns the drop into a pin).

The crop comes in frame pixels (media.reframe_path.CropRect in CropPath.frame_w x frame_h, the
upright square-pixel picture the player shows) and is scaled to the picture's place in the view:
that frame fitted, letterboxed, into the video item (as the player fits the picture).
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtMultimediaWidgets import QGraphicsVideoItem
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QGraphicsSceneMouseEvent

from marlin_desk.gui.picture_fit import fitted

SHADE = QColor(0, 0, 0, 110)  # darkens what the crop leaves out, still readable
EDGE = QColor(255, 196, 0)  # the crop's edge: amber, visible on dark and light pictures
PINNED = QColor(80, 200, 255)  # the edge at a frame the editor pinned


class CropOverlay(QGraphicsObject):
    dragStarted = Signal()
    dragged = Signal(int, int)  # the crop's new top-left corner, frame pixels (on release)
    menuRequested = Signal(object)  # a right-click on the picture: the screen point (QPoint)

    def __init__(self, video_item: QGraphicsVideoItem) -> None:
        super().__init__()
        self.video_item = video_item
        self.setZValue(1)
        self.setAcceptedMouseButtons(Qt.MouseButton.LeftButton | Qt.MouseButton.RightButton)
        self.setAcceptHoverEvents(True)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsFocusable, False)
        self.frame_w = self.frame_h = 0
        self.crop: tuple[int, int, int, int] | None = None  # x, y, w, h in frame pixels
        self.axis: str | None = None  # "x"/"y": the crop can be dragged along it; None: fixed
        self.pinned = False
        self._drag: tuple[QPointF, int, int] | None = None  # press point, crop x, y then
        self.paint_ms = 0.0  # the last paint's cost (bench and tests read it)
        video_item.nativeSizeChanged.connect(self.refit)

    # -- what to draw ------------------------------------------------------------------------
    def show_crop(self, frame_w: int, frame_h: int, x: int, y: int, w: int, h: int,
                  axis: str | None, pinned: bool = False) -> None:
        if self._drag is not None:
            return  # the editor's hand wins until the drop
        new = (x, y, w, h)
        if (self.crop, self.frame_w, self.frame_h, self.axis, self.pinned) == \
                (new, frame_w, frame_h, axis, pinned):
            return
        if (frame_w, frame_h) != (self.frame_w, self.frame_h):
            self.prepareGeometryChange()  # the picture's place depends on the frame's size
        self.frame_w, self.frame_h, self.crop, self.axis = frame_w, frame_h, new, axis
        self.pinned = pinned
        self.update()

    def clear(self) -> None:
        self._drag = None
        if self.crop is not None:
            self.crop = None
            self.update()

    def refit(self, *_: Any) -> None:
        """The picture moved or changed size (a resize, another file)."""
        self.prepareGeometryChange()
        self.update()

    # -- geometry ------------------------------------------------------------------------------
    def picture_rect(self) -> QRectF:
        """Where the picture is drawn, in scene (= this item's) coordinates: the upright
        frame fitted into the video item (its own bounding rect is the stored, unturned
        picture's for a file with a display rotation, so it is not used). Empty until the
        first frame shows."""
        item = self.video_item
        if item.nativeSize().isEmpty():
            return QRectF()
        area = QRectF(item.pos(), item.size())
        if not (self.frame_w and self.frame_h):
            return item.mapRectToItem(self, item.boundingRect())
        return fitted(area, self.frame_w, self.frame_h)

    def displayed_crop(self) -> QRectF | None:
        """The crop as drawn, or None when there is none or no picture yet."""
        pic = self.picture_rect()
        if self.crop is None or pic.isEmpty() or not (self.frame_w and self.frame_h):
            return None
        sx, sy = pic.width() / self.frame_w, pic.height() / self.frame_h
        x, y, w, h = self.crop
        return QRectF(pic.left() + x * sx, pic.top() + y * sy, w * sx, h * sy)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.picture_rect()

    # -- painting ------------------------------------------------------------------------------
    def paint(self, painter: QPainter, option: Any, widget: Any = None) -> None:
        began = time.perf_counter()
        crop = self.displayed_crop()
        if crop is None:
            return
        shade = QPainterPath()
        shade.addRect(self.picture_rect())
        inner = QPainterPath()
        inner.addRect(crop)
        painter.fillPath(shade.subtracted(inner), QBrush(SHADE))
        pen = QPen(PINNED if self.pinned else EDGE, 2)
        if self.axis is None:
            pen.setStyle(Qt.PenStyle.DashLine)  # a fixed crop: nothing to drag
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(crop.adjusted(1, 1, -1, -1))
        if self.pinned:  # a small diamond at the top: this frame is a keyframe
            c, top = crop.center().x(), crop.top() + 10
            painter.setBrush(QBrush(PINNED))
            painter.drawPolygon(QPolygonF([QPointF(c, top - 6), QPointF(c + 6, top),
                                           QPointF(c, top + 6), QPointF(c - 6, top)]))
        self.paint_ms = (time.perf_counter() - began) * 1000

    # -- dragging ------------------------------------------------------------------------------
    def _over_crop(self, pos: QPointF) -> bool:
        crop = self.displayed_crop()
        return crop is not None and crop.contains(pos)

    def hoverMoveEvent(self, event: Any) -> None:  # noqa: N802
        movable = self.axis is not None and self._over_crop(event.pos())
        cursor = Qt.CursorShape.SizeHorCursor if self.axis == "x" else \
            Qt.CursorShape.SizeVerCursor
        if movable:
            self.setCursor(cursor)
        else:
            self.unsetCursor()

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.RightButton and self.crop is not None:
            self.menuRequested.emit(event.screenPos())
            return
        if event.button() == Qt.MouseButton.LeftButton and self.axis is not None \
                and self.crop is not None and self._over_crop(event.pos()):
            self._drag = (event.pos(), self.crop[0], self.crop[1])
            self.dragStarted.emit()
            return
        event.ignore()

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._drag is None or self.crop is None:
            return
        pic = self.picture_rect()
        press, x0, y0 = self._drag
        _, _, w, h = self.crop
        x, y = x0, y0
        if self.axis == "x":
            dx = (event.pos().x() - press.x()) * self.frame_w / pic.width()
            x = int(round(max(0, min(self.frame_w - w, x0 + dx))))
        elif self.axis == "y":
            dy = (event.pos().y() - press.y()) * self.frame_h / pic.height()
            y = int(round(max(0, min(self.frame_h - h, y0 + dy))))
        if (x, y) != self.crop[:2]:
            self.crop = (x, y, w, h)
            self.update()

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._drag is None or self.crop is None:
            return
        _, x0, y0 = self._drag
        self._drag = None
        x, y = self.crop[:2]
        if (x, y) != (x0, y0):
            self.dragged.emit(x, y)
