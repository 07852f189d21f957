#!/usr/bin/env python3
"""Smoke test of the frozen app: run the built bundle as an editor would, on nothing but itself.

    python packaging/smoke_test.py [--bundle packaging/dist/marlin-desk] [--out DIR]

Each command runs with an empty HOME (no cache, no settings, no downloaded model), offline
(HF_HUB_OFFLINE=1; with no network at all where `unshare --net` is allowed, else through a proxy
that refuses every connection), with PATH pointing at an empty folder (so no system `ffmpeg`:
exports must use the bundled binary) and no PYTHONPATH, LD_LIBRARY_PATH, DISPLAY or
QT_QPA_PLATFORM (the frozen app must choose offscreen by itself for `selftest`).

Checks:
1. `marlin-desk --version` prints the version;
2. `marlin-desk probe VIDEO --json` gives the expected keys and sane values;
3. `marlin-desk demo --json` analyses and searches the bundled demo video with the bundled tiny
   model (works without the GUI);
4. `marlin-desk export VIDEO --clip 1-3 --json` writes a clip with the bundled FFmpeg, and the
   frozen app probes that clip;
5. `marlin-desk export FACES --clip 0-3 --preset reels --json` reframes a clip of the astronaut
   photograph in two shots (made here with marlin_desk.dev.reframe_videos, which needs
   scikit-image in the environment running this script): the bundled face detector found her
   in both shots and the clip is 1080x1920;
6. `marlin-desk handoff VIDEO --clip 1-3 --to T --json` for premiere, edl and otio (written
   by OpenTimelineIO and its adapters: they are found inside the bundle) and fcpx;
7. `marlin-desk library add DEMO`, `analyze DEMO` (the bundled model, through the cache) and
   `library search "the blue screen" --json`: SQLite's FTS5 inside the frozen Python finds the
   blue segment (8-13 s) first;
8. `marlin-desk selftest --screenshot PNG --json` opens the real window offscreen, loads the
   model, analyses, searches and saves a screenshot: exit 0, `ok: true` in the JSON, a PNG that
   is neither empty nor blank;
7. speech, offline: `marlin-desk models verify Systran/faster-whisper-tiny.en` re-hashes the
   bundled Whisper tiny.en against the catalogue's sha256, and `marlin-desk transcribe VIDEO
   --json` transcribes a clip whose sound espeak-ng speaks (muxed with the bundle's own FFmpeg)
   on the CPU with the bundled model (CTranslate2, its native libraries and the VAD model come
   from the bundle): the spoken words are in the transcript. Without espeak-ng on the machine
   that runs this script, a video without speech is transcribed instead (an empty transcript
   with its note), which still loads everything but checks no words;
and in every command's output and in the app's log file: no "No module named", no "Traceback".
Exit code 0 when everything passed, 1 otherwise. Outputs and logs are kept in --out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BAD_WORDS = ("No module named", "Traceback")
# Qt says these when QtMultimedia's FFmpeg backend plugin cannot load (a library left out of
# the bundle): the app still starts, but the player shows nothing.
QT_MEDIA_FAILURES = ("No QtMultimedia backends found", "Failed to initialize QMediaPlayer")
# resources/demo/demo.mp4 (training/demo_video.py: DEMO_SEGMENTS), in time order
DEMO_COLOURS = ("red", "blue", "green")


class Smoke:
    def __init__(self, bundle: Path, out: Path, timeout: float) -> None:
        exe = bundle / ("marlin-desk.exe" if os.name == "nt" else "marlin-desk")
        if not exe.is_file():
            sys.exit(f"no frozen app at {exe}: build it with `python packaging/build.py`")
        self.exe, self.bundle, self.out, self.timeout = exe, bundle, out, timeout
        self.failures: list[str] = []
        self.home = Path(tempfile.mkdtemp(prefix="marlin-smoke-home-"))
        empty_bin = Path(tempfile.mkdtemp(prefix="marlin-smoke-path-"))
        keep = {"LANG", "LC_ALL", "TZ", "SYSTEMROOT", "SystemRoot", "WINDIR", "TEMP", "TMP",
                "TMPDIR", "COMSPEC"}
        self.env = {k: v for k, v in os.environ.items() if k in keep}
        self.env.update({
            "HOME": str(self.home), "USERPROFILE": str(self.home),
            "APPDATA": str(self.home / "AppData" / "Roaming"),
            "LOCALAPPDATA": str(self.home / "AppData" / "Local"),
            "PATH": str(empty_bin), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1", "PYTHONUNBUFFERED": "1",
        })
        self.prefix: list[str] = []
        if sys.platform.startswith("linux") and shutil.which("unshare") and subprocess.run(
                ["unshare", "--net", "true"], capture_output=True, check=False).returncode == 0:
            self.prefix = [shutil.which("unshare") or "unshare", "--net"]
            self.network = "none (unshare --net)"
        else:
            dead = "http://127.0.0.1:9"
            self.env.update({"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "http_proxy": dead,
                             "https_proxy": dead, "NO_PROXY": "", "no_proxy": ""})
            self.network = "refused (proxy 127.0.0.1:9)"
        self.out.mkdir(parents=True, exist_ok=True)

    # -- helpers ---------------------------------------------------------------------------
    def check(self, ok: bool, what: str) -> bool:
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            self.failures.append(what)
        return ok

    def run(self, name: str, *args: str, timeout: float | None = None) -> tuple[int, str, str]:
        cmd = [*self.prefix, str(self.exe), *args]
        print(f"\n== {name}: marlin-desk {' '.join(args)}", flush=True)
        t = time.monotonic()
        try:
            proc = subprocess.run(cmd, env=self.env, capture_output=True, text=True,
                                  encoding="utf-8", errors="replace", cwd=self.home,
                                  timeout=timeout or self.timeout, check=False)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc = -1
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (
                exc.stdout or "")
            err = (exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (
                exc.stderr or "")) + f"\n(timed out after {timeout or self.timeout:.0f} s)"
        secs = time.monotonic() - t
        (self.out / f"{name}.stdout.txt").write_text(out, encoding="utf-8")
        (self.out / f"{name}.stderr.txt").write_text(err, encoding="utf-8")
        print(f"  exit {rc} in {secs:.1f} s", flush=True)
        self.check(rc == 0, f"{name}: exit code 0 (got {rc})")
        for word in BAD_WORDS:
            for stream, text in (("stdout", out), ("stderr", err)):
                if word in text:
                    line = next(ln for ln in text.splitlines() if word in ln)
                    self.check(False, f"{name}: {word!r} in {stream}: {line.strip()[:200]}")
        if rc != 0:
            print("  --- stderr (tail) ---\n  " + "\n  ".join(err.splitlines()[-25:]))
        return rc, out, err

    def json_of(self, name: str, out: str) -> dict:
        try:
            doc = json.loads(out)
        except json.JSONDecodeError as exc:
            self.check(False, f"{name}: stdout is one JSON document ({exc})")
            return {}
        self.check(isinstance(doc, dict), f"{name}: JSON document is an object")
        return doc if isinstance(doc, dict) else {}

    # -- the checks ------------------------------------------------------------------------
    def version(self) -> None:
        rc, out, err = self.run("version", "--version", timeout=120)
        self.check("marlin-desk " in (out + err), "version: prints 'marlin-desk X.Y.Z'")

    def probe(self, video: Path) -> None:
        rc, out, _ = self.run("probe", "probe", str(video), "--json", timeout=120)
        doc = self.json_of("probe", out) if rc == 0 else {}
        for key in ("duration", "width", "height", "fps", "rotation", "has_audio",
                    "video_codec"):
            self.check(key in doc, f"probe: key {key!r}")
        if doc:
            self.check(float(doc.get("duration") or 0) > 0 and int(doc.get("width") or 0) > 0,
                       "probe: duration and width > 0")

    def demo(self) -> None:
        rc, out, _ = self.run("demo", "demo", "--json")
        doc = self.json_of("demo", out) if rc == 0 else {}
        for key in ("probe", "find"):
            self.check(key in doc, f"demo: key {key!r}")
        self.demo_video = str((doc.get("probe") or {}).get("path") or "")

    def library(self) -> None:
        video = getattr(self, "demo_video", "")
        if not self.check(bool(video), "library: the demo video's path (from demo --json)"):
            return
        rc, _, _ = self.run("library-add", "library", "add", video, timeout=120)
        self.check(rc == 0, "library: add the demo video")
        rc, _, _ = self.run("analyze", "analyze", video, "--json")
        self.check(rc == 0, "library: analyse it with the bundled model (cached)")
        rc, out, _ = self.run("library-search", "library", "search", "the blue screen",
                              "--json", timeout=120)
        doc = self.json_of("library-search", out) if rc == 0 else {}
        first = (doc.get("results") or [{}])[0]
        self.check("blue" in str(first.get("text")) and 7.0 <= float(first.get("start") or 0)
                   <= 9.0, f"library: the index finds the blue screen first ({first})")

    def export(self, video: Path) -> None:
        clips = self.out / "clips"
        if clips.exists():
            shutil.rmtree(clips)
        rc, out, _ = self.run("export", "export", str(video), "--clip", "1-3", "--out",
                              str(clips), "--json")
        doc = self.json_of("export", out) if rc == 0 else {}
        ffmpeg = doc.get("ffmpeg") or {}
        self.check(ffmpeg.get("source") == "bundled",
                   f"export: uses the bundled FFmpeg (source {ffmpeg.get('source')!r})")
        path = str(ffmpeg.get("path") or "")
        self.check(path.startswith(str(self.bundle)), f"export: FFmpeg inside the bundle ({path})")
        if path:
            notice = Path(path).parent / "FFMPEG-LICENSE.txt"
            self.check(notice.is_file() and "General Public License" in notice.read_text(
                encoding="utf-8"), "export: FFMPEG-LICENSE.txt beside the binary")
        made = sorted(p for p in clips.glob("*.mp4")) if clips.is_dir() else []
        self.check(len(made) == 1 and made[0].stat().st_size > 1000, "export: one clip written")
        if made:
            rc, out, _ = self.run("probe-clip", "probe", str(made[0]), "--json", timeout=120)
            doc = self.json_of("probe-clip", out) if rc == 0 else {}
            self.check(1.5 <= float(doc.get("duration") or 0) <= 2.5,
                       f"export: the clip lasts about 2 s ({doc.get('duration')})")

    def reframe(self) -> None:
        folder = self.out / "reframe"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        faces = folder / "faces.mp4"
        problem = self._face_video(faces)
        if problem:
            self.check(False, f"reframe: cannot make the face video here ({problem})")
            return
        rc, out, _ = self.run("reframe", "export", str(faces), "--clip", "0-3", "--preset",
                              "reels", "--out", str(folder / "clips"), "--json")
        doc = self.json_of("reframe", out) if rc == 0 else {}
        clip = (doc.get("clips") or [{}])[0]
        report = clip.get("reframe") or {}
        self.check(str(report.get("detector", "")).startswith("yuface"),
                   f"reframe: the bundled detector ran ({report.get('detector')!r}, "
                   f"note {report.get('note')!r})")
        self.check(report.get("shots") == 2 and report.get("shots_with_subject") == 2,
                   f"reframe: the face found in both shots ({report})")
        if clip.get("path"):
            rc, out, _ = self.run("probe-reframed", "probe", clip["path"], "--json",
                                  timeout=120)
            probed = self.json_of("probe-reframed", out) if rc == 0 else {}
            self.check((probed.get("width"), probed.get("height")) == (1080, 1920),
                       f"reframe: a 1080x1920 clip ({probed.get('width')}x"
                       f"{probed.get('height')})")

    def _face_video(self, path: Path) -> str:
        """The two-shot astronaut video (marlin_desk.dev.reframe_videos: PyAV and scikit-image's
        photograph): made here when this Python has them, else by the project's test
        environment (.venv, which scripts/test.sh makes). Returns what went wrong, or ""."""
        code = ("import sys; from marlin_desk.dev.reframe_videos import make_reframe_video; "
                "make_reframe_video(sys.argv[1], 'two_shots', duration=3.0)")
        errors = []
        for python in (sys.executable, str(ROOT / ".venv" / "bin" / "python")):
            if not Path(python).exists():
                continue
            done = subprocess.run([python, "-c", code, str(path)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=300,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
            if done.returncode == 0 and path.is_file():
                return ""
            errors.append(f"{python}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
        return "; ".join(errors) or "no Python with PyAV and scikit-image"

    def handoff(self, video: Path) -> None:
        folder = self.out / "handoff"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        markers = {"edl": b"TITLE:", "fcpx": b"<spine>", "premiere": b"<xmeml",
                   "otio": b"Timeline.1"}
        for target, needle in markers.items():
            rc, out, _ = self.run(f"handoff-{target}", "handoff", str(video), "--clip", "1-3",
                                  "--to", target, "--out", str(folder), "--json", timeout=120)
            doc = self.json_of(f"handoff-{target}", out) if rc == 0 else {}
            path = Path(str(doc.get("path") or folder / "none"))
            self.check(path.is_file() and needle in path.read_bytes(),
                       f"handoff: {target} file written ({path.name})")

    def selftest(self) -> None:
        png = self.out / "selftest.png"
        if png.exists():
            png.unlink()
        rc, out, err = self.run("selftest", "selftest", "--screenshot", str(png), "--json",
                                "--max-tokens", "0", "--query", "the blue screen")
        for text in QT_MEDIA_FAILURES:
            self.check(text not in err, f"selftest: QtMultimedia backend loads (no {text!r})")
        doc = self.json_of("selftest", out) if out.strip().startswith("{") else {}
        self.check(doc.get("ok") is True, f"selftest: ok (reason: {doc.get('reason')!r})")
        for key in ("model", "video", "windows", "timings", "screenshot"):
            self.check(key in doc, f"selftest: key {key!r} in the summary")
        self.check(not doc.get("errors"), f"selftest: no errors ({doc.get('errors')})")
        # the bundled demo model is trained: its timeline for the demo video is the truth
        events = [e.get("label", "") for e in doc.get("timeline", {}).get("events", [])]
        self.check(len(events) == len(DEMO_COLOURS) and all(
            c in e for c, e in zip(DEMO_COLOURS, events, strict=False)),
            f"selftest: the timeline shows the demo's {', '.join(DEMO_COLOURS)} events "
            f"({events})")
        self.check(png.is_file() and png.stat().st_size > 0, "selftest: screenshot written")
        if png.is_file():
            colours = png_colours(png)
            self.check(colours > 16, f"selftest: screenshot is not blank ({colours} colours)")

    def speech(self, fallback: Path) -> None:
        rc, out, _ = self.run("models-verify-speech", "models", "verify",
                              "Systran/faster-whisper-tiny.en", "--json", "-q", timeout=300)
        doc = self.json_of("models-verify-speech", out) if rc == 0 else {}
        self.check(doc.get("ok") is True and doc.get("files_checked") == 4,
                   f"speech: the bundled tiny.en matches its sha256 ({doc.get('problems')})")
        video, said = self._speech_clip()
        rc, out, _ = self.run("transcribe", "transcribe", str(video or fallback), "--json",
                              timeout=600)
        doc = self.json_of("transcribe", out) if rc == 0 else {}
        self.check(doc.get("model") == "Systran/faster-whisper-tiny.en",
                   f"transcribe: the bundled tiny.en ran ({doc.get('model')!r})")
        self.check(doc.get("device") == "cpu", f"transcribe: on the CPU ({doc.get('device')!r})")
        heard = " ".join(w.get("text", "") for s in doc.get("segments", [])
                         for w in s.get("words", [])).lower()
        if video is None:
            print("  note: no espeak-ng here, so no words were checked (a video without "
                  "speech was transcribed)")
            self.check("segments" in doc, "transcribe: a transcript (no speech to hear)")
            return
        missing = [w for w in said if w not in heard]
        self.check(not missing, f"transcribe: heard the spoken words (missing {missing}; "
                                f"heard {heard.strip()[:120]!r})")
        words = [w for s in doc.get("segments", []) for w in s.get("words", [])]
        self.check(bool(words) and all({"start", "end", "probability"} <= set(w)
                                       for w in words), "transcribe: words with times")

    def _speech_clip(self) -> tuple[Path | None, list[str]]:
        """A short clip whose sound says a known sentence: espeak-ng's speech, muxed with a
        blank picture by the bundle's own FFmpeg. (None, []) without espeak-ng."""
        espeak = shutil.which("espeak-ng")
        ffmpeg = next(iter(sorted(self.bundle.rglob("ffmpeg-*"))), None)
        if espeak is None or ffmpeg is None:
            return None, []
        sentence = "our launch date moves to next friday. please bring your blue folder."
        wav, clip = self.out / "speech.wav", self.out / "speech.mp4"
        subprocess.run([espeak, "-v", "en-us", "-s", "150", "-w", str(wav), sentence],
                       check=True, capture_output=True)
        subprocess.run([str(ffmpeg), "-v", "error", "-y", "-f", "lavfi", "-i",
                        "color=c=0x285aa0:s=64x48:r=10", "-i", str(wav), "-shortest",
                        "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", str(clip)],
                       check=True, capture_output=True)
        return clip, ["launch", "date", "friday", "blue", "folder"]

    def app_log(self) -> None:
        logs = list(self.home.rglob("*.log"))
        text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)
        if logs:
            shutil.copy(logs[0], self.out / "marlin-desk.log")
        for word in BAD_WORDS:
            self.check(word not in text, f"app log: no {word!r} ({len(logs)} log file(s))")


