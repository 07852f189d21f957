"""The timeline widget: ruler, filmstrip, waveform and lanes for events, find results and clips.

Why one module of over 400 lines: painting, hit testing and dragging share the same geometry
(lanes, rows, pixels per second); the data lives apart in timeline/model.py.

Painted by hand because item views cannot draw thousands of ranges at 60 fps: each paint asks
the lanes only for the items in view (bisection), merges items that fall on the same pixels, and
batches rectangles by colour. Clicks seek or select; dragging a clip's edge trims it (the change
is reported on release, so one drag is one undo step).
"""

from __future__ import annotations

import bisect
import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QCursor, QFont, QFontMetrics, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QScrollBar, QToolTip, QWidget

from marlin_desk.gui import timefmt
from marlin_desk.gui.theme import colours
from marlin_desk.gui.timefmt import fmt_time
from marlin_desk.gui.timeline.model import Item, Lane, TimelineData

RULER_H = 22
FILM_H = 46
WAVE_H = 30
ROW_H = {"events": 18, "speech": 14, "results": 14, "clips": 20}
LANE_ORDER = ("events", "speech", "results", "clips")
LANE_GAP = 4
SCROLL_H = 12
EDGE_PX = 6
NICE_STEPS = [0.04, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600]
LANE_NAMES = {"events": "Events", "speech": "Said", "results": "Find", "clips": "Clips"}


