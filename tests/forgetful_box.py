"""A program drawn as Gemini CLI 0.61 draws its screen (a header, the rule, the input box and what it holds,
the prompts it took above), that forgets the first `forget` messages submitted to it: their Enter empties
the box and nothing shows them sent, as Gemini CLI does to a message sent as it starts resuming a session.
Run in a tmux pane: `python -m tests.forgetful_box RECORD FORGET`; each submit is appended to RECORD (a
forgotten one as `forgotten: text`)."""

from __future__ import annotations

import os
import sys
import termios
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


def main(record: str, forget: int) -> None:
    fd = sys.stdin.fileno()
    tty.setraw(fd)
    sys.stdout.write("\x1b[?2004h")  # bracketed paste on: a paste comes between its markers
    sent: list[str] = []
    box, pending = "", ""
    draw(sent, box)
    while True:
        pending += os.read(fd, 4096).decode("utf-8", "replace")
        pending = pending.replace(PASTE_START, "").replace(PASTE_END, "")
        for key in pending:
            if key == "\r":
                with open(record, "a", encoding="utf-8") as out:
                    out.write(("forgotten: " if forget > 0 else "") + box + "\n")
                if forget > 0:
                    forget -= 1
                else:
                    sent.append(box)
                box = ""
            elif key == "\x7f":
                box = box[:-1]
            elif key == "\x03":
                termios.tcsetattr(fd, termios.TCSANOW, termios.tcgetattr(fd))
                return
            elif key.isprintable():
                box += key
        pending = ""
        draw(sent, box)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
