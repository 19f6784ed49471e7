"""The dashboard's keyboard, pure: bytes from a terminal in cbreak mode turned into keys, and each key
turned into the next state of the interface and, when one is complete, an action for the shell to run.

Keys: ↑/↓ (or k/j) select an agent, `a` answers a question, `s` sends to the selected agent, `l` looks
at it, `q` quits; while typing, Enter sends, Escape cancels, Backspace and Ctrl-U edit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

SEQUENCES = {
    "\x1b[A": "up",
    "\x1b[B": "down",
    "\x1b[C": "right",
    "\x1b[D": "left",
    "\x1bOA": "up",
    "\x1bOB": "down",
    "\x1bOC": "right",
    "\x1bOD": "left",
}
NAMED = {
    "\r": "enter",
    "\n": "enter",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\t": "tab",
    "\x15": "ctrl-u",
}


def decode_keys(data: str) -> list[str]:
    """Split what the terminal sent into keys: named ones (`up`, `enter`, `escape`, ...) or characters.

    A lone Escape, or one followed by something that is not a known sequence, is `escape`.
    """
    keys: list[str] = []
    i = 0
    while i < len(data):
        if data[i] == "\x1b":
            known = next((seq for seq in SEQUENCES if data.startswith(seq, i)), None)
            if known:
                keys.append(SEQUENCES[known])
                i += len(known)
                continue
            i += 1
            if data.startswith("[", i):  # a sequence we do not use (F-keys, Home, ...): skip it whole
                i += 1
                while i < len(data) and not ("@" <= data[i] <= "~"):
                    i += 1
                i += 1
            else:
                keys.append("escape")
            continue
        keys.append(NAMED.get(data[i], data[i]))
        i += 1
    return keys


@dataclass(frozen=True)
class Ui:
    """The interface's state. mode: browse | choose (which question) | type (a text) | look."""

    selected: str = ""
    mode: str = "browse"
    purpose: str = ""  # answer | send, while choosing or typing
    target: str = ""  # the question or agent the text goes to
    text: str = ""
    message: str = ""  # what the last action did, until the next key


@dataclass(frozen=True)
class Action:
    """Something for the shell to do: quit, look, answer (target = question id), send (target = agent)."""

    kind: str
    target: str = ""
    text: str = ""


def step(ui: Ui, key: str, agents: Sequence[str], questions: Sequence[str]) -> tuple[Ui, Action | None]:
    """The next state after `key`; `agents` in display order, `questions` pending, oldest first."""
    ui = replace(ui, message="")
    if ui.mode == "type":
        return _typing(ui, key)
    if ui.mode == "choose":
        return _choosing(ui, key, questions)
    if ui.mode == "look":
        return replace(ui, mode="browse"), None
    return _browsing(ui, key, agents, questions)


def _browsing(ui: Ui, key: str, agents: Sequence[str], questions: Sequence[str]) -> tuple[Ui, Action | None]:
    if key in ("q", "Q"):
        return ui, Action("quit")
    if key in ("up", "k", "down", "j"):
        return replace(ui, selected=_moved(ui.selected, agents, -1 if key in ("up", "k") else 1)), None
    if key == "a":
        return _answering(ui, questions), None
    if key in ("s", "l", "enter"):
        return _on_agent(ui, key, ui.selected if ui.selected in agents else (agents[0] if agents else ""))
    return ui, None


def _answering(ui: Ui, questions: Sequence[str]) -> Ui:
    if not questions:
        return replace(ui, message="no pending questions")
    if len(questions) == 1:
        return replace(ui, mode="type", purpose="answer", target=questions[0], text="")
    return replace(ui, mode="choose", purpose="answer")


def _on_agent(ui: Ui, key: str, selected: str) -> tuple[Ui, Action | None]:
    if not selected:
        return replace(ui, message="no agent to talk to"), None
    if key == "s":
        return replace(ui, selected=selected, mode="type", purpose="send", target=selected, text=""), None
    return replace(ui, selected=selected, mode="look", target=selected), Action("look", selected)


def _moved(selected: str, agents: Sequence[str], by: int) -> str:
    if not agents:
        return ""
    if selected not in agents:
        return agents[0]
    return agents[max(0, min(len(agents) - 1, agents.index(selected) + by))]


def _choosing(ui: Ui, key: str, questions: Sequence[str]) -> tuple[Ui, Action | None]:
    if key == "escape":
        return replace(ui, mode="browse", purpose=""), None
    if key.isdigit() and 1 <= int(key) <= len(questions):
        return replace(ui, mode="type", target=questions[int(key) - 1], text=""), None
    return ui, None


EDITS: dict[str, Callable[[str], str]] = {"backspace": lambda text: text[:-1], "ctrl-u": lambda text: ""}


def _typing(ui: Ui, key: str) -> tuple[Ui, Action | None]:
    if key == "escape":
        return replace(ui, mode="browse", purpose="", target="", text="", message="cancelled"), None
    if key == "enter":
        done = replace(ui, mode="browse", purpose="", target="", text="")
        if not ui.text.strip():
            return replace(done, message="nothing to send"), None
        return done, Action(ui.purpose, ui.target, ui.text)
    if key in EDITS:
        return replace(ui, text=EDITS[key](ui.text)), None
    if len(key) == 1 and key.isprintable():
        return replace(ui, text=ui.text + key), None
    return ui, None


def footer(ui: Ui, questions: int, width: int) -> str:
    """The bottom line: the prompt being typed (its end kept in view), a choice, or the last message."""
    if ui.mode == "type":
        label = f"answer {ui.target}: " if ui.purpose == "answer" else f"send to {ui.target}: "
        room = max(1, width - len(label) - 1)
        shown = ui.text if len(ui.text) <= room else "…" + ui.text[len(ui.text) - room + 1 :]
        return label + shown + "▏"
    if ui.mode == "choose":
        return f"answer which question? 1-{questions} (Esc cancels)"
    return ui.message