class TimelineWidget(QWidget):
    seekRequested = Signal(float)
    eventClicked = Signal(int)
    resultClicked = Signal(int)
    clipClicked = Signal(str)
    clipTrimmed = Signal(str, float, float)  # clip id, new start, new end
    trimPreviewed = Signal(str, float)  # "start" | "end", the edge's time while dragging

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data = TimelineData()
        self.pps = 50.0  # pixels per second
        self.t0 = 0.0  # time at the left edge
        self.playhead = 0.0
        self.follow = True
        self.selected_event: int | None = None
        self.selected_result: int | None = None
        self.selected_clip: str | None = None
        self.marks: tuple[float | None, float | None] = (None, None)
        self.hover_text = ""
        timefmt.display.changed.connect(self.update)  # the ruler's times: seconds or timecode
        self._drag: tuple[str, object] | None = None  # ("seek", None) | ("trim", (id, edge))
        self._trim_preview: tuple[str, float, float] | None = None
        self._fitted = True
        self._lane_cache: dict[str, tuple[object, object]] = {}
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setAccessibleName("Timeline")
        self.setMinimumHeight(self._content_height() + SCROLL_H)
        self.scroll = QScrollBar(Qt.Orientation.Horizontal, self)
        self.scroll.setAccessibleName("Timeline scroll")
        self.scroll.valueChanged.connect(self._on_scroll)
        self._font = QFont(self.font())
        self._font.setPointSizeF(max(7.0, self._font.pointSizeF() * 0.85))

    # -- geometry ---------------------------------------------------------------------------
    def _lanes(self) -> list[tuple[str, Lane, float, float]]:
        """(name, lane, top y, row height) for the item lanes."""
        y = RULER_H + FILM_H + WAVE_H + LANE_GAP
        out = []
        for name in LANE_ORDER:
            lane: Lane = getattr(self.data, name)
            rows = max(1, lane.rows)
            out.append((name, lane, y, ROW_H[name]))
            y += rows * ROW_H[name] + LANE_GAP
        return out

    def _content_height(self) -> int:
        y = RULER_H + FILM_H + WAVE_H + LANE_GAP
        for name in LANE_ORDER:
            y += max(1, getattr(self.data, name).rows) * ROW_H[name] + LANE_GAP
        return int(y)

    def x_of(self, t: float) -> float:
        return (t - self.t0) * self.pps

    def t_of(self, x: float) -> float:
        return self.t0 + x / self.pps

    @property
    def duration(self) -> float:
        return self.data.duration

    def set_duration(self, duration: float) -> None:
        self.data.duration = max(0.0, duration)
        self.fit()

    def reset_view(self, duration: float) -> None:
        """A new video: nothing of the last one stays drawn (playhead, marks, selections)."""
        self.playhead = 0.0
        self.marks = (None, None)
        self.selected_event = self.selected_result = self.selected_clip = None
        self.hover_text = ""
        self._drag = None
        self._trim_preview = None
        self.set_duration(duration)

    def relayout(self) -> None:
        """Call after the lanes change: the height follows the number of packed rows (the
        layout is touched only when that number changes; otherwise this is one repaint)."""
        height = self._content_height() + SCROLL_H
        if height != self.minimumHeight():
            self.setMinimumHeight(height)
        self.update()

    # -- zoom and scroll -------------------------------------------------------------------
    def fit(self) -> None:
        self._fitted = True
        width = max(1, self.width())
        self.pps = width / self.duration if self.duration > 0 else 50.0
        self.t0 = 0.0
        self._sync_scroll()
        self.update()

    def zoom(self, factor: float, anchor_x: float | None = None) -> None:
        """Zoom around `anchor_x` (the mouse, for the wheel); else around the playhead, which
        stays where it is on screen (or comes to the middle when it was out of view)."""
        if anchor_x is None:
            x = self.x_of(self.playhead)
            anchor_x = x if 0 <= x <= self.width() else self.width() / 2
            anchor_t = self.playhead
        else:
            anchor_t = self.t_of(anchor_x)
        min_pps = self.width() / self.duration if self.duration > 0 else 1.0
        self.pps = max(min_pps, min(2000.0, self.pps * factor))
        self._fitted = self.pps <= min_pps * 1.0001
        self.t0 = anchor_t - anchor_x / self.pps
        self._clamp()
        self._sync_scroll()
        self.update()

    def _clamp(self) -> None:
        span = self.width() / self.pps
        self.t0 = max(0.0, min(self.t0, max(0.0, self.duration - span)))

    def _sync_scroll(self) -> None:
        span = self.width() / self.pps if self.pps else 0.0
        maximum = max(0, int((self.duration - span) * 1000))
        self.scroll.blockSignals(True)
        self.scroll.setRange(0, maximum)
        self.scroll.setPageStep(max(1, int(span * 1000)))
        self.scroll.setSingleStep(max(1, int(span * 100)))
        self.scroll.setValue(int(self.t0 * 1000))
        self.scroll.blockSignals(False)
        self.scroll.setVisible(maximum > 0)

    def _on_scroll(self, value: int) -> None:
        self.t0 = value / 1000.0
        self.update()

    def set_playhead(self, t: float) -> None:
        self.playhead = t
        span = self.width() / self.pps
        if self.follow and not self._drag and (t < self.t0 or t > self.t0 + span):
            self.t0 = max(0.0, t - span * 0.1)
            self._clamp()
            self._sync_scroll()
        self.update()

    def resizeEvent(self, event) -> None:  # noqa: ANN001, N802
        self.scroll.setGeometry(0, self.height() - SCROLL_H, self.width(), SCROLL_H)
        if self._fitted:
            self.fit()
        else:
            self._clamp()
            self._sync_scroll()
        super().resizeEvent(event)

    def wheelEvent(self, event) -> None:  # noqa: ANN001, N802
        steps = event.angleDelta().y() / 120 or event.angleDelta().x() / 120
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom(1.25 ** steps, event.position().x())
        else:
            self.t0 -= steps * self.width() / self.pps * 0.1
            self._clamp()
            self._sync_scroll()
            self.update()
        event.accept()

    # -- hit testing -----------------------------------------------------------------------
    def hit(self, x: float, y: float) -> tuple[str, Item | None, int]:
        """(area, item under the point, row) where area is ruler/film/wave/events/results/
        clips/none."""
        if y < RULER_H:
            return "ruler", None, 0
        if y < RULER_H + FILM_H:
            return "film", None, 0
        if y < RULER_H + FILM_H + WAVE_H:
            return "wave", None, 0
        t = self.t_of(x)
        for name, lane, top, row_h in self._lanes():
            rows = max(1, lane.rows)
            if top <= y < top + rows * row_h:
                row = int((y - top) // row_h)
                item = lane.at(t, row)
                if item is None:  # thin items: accept a couple of pixels either side
                    slack = 3 / self.pps
                    near = [i for i in lane.visible(t - slack, t + slack) if i.row == row]
                    item = near[0] if near else None
                return name, item, row
        return "none", None, 0

    def _clip_edge(self, x: float, y: float) -> tuple[str, str] | None:
        area, _, row = self.hit(x, y)
        if area != "clips":
            return None
        t = self.t_of(x)
        slack = EDGE_PX / self.pps
        for item in self.data.clips.visible(t - slack, t + slack):
            if item.row != row:
                continue
            if abs(self.x_of(item.start) - x) <= EDGE_PX:
                return str(item.ref), "start"
            if abs(self.x_of(item.end) - x) <= EDGE_PX:
                return str(item.ref), "end"
        return None

    # -- mouse -----------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:  # noqa: ANN001, N802
        if event.button() != Qt.MouseButton.LeftButton:
            return
        x, y = event.position().x(), event.position().y()
        edge = self._clip_edge(x, y)
        if edge is not None:
            clip_id, which = edge
            item = next(i for i in self.data.clips.items if i.ref == clip_id)
            self._drag = ("trim", (clip_id, which))
            self._trim_preview = (clip_id, item.start, item.end)
            self.selected_clip = clip_id
            self.clipClicked.emit(clip_id)
            return
        area, item, _ = self.hit(x, y)
        if area == "events" and item is not None:
            self.selected_event = int(item.ref)
            self.eventClicked.emit(int(item.ref))
        elif area == "results" and item is not None:
            self.selected_result = int(item.ref)
            self.resultClicked.emit(int(item.ref))
        elif area == "clips" and item is not None:
            self.selected_clip = str(item.ref)
            self.clipClicked.emit(str(item.ref))
            self.seekRequested.emit(item.start)
        elif area == "speech" and item is not None:  # a word: to where it is said
            self.seekRequested.emit(item.start)
        else:
            self._drag = ("seek", None)
            self._seek_to_x(x)
        self.update()

    def _seek_to_x(self, x: float) -> None:
        t = max(0.0, min(self.duration, self.t_of(x)))
        self.playhead = t
        self.seekRequested.emit(t)
        self.update()

    def mouseMoveEvent(self, event) -> None:  # noqa: ANN001, N802
        x, y = event.position().x(), event.position().y()
        if self._drag and self._drag[0] == "seek":
            self._seek_to_x(x)
            return
        if self._drag and self._drag[0] == "trim" and self._trim_preview:
            clip_id, which = self._drag[1]  # type: ignore[misc]
            _, start, end = self._trim_preview
            t = max(0.0, min(self.duration, self.t_of(x)))
            min_len = 0.1
            if which == "start":
                start = min(t, end - min_len)
            else:
                end = max(t, start + min_len)
            self._trim_preview = (clip_id, start, end)
            self.trimPreviewed.emit(which, start if which == "start" else end)
            self.hover_text = f"in {fmt_time(start)}  out {fmt_time(end)}"
            QToolTip.showText(QCursor.pos(), self.hover_text, self)
            self.update()
            return
        edge = self._clip_edge(x, y)
        self.setCursor(Qt.CursorShape.SizeHorCursor if edge else Qt.CursorShape.ArrowCursor)
        area, item, _ = self.hit(x, y)
        text = ""
        if item is not None:
            text = f"{fmt_time(item.start)} – {fmt_time(item.end)}\n{item.label}"
        elif area in ("ruler", "film", "wave"):
            text = fmt_time(max(0.0, self.t_of(x)))
        if text != self.hover_text:
            self.hover_text = text
            if text:
                QToolTip.showText(event.globalPosition().toPoint(), text, self)
            else:
                QToolTip.hideText()

    def mouseReleaseEvent(self, event) -> None:  # noqa: ANN001, N802
        drag, self._drag = self._drag, None
        if drag and drag[0] == "trim" and self._trim_preview:
            clip_id, start, end = self._trim_preview
            self._trim_preview = None
            self.clipTrimmed.emit(clip_id, start, end)
        self.update()

    def leaveEvent(self, event) -> None:  # noqa: ANN001, N802
        self.hover_text = ""
        super().leaveEvent(event)

    # -- painting --------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: ANN001, N802
        c = colours()
        p = QPainter(self)
        p.setFont(self._font)
        w, h = self.width(), self.height() - (SCROLL_H if self.scroll.isVisible() else 0)
        p.fillRect(0, 0, w, h, QColor(c.background))
        t_start, t_end = self.t_of(0), min(self.duration, self.t_of(w))
        video_w = max(0.0, self.x_of(self.duration))
        self._paint_filmstrip(p, w, video_w)
        self._paint_wave(p, w)
        for name, lane, top, row_h in self._lanes():
            rows = max(1, lane.rows)
            p.fillRect(QRectF(0, top, min(w, video_w), rows * row_h), QColor(c.lane))
            self._paint_lane(p, name, lane, top, row_h, t_start, t_end)
            if name == "clips":
                self._paint_pins(p, top, row_h, t_start, t_end)
            self._paint_lane_name(p, LANE_NAMES[name], top, row_h)
        self._paint_ruler(p, w)
        self._paint_shots(p)
        self._paint_marks(p, h)
        x = self.x_of(self.playhead)
        if -2 <= x <= w + 2:
            p.setPen(QPen(QColor(c.playhead), 1.5))
            p.drawLine(QPointF(x, 0), QPointF(x, h))
            p.setBrush(QColor(c.playhead))
            p.drawPolygon(QPolygonF([QPointF(x - 5, 0), QPointF(x + 5, 0),
                                     QPointF(x, 8)]))
        p.end()

    def _paint_ruler(self, p: QPainter, w: int) -> None:
        c = colours()
        p.fillRect(0, 0, w, RULER_H, QColor(c.ruler))
        min_step = 80 / self.pps
        step = next((s for s in NICE_STEPS if s >= min_step), NICE_STEPS[-1])
        sub = step / 5
        p.setPen(QColor(c.grid))
        first = math.floor(self.t_of(0) / sub) * sub
        t = first
        end = min(self.duration, self.t_of(w))
        ticks = []
        while t <= end + 1e-9:
            x = self.x_of(t)
            major = abs(t / step - round(t / step)) < 1e-6
            ticks.append((x, major, t))
            t += sub
        p.setPen(QColor(c.text))
        for x, major, t in ticks:
            p.drawLine(QPointF(x, RULER_H - (9 if major else 4)), QPointF(x, RULER_H))
            if major:
                label = fmt_time(t, millis=step < 1)
                p.drawText(QPointF(x + 3, RULER_H - 10), label)

    def _paint_filmstrip(self, p: QPainter, w: int, video_w: float) -> None:
        """Each thumbnail is drawn where its frame is, from its time to the next one's (tiled
        when that is wider than a thumbnail, cut when narrower), so the picture under any time
        is the frame at or before that time, at every zoom."""
        thumbs = self.data.thumbs
        if not thumbs:
            return
        limit = min(w, int(video_w))
        times = [t for t, _ in thumbs]
        first = max(0, bisect.bisect_right(times, self.t_of(0)) - 1)
        for i in range(first, len(thumbs)):
            t, pm = thumbs[i]
            x0 = 0.0 if i == 0 else max(0.0, self.x_of(t))
            if x0 >= limit:
                break
            x1 = min(float(limit), self.x_of(times[i + 1]) if i + 1 < len(thumbs) else limit)
            tw = max(16.0, pm.width() * FILM_H / max(1, pm.height()))
            x = x0
            while x < x1:
                part = min(tw, x1 - x)
                p.drawPixmap(QRectF(x, RULER_H, part, FILM_H), pm,
                             QRectF(0, 0, pm.width() * part / tw, pm.height()))
                x += tw

    def _paint_wave(self, p: QPainter, w: int) -> None:
        wave = self.data.wave
        if wave is None or len(wave) == 0:
            return
        c = colours()
        top, mid = RULER_H + FILM_H, RULER_H + FILM_H + WAVE_H / 2
        cols = np.arange(0, w + 1, dtype=np.float64)
        idx = ((self.t0 + cols / self.pps) / self.data.wave_step).astype(np.int64)
        valid = idx < len(wave)
        if not valid.any():
            return
        idx = idx[valid]
        idx = np.clip(idx, 0, len(wave) - 1)
        if len(idx) > 1 and idx[-1] > idx[0]:
            peaks = np.maximum.reduceat(wave, idx[:-1]) if np.all(np.diff(idx) >= 0) else \
                wave[idx[:-1]]
        else:
            peaks = wave[idx[:-1]] if len(idx) > 1 else wave[idx]
        p.setPen(QPen(QColor(c.wave), 1))
        half = (WAVE_H / 2 - 2) * 0.85  # a margin: a loud, even sound is a band, not a slab
        from PySide6.QtCore import QLineF

        lines = [QLineF(i, mid - v * half, i, mid + v * half + 0.5)
                 for i, v in enumerate(peaks.tolist())]
        p.drawLines(lines)
        p.setPen(QColor(c.grid))
        p.drawLine(0, int(top + WAVE_H), w, int(top + WAVE_H))

    def _paint_shots(self, p: QPainter) -> None:
        """Shot changes: a tick across the ruler and the filmstrip at each cut."""
        if not self.data.shots:
            return
        c = colours()
        p.setPen(QPen(QColor(c.text), 1, Qt.PenStyle.DashLine))
        t0, t1 = self.t_of(0), self.t_of(self.width())
        first = bisect.bisect_left(self.data.shots, t0)
        for t in self.data.shots[first:]:
            if t > t1:
                break
            x = self.x_of(t)
            p.drawLine(QPointF(x, RULER_H / 2), QPointF(x, RULER_H + FILM_H))

    def _paint_pins(self, p: QPainter, top: float, row_h: float, t0: float, t1: float) -> None:
        """The clips' reframing pins: a small diamond on the clip at each pinned frame; a held
        crop a diamond at each end of its span with a bar between."""
        colour = QColor(colours().text)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        for t, end, row in self.data.pins:
            if end < t0 or t > t1:
                continue
            y = top + row * row_h + row_h / 2
            if end > t:
                p.fillRect(QRectF(self.x_of(t), y - 1.5, self.x_of(end) - self.x_of(t), 3),
                           colour)
            for when in {t, end}:
                x = self.x_of(when)
                p.drawPolygon(QPolygonF([QPointF(x, y - 4), QPointF(x + 4, y),
                                         QPointF(x, y + 4), QPointF(x - 4, y)]))

    def _paint_lane_name(self, p: QPainter, text: str, top: float, row_h: float) -> None:
        """The lane's name on a small plate in the text colour, above its items, so it
        reads on any theme and over any item."""
        c = colours()
        width = QFontMetrics(self._font).horizontalAdvance(text) + 8
        plate = QColor(c.background)
        plate.setAlpha(200)
        p.fillRect(QRectF(2, top + 1, width, row_h - 2), plate)
        p.setPen(QColor(c.text))
        p.drawText(QRectF(6, top, width, row_h), Qt.AlignmentFlag.AlignVCenter, text)

    def _paint_lane(self, p: QPainter, name: str, lane: Lane, top: float, row_h: float,
                    t0: float, t1: float) -> None:
        c = colours()
        base = {"events": c.event, "speech": c.speech, "results": c.result,
                "clips": c.clip}[name]
        selected = {"events": self.selected_event, "results": self.selected_result,
                    "clips": self.selected_clip}.get(name)
        preview = self._trim_preview if name == "clips" else None
        key = (name, lane, self.t0, self.pps, self.width(), selected, preview)
        cached = self._lane_cache.get(name)
        if cached is not None and cached[0] == key:
            groups, labels, highlight = cached[1]
        else:
            groups, labels, highlight = self._layout_lane(lane, top, row_h, t0, t1, selected,
                                                          preview)
            self._lane_cache[name] = (key, (groups, labels, highlight))
        p.setPen(Qt.PenStyle.NoPen)
        for shade, rects in groups.items():
            colour = QColor(base)
            colour.setAlphaF(0.25 + 0.75 * shade / 4)
            p.setBrush(colour)
            p.drawRects(rects)
        if highlight:
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor(c.clip_selected if name == "clips" else c.event_selected), 2))
            p.drawRects(highlight)
        if labels:
            p.setPen(QColor("#ffffff"))
            fm = QFontMetrics(self._font)
            for rect, text in labels[:400]:
                inner = rect.adjusted(4, 0, -3, 0)
                p.drawText(inner, Qt.AlignmentFlag.AlignVCenter,
                           fm.elidedText(text, Qt.TextElideMode.ElideRight, int(inner.width())))

    def _layout_lane(self, lane: Lane, top: float, row_h: float, t0: float, t1: float,
                     selected: object, preview: tuple[str, float, float] | None
                     ) -> tuple[dict[int, list[QRectF]], list[tuple[QRectF, str]], list[QRectF]]:
        """Rectangles by shade, labels and highlights for the items in view (cached per view:
        repaints for the moving playhead reuse them)."""
        items = lane.visible(t0, t1)
        # Merge items that land on the same pixels (per row and shade): thousands of events at
        # full zoom-out become a few hundred rectangles.
        groups: dict[int, list[QRectF]] = {}
        last: dict[tuple[int, int], QRectF] = {}
        labels: list[tuple[QRectF, str]] = []
        highlight: list[QRectF] = []
        for item in items:
            start, end = item.start, item.end
            if preview and item.ref == preview[0]:
                start, end = preview[1], preview[2]
            x0 = self.x_of(start)
            x1 = max(x0 + 1.0, self.x_of(end))
            shade = int(round(item.weight * 4))
            key = (item.row, shade)
            prev = last.get(key)
            if item.ref == selected:
                highlight.append(QRectF(x0, top + item.row * row_h + 1, x1 - x0, row_h - 2))
            elif prev is not None and x0 <= prev.right() + 1.0 and x1 - x0 < 4:
                if x1 > prev.right():
                    prev.setRight(x1)
                continue
            rect = QRectF(x0, top + item.row * row_h + 1, x1 - x0, row_h - 2)
            groups.setdefault(shade, []).append(rect)
            last[key] = rect
            if x1 - x0 > 36:
                labels.append((rect, item.label))
        return groups, labels, highlight

    def _paint_marks(self, p: QPainter, h: int) -> None:
        mark_in, mark_out = self.marks
        if mark_in is None and mark_out is None:
            return
        c = colours()
        colour = QColor(c.marks)
        if mark_in is not None and mark_out is not None and mark_out > mark_in:
            band = QColor(colour)
            band.setAlphaF(0.25)
            p.fillRect(QRectF(self.x_of(mark_in), 0, self.x_of(mark_out) - self.x_of(mark_in),
                              RULER_H), band)
        p.setPen(QPen(colour, 1.5))
        for t in (mark_in, mark_out):
            if t is not None:
                x = self.x_of(t)
                p.drawLine(QPointF(x, 0), QPointF(x, h))
