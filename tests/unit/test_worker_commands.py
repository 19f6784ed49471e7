"""Worker commands on the stream: good ones decode to their model, entries written by the older code (a
bare op name and an args dict) still decode, and each kind of garbage is refused in one line or set
aside for the dead letters (table-driven, pure)."""

from __future__ import annotations

import json

import pytest

from bus.commands.command_wire import COMMAND_FIELD
from bus.commands.worker_commands import (
    BY_OP,
    COMMAND_TYPES,
    DEFAULT_TIMEOUT,
    Answer,
    Approve,
    AutoPause,
    AutoStart,
    AutoStop,
    BadCommand,
    Choose,
    Command,
    Deny,
    Diff,
    DiffReview,
    Kill,
    Look,
    Merge,
    MergeCheck,
    NewAgent,
    Nuke,
    Pause,
    PlanApprove,
    PlanDiscard,
    PlanEdit,
    PlanStart,
    PressKeys,
    QueueMerge,
    Resume,
    Send,
    Status,
    TakeScreenshot,
    parse_command,
)
from bus.commands.worker_rpc import (
    NotACommand,
    Received,
    Refused,
    decode_command,
    encode_command,
)


def _entry(body: object) -> dict[str, str]:
    return {COMMAND_FIELD: json.dumps(body)}


def _old(op: str, args: dict[str, object]) -> dict[str, str]:
    """An entry exactly as the code before the command models wrote it."""
    return _entry({"id": "c1", "op": op, "args": args, "from": "telegram:42"})


# Every shape the older CLI, dashboard and bot put on a command stream, with what it decodes to.
OLD_ENTRIES: dict[str, tuple[str, dict[str, object], Command]] = {
    "cli-new-agent": (
        "new-agent",
        {"goal": "paint", "name": "painter", "worker": True, "caller": "boss"},
        NewAgent(goal="paint", name="painter", worker=True, caller="boss"),
    ),
    "cli-new-agent-for-a-task": ("new-agent", {"task": "t1"}, NewAgent(task="t1")),
    "bot-new-agent": (
        "new-agent",
        {"goal": "paint", "project": "shop"},
        NewAgent(goal="paint", project="shop"),
    ),
    "cli-send": (
        "send",
        {"agent": "a1", "text": "hi", "sender": ""},
        Send(agent="a1", text="hi"),
    ),
    "dashboard-send": ("send", {"agent": "a1", "text": "hi"}, Send(agent="a1", text="hi")),
    "agent-send": (
        "send",
        {"agent": "a1", "text": "hi", "sender": "boss"},
        Send(agent="a1", text="hi", sender="boss"),
    ),
    "esc": ("keys", {"agent": "a1", "keys": ["Escape"]}, PressKeys(agent="a1", keys=("Escape",))),
    "cli-look": ("look", {"agent": "a1"}, Look(agent="a1")),
    "bot-look": ("look", {"agent": "a1", "lines": 40}, Look(agent="a1", lines=40)),
    "screenshot": ("screenshot", {"agent": "a1"}, TakeScreenshot(agent="a1")),
    "answer": ("answer", {"question": "q-1", "text": "yes"}, Answer(question="q-1", text="yes")),
    "cli-kill": ("kill", {"agent": "a1", "force": True}, Kill(agent="a1", force=True)),
    "bot-kill": ("kill", {"agent": "a1"}, Kill(agent="a1")),
    "merge": ("merge", {"agent": "a1", "into": "main"}, Merge(agent="a1", into="main")),
    "merge-check": ("merge-check", {"agent": "a1"}, MergeCheck(agent="a1")),
    "cli-approve": (
        "approve",
        {"agent": "a1", "always": False, "prompt": ""},
        Approve(agent="a1"),
    ),
    "bot-approve": (
        "approve",
        {"agent": "a1", "prompt": "p-0a1b2c3d", "always": True},
        Approve(agent="a1", prompt="p-0a1b2c3d", always=True),
    ),
    "bot-deny-with-always": (
        "deny",
        {"agent": "a1", "prompt": None, "always": False},
        Deny(agent="a1"),
    ),
    "cli-deny": (
        "deny",
        {"agent": "a1", "reason": "use the fixtures", "prompt": ""},
        Deny(agent="a1", reason="use the fixtures"),
    ),
    "choose": (
        "choose",
        {"agent": "a1", "answer": "SQLite", "prompt": ""},
        Choose(agent="a1", answer="SQLite"),
    ),
    "pause": ("pause", {"agent": "a1"}, Pause(agent="a1")),
    "resume": ("resume", {"agent": "a1"}, Resume(agent="a1")),
    "nuke-all": ("nuke", {}, Nuke()),
    "nuke-one": ("nuke", {"agent": "a1", "tree": False}, Nuke(agent="a1", tree=False)),
    "diff": ("diff", {"agent": "a1", "stat": True}, Diff(agent="a1", stat=True)),
    "status": ("status", {"agent": "a1"}, Status(agent="a1")),
    "diff-review": (
        "diff-review",
        {"agent": "a1", "pictures": False},
        DiffReview(agent="a1", pictures=False),
    ),
    "cli-auto-start": (
        "auto-start",
        {"project": "shop", "worktrees": True, "max_tasks": 3, "agent": ""},
        AutoStart(project="shop", worktrees=True, max_tasks=3),
    ),
    "bot-auto-start": ("auto-start", {"project": "shop", "worktrees": False}, AutoStart(project="shop")),
    "cli-auto-stop": ("auto-stop", {"project": "shop", "reason": ""}, AutoStop(project="shop")),
    "bot-auto-stop": ("auto-stop", {"project": "shop"}, AutoStop(project="shop")),
    "bot-auto-pause": (
        "auto-pause",
        {"project": "shop", "interrupt": True, "reason": "interrupted from Telegram"},
        AutoPause(project="shop", interrupt=True, reason="interrupted from Telegram"),
    ),
    "queue-merge": ("queue-merge", {"agent": "a1"}, QueueMerge(agent="a1")),
    "plan-start": (
        "plan-start",
        {"goal": "rate limits", "project": "shop"},
        PlanStart(goal="rate limits", project="shop"),
    ),
    "plan-approve": ("plan-approve", {"plan": "plan-1"}, PlanApprove(plan="plan-1")),
    "plan-edit": (
        "plan-edit",
        {"plan": "plan-1", "changes": "fewer"},
        PlanEdit(plan="plan-1", changes="fewer"),
    ),
    "plan-discard": ("plan-discard", {"plan": "plan-1"}, PlanDiscard(plan="plan-1")),
}


