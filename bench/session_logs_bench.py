"""What reading Codex's and Gemini CLI's session logs costs: the Stop hook reading a whole log's tokens at a
turn's end, and the worker's tail parsing its output 1 MB at a time, beside Claude Code's transcript of the
same size.

    .venv/bin/python -m bench.session_logs_bench   # IB_BENCH_LOG_MB=8 (the Stop hook reads up to 8 MB)

Each log is the real capture under tests/fixtures repeated (every answer and message given a new id) until
it is IB_BENCH_LOG_MB long; each reading runs five times and the best is shown, in MB/s and ms.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.cost_bench import made_up_session
from bus.costs.usage import Usage
from worker.agents.transcript_tail import CHUNK
from worker.programs.claude.transcript import TranscriptParser
from worker.programs.claude.usage import read_transcript
from worker.programs.codex.rollout import RolloutParser
from worker.programs.codex.usage import read_rollout
from worker.programs.gemini.chat import ChatParser
from worker.programs.gemini.usage import read_chat
from worker.programs.program import TranscriptReading

MB = int(os.environ.get("IB_BENCH_LOG_MB", "8"))
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
ROLLOUT = FIXTURES / "codex-0.169.0" / "rollout-two-turns.jsonl"
CHAT = FIXTURES / "gemini-0.61.0" / "chat-two-turns.jsonl"
IDS = ("resp_fake", "item_fake", "call_fake", '"id":"')  # what names an answer, item or call in the logs


def repeated(source: Path, path: Path, size: int) -> None:
    """`source` written again and again into `path` until it is `size` bytes, its ids made new each time."""
    text = source.read_text(encoding="utf-8")
    with path.open("w", encoding="utf-8") as f:
        copy = 0
        while f.tell() < size:
            made = text
            for marker in IDS:
                made = made.replace(marker, f"{marker}r{copy}-")
            f.write(made)
            copy += 1


def best(run: Callable[[], object], times: int = 5) -> float:
    took = []
    for _ in range(times):
        began = time.perf_counter()
        run()
        took.append(time.perf_counter() - began)
    return min(took)


def tail(path: Path, make: Callable[[], TranscriptReading]) -> Callable[[], int]:
    """The worker's tail over the whole file: 1 MB reads from the offset the last one left."""

    def run() -> int:
        parser, data, offset, items = make(), path.read_bytes(), 0, 0
        while offset < len(data):
            found, consumed = parser.feed(data[offset : offset + CHUNK])
            items += len(found)
            offset += consumed or CHUNK
        return items

    return run


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ib-logs-bench-") as tmp:
        claude, codex, gemini = (
            Path(tmp) / "claude.jsonl",
            Path(tmp) / "codex.jsonl",
            Path(tmp) / "gemini.jsonl",
        )
        repeated(ROLLOUT, codex, MB << 20)
        repeated(CHAT, gemini, MB << 20)
        made_up_session(claude, 1000)  # then as many answers as fill MB megabytes
        made_up_session(claude, 1000 * (MB << 20) // claude.stat().st_size)
        print(f"session logs of about {MB} MB; best of 5")
        rows: list[tuple[str, Path, Callable[[str], tuple[list[Usage], int]], Callable[[], int]]] = [
            ("Claude Code", claude, read_transcript, tail(claude, TranscriptParser)),
            ("Codex CLI", codex, read_rollout, tail(codex, RolloutParser)),
            ("Gemini CLI", gemini, read_chat, tail(gemini, ChatParser)),
        ]
        for name, path, read, output in rows:
            size = path.stat().st_size / (1 << 20)
            answers = len(read(str(path))[0])
            usage = partial(read, str(path))
            for what, run in (("tokens (Stop hook)", usage), ("output (worker tail)", output)):
                took = best(run)
                print(
                    f"{name:12} {what:21} {size:5.1f} MB, {answers:6} answers: "
                    f"{took * 1000:7.1f} ms, {size / took:6.1f} MB/s"
                )


if __name__ == "__main__":
    main()
