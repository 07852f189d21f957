"""The menus and their shortcuts, as data. The window builds its menu bar from MENUS, and the
shortcut sheet (F1) lists the same table, so the two never disagree.

Each action names its handler as a path from the window ("edits.delete_selected" is
window.edits.delete_selected); a few entries are filled by the window itself (marked "@").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu

Key = str | QKeySequence.StandardKey | None


@dataclass(frozen=True)
class ActionSpec:
    text: str
    handler: str
    shortcut: Key = None
    tip: str = ""
    args: tuple[object, ...] = ()
    checkable: bool = False  # a toggle: the handler gets the new state
    checked: bool = False  # a toggle's state at start (its handler's default must agree)
    setting: str = ""  # a toggle kept in the preferences under this key (its start state)


SEPARATOR = None
SK = QKeySequence.StandardKey

MENUS: tuple[tuple[str, tuple[ActionSpec | None, ...]], ...] = (
    ("&File", (
        ActionSpec("&Open Video…", "choose_video", SK.Open),
        ActionSpec("Open &Recent", "@recent"),
        ActionSpec("Open &Project…", "choose_project", "Ctrl+Shift+O"),
        ActionSpec("&Save", "project.save", SK.Save,
                   "save the clips and edits of this video (and the open project file)"),
        ActionSpec("Save Project &As…", "project.save_as", "Ctrl+Shift+S"),
        SEPARATOR,
        ActionSpec("&Hand Off to an NLE…", "exports.request_handoff", "Ctrl+Shift+H",
                   "the clip bin as a timeline for Premiere, Resolve or Final Cut"),
        SEPARATOR,
        ActionSpec("&Quit", "close", SK.Quit),
    )),
    ("&Edit", (
        ActionSpec("&Undo", "@undo", SK.Undo),
        ActionSpec("&Redo", "@redo", SK.Redo),
        SEPARATOR,
        ActionSpec("Mark &In", "mark_in", "I", "at the frame on screen"),
        ActionSpec("Mark &Out", "mark_out", "O", "after the frame on screen (it stays in)"),
        ActionSpec("&Clip from In/Out", "add_clip_from_marks", "Ctrl+I"),
        ActionSpec("Clip from Selected &Event", "add_clip_from_event", "Ctrl+E"),
        ActionSpec("Clip from Selected &Search Results", "add_clips_from_selected_results",
                   "Ctrl+Shift+C"),
        ActionSpec("Delete Selected Clips", "delete_selected_clips", "Del"),
        ActionSpec("Add &Event (I/O marks or playhead)", "add_event", "Ctrl+Shift+E"),
        ActionSpec("Delete Selected E&vents", "delete_selected_events", "Shift+Del"),
        ActionSpec("S&nap Clips to Shot Changes", "edits.set_snap", "Ctrl+Shift+N",
                   "new clips and trims move their edges to a shot change within a second",
                   checkable=True),
        ActionSpec("Snap Clips to Spoken &Words", "edits.set_word_snap", "Ctrl+Shift+W",
                   "new clips and trims start on a word and end after one (within a second)",
                   checkable=True),
        ActionSpec("Snap Clips to Spoken Sen&tences", "edits.set_sentence_snap", None,
                   "edges on whole sentences (within 3 s); before words when both are on",
                   checkable=True),
        SEPARATOR,
        ActionSpec("Reframe: &Follow the Subject", "reframe.set_mode", args=("auto",),
                   tip="the selected clips' 9:16 or square crop follows the faces"),
        ActionSpec("Reframe: Centre Crop", "reframe.set_mode", args=("centre",)),
        ActionSpec("Reframe: Off", "reframe.set_mode", args=("off",),
                   tip="no reframing: the preset's fill as it is"),
        ActionSpec("Reframe: Preset's Default", "reframe.set_mode", args=(None,)),
        ActionSpec("Hold the Crop Through This Shot", "reframe.hold_shot", None,
                   "keeps the crop where it is now from the shot's first frame to its last"),
        ActionSpec("Remove Crop Pin at This Frame", "reframe.remove_pin_here",
                   tip="the pin at this frame, or the held crop this frame is in"),
        ActionSpec("Clear Crop Pins", "reframe.clear_pins",
                   tip="the crop follows the subject again, without the pins dragged"),
        SEPARATOR,
        ActionSpec("&Preferences…", "dialogs.show_preferences", SK.Preferences),
    )),
    ("&Playback", (
        ActionSpec("Play/Pause", "player.toggle_play", "Space"),
        ActionSpec("Shuttle Back (J)", "player.shuttle", "J", args=("j",)),
        ActionSpec("Stop (K)", "player.shuttle", "K", args=("k",)),
        ActionSpec("Shuttle Forward (L)", "player.shuttle", "L", args=("l",)),
        ActionSpec("Frame Back", "player.step", "Left", args=(-1,)),
        ActionSpec("Frame Forward", "player.step", "Right", args=(1,)),
        ActionSpec("Go to Start", "player.home", "Home"),
        ActionSpec("Go to End", "player.end", "End"),
        SEPARATOR,
        ActionSpec("Previous Edit Point", "navigation.previous_edit", "Up",
                   "the previous event or clip edge, or mark"),
        ActionSpec("Next Edit Point", "navigation.next_edit", "Down"),
        ActionSpec("Back One Second", "navigation.jump", "Shift+Left", args=(-1.0,)),
        ActionSpec("Forward One Second", "navigation.jump", "Shift+Right", args=(1.0,)),
        ActionSpec("Play In to Out", "navigation.play_in_to_out", "Ctrl+Shift+Space"),
        ActionSpec("Loop In to Out On/Off", "navigation.toggle_loop", "Ctrl+L"),
    )),
    ("&View", (
        ActionSpec("Zoom &In", "timeline.zoom", "Ctrl+=", args=(1.5,)),
        ActionSpec("Zoom &Out", "timeline.zoom", "Ctrl+-", args=(1 / 1.5,)),
        ActionSpec("&Fit Timeline", "timeline.fit", "Ctrl+0"),
        ActionSpec("Show &Reframe Crop", "reframe.set_shown", "Ctrl+Shift+R",
                   "the selected clip's 9:16 or square crop over the picture; drag it to pin",
                   checkable=True, checked=True, setting="show_reframe_crop"),
        ActionSpec("&Find…", "focus_search", SK.Find),
        ActionSpec("Preview &Captions", "speech.set_preview", "Ctrl+Shift+P",
                   "the burned-in captions of what is said, over the picture", checkable=True,
                   setting="preview_captions"),
        SEPARATOR,
        ActionSpec("Panels", "@docks"),
        SEPARATOR,
        ActionSpec("&Dark Theme", "dialogs.set_theme", args=("dark",)),
        ActionSpec("&Light Theme", "dialogs.set_theme", args=("light",)),
    )),
    ("&Analysis", (
        ActionSpec("&Analyse Video", "model_jobs.analyse", "Ctrl+R"),
        ActionSpec("Re-analyse (ignore cache)", "model_jobs.reanalyse"),
        ActionSpec("&Transcribe Speech", "speech.transcribe", "Ctrl+T",
                   "what is said, word by word (Whisper, on this machine)"),
        ActionSpec("Transcribe With Each &Library Analysis", "speech.set_with_queue", None,
                   "the library's queue transcribes each video after analysing it",
                   checkable=True),
        ActionSpec("&Cancel Running Jobs", "cancel_jobs", "Esc"),
    )),
    ("&Model", (
        ActionSpec("&Load Model", "model_jobs.load_model"),
        ActionSpec("&Download a Model…", "dialogs.show_model_download"),
    )),
    ("&Help", (
        ActionSpec("&Keyboard Shortcuts", "dialogs.show_shortcuts", "F1"),
        ActionSpec("&About Marlin Desk", "dialogs.show_about"),
    )),
)


def shortcut_text(key: Key) -> str:
    if key is None:
        return ""
    sequence = QKeySequence(key)
    return sequence.toString(QKeySequence.SequenceFormat.NativeText)


def shortcut_sheet() -> list[tuple[str, str]]:
    """(action, keys) for every action with a shortcut, as the menus name them."""
    rows = []
    for _menu, specs in MENUS:
        for spec in specs:
            if spec is not None and spec.shortcut is not None:
                keys = shortcut_text(spec.shortcut)
                if keys:
                    rows.append((spec.text.replace("&", ""), keys))
    return rows


def install_menus(window: QMainWindow, stack: QUndoStack,
                  docks: Sequence[QDockWidget]) -> QMenu:
    """Build the window's menu bar from MENUS; returns the (empty) Open Recent menu."""
    recent = QMenu()
    for title, specs in MENUS:
        menu = window.menuBar().addMenu(title)
        for spec in specs:
            if spec is None:
                menu.addSeparator()
            elif spec.handler == "@recent":
                recent = menu.addMenu(spec.text)
            elif spec.handler in ("@undo", "@redo"):
                make = stack.createUndoAction if spec.handler == "@undo" \
                    else stack.createRedoAction
                action = make(window, spec.text)
                action.setShortcut(QKeySequence(spec.shortcut))
                menu.addAction(action)
                window.addAction(action)
            elif spec.handler == "@docks":
                for dock in docks:
                    menu.addAction(dock.toggleViewAction())
            else:
                _add_action(window, menu, spec)
    return recent


def _resolve(window: QMainWindow, path: str) -> Callable[..., Any]:
    target: Any = window
    for part in path.split("."):
        target = getattr(target, part)
    return target  # type: ignore[no-any-return]


def _add_action(window: QMainWindow, menu: QMenu, spec: ActionSpec) -> QAction:
    action = QAction(spec.text, window)
    if spec.shortcut is not None:
        action.setShortcut(QKeySequence(spec.shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    if spec.tip:
        action.setStatusTip(spec.tip)
    handler, args = _resolve(window, spec.handler), spec.args
    if spec.checkable:
        action.setCheckable(True)
        action.setChecked(spec.checked)
        action.toggled.connect(handler)
        if spec.setting:  # last session's state, and every change kept for the next
            settings = window.settings  # type: ignore[attr-defined]
            action.setChecked(bool(settings.get(spec.setting)))
            action.toggled.connect(lambda on, key=spec.setting: settings.set(key, bool(on)))
    else:
        action.triggered.connect(lambda _=False, h=handler, a=args: h(*a))
    menu.addAction(action)
    window.addAction(action)
    return action
