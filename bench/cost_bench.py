"""Tokens counted by ittybus beside the `ccusage` CLI (an independent reader of Claude Code transcripts),
and what reading a transcript's usage costs the Stop hook.

    .venv/bin/python -m bench.cost_bench   # IB_BENCH_ANSWERS=20000; IB_BENCH_CLAUDE_DIR=~/.claude: yours too

1. A made-up session in the shape Claude Code writes (each answer over one to four lines that repeat its
   usage, tool results between them, 1-hour cache writes, an unknown model, a last line cut in half):
   ittybus's totals and ccusage's, kind by kind. With IB_BENCH_CLAUDE_DIR, the same on real transcripts.
2. Time: ittybus reading the usage of that transcript (what the Stop hook does at a turn's end), beside
   reading its bytes alone (the floor) and beside ccusage on the same file.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bus.costs.usage import spend
from worker.programs.claude.usage import UsageReader, read_transcript

ANSWERS = int(os.environ.get("IB_BENCH_ANSWERS", "20000"))
KINDS = {"input": "inputTokens", "output": "outputTokens", "cache_write": "cacheCreationTokens"}
KINDS["cache_read"] = "cacheReadTokens"
MODELS = ("claude-opus-5-5", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-next-9")


def made_up_session(path: Path, answers: int, seed: int = 7) -> None:
    """A transcript of `answers` model answers, written as Claude Code writes them."""
    rng = random.Random(seed)
    start = time.time() - 3600
    with path.open("w", encoding="utf-8") as f:
        for n in range(answers):
            write = rng.randrange(0, 5000)
            usage = {
                "input_tokens": rng.randrange(1, 400),
                "output_tokens": rng.randrange(1, 3000),
                "cache_creation_input_tokens": write,
                "cache_read_input_tokens": rng.randrange(0, 150_000),
                "cache_creation": {
                    "ephemeral_1h_input_tokens": write // 3,
                    "ephemeral_5m_input_tokens": write,
                },
            }
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(start + n * 0.1))
            model = MODELS[n % len(MODELS)]
            for block in range(rng.randrange(1, 5)):
                message = {
                    "id": f"msg_{n}",
                    "model": model,
                    "role": "assistant",
                    "usage": usage,
                    "content": [{"type": "text", "text": f"block {block} " + "x" * rng.randrange(0, 400)}],
                }
                entry = {
                    "type": "assistant",
                    "requestId": f"req_{n}",
                    "timestamp": stamp,
                    "sessionId": "bench",
                    "message": message,
                }
                f.write(json.dumps(entry) + "\n")
            result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "y" * rng.randrange(0, 800)}
            user = {"type": "user", "timestamp": stamp, "message": {"role": "user", "content": [result]}}
            f.write(json.dumps(user) + "\n")
        f.write('{"type":"assistant","requestId":"req_cut","message":{"id":"msg_cut","usage":{"input')


def ccusage(claude_dir: Path) -> tuple[dict[str, int], float]:
    found = shutil.which("ccusage")
    if found is None:
        raise SystemExit("no ccusage on PATH: npm install -g ccusage@18.0.11 (tests/run.sh does)")
    began = time.perf_counter()
    run = subprocess.run(
        [found, "session", "--json", "--offline"],
        env={**os.environ, "CLAUDE_CONFIG_DIR": str(claude_dir)},
        capture_output=True,
        text=True,
        check=True,
    )
    took = time.perf_counter() - began
    totals = json.loads(run.stdout)["totals"]
    return {ours: int(totals[theirs]) for ours, theirs in KINDS.items()}, took


def ours(files: list[Path]) -> dict[str, int]:
    reader = UsageReader()
    records = []
    for file in files:
        with file.open("rb") as f:
            records.extend(reader.lines(f))
    return spend(records).counts()


def compare(title: str, claude_dir: Path) -> None:
    files = sorted(claude_dir.glob("projects/**/*.jsonl"))
    counted = ours(files)
    theirs, _took = ccusage(claude_dir)
    print(f"{title}: {len(files)} transcript(s)")
    for kind in KINDS:
        print(f"  {kind:<12} ittybus {counted[kind]:>14,}   ccusage {theirs[kind]:>14,}")
    print(f"  equal: {'yes' if counted == theirs else 'NO'}")


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        claude_dir = Path(scratch)
        session = claude_dir / "projects" / "bench" / "session.jsonl"
        session.parent.mkdir(parents=True)
        made_up_session(session, ANSWERS)
        compare(f"made-up session, {ANSWERS:,} answers", claude_dir)
        size = session.stat().st_size / 2**20
        records, unreadable = read_transcript(str(session))
        unpriced = ", ".join(spend(records).unpriced)
        print(f"  ittybus: {len(records):,} answers, {unreadable} unreadable line, unpriced: {unpriced}")
        bytes_only = best_of(5, session.read_bytes)
        reading = best_of(5, lambda: read_transcript(str(session)))
        _totals, theirs = ccusage(claude_dir)
        print(f"time to read the usage of {size:.1f} MB (best of 5; ccusage one run, its start included):")
        figures = (("bytes alone", bytes_only), ("ittybus", reading), ("ccusage", theirs))
        print("  " + "   ".join(f"{name} {seconds * 1000:8.1f} ms" for name, seconds in figures))
    real = os.environ.get("IB_BENCH_CLAUDE_DIR")
    if real:
        compare(f"real transcripts under {real}", Path(real).expanduser())


if __name__ == "__main__":
    main()
