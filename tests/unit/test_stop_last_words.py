"""The Stop hook waits for the turn's last answer to reach the transcript before it totals the session's
tokens (worker.hooks.stop.wait_for_last_words): Claude Code may run the hook a moment before it writes
that entry, and the `complete` event's total then missed the turn's last answer."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from worker.hooks import stop

ANSWER = 'Read it: "ok" — and café.\n\nI HAVE COMPLETED THE GOAL'


def _entry(text: str) -> str:
    """A transcript line as Claude Code writes it (JSON.stringify: non-ASCII kept as is)."""
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return json.dumps({"type": "assistant", "message": message}, ensure_ascii=False) + "\n"


def test_an_answer_already_written_is_found_at_once(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_entry("first") + _entry(ANSWER), encoding="utf-8")
    assert stop.wait_for_last_words(str(transcript), ANSWER)


def test_an_answer_written_after_the_hook_started_is_waited_for(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_entry("first"), encoding="utf-8")
    written = threading.Event()

    def write_late() -> None:
        with transcript.open("a", encoding="utf-8") as f:
            f.write(_entry(ANSWER))
        written.set()

    timer = threading.Timer(0.3, write_late)
    timer.start()
    try:
        assert stop.wait_for_last_words(str(transcript), ANSWER)
        assert written.is_set()  # found only once it was written
    finally:
        timer.cancel()


def test_an_answer_never_written_gives_up_and_bad_paths_do_not_wait(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_entry("first"), encoding="utf-8")
    assert not stop.wait_for_last_words(str(transcript), ANSWER)
    assert not stop.wait_for_last_words(str(tmp_path / "missing.jsonl"), ANSWER)
    assert not stop.wait_for_last_words("", ANSWER)
    assert stop.wait_for_last_words(str(transcript), "  \n")  # no answer: nothing to wait for
