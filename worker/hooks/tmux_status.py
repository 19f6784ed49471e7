"""`ib hook tmux-status`: the thin shell around `window_indicator` run by the Stop hook (and PostToolUse in
real-time mode). It reads the window's options, asks the pure core what to change, and applies that with
tmux. It never raises and always exits 0: a broken indicator must not get in an agent's way."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

from worker.tmux import window_indicator as ti
from worker.tmux.in_pane import tmux

TMUX_TIMEOUT = 1.0
TRANSCRIPT_CHUNK = 64 * 1024
TRANSCRIPT_MAX_BYTES = 8 * 1024 * 1024
"""A turn longer than this tail of the transcript counts only the tools found in it."""


def run(stdin_text: str, env: Mapping[str, str], now: float) -> int:
    """Handle one hook event; outside tmux, on a bad payload or a tmux error it does nothing. Returns 0."""
    with contextlib.suppress(Exception):  # whatever went wrong, the indicator must not fail the agent's turn
        _update(stdin_text, env, now)
    return 0


def main(argv: Sequence[str] = ()) -> int:
    """`ib hook tmux-status` (a hot hook: no arguments): the payload on stdin, the environment, the clock."""
    import os
    import sys
    import time

    return run(sys.stdin.read(), os.environ, time.time())


def _update(stdin_text: str, env: Mapping[str, str], now: float) -> None:
    pane = env.get("TMUX_PANE", "")
    if not env.get("TMUX") or not pane:
        return
    payload = ti.read_payload(stdin_text)
    if payload is None:
        return
    event = str(payload.get("hook_event_name", ""))
    transcript = payload.get("transcript_path")
    tools = _turn_tools(transcript) if event == "Stop" and isinstance(transcript, str) else ()
    tool_name = payload.get("tool_name")
    cwd = payload.get("cwd")
    hook_input = ti.HookInput(
        event=event,
        project=ti.project_name(env.get("CLAUDE_PROJECT_DIR"), cwd if isinstance(cwd, str) else None),
        tool_name=tool_name if isinstance(tool_name, str) else None,
        turn_tools=tools,
    )
    snapshot = ti.parse_snapshot(_tmux(env, ["display-message", "-p", "-t", pane, ti.SNAPSHOT_FORMAT]))
    decision = ti.next_indicator(ti.previous_state(snapshot.options), hook_input, now)
    commands = ti.tmux_commands(pane, snapshot, decision)
    if commands:
        _tmux(env, [arg for command in _chain(commands) for arg in command])


def _chain(commands: list[list[str]]) -> Iterator[list[str]]:
    """Join commands into one tmux invocation (`a ; b`), so an update costs one process."""
    for i, command in enumerate(commands):
        if i:
            yield [";"]
        yield command


def _tmux(env: Mapping[str, str], args: list[str]) -> str:
    """Run tmux on the server named by $TMUX."""
    return tmux(args, env=env, timeout=TMUX_TIMEOUT)


def _turn_tools(transcript_path: str) -> tuple[str, ...]:
    try:
        return ti.turn_tools(_lines_newest_first(transcript_path))
    except OSError:
        return ()


def _lines_newest_first(path: str) -> Iterator[str]:
    """The transcript's lines from the end backwards, read in chunks, so a long transcript costs one turn."""
    with open(path, "rb") as f:
        end = f.seek(0, 2)
        stop = max(0, end - TRANSCRIPT_MAX_BYTES)
        tail = b""
        while end > stop:
            start = max(stop, end - TRANSCRIPT_CHUNK)
            f.seek(start)
            lines = (f.read(end - start) + tail).split(b"\n")
            end = start
            tail = lines.pop(0) if end > stop else b""
            for line in reversed(lines):
                yield line.decode("utf-8", errors="replace")


if __name__ == "__main__":
    raise SystemExit(main())
