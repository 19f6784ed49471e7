"""Reading the bot's commands: which command a message is, and the arguments after it."""

from __future__ import annotations

import pytest
from telegram.ext import CommandHandler

from bot.app import HANDLERS
from bot.errors import CommandUsage
from bot.handlers.chat_commands import (
    COMMANDS,
    LOOK_LINES,
    AutoOptions,
    NewAgent,
    NewTask,
    Target,
    command_of,
    help_text,
    parse_add,
    parse_auto_options,
    parse_new,
    parse_project,
    parse_schedule,
    parse_target,
    rest_of,
)

BOT = "ittybus_bot"

COMMAND_OF = [
    ("plain", "/look", "look"),
    ("with-args", "/look agent-1 20", "look"),
    ("to-us", "/look@ittybus_bot 20", "look"),
    ("to-us-any-case", "/LOOK@IttyBus_Bot", "look"),
    ("to-another-bot", "/look@other_bot", None),
    ("not-a-command", "look at this", None),
    ("slash-inside", "see /look", None),
    ("path-is-no-command", "/usr/bin/env", None),
    ("newline-after", "/new\nwrite the tests", "new"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in COMMAND_OF], ids=[c[0] for c in COMMAND_OF])
def test_command_of(text: str, expected: str | None) -> None:
    assert command_of(text, BOT) == expected


REST = [
    ("nothing", "/new", ""),
    ("words", "/new fix the login", "fix the login"),
    ("addressed", "/new@ittybus_bot fix it", "fix it"),
    ("lines-kept", "/new first line\nsecond line", "first line\nsecond line"),
]


@pytest.mark.parametrize(("text", "expected"), [r[1:] for r in REST], ids=[r[0] for r in REST])
def test_rest_of(text: str, expected: str) -> None:
    assert rest_of(text) == expected


ADD = [
    ("title-only", "/add Write the tests", NewTask("Write the tests", 5)),
    ("priority-after", "/add Write the tests -p 8", NewTask("Write the tests", 8)),
    ("priority-before", "/add --priority 2 Write the tests", NewTask("Write the tests", 2)),
    ("priority-equals", "/add Write the tests --priority=10", NewTask("Write the tests", 10)),
]


@pytest.mark.parametrize(("text", "expected"), [a[1:] for a in ADD], ids=[a[0] for a in ADD])
def test_parse_add(text: str, expected: NewTask) -> None:
    assert parse_add(text) == expected


BAD_ADD = [
    ("no-title", "/add", "usage: /add"),
    ("only-flag", "/add -p 3", "usage: /add"),
    ("flag-without-value", "/add tests -p", "usage: /add"),
    ("priority-out-of-range", "/add tests -p 11", "bad priority"),
    ("priority-not-a-number", "/add tests -p high", "bad priority"),
]


@pytest.mark.parametrize(("text", "message"), [b[1:] for b in BAD_ADD], ids=[b[0] for b in BAD_ADD])
def test_parse_add_refuses(text: str, message: str) -> None:
    with pytest.raises(CommandUsage, match=message):
        parse_add(text)


def test_parse_project() -> None:
    assert parse_project(["backend"]) == "backend"
    for args in ([], ["a", "b"], ["Bad Name!"]):
        with pytest.raises(CommandUsage, match="/project NAME"):
            parse_project(args)


NEW = [
    ("goal", "/new Add rate limiting", NewAgent("Add rate limiting")),
    ("on-first", "/new --on wb Add rate limiting", NewAgent("Add rate limiting", "wb")),
    ("on-equals", "/new --on=build.box-2 fix it", NewAgent("fix it", "build.box-2")),
    ("on-later-is-goal", "/new fix the --on flag", NewAgent("fix the --on flag")),
    ("cli", "/new --cli codex Add rate limiting", NewAgent("Add rate limiting", cli="codex")),
    ("cli-and-on", "/new --cli=gemini --on wb fix it", NewAgent("fix it", "wb", "gemini")),
    ("on-and-cli", "/new --on wb --cli claude fix it", NewAgent("fix it", "wb", "claude")),
    ("cli-later-is-goal", "/new fix the --cli flag", NewAgent("fix the --cli flag")),
]


