"""The player: QMediaPlayer drawing into a QGraphicsVideoItem (which, unlike QVideoWidget, can be
grabbed offscreen), with transport controls, J/K/L shuttle, frame steps and span looping.

Seeking follows two QtMultimedia rules: from the stopped state setPosition shows no frame, so
we pause first; and the player lands on the frame at or before the target, so frame-exact seeks
go half a frame late.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QRectF,
    QSizeF,
    Qt,
    QTimer,
    QUrl,
    Signal,
    Slot,
)
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtMultimedia import QAudioOutput, QMediaDevices, QMediaPlayer, QVideoFrame
from PySide6.QtMultimediaWidgets import QGraphicsVideoItem
from PySide6.QtWidgets import (
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QSlider,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.gui import timefmt
from marlin_desk.gui.timefmt import fmt_time

SHUTTLE_RATES = [1.0, 2.0, 4.0, 8.0]


class VideoView(QGraphicsView):
    """Keeps the video item fitted to the view, letterboxed on black. `fitted` says the
    picture's place changed (items drawn over it, like the reframing crop, follow)."""

    fitted = Signal()

    def __init__(self, item: QGraphicsVideoItem, parent: QWidget | None = None) -> None:
        scene = QGraphicsScene()
        super().__init__(scene, parent)
        scene.setParent(self)  # a view does not own its scene: without this it is freed
        self._scene = scene
        self.item = item
        scene.addItem(item)
        scene.setBackgroundBrush(QBrush(QColor("black")))
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QGraphicsView.Shape.NoFrame)
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        self.setMinimumSize(320, 180)
        # Every frame repaints the whole view: the video item's bounding rect is the stored
        # picture's, so for a file with a display rotation (phones) Qt repainted only that
        # rectangle of the turned picture and left the rest of it stale.
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        item.nativeSizeChanged.connect(self._fit)

    def resizeEvent(self, event) -> None:  # noqa: ANN001, N802
        super().resizeEvent(event)
        self._fit()

    @Slot()
    def _fit(self, *_: object) -> None:
        size = self.viewport().size()
        self.item.setSize(QSizeF(size.width(), size.height()))
        self.scene().setSceneRect(QRectF(0, 0, size.width(), size.height()))
        self.fitInView(self.scene().sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        self.fitted.emit()


class PlayerWidget(QWidget):
    """Video surface plus transport. Times are seconds of video time."""

    positionChanged = Signal(float)
    durationChanged = Signal(float)
    playingChanged = Signal(bool)
    mediaError = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fps = 25.0
        self._loop: tuple[float, float] | None = None
        self._loop_once = False
        self._rate_index = 0
        self._reverse = False
        self.player = QMediaPlayer(self)
        # Sound only when the machine has an audio device: with none (a server, CI, a broken
        # PulseAudio) Qt's FFmpeg backend can wait forever on its audio sink when media closes.
        self.audio: QAudioOutput | None = None
        if QMediaDevices.audioOutputs():
            self.audio = QAudioOutput(self)
            self.player.setAudioOutput(self.audio)
        self.video_item = QGraphicsVideoItem()
        self.player.setVideoOutput(self.video_item)
        # The frame on screen, not the player's clock: after a pause the clock is a frame or
        # two behind the picture, and marks must land on the frame the editor sees.
        self._shown: float | None = None
        self.video_item.videoSink().videoFrameChanged.connect(self._on_frame)
        self.view = VideoView(self.video_item, self)
        self.view.setAccessibleName("Video")

        style = self.style()
        self.play_button = self._button(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay),
                                        "Play or pause (Space)", self.toggle_play)
        self.back_button = self._button(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekBackward),
            "One frame back (Left)", lambda: self.step(-1))
        self.fwd_button = self._button(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward),
            "One frame forward (Right)", lambda: self.step(1))
        self.time_label = QLabel("0:00.000 / 0:00.000")
        self.time_label.setAccessibleName("Current time and duration")
        self.time_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        timefmt.display.changed.connect(self._redisplay_time)
        self.rate_label = QLabel("")
        self.marks_label = QLabel("")
        self.marks_label.setAccessibleName("In, Out and duration")
        self.volume = QSlider(Qt.Orientation.Horizontal)
        self.volume.setRange(0, 100)
        self.volume.setValue(80)
        self.volume.setMaximumWidth(110)
        self.volume.setAccessibleName("Volume")
        self.volume.setToolTip("Volume")
        self.volume.valueChanged.connect(self.set_volume)
        self.set_volume(80)

        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        for w in (self.back_button, self.play_button, self.fwd_button):
            bar.addWidget(w)
        bar.addWidget(self.time_label)
        bar.addWidget(self.rate_label)
        bar.addStretch(1)
        bar.addWidget(self.marks_label)
        vol_icon = QLabel()
        vol_icon.setPixmap(style.standardIcon(QStyle.StandardPixmap.SP_MediaVolume).pixmap(16))
        bar.addWidget(vol_icon)
        bar.addWidget(self.volume)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.view, 1)
        layout.addLayout(bar)

        self._reverse_timer = QTimer(self)
        self._reverse_timer.setInterval(40)
        self._reverse_timer.timeout.connect(self._reverse_tick)
        self._pending_seek: int | None = None  # asked for before the media had loaded
        self._dropping_frames = False
        self.player.mediaStatusChanged.connect(self._on_media_status)
        self.player.positionChanged.connect(self._on_position)
        self.player.durationChanged.connect(self._on_duration)
        self.player.playbackStateChanged.connect(self._on_state)
        self.player.errorOccurred.connect(self._on_error)

    def _button(self, icon, tip: str, slot) -> QToolButton:  # noqa: ANN001
        b = QToolButton(self)
        b.setIcon(icon)
        b.setToolTip(tip)
        b.setAccessibleName(tip.split(" (")[0])
        b.clicked.connect(slot)
        b.setAutoRaise(True)
        return b

    # -- media --------------------------------------------------------------------------------
    def open(self, path: str, fps: float = 25.0) -> None:
        self.fps = fps or 25.0
        self._loop = None
        self._shown = None
        self._pending_seek = None
        self.player.setSource(QUrl.fromLocalFile(path))
        self._drop_queued_frames()
        self.player.pause()  # shows the first frame; setPosition works from here

    def close_media(self) -> None:
        self.stop_shuttle()
        self.player.stop()
        self.player.setSource(QUrl())
        self._drop_queued_frames()
        self._shown = None
        self.time_label.setText(f"{fmt_time(0.0)} / {fmt_time(0.0)}")

    def _drop_queued_frames(self) -> None:
        """Frames of the last file, decoded in the renderer's thread and still queued for this
        widget, would otherwise land after the new file opened and move its playhead."""
        self._dropping_frames = True
        try:
            QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall)
        finally:
            self._dropping_frames = False

    @property
    def position(self) -> float:
        """The time of the frame on screen (the player's clock until the first frame shows)."""
        return self._shown if self._shown is not None else self.player.position() / 1000.0

    def frame_end(self) -> float:
        """Where the frame on screen ends: an Out mark here keeps that frame in the clip."""
        end = self.position + 1.0 / self.fps
        return min(end, self.duration) if self.duration > 0 else end

    @property
    def duration(self) -> float:
        return self.player.duration() / 1000.0

    @property
    def playing(self) -> bool:
        return self.player.playbackState() == QMediaPlayer.PlaybackState.PlayingState

    def seek(self, seconds: float, exact_frame: bool = True) -> None:
        """Go to `seconds` (half a frame late, so the frame shown is the one at that time)."""
        if self.player.playbackState() == QMediaPlayer.PlaybackState.StoppedState:
            self.player.pause()
        target = max(0.0, seconds + (0.5 / self.fps if exact_frame else 0.0))
        if self.duration > 0:
            target = min(target, self.duration)
        ms = int(round(target * 1000))
        status = self.player.mediaStatus()
        if status in (QMediaPlayer.MediaStatus.LoadingMedia, QMediaPlayer.MediaStatus.NoMedia):
            self._pending_seek = ms  # a seek before the file has loaded would be dropped
        else:
            self.player.setPosition(ms)
        self._shown = max(0.0, seconds)  # until the frame itself arrives
        self._show_time(self._shown)

    # -- transport -------------------------------------------------------------------------
    @Slot()
    def toggle_play(self) -> None:
        if self.playing or self._reverse_timer.isActive():
            self.pause()
        else:
            self.play()

    def play(self) -> None:
        self.stop_shuttle()
        self.player.setPlaybackRate(1.0)
        self.player.play()

    def pause(self) -> None:
        self.stop_shuttle()
        self.player.pause()

    def stop_shuttle(self) -> None:
        self._reverse_timer.stop()
        self._rate_index = 0
        self._reverse = False
        self.rate_label.setText("")

    def step(self, frames: int) -> None:
        self.pause()
        index = int(self.position * self.fps + 1e-6)
        self.seek(max(0.0, (index + frames) / self.fps))

    def shuttle(self, key: str) -> None:
        """J: back (faster each press), K: stop, L: forward (faster each press)."""
        if key == "k":
            self.pause()
            return
        reverse = key == "j"
        if reverse == self._reverse and (self.playing or self._reverse_timer.isActive()):
            self._rate_index = min(self._rate_index + 1, len(SHUTTLE_RATES) - 1)
        else:
            self._rate_index = 0
        self._reverse = reverse
        rate = SHUTTLE_RATES[self._rate_index]
        if reverse:  # QMediaPlayer has no reverse playback: step back on a timer
            self.player.pause()
            self._reverse_timer.start()
        else:
            self._reverse_timer.stop()
            self.player.setPlaybackRate(rate)
            self.player.play()
        self.rate_label.setText(f"{'◀' if reverse else '▶'} {rate:g}x")

    @Slot()
    def _reverse_tick(self) -> None:
        rate = SHUTTLE_RATES[self._rate_index]
        t = self.position - 0.04 * rate
        if t <= 0:
            self.stop_shuttle()
            t = 0.0
        self.seek(t, exact_frame=False)

    def home(self) -> None:
        self.seek(0.0)

    def end(self) -> None:
        self.pause()
        self.seek(max(0.0, self.duration - 1.0 / self.fps))

    def set_loop(self, start: float, end: float) -> None:
        """Preview a span: seek to its start and play it round and round."""
        self.play_range(start, end, loop=True)

    def play_range(self, start: float, end: float, loop: bool = False) -> None:
        """Play from `start` to `end`: round and round, or once (it stops on the last frame)."""
        self._loop = (start, end)
        self._loop_once = not loop
        self.seek(start)
        self.play()

    def clear_loop(self) -> None:
        self._loop = None

    def show_marks(self, mark_in: float | None, mark_out: float | None) -> None:
        """The In/Out readout beside the transport: both marks and the length between them."""
        parts = [f"In {fmt_time(mark_in)}" if mark_in is not None else "",
                 f"Out {fmt_time(mark_out)}" if mark_out is not None else ""]
        if mark_in is not None and mark_out is not None and mark_out > mark_in:
            parts.append(f"Length {fmt_time(mark_out - mark_in)}")
        self.marks_label.setText("  ·  ".join(p for p in parts if p))

    @Slot(int)
    def set_volume(self, value: int) -> None:
        if self.audio is not None:
            self.audio.setVolume(max(0, min(100, value)) / 100.0)

    # -- player signals ----------------------------------------------------------------------
    @Slot("qint64")
    def _on_position(self, ms: int) -> None:
        """The player's clock: only for looping; every time shown comes from the frames."""
        t = ms / 1000.0
        if self._loop and self.playing and t >= self._loop[1]:
            start, end = self._loop
            if self._loop_once:
                self._loop = None
                self.pause()
                self.seek(max(start, end - 1.0 / self.fps))  # the last frame of the range
            else:
                self.player.setPosition(int(start * 1000))

    @Slot(QMediaPlayer.MediaStatus)
    def _on_media_status(self, status: QMediaPlayer.MediaStatus) -> None:
        loaded = (QMediaPlayer.MediaStatus.LoadedMedia, QMediaPlayer.MediaStatus.BufferedMedia)
        if status in loaded and self._pending_seek is not None:
            ms, self._pending_seek = self._pending_seek, None
            self.player.setPosition(ms)

    @Slot(QVideoFrame)
    def _on_frame(self, frame: QVideoFrame) -> None:
        start = frame.startTime()
        if self._dropping_frames or start < 0 or not frame.isValid():
            return
        if self._pending_seek is not None:
            return  # the first frame of the file, before the seek asked for lands
        self._shown = start / 1_000_000
        self._show_time(self._shown)

    def _show_time(self, t: float) -> None:
        self.time_label.setText(f"{fmt_time(t)} / {fmt_time(self.duration)}")
        self.positionChanged.emit(t)

    @Slot()
    def _redisplay_time(self) -> None:
        """The time display (seconds or timecode) changed."""
        self.time_label.setText(f"{fmt_time(self.position)} / {fmt_time(self.duration)}")

    @Slot("qint64")
    def _on_duration(self, ms: int) -> None:
        self.time_label.setText(f"{fmt_time(self.position)} / {fmt_time(ms / 1000.0)}")
        self.durationChanged.emit(ms / 1000.0)

    @Slot(QMediaPlayer.PlaybackState)
    def _on_state(self, state: QMediaPlayer.PlaybackState) -> None:
        playing = state == QMediaPlayer.PlaybackState.PlayingState
        icon = QStyle.StandardPixmap.SP_MediaPause if playing else \
            QStyle.StandardPixmap.SP_MediaPlay
        self.play_button.setIcon(self.style().standardIcon(icon))
        self.playingChanged.emit(playing)

    @Slot(QMediaPlayer.Error, str)
    def _on_error(self, error: QMediaPlayer.Error, message: str) -> None:
        if error != QMediaPlayer.Error.NoError:
            self.mediaError.emit(message or "the player cannot play this file")
