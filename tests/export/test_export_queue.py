"""The export queue: progress per clip and overall, cancel one or all, checks before writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from marlin_desk.core.errors import BadInput, MarlinError
from marlin_desk.media import export_queue
from marlin_desk.media.clip_export import ClipSpec, ExportOptions
from marlin_desk.media.export_queue import ExportQueue, export_clips

from .conftest import Videos

CLIPS = [ClipSpec(0.0, 0.5, "first"), ClipSpec(1.0, 2.0, "second"), ClipSpec(3.0, 3.5, "third")]


def test_batch_progress_and_results(videos: Videos, out_dir: Path) -> None:
    seen: list[tuple[int, float, float]] = []
    results = export_clips(videos.main, CLIPS, ExportOptions(out_dir),
                           on_progress=lambda *a: seen.append(a))
    assert [r.status for r in results] == ["done"] * 3
    assert [r.index for r in results] == [1, 2, 3]
    assert [r.path.name for r in results] == [
        "main_01_00m00.000s-00m00.500s_first.mp4", "main_02_00m01.000s-00m02.000s_second.mp4",
        "main_03_00m03.000s-00m03.500s_third.mp4"]
    overall = [o for _, _, o in seen]
    assert overall == sorted(overall) and overall[-1] == pytest.approx(1.0)
    for i in range(3):
        mine = [f for j, f, _ in seen if j == i]
        assert mine[0] == 0.0 and mine[-1] == 1.0 and mine == sorted(mine)
    # clip 2 is half the total duration: when it ends, overall is 0.75
    assert any(j == 1 and f == 1.0 and o == pytest.approx(0.75) for j, f, o in seen)


def test_cancel_one_clip(videos: Videos, out_dir: Path) -> None:
    q = ExportQueue(videos.main, CLIPS, ExportOptions(out_dir))
    q.cancel(1)
    assert [r.status for r in q.run()] == ["done", "cancelled", "done"]
    assert len(list(out_dir.iterdir())) == 2


def test_cancel_all_while_running(videos: Videos, out_dir: Path) -> None:
    clips = [ClipSpec(0, 8, preset="reels", fill="blur"), *CLIPS]
    q = ExportQueue(videos.main, clips, ExportOptions(out_dir),
                    on_progress=lambda i, f, o: q.cancel() if f > 0 else None)
    results = q.run()
    assert {r.status for r in results} == {"cancelled"} and q.cancelled
    assert list(out_dir.iterdir()) == []


def test_a_failing_clip_does_not_stop_the_queue(videos: Videos, out_dir: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    real = export_queue.export_clip

    def flaky(video, spec, options, **kw):
        if kw["index"] == 2:
            raise MarlinError("FFmpeg failed: simulated")
        return real(video, spec, options, **kw)

    monkeypatch.setattr(export_queue, "export_clip", flaky)
    results = export_clips(videos.main, CLIPS, ExportOptions(out_dir))
    assert [r.status for r in results] == ["done", "failed", "done"]
    assert results[1].error == "FFmpeg failed: simulated"


def test_everything_is_checked_before_anything_is_written(videos: Videos, out_dir: Path) -> None:
    with pytest.raises(BadInput, match="after the end"):
        export_clips(videos.main, [CLIPS[0], ClipSpec(20, 25)], ExportOptions(out_dir))
    with pytest.raises(BadInput, match="events"):
        export_clips(videos.main, [ClipSpec(0, 1, subtitles="srt")], ExportOptions(out_dir))
    assert list(out_dir.iterdir()) == []


def test_free_space_is_checked_first(videos: Videos, out_dir: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_queue.shutil, "disk_usage",
                        lambda p: type("U", (), {"free": 10_000})())
    with pytest.raises(MarlinError, match="not enough free space"):
        export_clips(videos.main, CLIPS, ExportOptions(out_dir))
    assert list(out_dir.iterdir()) == []
