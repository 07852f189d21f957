"""The menus and their shortcuts, as data. The window builds its menu bar from MENUS, and the
shortcut sheet (F1) lists the same table, so the two never disagree.

Each action names its handler as a path from the window ("edits.delete_selected" is
window.edits.delete_selected); a few entries are filled by the window itself (marked "@").
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QKeySequence

Key = str | QKeySequence.StandardKey | None


@dataclass(frozen=True)
class ActionSpec:
    text: str
    handler: str
    shortcut: Key = None
    tip: str = ""
    args: tuple[object, ...] = ()


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
    )),
    ("&View", (
        ActionSpec("Zoom &In", "timeline.zoom", "Ctrl+=", args=(1.5,)),
        ActionSpec("Zoom &Out", "timeline.zoom", "Ctrl+-", args=(1 / 1.5,)),
        ActionSpec("&Fit Timeline", "timeline.fit", "Ctrl+0"),
        ActionSpec("&Find…", "focus_search", SK.Find),
        SEPARATOR,
        ActionSpec("Panels", "@docks"),
        SEPARATOR,
        ActionSpec("&Dark Theme", "dialogs.set_theme", args=("dark",)),
        ActionSpec("&Light Theme", "dialogs.set_theme", args=("light",)),
    )),
    ("&Analysis", (
        ActionSpec("&Analyse Video", "model_jobs.analyse", "Ctrl+R"),
        ActionSpec("Re-analyse (ignore cache)", "model_jobs.reanalyse"),
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