@pytest.mark.parametrize(("op", "args", "expected"), OLD_ENTRIES.values(), ids=OLD_ENTRIES.keys())
def test_entries_the_older_code_queued_still_decode(
    op: str, args: dict[str, object], expected: Command
) -> None:
    assert decode_command(_old(op, args)) == Received("c1", "telegram:42", expected)  # type: ignore[arg-type]


def test_the_old_entries_cover_every_command() -> None:
    assert {op for op, _args, _command in OLD_ENTRIES.values()} == set(BY_OP)


@pytest.mark.parametrize("command", [c for _op, _args, c in OLD_ENTRIES.values()], ids=OLD_ENTRIES.keys())
def test_what_is_written_decodes_to_the_same_command(command: Command) -> None:
    entry = {COMMAND_FIELD: encode_command("c2", command, "ib@w1")}
    assert decode_command(entry) == Received("c2", "ib@w1", command)  # type: ignore[arg-type]
    body = json.loads(entry[COMMAND_FIELD])
    assert set(body) == {"id", "op", "args", "from"} and "op" not in body["args"]


def test_an_entry_without_args_or_sender_is_a_command_with_its_defaults() -> None:
    assert decode_command(_entry({"id": "c3", "op": "nuke"})) == Received("c3", "", Nuke())


def test_empty_optional_texts_read_as_left_out() -> None:
    assert Approve(agent="a1", prompt="").prompt is None
    assert Send(agent="a1", text="", sender="").sender is None
    assert Send(agent="a1", text="").text == ""  # a required text may be empty, as before


# Entries with an id but a command that cannot run: refused with one line naming the command and field.
REFUSED: dict[str, tuple[dict[str, object], str]] = {
    "unknown-op": ({"op": "fly", "args": {}}, "unknown command 'fly' (known: answer, approve, "),
    "op-not-a-string": (
        {"op": ["send"], "args": {}},
        "the entry names no command (field 'op' must be a string)",
    ),
    "no-op": ({"args": {"agent": "a1"}}, "the entry names no command (field 'op' must be a string)"),
    "args-a-list": ({"op": "nuke", "args": ["a1"]}, "nuke: its arguments must be a JSON object, not ['a1']"),
    "args-a-string": ({"op": "send", "args": "hi"}, "send: its arguments must be a JSON object, not 'hi'"),
    "missing-field": ({"op": "send", "args": {"agent": "a1"}}, "send: the argument 'text' is missing"),
    "two-missing": ({"op": "send", "args": {}}, "send: the argument 'agent' is missing (and 1 more)"),
    "unknown-field": (
        {"op": "kill", "args": {"agent": "a1", "colour": "red"}},
        "kill: there is no argument 'colour' (it takes: agent, force)",
    ),
    "text-a-number": (
        {"op": "send", "args": {"agent": "a1", "text": 7}},
        "send: the argument 'text' is wrong: input should be a valid string (got 7)",
    ),
    "lines-a-word": (
        {"op": "look", "args": {"agent": "a1", "lines": "ten"}},
        "look: the argument 'lines' is wrong: input should be a valid integer (got 'ten')",
    ),
    "lines-a-bool": (
        {"op": "look", "args": {"agent": "a1", "lines": True}},
        "look: the argument 'lines' is wrong: input should be a valid integer (got True)",
    ),
    "force-a-number": (
        {"op": "kill", "args": {"agent": "a1", "force": 1}},
        "kill: the argument 'force' is wrong: input should be a valid boolean (got 1)",
    ),
    "a-key-not-text": (
        {"op": "keys", "args": {"agent": "a1", "keys": ["Escape", 5]}},
        "keys: the argument 'keys[1]' is wrong: input should be a valid string (got 5)",
    ),
    "unknown-permission-mode": (
        {"op": "new-agent", "args": {"goal": "g", "permission_mode": "yolo"}},
        "new-agent: the argument 'permission_mode' is wrong: value error, must be one of acceptEdits, "
        "default, manual, plan, auto, dontAsk, bypassPermissions (got 'yolo')",
    ),
    "long-value-cut": (
        {"op": "look", "args": {"agent": "a1", "lines": "x" * 500}},
        "look: the argument 'lines' is wrong: input should be a valid integer (got '" + "x" * 38 + "…)",
    ),
}


