"""A program drawn as Gemini CLI 0.61 draws its screen (a header, the rule, the input box and what it holds,
the prompts it took above), that forgets the first `forget` messages submitted to it: their Enter empties
the box and nothing shows them sent, as Gemini CLI does to a message sent as it starts resuming a session.
With LATE, a paste is drawn LATE seconds after it came, and an Enter that comes before is taken into it as
a newline this box does not keep (Gemini CLI on a busy machine draws a 10,000-character paste seconds late,
and takes an Enter right after a paste as a newline). Run in a tmux pane: `python -m tests.forgetful_box
RECORD FORGET [LATE]`; each submit is appended to RECORD (a forgotten one as `forgotten: text`), and each
Enter taken into a paste as "an Enter in a paste not drawn yet"."""

from __future__ import annotations

import os
import select
import sys
import termios
import time
import tty

RULE = "─" * 80
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def draw(sent: list[str], box: str) -> None:
    shown = box if box else "  Type your message or @path/to/file"
    lines = [
        "✦ Ready.",
        *(f" > {text}" for text in sent),
        RULE,
        " auto-accept edits Shift+Tab to plan",
        f" > {shown}",
    ]
    # drawn over the last frame in place, as Gemini CLI's Ink does: a cleared screen goes to the scrollback
    sys.stdout.write("\x1b[H" + "".join(f"{line}\x1b[K\r\n" for line in lines) + "\x1b[J")
    sys.stdout.flush()


class Box:
    """The input box and the prompts it took, fed the keys the pane reads."""

    def __init__(self, record: str, forget: int, late: float) -> None:
        self.record, self.forget, self.late = record, forget, late
        self.sent: list[str] = []
        self.text = ""
        self.held, self.due = "", 0.0  # a paste not drawn yet, and when it will be

    def draw(self) -> None:
        draw(self.sent, self.text)

    def wait(self) -> float | None:
        """How long the keys may be waited for: until a held paste is due, or for ever."""
        return max(0.0, self.due - time.monotonic()) if self.held else None

    def tick(self) -> None:
        if self.held and time.monotonic() >= self.due:
            self.text, self.held = self.text + self.held, ""

    def feed(self, pending: str) -> str:
        """Take what it can of `pending`; the rest (a paste not read whole, keys behind a held paste)."""
        while pending:
            if self.held:  # keys behind a paste not drawn yet: an Enter is a newline in it, the rest waits
                if "\r" not in pending:
                    break
                pending = pending.replace("\r", "", 1)
                self._write("an Enter in a paste not drawn yet")
            elif pending.startswith(PASTE_START) or PASTE_START.startswith(pending):
                if PASTE_END not in pending:
                    break  # the rest of the paste is still to be read
                text, _, pending = pending[len(PASTE_START) :].partition(PASTE_END)
                self._paste("".join(key for key in text if key.isprintable()))
            else:
                self._key(pending[0])
                pending = pending[1:]
        return pending

    def _paste(self, text: str) -> None:
        if self.late:
            self.held, self.due = text, time.monotonic() + self.late
        else:
            self.text += text

    def _key(self, key: str) -> None:
        if key == "\r":
            self._write(("forgotten: " if self.forget > 0 else "") + self.text)
            if self.forget > 0:
                self.forget -= 1
            else:
                self.sent.append(self.text)
            self.text = ""
        elif key == "\x7f":
            self.text = self.text[:-1]
        elif key.isprintable():
            self.text += key

    def _write(self, line: str) -> None:
        with open(self.record, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def main(record: str, forget: int, late: float) -> None:
    fd = sys.stdin.fileno()
    tty.setraw(fd)
    sys.stdout.write("\x1b[?2004h")  # bracketed paste on: a paste comes between its markers
    box, pending = Box(record, forget, late), ""
    box.draw()
    while True:
        if select.select([fd], [], [], box.wait())[0]:
            pending += os.read(fd, 4096).decode("utf-8", "replace")
            if "\x03" in pending:  # C-c ends it
                break
        box.tick()
        pending = box.feed(pending)
        box.draw()
    termios.tcsetattr(fd, termios.TCSANOW, termios.tcgetattr(fd))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 0.0)
