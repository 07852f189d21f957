"""The crop path from detections: dead zone, speed limit, cuts, groups, no subject, pins."""

from __future__ import annotations

import pytest

from marlin_desk.core.reframe import Pin, ReframeSettings, sorted_pins
from marlin_desk.media.face_detector import FaceBox
from marlin_desk.media.reframe_detect import Sample, SpanDetections
from marlin_desk.media.reframe_path import CropPath, compute_path, crop_size

W, H = 1920, 1080
FPS = 5.0


def _face(cx: float, w: float = 0.06) -> FaceBox:
    return FaceBox(cx - w / 2, 0.3, w, w * 1.6, 0.9)


def _det(centres: list[float | None] | list[list[float]], cuts: tuple[float, ...] = (),
         start: float = 0.0) -> SpanDetections:
    samples = []
    for i, c in enumerate(centres):
        faces: tuple[FaceBox, ...]
        if c is None:
            faces = ()
        elif isinstance(c, list):
            faces = tuple(_face(x) for x in c)
        else:
            faces = (_face(c),)
        samples.append(Sample(start + i / FPS, faces))
    end = start + len(centres) / FPS
    return SpanDetections(start, end, W, H, tuple(samples), cuts, "test")


def _centres(path: CropPath, step: float = 0.04) -> list[float]:
    n = int((path.end - path.start) / step)
    return [path.centre_at(path.start + i * step) for i in range(n)]


def test_crop_size_matches_the_presets_centre_crop() -> None:
    assert crop_size(1920, 1080, 1080, 1920) == (606, 1080)  # trunc(607.5 / 2) * 2
    assert crop_size(1920, 1080, 1080, 1080) == (1080, 1080)
    assert crop_size(1080, 1920, 1920, 1080) == (1080, 606)


def test_still_inside_the_dead_zone() -> None:
    settings = ReframeSettings()
    crop_frac = crop_size(W, H, 1080, 1920)[0] / W
    wobble = settings.dead_zone * crop_frac * 0.45  # the whole swing stays in the dead zone
    centres: list[float | None] = [0.3 + (wobble if i % 2 else -wobble) * (i % 3 == 0)
                                   for i in range(40)]
    path = compute_path(_det(centres), 1080, 1920, settings)
    xs = {path.crop_at(path.start + i * 0.04).x for i in range(200)}
    assert len(xs) == 1


def test_pans_no_faster_than_the_speed_limit_and_catches_up() -> None:
    settings = ReframeSettings(max_speed=0.3)
    centres: list[float | None] = [0.25] * 10 + [0.75] * 30  # the subject jumps across
    path = compute_path(_det(centres), 1080, 1920, settings)
    values = _centres(path)
    steps = [abs(b - a) / 0.04 for a, b in zip(values, values[1:], strict=False)]
    assert max(steps) <= 0.3 + 1e-6
    assert path.centre_at(path.end) == pytest.approx(0.75, abs=0.01)
    assert path.centre_at(1.0) < 0.3  # still where it was before the subject moved


def test_jumps_at_a_cut_and_never_pans_across_it() -> None:
    centres: list[float | None] = [0.2] * 10 + [0.8] * 10
    path = compute_path(_det(centres, cuts=(2.0,)), 1080, 1920)
    assert len(path.shots) == 2
    assert path.centre_at(1.99) == pytest.approx(0.2, abs=0.01)
    assert path.centre_at(2.0) == pytest.approx(0.8, abs=0.01)
    before = [path.centre_at(t / 100) for t in range(0, 199)]
    assert max(before) - min(before) < 1e-9


def test_no_face_gives_the_centre() -> None:
    path = compute_path(_det([None] * 15), 1080, 1920)
    assert not path.shots[0].subject
    rect = path.crop_at(1.0)
    assert rect.x == (W - rect.w) // 2 // 2 * 2
    assert path.summary()["shots_with_subject"] == 0


def test_samples_without_a_face_hold_the_last_position() -> None:
    path = compute_path(_det([0.3] * 5 + [None] * 10 + [0.3] * 5), 1080, 1920)
    assert {path.crop_at(t / 10).x for t in range(40)} == {path.crop_at(0).x}


def test_faces_that_fit_are_kept_together_else_the_largest() -> None:
    together = compute_path(_det([[0.42, 0.55]] * 10), 1080, 1920)
    assert together.centre_at(1.0) == pytest.approx((0.42 - 0.03 + 0.55 + 0.03) / 2, abs=0.01)
    apart = SpanDetections(0, 2, W, H, tuple(
        Sample(i / FPS, (FaceBox(0.1, 0.3, 0.05, 0.08, 0.9), FaceBox(0.75, 0.3, 0.1, 0.16, 0.9)))
        for i in range(10)), (), "test")
    assert compute_path(apart, 1080, 1920).centre_at(1.0) == pytest.approx(0.8, abs=0.01)


