"""/diff pictures: render time for 100, 1,000 and 10,000 changed lines, beside a plain baseline.

    .venv/bin/python -m bench.diff_picture_bench [--save DIR]

A synthetic change of Python files (200 changed lines a file, each between context lines) is measured:
  - baseline: the same diff lines as plain text, no highlighting, no line numbers, no wrapping, painted by
    the same screenshot painter (render_png) 60 columns wide, one picture a file;
  - review_of: what the worker does for /diff (parse, Pygments, numbers, wrapping, one PNG a file; above
    3,000 changed lines the whole diff goes as a document instead, so that figure is the parse alone);
  - every file drawn anyway (what the document rule saves at 10,000 lines).
"""

from __future__ import annotations

import argparse
import base64
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.common import summary_ms
from worker.review.diff_files import parse_diff
from worker.review.diff_picture import WIDTH, render_file
from worker.review.review import review_of
from worker.tmux.screenshot import render_png

PER_FILE = 200


def synthetic_diff(changed: int) -> str:
    """`changed` changed lines (half removed, half added) in files of PER_FILE changed lines each."""
    out: list[str] = []
    for index in range((changed + PER_FILE - 1) // PER_FILE):
        lines = min(PER_FILE, changed - index * PER_FILE)
        name = f"pkg/module_{index}.py"
        out += [f"diff --git a/{name} b/{name}", f"--- a/{name}", f"+++ b/{name}"]
        removed, added = lines // 2, lines - lines // 2
        out.append(f"@@ -1,{removed + 2} +1,{added + 2} @@ class Thing:")
        out.append(" import os")
        out += [f"-    value_{i} = compute('{i}', os.environ.get('K_{i}'))  # old" for i in range(removed)]
        out += [
            f"+    value_{i} = compute_better('{i}', os.environ.get('KEY_{i}', ''), retries=3)"
            for i in range(added)
        ]
        out.append(" # end")
    return "\n".join(out) + "\n"


def plain_pictures(text: str) -> list[bytes]:
    """The baseline: each file's diff lines as plain text, cut at WIDTH, on the same painter."""
    pictures = []
    for diff in parse_diff(text):
        rows = [line.kind + line.text[: WIDTH - 1] for hunk in diff.hunks for line in hunk.lines]
        pictures.append(render_png("\n".join(rows), WIDTH, len(rows)))
    return pictures


def every_file(text: str) -> list[bytes]:
    return [render_file(diff).png for diff in parse_diff(text)]


def timed(call: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--save", type=Path, help="write the first picture of each size into this folder")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for changed in (100, 1_000, 10_000):
        text = synthetic_diff(changed)
        runs = args.runs if changed < 10_000 else max(1, args.runs // 3)
        baseline = timed(partial(plain_pictures, text), runs)
        reply = review_of(text)
        review = timed(partial(review_of, text), runs)
        drawn = timed(partial(every_file, text), runs)
        pictures = [f["picture"] for f in reply["files"] if "picture" in f]
        size = sum(len(base64.b64decode(p["png"])) for p in pictures)
        route = "document" if "document" in reply else f"{len(pictures)} pictures, {size:,} bytes of PNG"
        print(f"== {changed:,} changed lines in {len(reply['files'])} files → {route}")
        print(f"  baseline: plain text on the same painter       {summary_ms(baseline)}")
        print(f"  review_of (what /diff costs the worker)        {summary_ms(review)}")
        print(f"  every file highlighted and drawn               {summary_ms(drawn)}")
        if args.save is not None and pictures:
            (args.save / f"diff-{changed}.png").write_bytes(base64.b64decode(pictures[0]["png"]))


if __name__ == "__main__":
    main()
