"""Transcription speed and memory on 2 CPU cores: the real-time factor (seconds of work per
second of sound) and the peak memory a transcription adds to the process, for the bundled
tiny.en and for the default size (small), as `marlin-desk transcribe` runs them (int8).

    .venv/bin/python bench/transcribe.py [--repeat 4] [--threads 2] [--json]

The sound is espeak-ng speech (marlin_desk/dev/speech.py): the test sentences said `--repeat`
times (about 17 s each), so the word error rate is known too. Every measurement runs in a
child process of its own, so each one's peak memory (ru_maxrss) is its own: "added" is that
peak minus the process's size after importing the app, before the model loads.

The default size is measured for real when it is downloaded (`marlin-desk models pull
Systran/faster-whisper-small`). Otherwise its speed is estimated: a checkpoint of small's exact
architecture with random weights (built with transformers, converted by CTranslate2: 483 MB,
as the hub's model.bin) runs Whisper's encoder on every 30 s window and its decoder (beam 5)
for as many tokens as tiny.en's transcript has, and so does tiny.en; small's real-time factor
is tiny.en's measured one times the ratio of the two (random weights cannot transcribe, but
they cost the same arithmetic). Its memory is that model's real peak, plus what the app's
path adds around Whisper (the VAD, the features) as measured with tiny.en.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SMALL = dict(d_model=768, encoder_layers=12, decoder_layers=12, encoder_attention_heads=12,
             decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072)
SOT, EOT, NO_TIMESTAMPS = 50257, 50256, 50362  # tiny.en's token ids (English vocabulary)


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_transcribe(video: str, model: str | None, threads: int) -> dict[str, object]:
    """One real transcription as the app runs it (no cache), timed and measured."""
    from marlin_desk.dev.speech import normalise_words, word_error_rate
    from marlin_desk.media.probe import probe
    from marlin_desk.workflows.speech import open_runner, speech_settings, transcribe

    settings = speech_settings(model=model)
    info = probe(video)
    base = _rss_mib()
    runner = open_runner(settings)
    runner.cpu_threads = threads
    began = time.perf_counter()
    runner.load()
    loaded = time.perf_counter() - began
    began = time.perf_counter()
    t = transcribe(video, settings, use_cache=False, info=info, runner=runner)
    wall = time.perf_counter() - began
    truth = json.loads(Path(video + ".truth.json").read_text())
    return {"model": settings.choice.model_id, "source": settings.choice.source,
            "audio_s": round(info.duration, 2), "load_s": round(loaded, 2),
            "transcribe_s": round(wall, 2), "rtf": round(wall / info.duration, 4),
            "x_realtime": round(info.duration / wall, 1),
            "added_peak_mib": round(_peak_mib() - base, 1), "base_mib": round(base, 1),
            "wer": round(word_error_rate(normalise_words(truth["text"]),
                                         normalise_words(t.text)), 4),
            "words": len(t.words), "tokens": _token_count(settings.choice.folder, t)}


def _token_count(folder: Path, transcript: object) -> int:
    import tokenizers

    tok = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    segments = transcript.segments  # type: ignore[attr-defined]
    return sum(len(tok.encode(s.text, add_special_tokens=False).ids) + 2 for s in segments)


def child_raw(video: str, folder: str, threads: int, tokens: int) -> dict[str, object]:
    """Whisper's own arithmetic for this sound: the encoder on every 30 s window, the decoder
    (beam 5) for `tokens` tokens in all, end of text suppressed so that any weights decode
    exactly that many."""
    import ctranslate2
    import numpy as np
    from faster_whisper.feature_extractor import FeatureExtractor

    from marlin_desk.media.probe import probe
    from marlin_desk.speech.audio import SAMPLE_RATE, iter_chunks

    info = probe(video)
    audio = np.concatenate([c.samples for c in iter_chunks(video, info.start_time,
                                                           info.duration, 30.0, 0.0)])
    base = _rss_mib()
    model = ctranslate2.models.Whisper(folder, device="cpu", compute_type="int8",
                                       intra_threads=threads)
    extract = FeatureExtractor(feature_size=model.n_mels)
    windows = max(1, math.ceil(len(audio) / (30 * SAMPLE_RATE)))
    per_window = math.ceil(tokens / windows)
    features = []
    for w in range(windows):
        piece = audio[w * 30 * SAMPLE_RATE:(w + 1) * 30 * SAMPLE_RATE]
        features.append(extract(piece, padding=30 * SAMPLE_RATE - len(piece))[:, :3000])
    began = time.perf_counter()
    for feature in features:
        encoded = model.encode(ctranslate2.StorageView.from_array(feature[None]))
        model.generate(encoded, [[SOT, NO_TIMESTAMPS]], beam_size=5,
                       max_length=per_window + 2, suppress_tokens=[-1, EOT],
                       suppress_blank=False)
    wall = time.perf_counter() - began
    return {"raw_s": round(wall, 3), "windows": windows, "tokens": per_window * windows,
            "added_peak_mib": round(_peak_mib() - base, 1)}


def random_small(folder: Path) -> Path:
    """A CTranslate2 checkpoint of Whisper small's architecture with random weights."""
    out = folder / "small-random-ct2"
    if (out / "model.bin").is_file():
        return out
    import torch
    from ctranslate2.converters import TransformersConverter
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    from marlin_desk.models.speech import bundled_speech_folder

    config = WhisperConfig(vocab_size=51864, num_mel_bins=80, max_source_positions=1500,
                           max_target_positions=448, decoder_start_token_id=SOT,
                           eos_token_id=EOT, bos_token_id=EOT, pad_token_id=EOT, **SMALL)
    torch.manual_seed(0)
    hf = folder / "small-random-hf"
    WhisperForConditionalGeneration(config).to(torch.float16).save_pretrained(hf)
    bundled = bundled_speech_folder()
    assert bundled is not None
    (hf / "tokenizer.json").write_bytes((bundled / "tokenizer.json").read_bytes())
    TransformersConverter(str(hf), copy_files=["tokenizer.json"], load_as_float16=True
                          ).convert(str(out), quantization="float16", force=True)
    return out


