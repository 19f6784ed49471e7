"""What a dead pane tells: how its program ended (exit status or signal) and the last lines it printed.

The pane keeps its text after the program exits (`remain-on-exit`), so an agent that could not start —
Claude Code refusing `--dangerously-skip-permissions` as root, a missing binary — says why in its
`stopped` event instead of only "its session ended". Pure: the tmux client reads the fields and the text.
"""

from __future__ import annotations

from dataclasses import dataclass

TAIL_LINES = 5
MAX_LINE = 300
DEAD_FORMAT = "#{pane_dead_status}\x1f#{pane_dead_signal}"


@dataclass(frozen=True)
class Death:
    status: int | None  # the exit status, None when a signal ended it (or tmux could not tell)
    signal: int | None
    last_lines: tuple[str, ...]

    @property
    def how(self) -> str:
        if self.signal is not None:
            return f"killed by signal {self.signal}"
        return f"exit status {self.status}" if self.status is not None else "exited"

    @property
    def summary(self) -> str:
        """`exit status 1: <the last line it printed>` (the agent's detail in `ib list`)."""
        return f"{self.how}: {self.last_lines[-1]}" if self.last_lines else self.how

    def message(self, agent_id: str) -> str:
        """`agent-1 stopped (exit status 1): <the last line it printed>`."""
        last = f": {self.last_lines[-1]}" if self.last_lines else ""
        return f"{agent_id} stopped ({self.how}){last}"

    def data(self) -> dict[str, object]:
        return {"exit_status": self.status, "signal": self.signal, "last_lines": list(self.last_lines)}


def parse_dead(fields: str) -> tuple[int | None, int | None]:
    """(exit status, signal) from a `DEAD_FORMAT` line; None for what tmux left empty."""
    status, _, signal = fields.strip("\r\n ").partition("\x1f")  # str.strip() would eat \x1f
    return (int(status) if status.isdigit() else None, int(signal) if signal.isdigit() else None)


def last_lines(text: str, count: int = TAIL_LINES) -> tuple[str, ...]:
    """The last `count` lines the program printed: blank lines and tmux's own "Pane is dead" left out,
    each cut to a readable length."""
    printed = [
        line.strip()[:MAX_LINE]
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("Pane is dead")
    ]
    return tuple(printed[-count:])
