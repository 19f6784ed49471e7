"""One message per dialog and topic: the dialog told again edits its message, or waits for it."""

from __future__ import annotations

from bot.dialog_messages import DialogMessages, Edit, Send, Wait


def test_a_dialog_told_again_edits_the_message_that_showed_it() -> None:
    dialogs = DialogMessages[str]()
    assert dialogs.tell((5, "p-1"), "e|1|data", "pane") == Send()
    assert dialogs.shown(("e|1|data",), 77) == []
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Edit(77, "pane")
    assert dialogs.tell((5, "p-1"), "e|3|data", "again") == Edit(77, "pane")


def test_told_again_before_its_message_is_accepted_it_waits_for_the_id() -> None:
    dialogs = DialogMessages[str]()
    assert dialogs.tell((5, "p-1"), "e|1|data", "pane") == Send()
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Wait()
    assert dialogs.shown(("e|9|data",), 70) == []  # another message: nothing waited for it
    assert dialogs.shown(("e|0|data", "e|1|data"), 77) == ["hook"]
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Edit(77, "pane")


def test_each_topic_and_each_dialog_has_its_own_message() -> None:
    dialogs = DialogMessages[str]()
    assert dialogs.tell((5, "p-1"), "e|1|data", "agent topic") == Send()
    assert dialogs.tell((1, "p-1"), "e|1|project", "project topic") == Send()
    assert dialogs.tell((5, "p-2"), "e|2|data", "the next dialog") == Send()


def test_no_id_back_sends_what_waited_as_a_message() -> None:
    dialogs = DialogMessages[str]()
    dialogs.tell((5, "p-1"), "e|1|data", "pane")
    dialogs.tell((5, "p-1"), "e|2|data", "hook")
    assert dialogs.shown(("e|1|data",), None) == ["hook"]
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Send()


def test_old_dialogs_are_forgotten_but_never_one_with_a_waiting_item() -> None:
    dialogs = DialogMessages[str](keep=2)
    dialogs.tell((5, "p-0"), "e|0|data", "first")  # its message never accepted yet
    dialogs.tell((5, "p-0"), "e|0b|data", "waits")
    for n in range(1, 4):
        dialogs.tell((5, f"p-{n}"), f"e|{n}|data", "shown")
        dialogs.shown((f"e|{n}|data",), 100 + n)
    assert dialogs.shown(("e|0|data",), 100) == ["waits"]
    assert dialogs.tell((5, "p-3"), "e|4|data", "again") == Edit(103, "shown")
    assert dialogs.tell((5, "p-1"), "e|5|data", "again") == Send()  # forgotten: the oldest shown
