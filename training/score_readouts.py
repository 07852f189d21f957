"""Does any read-out of the digit log-probabilities tell a present colour from an absent one?

For each held-out clip (the `--absent` evaluation's clips), ask for a colour that is in it and
one that is not, through the app's `VideoSession`, and count the clips where the present
colour's answer scores higher under several read-outs: the app's (mean over all digit tokens),
the first digit only, the least sure digit, and the whole-number digits only (without the
digit after the point, which is always a certain "0" for this model).

    .venv/bin/python -m training.score_readouts resources/models/marlin-tiny-trained -n 50
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from training.data import FIND_COLOURS, example
from training.evaluate import EVAL_BASE, write_clip


def readouts(pieces: list[str], logprobs: list[float]) -> dict[str, float]:
    digits = [(p, lp) for p, lp in zip(pieces, logprobs, strict=True) if p.strip().isdigit()]
    whole = [lp for i, (p, lp) in enumerate(zip(pieces, logprobs, strict=True))
             if p.strip().isdigit() and not (i and pieces[i - 1].endswith("."))]
    values = [lp for _, lp in digits]
    return {"mean_all_digits": sum(values) / len(values), "first_digit": values[0],
            "least_sure_digit": min(values), "mean_whole_number_digits": sum(whole) / len(whole)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("-n", type=int, default=50)
    args = p.parse_args(argv)

    from marlin_desk.core.prompts import find_prompt
    from marlin_desk.core.windows import Window
    from marlin_desk.engine.loader import load_model, model_budget
    from marlin_desk.engine.session import VideoSession

    engine = load_model(args.model, device="cpu")
    tokenizer = engine.processor.tokenizer
    kept: dict[int, list[float]] = {}
    original = VideoSession._answer

    def keep_logprobs(self: Any, new: list[int], logprobs: list[float], *a: Any) -> Any:
        answer = original(self, new, logprobs, *a)
        kept[id(answer)] = logprobs[:len(answer.token_ids)]
        return answer

    VideoSession._answer = keep_logprobs  # type: ignore[method-assign]
    wins: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.n):
            ex = example("find", EVAL_BASE + i, None, 2, 1, 0.6, 20, 3)
            duration = ex.frames.window_end
            path = Path(tmp) / f"clip{i}.mp4"
            write_clip(path, ex.segments, duration)
            session = VideoSession(engine, str(path), budget=model_budget(args.model))
            window = Window(0, 0.0, duration)
            absent = next(c for c in FIND_COLOURS if c not in {s[2] for s in ex.segments})
            scores = []
            for prompt in (ex.prompt, find_prompt(f"the {absent} screen")):
                answer = session.ask(window, prompt, 16)
                pieces = [tokenizer.decode([t]) for t in answer.token_ids]
                scores.append(readouts(pieces, kept.pop(id(answer))))
            for name, value in scores[0].items():
                wins[name] = wins.get(name, 0) + (value > scores[1][name])
    print({name: f"present higher on {count} of {args.n}" for name, count in wins.items()})


if __name__ == "__main__":
    main()
