"""The burned-in captions, previewed over the player: the same layout the export burns in
(media.captions.caption_frames: words, colours, the spoken word lit, size and place in the
safe area), laid out for the picture as shown and drawn at the frame on screen."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsObject, QStyleOptionGraphicsItem, QWidget

from marlin_desk.gui.picture_fit import fitted
from marlin_desk.media.caption_styles import get_caption_style
from marlin_desk.media.captions import CaptionFrame, caption_frames, frame_at


class CaptionOverlay(QGraphicsObject):
    """Sits above the video item in the player's scene; `show_at(t)` after every frame."""

    def __init__(self, video_item: Any) -> None:
        super().__init__()
        self.video_item = video_item
        self.setZValue(10)
        self.words: list[Any] = []
        self.style_name = ""
        self._frames: list[CaptionFrame] = []
        self._laid_for: tuple[Any, ...] = ()
        self.current: CaptionFrame | None = None
        # the upright picture's size (VideoInfo: rotation applied); the item's native size is
        # the stored, unturned one for a phone file
        self.frame = QSizeF()
        # the 9:16 (or 1:1) crop the export burns the captions into, as fractions of the
        # frame (the reframe preview's rectangle), or None: the whole picture
        self.crop: QRectF | None = None
        self._t = 0.0  # the time shown
        self.setVisible(False)

    def boundingRect(self) -> QRectF:  # noqa: N802
        size = self.video_item.size()
        return QRectF(0, 0, size.width(), size.height())

    def picture(self) -> QRectF:
        """Where the captions are laid: the picture, or the crop on it that the export
        renders."""
        native = self.frame if not self.frame.isEmpty() else self.video_item.nativeSize()
        size = self.video_item.size()
        pic = fitted(QRectF(0, 0, size.width(), size.height()), native.width(), native.height())
        c = self.crop
        if c is None:
            return pic
        return QRectF(pic.left() + c.x() * pic.width(), pic.top() + c.y() * pic.height(),
                      c.width() * pic.width(), c.height() * pic.height())

    def set_crop(self, crop: QRectF | None) -> None:
        """The reframe preview's crop moved (or went): the captions move with it."""
        if crop != self.crop:
            self.crop = crop
            self.current = None  # laid again for the crop's size
            self.show_at(self._t)
            self.update()

    def set_words(self, words: list[Any], style_name: str) -> None:
        self.words, self.style_name = list(words), style_name
        self._laid_for = ()
        self.update()

    def _layout(self, rect: QRectF) -> list[CaptionFrame]:
        key = (id(self.words), len(self.words), self.style_name, int(rect.width()),
               int(rect.height()))
        if key != self._laid_for:  # once per transcript, style and picture size
            w, h = max(2, int(rect.width())), max(2, int(rect.height()))
            self._frames = caption_frames(self.words, w, h, get_caption_style(self.style_name)) \
                if self.words else []
            self._laid_for = key
        return self._frames

    def show_at(self, t: float) -> None:
        self._t = t
        if not self.isVisible():
            return
        rect = self.picture()
        frame = frame_at(self._layout(rect), int(round(t * 1000)))
        if frame != self.current:
            self.current = frame
            self.update()

    def paint(self, p: QPainter, _option: QStyleOptionGraphicsItem,
              _widget: QWidget | None = None) -> None:
        frame = self.current
        if frame is None or not frame.lines:
            return
        style = get_caption_style(self.style_name)
        rect = self.picture()
        font = QFont(style.font)
        font.setPixelSize(max(6, frame.font_px))
        font.setBold(style.bold)
        metrics = QFontMetricsF(font)
        space = metrics.horizontalAdvance(" ")
        line_h = metrics.height()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        outline = QPen(QColor(f"#{style.outline_colour}"), max(1.0, frame.font_px * style.outline),
                       Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap,
                       Qt.PenJoinStyle.RoundJoin)
        bottom = rect.top() + frame.y
        for n, line in enumerate(frame.lines):
            widths = [metrics.horizontalAdvance(run.text) for run in line]
            total = sum(widths) + space * (len(line) - 1)
            x = rect.left() + frame.x - total / 2
            y = bottom - (len(frame.lines) - 1 - n) * line_h - metrics.descent()
            if style.box:
                p.fillRect(QRectF(x - space / 2, y - metrics.ascent(), total + space, line_h),
                           QColor(0, 0, 0, 255 - style.box_alpha))
            for run, width in zip(line, widths, strict=True):
                path = QPainterPath()
                path.addText(QPointF(x, y), font, run.text)
                if not style.box:
                    p.strokePath(path, outline)
                p.fillPath(path, QBrush(QColor(f"#{run.colour}")))
                x += width + space