def png_colours(path: Path, cap: int = 10_000) -> int:
    """Distinct colours in an 8-bit RGB/RGBA PNG (stdlib only; up to `cap`)."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    pos, idat, width = 8, b"", 0
    height = depth = ctype = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    channels = {2: 3, 6: 4}.get(ctype)
    if depth != 8 or not channels:
        return cap  # a format this reader does not decode: do not fail on it
    raw = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    seen: set[bytes] = set()
    i = 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, channels * 7):  # a sample of each row is plenty
            seen.add(bytes(line[x:x + 3]))
        if len(seen) >= cap:
            return cap
        prev = line
    return len(seen)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, default=HERE / "dist" / "marlin-desk")
    ap.add_argument("--video", type=Path, default=ROOT / "tests" / "data" / "bikes.mp4",
                    help="a real video to probe and cut (default tests/data/bikes.mp4)")
    ap.add_argument("--out", type=Path, default=HERE / "build" / "smoke",
                    help="where outputs, logs and the screenshot are kept")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per command")
    ap.add_argument("--skip-selftest", action="store_true", help="leave out the GUI self-test")
    args = ap.parse_args()

    smoke = Smoke(args.bundle.resolve(), args.out.resolve(), args.timeout)
    video = args.video.resolve()
    print(f"frozen app: {smoke.exe}\nHOME: {smoke.home} (empty)\nnetwork: {smoke.network}")
    t0 = time.monotonic()
    try:
        smoke.version()
        smoke.probe(video)
        smoke.demo()
        smoke.export(video)
        smoke.reframe()
        smoke.handoff(video)
        smoke.library()
        if not args.skip_selftest:
            smoke.selftest()
        smoke.speech(video)
        smoke.app_log()
    finally:
        shutil.rmtree(smoke.home, ignore_errors=True)
    print(f"\nsmoke test: {'PASSED' if not smoke.failures else 'FAILED'} in "
          f"{time.monotonic() - t0:.0f} s; outputs in {smoke.out}")
    for failure in smoke.failures:
        print(f"  - {failure}")
    return 0 if not smoke.failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
