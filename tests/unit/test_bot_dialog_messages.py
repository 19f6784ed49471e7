"""One message per dialog and topic: the dialog told again edits its message, or waits for it."""

from __future__ import annotations

import json

import pytest

from bot.feeds.dialog_memory import remembered
from bot.feeds.dialog_messages import DialogMessages, Edit, Send, Shown, Wait
from bus.events.event_model import Event


def test_a_dialog_told_again_edits_the_message_that_showed_it() -> None:
    dialogs = DialogMessages[str]()
    assert dialogs.tell((5, "p-1"), "e|1|data", "pane") == Send()
    assert dialogs.shown(("e|1|data",), 77) == Shown([], [((5, "p-1"), "pane")])
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Edit(77, "pane")
    assert dialogs.tell((5, "p-1"), "e|3|data", "again") == Edit(77, "pane")


def test_told_again_before_its_message_is_accepted_it_waits_for_the_id() -> None:
    dialogs = DialogMessages[str]()
    assert dialogs.tell((5, "p-1"), "e|1|data", "pane") == Send()
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Wait()
    assert dialogs.shown(("e|9|data",), 70) == Shown()  # another message: nothing waited for it
    assert dialogs.shown(("e|0|data", "e|1|data"), 77) == Shown(["hook"], [((5, "p-1"), "pane")])
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
    assert dialogs.shown(("e|1|data",), None) == Shown(["hook"])  # no message to remember
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Send()


def test_old_dialogs_are_forgotten_but_never_one_with_a_waiting_item() -> None:
    dialogs = DialogMessages[str](keep=2)
    dialogs.tell((5, "p-0"), "e|0|data", "first")  # its message never accepted yet
    dialogs.tell((5, "p-0"), "e|0b|data", "waits")
    for n in range(1, 4):
        dialogs.tell((5, f"p-{n}"), f"e|{n}|data", "shown")
        dialogs.shown((f"e|{n}|data",), 100 + n)
    assert dialogs.shown(("e|0|data",), 100).ready == ["waits"]
    assert dialogs.tell((5, "p-3"), "e|4|data", "again") == Edit(103, "shown")
    assert dialogs.tell((5, "p-1"), "e|5|data", "again") == Send()  # forgotten: the oldest shown


def test_a_dialog_an_earlier_process_showed_is_edited_in_its_message() -> None:
    dialogs = DialogMessages[str]()
    assert not dialogs.knows((5, "p-1"))
    dialogs.remember((5, "p-1"), 77, "before the restart")
    assert dialogs.knows((5, "p-1"))
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Edit(77, "before the restart")
    assert dialogs.tell((1, "p-1"), "e|2|project", "project topic") == Send()  # another topic's message


def test_what_this_process_knows_of_a_dialog_wins_over_what_it_recalls() -> None:
    dialogs = DialogMessages[str]()
    dialogs.tell((5, "p-1"), "e|1|data", "pane")
    dialogs.remember((5, "p-1"), 60, "older")
    assert dialogs.tell((5, "p-1"), "e|2|data", "hook") == Wait()  # its message on the way still


ENVELOPE = {
    "id": "1-0",
    "type": "permission",
    "from": "twice",
    "agent": "twice",
    "data": {"prompt_id": "p-1"},
}


def test_a_remembered_entry_reads_back_as_its_message_and_first_event() -> None:
    found = remembered({"message": "77", "event": json.dumps(ENVELOPE)})
    assert found == (77, Event.from_envelope(ENVELOPE))


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({}, id="missing"),
        pytest.param({"event": json.dumps(ENVELOPE)}, id="no-message"),
        pytest.param({"message": "77"}, id="no-event"),
        pytest.param({"message": "seventy", "event": json.dumps(ENVELOPE)}, id="message-not-a-number"),
        pytest.param({"message": "77", "event": "{not json"}, id="event-not-json"),
        pytest.param({"message": "77", "event": "[1, 2]"}, id="event-not-an-object"),
    ],
)
def test_an_entry_that_does_not_read_is_none(fields: dict[str, str]) -> None:
    assert remembered(fields) is None