def test_a_single_false_face_is_ignored() -> None:
    centres: list[float | None] = [0.3] * 8 + [0.9] + [0.3] * 8
    path = compute_path(_det(centres), 1080, 1920)
    assert {path.crop_at(t / 10).x for t in range(34)} == {path.crop_at(0).x}


def test_pins_are_passed_exactly_and_the_path_returns_at_the_speed_limit() -> None:
    settings = ReframeSettings(max_speed=0.25)
    det = _det([0.3] * 50)  # 10 s, subject still at 0.3
    pins = [Pin(5.0, x=0.6)]
    path = compute_path(det, 1080, 1920, settings, pins)
    assert path.centre_at(5.0) == pytest.approx(0.6, abs=1e-6)
    assert path.centre_at(0.5) == pytest.approx(0.3, abs=1e-6)  # far from the pin: automatic
    assert path.centre_at(9.5) == pytest.approx(0.3, abs=1e-6)
    values = _centres(path)
    assert max(abs(b - a) / 0.04 for a, b in zip(values, values[1:], strict=False)) <= 0.25 + 1e-6
    two = compute_path(det, 1080, 1920, settings, [Pin(4.0, x=0.6), Pin(6.0, x=0.6)])
    assert all(two.centre_at(4 + i / 10) == pytest.approx(0.6, abs=1e-6) for i in range(21))
    assert two.pins == (Pin(4.0, x=0.6), Pin(6.0, x=0.6))


def test_a_held_pin_keeps_the_crop_still_over_its_span_and_in_the_project_file() -> None:
    settings = ReframeSettings(max_speed=0.25)
    walk = [0.2 + 0.6 * i / 49 for i in range(50)]  # 10 s, the subject crossing the frame
    det = _det(walk)
    follows = compute_path(det, 1080, 1920, settings)
    assert follows.centre_at(7.0) - follows.centre_at(3.0) > 0.2
    held = Pin(3.0, x=0.4, until=7.0)
    path = compute_path(det, 1080, 1920, settings, [held])
    assert all(path.centre_at(3 + i / 10) == pytest.approx(0.4, abs=1e-9) for i in range(41))
    assert len(path.shot_at(5.0).times) < len(follows.shot_at(5.0).times)  # no points inside
    values = _centres(path)  # into and out of the hold no faster than the limit, walk or not
    assert max(abs(b - a) / 0.04 for a, b in zip(values, values[1:], strict=False)) <= 0.25 + 1e-6
    assert path.centre_at(0.2) == pytest.approx(follows.centre_at(0.2), abs=1e-6)
    assert path.centre_at(9.8) == pytest.approx(follows.centre_at(9.8), abs=1e-6)  # caught up
    # pins inside the span give way to it; the file keeps the span
    assert sorted_pins([Pin(5.0, x=0.9), held, Pin(8.0, x=0.9)]) == (held, Pin(8.0, x=0.9))
    assert Pin.from_json(held.to_json()) == held and "until" not in Pin(1.0).to_json()
    with pytest.raises(ValueError, match="end after it starts"):
        Pin(3.0, until=3.0)
    back = CropPath.from_json(path.to_json())
    assert back.pins == (held,) and back.centre_at(5.0) == pytest.approx(0.4, abs=1e-6)


def test_pin_at_turns_a_dragged_rectangle_into_a_pin_that_puts_it_there() -> None:
    path = compute_path(_det([0.3] * 20), 1080, 1920)
    pin = path.pin_at(2.0, 1000, 0)
    again = compute_path(_det([0.3] * 20), 1080, 1920, pins=[pin])
    assert abs(again.crop_at(2.0).x - 1000) <= 2


def test_portrait_source_moves_the_crop_vertically() -> None:
    samples = tuple(Sample(i / FPS, (FaceBox(0.4, 0.1, 0.2, 0.1, 0.9),)) for i in range(10))
    det = SpanDetections(0, 2, 1080, 1920, samples, (), "test")
    path = compute_path(det, 1920, 1080)
    assert path.axis == "y"
    rect = path.crop_at(1.0)
    assert rect.x == 0 and rect.w == 1080 and rect.h == 606
    assert rect.y == 0  # the face at the top: the crop goes as high as it can


def test_json_round_trip() -> None:
    path = compute_path(_det([0.2] * 10 + [0.8] * 10, cuts=(2.0,)), 1080, 1920,
                        pins=[Pin(3.0, x=0.7)])
    back = CropPath.from_json(path.to_json())
    assert back.to_json() == path.to_json()
    assert [back.crop_at(t / 10) for t in range(40)] == [path.crop_at(t / 10) for t in range(40)]
    det = _det([0.2, None, [0.3, 0.5]])
    assert SpanDetections.from_json(det.to_json()) == det


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="dead zone"):
        ReframeSettings(dead_zone=0.7)
    with pytest.raises(ValueError, match="pin position"):
        Pin(1.0, x=1.5)
