"""The dashboard as a pure function of a snapshot: known states rendered at a fixed size, compared with
the expected screens in tests/fixtures/dashboard/ (rendered without colour)."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from bus.events.activity import activity_line, current
from worker.frontends.dashboard_render import (
    AgentRow,
    EventRow,
    MergeRow,
    ProjectTasks,
    QuestionRow,
    ServiceRow,
    Snapshot,
    agent_columns,
    allot,
    lines,
    render,
    render_plain,
    tree,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "dashboard"
NOW = 1_800_000_000.0

SHED = Snapshot(
    now=NOW,
    clock="14:30:05",
    title="shed",
    bus="embedded 127.0.0.1:41234",
    services=(
        ServiceRow("worker 4242 ok", True),
        ServiceRow("bot off: set IB_TELEGRAM_TOKEN to add it", None),
    ),
    agents=(
        AgentRow("painter", "waiting", NOW - 125, "", "t-3", "Paint the bike shed.\nfake: ask", usd=0.42),
        AgentRow("helper", "running", NOW - 40, "painter", "t-4", "Sand the boards", usd=12.5, cli="codex"),
        AgentRow("sweeper", "complete", NOW - 30, "painter", "", "Sweep up", usd=0.004),
        AgentRow("scribe", "rate_limited", NOW - 7200, "", "", "Write the docs", cli="gemini"),
        AgentRow("sleepy", "waiting", NOW - 90000, "gone-manager", "", "Nap", paused=True),
    ),
    tasks=(
        ProjectTasks(
            "shed",
            (("draft", 0), ("pending", 3), ("ready", 2), ("claimed", 2), ("done", 4), ("failed", 1)),
            (("t-5", "Paint the door", 7), ("t-6", "Oil the hinges", 5)),
            (("t-3", "painter"), ("t-4", "helper")),
        ),
    ),
    merges=(MergeRow("shed", "m-1", "sweeper", "queued"),),
    questions=(QuestionRow("q-1a2b3c4d", "painter", "What colour should the shed be?", NOW - 61),),
    events=(
        EventRow("14:20:00", "spawned", "painter started: Paint the bike shed."),
        EventRow("14:21:00", "task_claimed", "painter claimed t-3"),
        EventRow("14:22:00", "question", "Agent painter asks: What colour should the shed be?"),
        EventRow("14:23:00", "state", "helper: creating → running"),
        EventRow("14:24:00", "complete", "sweeper completed its goal"),
    ),
    selected="painter",
)

CROWD = Snapshot(
    now=NOW,
    clock="09:00:00",
    title="crowd",
    bus="redis 10.0.0.5:6379",
    services=(ServiceRow("worker 77 restarting in 4s (killed by SIGKILL, 2 restarts)", False),),
    agents=tuple(
        AgentRow(f"agent-{i:02d}", "running" if i % 3 else "waiting", NOW - 60 * i, "agent-00" if i else "")
        for i in range(30)
    ),
    questions=tuple(
        QuestionRow(f"q-{i}", f"agent-{i:02d}", f"Question number {i}?", NOW - 5) for i in range(3)
    ),
    events=tuple(EventRow(f"09:00:{i:02d}", "state", f"event {i}") for i in range(20)),
    selected="agent-03",
)

LOOKING = Snapshot(
    now=NOW,
    clock="14:30:05",
    title="shed",
    look=("painter", "".join(f"pane line {i}\n" for i in range(40))),
)


def screen(snapshot: Snapshot, width: int, height: int) -> str:
    console = Console(width=width, height=height, record=True, file=io.StringIO(), color_system=None)
    console.print(render(snapshot, width, height))
    return console.export_text()


@pytest.mark.parametrize(
    ("name", "snapshot", "width", "height"),
    [
        ("shed-80x24", SHED, 80, 24),
        ("shed-narrow-40x24", SHED, 40, 24),
        ("shed-wide-120x30", SHED, 120, 30),
        ("crowd-80x24", CROWD, 80, 24),
        ("look-80x24", LOOKING, 80, 24),
    ],
    ids=["known-state", "narrow", "wide", "many-agents", "look"],
)
def test_screen_matches_expected(name: str, snapshot: Snapshot, width: int, height: int) -> None:
    got = screen(snapshot, width, height)
    assert got == (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")
    assert len(got.splitlines()) <= height
    assert all(len(line) <= width for line in got.splitlines())


def test_many_agents_are_cut_with_a_count() -> None:
    got = screen(CROWD, 80, 24)
    shown = [
        line for line in got.splitlines() if "agent-" in line and ("running" in line or "waiting" in line)
    ]
    assert f"… {30 - len(shown)} more" in got
    assert "QUESTIONS 3" in got and all(f"q-{i}" in got for i in range(3))  # questions come first


def test_plain_text_is_the_whole_state_without_styles() -> None:
    got = render_plain(SHED)
    assert got == (FIXTURES / "shed-plain.txt").read_text(encoding="utf-8")
    assert "\x1b" not in got and "a answer" not in got and "›" not in got


def test_plain_text_keeps_every_agent() -> None:
    got = render_plain(CROWD)
    assert "more" not in got
    assert all(f"agent-{i:02d}" in got for i in range(30))


@pytest.mark.parametrize(
    ("width", "columns"),
    [
        (200, ["agent", "state", "age", "cli", "task", "manager", "cost", "goal"]),
        (80, ["agent", "state", "age", "cli", "task", "manager", "cost", "goal"]),
        (60, ["agent", "state", "age", "cli", "task", "manager"]),
        (40, ["agent", "state", "age", "cli"]),
        (24, ["agent"]),
    ],
    ids=["wide", "80", "60", "40", "tiny"],
)
def test_columns_drop_from_the_end_as_the_terminal_narrows(width: int, columns: list[str]) -> None:
    got = agent_columns(width)
    assert [name for name, _ in got] == columns
    assert sum(w for _, w in got) + len(got) - 1 + 2 == width


@pytest.mark.parametrize(
    ("wants", "budget", "expected"),
    [
        ([3, 5, 2], 20, [3, 5, 2]),
        ([3, 5, 2], 6, [2, 2, 2]),
        ([3, 5, 2], 8, [3, 3, 2]),
        ([3, 5, 2], 3, [2, 1, 0]),
        ([1, 10], 5, [1, 4]),
        ([], 5, []),
    ],
    ids=["all-fit", "each-a-heading-and-a-row", "rest-in-priority-order", "starved", "small-first", "none"],
)
def test_allot(wants: list[int], budget: int, expected: list[int]) -> None:
    assert allot(wants, budget) == expected


def test_tree_puts_workers_under_their_manager_and_orphans_at_the_root() -> None:
    got = [(prefix, a.id) for prefix, a in tree(SHED.agents)]
    assert got == [
        ("", "sleepy"),
        ("", "scribe"),
        ("", "painter"),
        ("├─ ", "helper"),
        ("└─ ", "sweeper"),
    ]


@pytest.mark.parametrize("height", [1, 2, 3, 5, 24], ids=lambda h: f"h{h}")
def test_never_more_lines_than_the_height(height: int) -> None:
    assert len(lines(CROWD, 80, height)) <= height


def test_a_working_agent_shows_what_it_does_under_its_row() -> None:
    helper = AgentRow(
        "helper", "running", NOW - 40, "painter", "t-4", "Sand the boards", doing="⚙ Read a.py · 3s"
    )
    snapshot = replace(SHED, agents=(SHED.agents[0], helper))
    text = render_plain(snapshot, 80).splitlines()
    row = next(i for i, line in enumerate(text) if "helper" in line)
    assert text[row + 1].strip() == "⚙ Read a.py · 3s"
    assert text[row + 1].index("⚙") > text[row].index("helper") - 3  # indented under the agent


def test_the_activity_of_an_agent_from_its_output_tail() -> None:
    items = [
        {"kind": "text", "text": "old turn", "tool": "", "ts": ""},
        {"kind": "prompt", "text": "", "tool": "", "ts": "2027-01-15T08:00:00+00:00"},
        {"kind": "tool_use", "text": "**Grep**(TODO)", "tool": "Grep", "ts": "2027-01-15T08:00:02+00:00"},
    ]
    at = datetime(2027, 1, 15, 8, 0, 10, tzinfo=UTC).timestamp()
    assert activity_line(current(items, "running", at), at) == "⚙ Grep TODO · 8s — turn 10s, 1 tool"
    assert activity_line(current(items, "waiting", at), at) == ""
    assert activity_line(current(items[2:], "running", at), at) == "⚙ Grep TODO · 8s"  # its start unseen
