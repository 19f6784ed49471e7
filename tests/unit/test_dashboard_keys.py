"""The dashboard's keyboard: terminal bytes to keys, and keys to the next interface state and actions."""

from __future__ import annotations

import pytest

from worker.frontends.dashboard_keys import Action, Ui, decode_keys, footer, step

AGENTS = ["painter", "helper", "sweeper"]


@pytest.mark.parametrize(
    ("data", "keys"),
    [
        ("a", ["a"]),
        ("Blue\r", ["B", "l", "u", "e", "enter"]),
        ("\x1b[A\x1b[B", ["up", "down"]),
        ("\x1bOA", ["up"]),
        ("\x1b", ["escape"]),
        ("\x1bq", ["escape", "q"]),
        ("\x1b[15~x", ["x"]),
        ("ab\x7f\x08", ["a", "b", "backspace", "backspace"]),
        ("\x15", ["ctrl-u"]),
        ("ünï", ["ü", "n", "ï"]),
        ("", []),
    ],
    ids=[
        "letter",
        "word-enter",
        "arrows",
        "app-mode-arrow",
        "escape",
        "escape-then-key",
        "unknown-csi",
        "backspaces",
        "ctrl-u",
        "unicode",
        "nothing",
    ],
)
def test_decode_keys(data: str, keys: list[str]) -> None:
    assert decode_keys(data) == keys


def press(ui: Ui, keys: str, questions: tuple[str, ...] = ()) -> tuple[Ui, list[Action]]:
    actions = []
    for key in decode_keys(keys):
        ui, action = step(ui, key, AGENTS, questions)
        if action is not None:
            actions.append(action)
    return ui, actions


@pytest.mark.parametrize(
    ("keys", "questions", "actions", "mode"),
    [
        ("aBlue\r", ("q-1",), [Action("answer", "q-1", "Blue")], "browse"),
        ("a2Red\r", ("q-1", "q-2"), [Action("answer", "q-2", "Red")], "browse"),
        ("a9", ("q-1", "q-2"), [], "choose"),
        ("a\x1b", ("q-1", "q-2"), [], "browse"),
        ("aBlux\x7fe\r", ("q-1",), [Action("answer", "q-1", "Blue")], "browse"),
        ("aBlue\x15Red\r", ("q-1",), [Action("answer", "q-1", "Red")], "browse"),
        ("aBlue\x1b", ("q-1",), [], "browse"),
        ("a   \r", ("q-1",), [], "browse"),
        ("aq\r", ("q-1",), [Action("answer", "q-1", "q")], "browse"),
        ("shi there\r", (), [Action("send", "painter", "hi there")], "browse"),
        ("\x1b[Bsgo\r", (), [Action("send", "helper", "go")], "browse"),
        ("\x1b[B\x1b[B\x1b[B\x1b[Bl", (), [Action("look", "sweeper")], "look"),
        ("lx", (), [Action("look", "painter")], "browse"),
        ("q", (), [Action("quit")], "browse"),
        ("zx", (), [], "browse"),
    ],
    ids=[
        "answer-the-only-question",
        "answer-the-second",
        "no-such-question",
        "escape-while-choosing",
        "backspace",
        "ctrl-u-clears",
        "escape-cancels",
        "blank-is-not-sent",
        "q-is-text-while-typing",
        "send-to-selected",
        "down-then-send",
        "down-stops-at-the-last",
        "any-key-leaves-look",
        "quit",
        "other-keys-do-nothing",
    ],
)
def test_keys_to_actions(keys: str, questions: tuple[str, ...], actions: list[Action], mode: str) -> None:
    ui, got = press(Ui(selected="painter"), keys, questions)
    assert got == actions
    assert ui.mode == mode


@pytest.mark.parametrize(
    ("key", "agents", "expected"),
    [
        ("a", AGENTS, "no pending questions"),
        ("s", [], "no agent to talk to"),
        ("l", [], "no agent to talk to"),
    ],
    ids=["answer-without-questions", "send-without-agents", "look-without-agents"],
)
def test_a_message_when_there_is_nothing_to_act_on(key: str, agents: list[str], expected: str) -> None:
    ui, action = step(Ui(), key, agents, [])
    assert action is None
    assert (ui.mode, ui.message) == ("browse", expected)


@pytest.mark.parametrize(
    ("ui", "width", "expected"),
    [
        (Ui(mode="type", purpose="answer", target="q-1", text="Blue"), 80, "answer q-1: Blue▏"),
        (Ui(mode="type", purpose="send", target="painter", text="go"), 80, "send to painter: go▏"),
        (Ui(mode="type", purpose="send", target="p", text="x" * 50), 30, "send to p: …" + "x" * 17 + "▏"),
        (Ui(mode="choose", purpose="answer"), 80, "answer which question? 1-2 (Esc cancels)"),
        (Ui(message="answered q-1"), 80, "answered q-1"),
        (Ui(), 80, ""),
    ],
    ids=["answer", "send", "long-text-keeps-its-end", "choose", "message", "nothing"],
)
def test_footer(ui: Ui, width: int, expected: str) -> None:
    assert footer(ui, 2, width) == expected