@pytest.mark.parametrize(("text", "expected"), [n[1:] for n in NEW], ids=[n[0] for n in NEW])
def test_parse_new(text: str, expected: NewAgent) -> None:
    assert parse_new(text) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("/new   ", "/new \\[--on WORKER\\] \\[--cli claude\\|codex\\|gemini\\] GOAL"),
        ("/new --on wb", "GOAL"),
        ("/new --on a:b go", "bad worker id"),
        ("/new --cli codex", "GOAL"),
        ("/new --cli co/dex go", "bad cli id"),
    ],
    ids=["empty", "only-worker", "bad-worker", "only-cli", "bad-cli"],
)
def test_parse_new_refuses(text: str, match: str) -> None:
    with pytest.raises(CommandUsage, match=match):
        parse_new(text)


AUTO = [
    ("plain", [], AutoOptions()),
    ("worktrees", ["--worktrees"], AutoOptions(worktrees=True)),
    ("short", ["-w"], AutoOptions(worktrees=True)),
    ("on", ["--on", "wa", "-w"], AutoOptions(True, "wa")),
    ("on-equals", ["--on=wa"], AutoOptions(on="wa")),
]


@pytest.mark.parametrize(("args", "expected"), [a[1:] for a in AUTO], ids=[a[0] for a in AUTO])
def test_parse_auto(args: list[str], expected: AutoOptions) -> None:
    assert parse_auto_options(args) == expected


@pytest.mark.parametrize(
    ("args", "match"),
    [(["--worktree"], "--worktree"), (["--on"], "--on"), (["--on", "w b*"], "bad worker id")],
    ids=["typo", "on-without-worker", "bad-worker"],
)
def test_parse_auto_refuses(args: list[str], match: str) -> None:
    with pytest.raises(CommandUsage, match=match):
        parse_auto_options(args)


TARGETS = [
    ("topic-agent", "kill", [], False, Target(None)),
    ("named", "kill", ["agent-1"], False, Target("agent-1")),
    ("look-default-lines", "look", [], True, Target(None, LOOK_LINES)),
    ("look-lines", "look", ["20"], True, Target(None, 20)),
    ("look-agent-and-lines", "look", ["agent-1", "500"], True, Target("agent-1", 200)),
]


@pytest.mark.parametrize(
    ("command", "args", "with_lines", "expected"), [t[1:] for t in TARGETS], ids=[t[0] for t in TARGETS]
)
def test_parse_target(command: str, args: list[str], with_lines: bool, expected: Target) -> None:
    assert parse_target(command, args, with_lines) == expected


def test_parse_target_refuses() -> None:
    with pytest.raises(CommandUsage, match="usage: /kill"):
        parse_target("kill", ["a", "b"])
    with pytest.raises(CommandUsage, match="bad agent id"):
        parse_target("kill", ["Not An Id"])


def test_every_command_is_in_the_help_and_valid_for_telegram() -> None:
    text = help_text()
    for name, description in COMMANDS:
        assert f"/{name} — {description}" in text
        assert name.islower() and len(name) <= 32 and 1 <= len(description) <= 256


def test_every_listed_command_has_a_handler_and_no_handler_is_unlisted() -> None:
    """/help and setMyCommands list exactly the commands the bot's handlers take (and /start, Telegram's)."""
    taken = {name for handler in HANDLERS if isinstance(handler, CommandHandler) for name in handler.commands}
    assert taken == {name for name, _ in COMMANDS} | {"start"}


@pytest.mark.parametrize(
    ("text", "cron", "title", "priority"),
    [
        ("/schedule 0 9 * * mon-fri Audit the logs -p 3", "0 9 * * mon-fri", "Audit the logs", 3),
        ("/schedule @daily Audit", "@daily", "Audit", 5),
        ("/schedule * * * * * * Every second", "* * * * * *", "Every second", 5),
        ("/schedule */5 * * * * 2 tests", "*/5 * * * *", "2 tests", 5),
    ],
)
def test_parse_schedule(text: str, cron: str, title: str, priority: int) -> None:
    found = parse_schedule(text)
    assert (found.cron, found.task.title, found.task.priority) == (cron, title, priority)


@pytest.mark.parametrize(
    "text", ["/schedule", "/schedule @daily", "/schedule 0 9 * * *", "/schedule 0 9 * *"]
)
def test_parse_schedule_needs_a_cron_and_a_title(text: str) -> None:
    with pytest.raises(CommandUsage, match="usage: /schedule CRON TITLE"):
        parse_schedule(text)