@pytest.mark.parametrize(("body", "error"), REFUSED.values(), ids=REFUSED.keys())
def test_a_bad_command_is_refused_in_one_line(body: dict[str, object], error: str) -> None:
    found = decode_command(_entry({"id": "c4", "from": "ib@w2", **body}))
    assert isinstance(found, Refused) and (found.id, found.sender) == ("c4", "ib@w2")
    assert found.error.startswith(error) and "\n" not in found.error
    assert "pydantic" not in found.error and "For further information" not in found.error


# Entries nobody can answer: set aside for the dead letters with the reason.
UNREADABLE: dict[str, tuple[dict[str, str], str]] = {
    "bad-utf8": ({COMMAND_FIELD: b"\xff{}".decode("utf-8", "surrogateescape")}, "not valid UTF-8"),
    "not-json": ({COMMAND_FIELD: "send a1 hi"}, "not JSON"),
    "cut-json": ({COMMAND_FIELD: '{"id": "c5", "op": "se'}, "not JSON"),
    "deep": ({COMMAND_FIELD: "[" * 100_000}, "not JSON"),
    "a-list": ({COMMAND_FIELD: '["send"]'}, "not a JSON object (a list)"),
    "null": ({COMMAND_FIELD: "null"}, "not a JSON object (a NoneType)"),
    "no-id": (
        {COMMAND_FIELD: '{"op": "nuke", "args": {}}'},
        "no command id (field 'id' must be a non-empty string)",
    ),
    "empty-id": (
        {COMMAND_FIELD: '{"id": "", "op": "nuke"}'},
        "no command id (field 'id' must be a non-empty string)",
    ),
    "id-a-number": (
        {COMMAND_FIELD: '{"id": 7, "op": "nuke"}'},
        "no command id (field 'id' must be a non-empty string)",
    ),
    "no-field": ({"other": "x"}, "no 'c' field"),
}


@pytest.mark.parametrize(("fields", "reason"), UNREADABLE.values(), ids=UNREADABLE.keys())
def test_an_entry_nobody_can_answer_is_not_a_command(fields: dict[str, str], reason: str) -> None:
    assert decode_command(fields) == NotACommand(reason)


def test_parse_command_is_the_same_check_for_callers() -> None:
    assert parse_command("look", {"agent": "a1", "lines": 5}) == Look(agent="a1", lines=5)
    with pytest.raises(BadCommand, match=r"^look: the argument 'agent' is missing$"):
        parse_command("look", {})


def test_commands_are_frozen() -> None:
    look = Look(agent="a1")
    with pytest.raises(ValueError, match="frozen"):
        look.agent = "a2"  # type: ignore[misc]  # the point: assigning must fail at run time too


# --- what used to be tables keyed by the name ----------------------------------------------------------

TIMEOUTS = {"merge": 600.0, "new-agent": 120.0, "nuke": 300.0, "auto-start": 120.0, "diff-review": 120.0}


@pytest.mark.parametrize("kind", COMMAND_TYPES, ids=lambda kind: kind.__name__)
def test_each_command_knows_its_timeout_and_where_it_runs(kind: type[Command]) -> None:
    op = kind.model_fields["op"].default
    assert BY_OP[op] is kind
    assert kind.timeout == TIMEOUTS.get(op, DEFAULT_TIMEOUT)
    assert kind.bus_only is (op == "queue-merge")
    if kind.routed_by is not None:  # it names a text field of the command
        assert kind.model_fields[kind.routed_by].annotation in (str, str | None)


@pytest.mark.parametrize(
    ("command", "routing_id"),
    [
        (Send(agent="a1", text="x"), "a1"),
        (Answer(question="q-1", text="x"), "q-1"),
        (Nuke(), None),
        (Nuke(agent="a1"), "a1"),
        (AutoStart(project="shop"), None),
        (AutoStart(project="shop", agent="a1"), "a1"),
        (QueueMerge(agent="a1"), "a1"),
        (NewAgent(goal="x", caller="boss"), None),
        (PlanApprove(plan="plan-1"), None),
    ],
    ids=["agent", "question", "nuke-all", "nuke-one", "auto", "auto-agent", "bus-only", "spawn", "plan"],
)
def test_the_id_that_decides_the_worker(command: Command, routing_id: str | None) -> None:
    assert command.routing_id() == routing_id