def _child(*args: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                         text=True)
    if out.returncode:
        raise SystemExit(f"child {args[0]} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=4, help="times the sentences are said")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep", metavar="DIR", help="keep the test video and models here")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "transcribe":
            doc = child_transcribe(rest[0], rest[1] or None, int(rest[2]))
        else:
            doc = child_raw(rest[0], rest[1], int(rest[2]), int(rest[3]))
        print(json.dumps(doc))
        return 0
    from marlin_desk.dev.speech import SENTENCES, make_speech_video
    from marlin_desk.models.catalogue import DEFAULT_SPEECH_MODEL
    from marlin_desk.models.speech import bundled_speech_folder, choose_speech_model

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-speech-"))
    folder.mkdir(parents=True, exist_ok=True)
    video = make_speech_video(folder / "speech.mp4", SENTENCES * args.repeat)
    Path(str(video.path) + ".truth.json").write_text(json.dumps({"text": video.text}))
    threads = str(args.threads)
    rows = []
    tiny = _child("transcribe", str(video.path), "tiny.en", threads)
    tiny["case"] = "bundled tiny.en"
    rows.append(tiny)
    try:
        choose_speech_model(DEFAULT_SPEECH_MODEL)
        default_here = True
    except Exception:  # noqa: BLE001 - not downloaded: estimated below
        default_here = False
    if default_here:
        real = _child("transcribe", str(video.path), DEFAULT_SPEECH_MODEL, threads)
        real["case"] = "default small (downloaded)"
        rows.append(real)
    else:
        bundled = bundled_speech_folder()
        assert bundled is not None
        small = random_small(folder)
        tokens = str(tiny["tokens"])
        raw_tiny = _child("raw", str(video.path), str(bundled), threads, tokens)
        raw_small = _child("raw", str(video.path), str(small), threads, tokens)
        ratio = float(raw_small["raw_s"]) / float(raw_tiny["raw_s"])
        rtf = float(tiny["rtf"]) * ratio
        rows.append({"case": "default small (estimate: its architecture, random weights)",
                     "model": DEFAULT_SPEECH_MODEL, "audio_s": tiny["audio_s"],
                     "rtf": round(rtf, 4), "x_realtime": round(1 / rtf, 1),
                     "raw_ratio_to_tiny_en": round(ratio, 2),
                     # the model's own peak, plus what the app's path adds beyond Whisper's
                     # arithmetic (the VAD, features, decoding the sound), as tiny.en shows it
                     "added_peak_mib": round(float(raw_small["added_peak_mib"])
                                             + float(tiny["added_peak_mib"])
                                             - float(raw_tiny["added_peak_mib"]), 1),
                     "raw_tiny_en_s": raw_tiny["raw_s"], "raw_small_s": raw_small["raw_s"]})
    if args.json:
        print(json.dumps({"threads": args.threads, "results": rows}, indent=2))
    else:
        for r in rows:
            print(f"{r['case']}: {r['audio_s']} s of speech, real-time factor {r['rtf']} "
                  f"({r['x_realtime']}x real time), +{r['added_peak_mib']} MiB peak"
                  + (f", WER {r['wer']}" if "wer" in r else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
