"""The /auto loop's decisions, as a table: (state, what happened) → (state changes, actions)."""

from __future__ import annotations

from typing import Any

import pytest

from bus.events.event_model import Event
from bus.stores.auto_state import AutoState
from worker.auto.decide import (
    Action,
    ActionFailed,
    Claim,
    Claimed,
    GiveTask,
    Happening,
    NothingReady,
    PauseAsked,
    Publish,
    QueueMerge,
    RemoveAgent,
    Resumed,
    RetryMerge,
    SpawnMergeAgent,
    Started,
    StopAsked,
    action_from_dict,
    action_to_dict,
    decide,
    is_after,
    merge_agent_name,
    project_agent_name,
    task_agent_name,
)

P = "backend"
LAST = "100-0"
NEXT = "200-0"


def ev(type_: str, task: str | None = None, agent: str | None = None, **data: Any) -> Event:
    return Event(id=NEXT, type=type_, project=P, task=task, agent=agent, data=data)


TREES = AutoState(project=P, worker="w1", worktrees=True, last_event=LAST)
SINGLE = AutoState(project=P, worker="w1", agent="auto-backend", last_event=LAST)
CLAIMING = TREES.replace(phase="claiming")
WORKING = TREES.replace(
    phase="working", task="impl", task_agent="impl", taken=("design", "impl"), done=("design",)
)
SINGLE_WORKING = SINGLE.replace(phase="working", task="impl", task_agent="auto-backend", taken=("impl",))
MERGING = WORKING.replace(phase="merging")
RESOLVING = MERGING.replace(phase="resolving", merge_agent="merge-impl", files=("api.txt",), target="main")
MERGING_RESOLVED = RESOLVING.replace(phase="merging")
WAITING = TREES.replace(phase="waiting")
BETWEEN = {"phase": "claiming", "task": "", "task_agent": "", "merge_agent": "", "files": (), "target": ""}
PAUSE_HINT = f"\nResume with: ib auto --project {P}"
STILL_OPEN = (
    "impl completed, but its task impl is still open: ib task done impl runs its tests (or ib task fail impl)"
)


def paused(reason: str, state: AutoState, agent: str = "impl") -> Publish:
    data = {"reason": reason, "phase": state.phase, "agent": agent}
    return Publish("auto_paused", f"Auto mode paused for project {P}: {reason}{PAUSE_HINT}", state.task, data)


def finished(
    why: str, done: tuple[str, ...], taken: tuple[str, ...], failed: tuple[str, ...] = ()
) -> Publish:
    summary = f"{len(done)}/{len(taken)} tasks done" + (f", {len(failed)} failed" if failed else "")
    data = {"done": list(done), "failed": list(failed), "taken": list(taken)}
    return Publish("auto_finished", f"{why} Auto mode finished. {summary}.", data=data)


RESUMED = Publish("auto_started", f"Auto mode resumed for project {P}", "impl", {"resumed": True})

CASES: list[tuple[str, AutoState, Happening, dict[str, Any], list[Action]]] = [
    (
        "start-with-worktrees",
        TREES,
        Started(ready=1, blocked=2),
        {"phase": "claiming"},
        [
            Publish(
                "auto_started",
                f"Auto mode started for project {P} (a worktree per task)\n1 task ready, 2 blocked",
                data={"ready": 1, "blocked": 2},
            ),
            Claim(""),
        ],
    ),
    (
        "start-with-the-projects-agent",
        SINGLE,
        Started(ready=3, blocked=0),
        {"phase": "claiming"},
        [
            Publish(
                "auto_started",
                f"Auto mode started for project {P}\n3 tasks ready, 0 blocked",
                data={"ready": 3, "blocked": 0},
            ),
            Claim("auto-backend"),
        ],
    ),
    (
        "claimed-spawns-its-agent",
        CLAIMING,
        Claimed("design", "design", "Design auth", 8),
        {"phase": "working", "task": "design", "task_agent": "design", "taken": ("design",)},
        [GiveTask("design", "design", worktree=True)],
    ),
    (
        "claimed-goes-to-the-projects-agent",
        SINGLE.replace(phase="claiming"),
        Claimed("design", "auto-backend"),
        {"phase": "working", "task": "design", "task_agent": "auto-backend", "taken": ("design",)},
        [GiveTask("auto-backend", "design", worktree=False)],
    ),
    ("claimed-out-of-turn-is-ignored", WORKING, Claimed("other", "other"), {}, []),
    (
        "queue-empty-finishes",
        CLAIMING.replace(taken=("a", "b"), done=("a", "b")),
        NothingReady(claimed=0, pending=0),
        {"status": "finished", "phase": "idle"},
        [finished("Queue empty.", ("a", "b"), ("a", "b"))],
    ),
    ("others-working-waits", CLAIMING, NothingReady(claimed=1, pending=2), {"phase": "waiting"}, []),
    ("held-for-an-overlap-waits", CLAIMING, NothingReady(0, 0, held=1), {"phase": "waiting"}, []),
    (
        "only-blocked-tasks-finishes",
        CLAIMING,
        NothingReady(claimed=0, pending=2),
        {"status": "finished", "phase": "idle"},
        [finished("Nothing can run (2 blocked).", (), ())],
    ),
    (
        "task-done-queues-the-merge",
        WORKING,
        ev("task_done", "impl", "impl"),
        {"phase": "merging", "last_event": NEXT},
        [QueueMerge("impl", "impl")],
    ),
    (
        "task-done-without-worktrees-claims-next",
        SINGLE_WORKING,
        ev("task_done", "impl", "auto-backend"),
        {**BETWEEN, "done": ("impl",), "last_event": NEXT},
        [Claim("auto-backend")],
    ),
    ("task-done-of-another-task-is-ignored", WORKING, ev("task_done", "other", "x"), {}, []),
    (
        "completed-with-the-task-still-open-pauses",
        WORKING,
        ev("complete", "impl", "impl"),
        {
            "status": "paused",
            "reason": STILL_OPEN,
            "last_event": NEXT,
        },
        [paused(STILL_OPEN, WORKING)],
    ),
    ("complete-of-another-agent-is-ignored", WORKING, ev("complete", "impl", "helper"), {}, []),
    (
        "task-failed-will-retry",
        WORKING,
        ev("task_failed", "impl", "impl", will_retry=True),
        {**BETWEEN, "last_event": NEXT},
        [RemoveAgent("impl"), Claim("")],
    ),
    (
        "task-failed-for-good-without-worktrees",
        SINGLE_WORKING,
        ev("task_failed", "impl", "auto-backend", will_retry=False),
        {**BETWEEN, "failed": ("impl",), "last_event": NEXT},
        [Claim("auto-backend")],
    ),
    (
        "merged-claims-next",
        MERGING,
        ev("merge_merged", "impl", "impl", sha="abc", commits=1),
        {**BETWEEN, "done": ("design", "impl"), "last_event": NEXT},
        [Claim("")],
    ),
    (
        "merged-reaches-max-tasks",
        MERGING.replace(max_tasks=2),
        ev("merge_merged", "impl", "impl", sha="abc", commits=1),
        {"status": "finished", "phase": "idle", "task": "", "task_agent": "", "done": ("design", "impl")}
        | {"last_event": NEXT},
        [finished("Reached --max-tasks 2.", ("design", "impl"), ("design", "impl"))],
    ),
    ("merge-of-another-agent-is-ignored", MERGING, ev("merge_merged", "x", "x", commits=1), {}, []),
    (
        "conflict-spawns-a-merge-agent",
        MERGING,
        ev("merge_conflict", "impl", "impl", files=["api.txt", "b.txt"], target="main"),
        {
            "phase": "resolving",
            "merge_agent": "merge-impl",
            "files": ("api.txt", "b.txt"),
            "target": "main",
            "last_event": NEXT,
        },
        [SpawnMergeAgent("merge-impl", "impl", "impl", "main", ("api.txt", "b.txt"))],
    ),
    (
        "merge-agent-complete-queues-its-merge",
        RESOLVING,
        ev("complete", "impl", "merge-impl"),
        {"phase": "merging", "last_event": NEXT},
        [QueueMerge("merge-impl", "impl", "main")],
    ),
    ("task-agent-complete-while-resolving-is-ignored", RESOLVING, ev("complete", "impl", "impl"), {}, []),
    (
        "merge-agent-merged-removes-the-task-agent",
        MERGING_RESOLVED,
        ev("merge_merged", "impl", "merge-impl", sha="abc", commits=2),
        {**BETWEEN, "done": ("design", "impl"), "last_event": NEXT},
        [RemoveAgent("impl"), Claim("")],
    ),
    (
        "merge-agent-brought-nothing-pauses",
        MERGING_RESOLVED,
        ev("merge_merged", "impl", "merge-impl", sha="abc", commits=0),
        {
            "status": "paused",
            "reason": "merge-impl brought no commits: impl is not merged",
            "last_event": NEXT,
        },
        [paused("merge-impl brought no commits: impl is not merged", MERGING_RESOLVED, "merge-impl")],
    ),
    (
        "merge-agent-conflicts-again",
        MERGING_RESOLVED,
        ev("merge_conflict", "impl", "merge-impl", files=["api.txt"], target="main"),
        {"phase": "resolving", "last_event": NEXT},
        [RetryMerge("merge-impl", "main", ("api.txt",))],
    ),
    (
        "merge-failed-pauses",
        MERGING,
        ev("merge_failed", "impl", "impl", error="dirty worktree"),
        {"status": "paused", "reason": "merging impl failed: dirty worktree", "last_event": NEXT},
        [paused("merging impl failed: dirty worktree", MERGING)],
    ),
    (
        "waiting-wakes-on-task-ready",
        WAITING,
        ev("task_ready", "later"),
        {"phase": "claiming", "last_event": NEXT},
        [Claim("")],
    ),
    (
        "waiting-wakes-when-a-merge-lets-go-of-a-held-task",
        WAITING,
        ev("merge_merged", "other", "other"),
        {"phase": "claiming", "last_event": NEXT},
        [Claim("")],
    ),
    ("waiting-ignores-other-events", WAITING, ev("complete", None, "x"), {}, []),
    (
        "an-event-seen-before-a-restart-is-ignored",
        WORKING.replace(last_event=NEXT),
        ev("task_done", "impl", "impl"),
        {},
        [],
    ),
    (
        "another-projects-event-is-ignored",
        WORKING,
        Event(id=NEXT, type="task_done", project="x", task="impl"),
        {},
        [],
    ),
    (
        "a-paused-loop-ignores-events",
        WORKING.replace(status="paused"),
        ev("task_done", "impl", "impl"),
        {},
        [],
    ),
    (
        "stop-leaves-the-task-claimed",
        WORKING,
        StopAsked(),
        {"status": "stopped", "reason": "stopped by the person"},
        [
            Publish(
                "auto_stopped",
                f"Auto mode stopped for project {P}; impl stays claimed by impl",
                "impl",
                {"reason": "", "agent": "impl"},
            )
        ],
    ),
    ("stop-a-finished-loop-does-nothing", TREES.replace(status="finished"), StopAsked(), {}, []),
    (
        "pause-asked",
        WORKING,
        PauseAsked("lunch"),
        {"status": "paused", "reason": "lunch"},
        [paused("lunch", WORKING)],
    ),
    (
        "a-failed-action-pauses",
        CLAIMING,
        ActionFailed("give-task", "no git"),
        {"status": "paused", "reason": "give-task failed: no git"},
        [
            Publish(
                "auto_paused",
                f"Auto mode paused for project {P}: give-task failed: no git{PAUSE_HINT}",
                "",
                {"reason": "give-task failed: no git", "phase": "claiming", "agent": ""},
            )
        ],
    ),
    (
        "resume-after-the-task-was-done",
        WORKING.replace(status="paused", reason="lunch"),
        Resumed(frozenset({"impl"}), "done"),
        {"phase": "merging"},
        [RESUMED, QueueMerge("impl", "impl")],
    ),
    (
        "resume-while-the-agent-works",
        WORKING.replace(status="paused"),
        Resumed(frozenset({"impl"}), "claimed"),
        {},
        [RESUMED],
    ),
    (
        "resume-when-the-agent-never-started",
        WORKING.replace(status="paused"),
        Resumed(frozenset(), "claimed"),
        {},
        [RESUMED, GiveTask("impl", "impl", worktree=True)],
    ),
    (
        "resume-after-the-task-failed-for-good",
        WORKING.replace(status="paused"),
        Resumed(frozenset(), "failed"),
        {**BETWEEN, "failed": ("impl",)},
        [RESUMED, Claim("")],
    ),
    (
        "resume-retries-a-failed-merge",
        MERGING.replace(status="paused"),
        Resumed(frozenset({"impl"}), "done"),
        {},
        [RESUMED, QueueMerge("impl", "impl")],
    ),
    (
        "resume-after-a-merge-by-hand",
        MERGING.replace(status="paused"),
        Resumed(frozenset(), "done"),
        {**BETWEEN, "done": ("design", "impl")},
        [RESUMED, Claim("")],
    ),
    (
        "resume-respawns-a-missing-merge-agent",
        RESOLVING.replace(status="paused"),
        Resumed(frozenset({"impl"}), "done"),
        {},
        [RESUMED, SpawnMergeAgent("merge-impl", "impl", "impl", "main", ("api.txt",))],
    ),
    (
        "resume-between-tasks-claims",
        CLAIMING.replace(status="paused"),
        Resumed(),
        {"phase": "claiming"},
        [Publish("auto_started", f"Auto mode resumed for project {P}", "", {"resumed": True}), Claim("")],
    ),
]


@pytest.mark.parametrize(
    ("state", "got", "changes", "actions"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_decide(state: AutoState, got: Happening, changes: dict[str, Any], actions: list[Action]) -> None:
    new, done = decide(state, got)
    expected = state.replace(**changes)
    if isinstance(got, Resumed):
        expected = expected.replace(status="running", reason="")
    assert (new, done) == (expected, actions)


@pytest.mark.parametrize(
    ("task", "taken", "name"),
    [
        ("impl", [], "impl"),
        ("impl", ["impl"], "impl-2"),
        ("impl", ["impl", "impl-2"], "impl-3"),
        ("x" * 64, ["x" * 64], "x" * 62 + "-2"),
    ],
    ids=["free", "taken-once", "taken-twice", "longest-id"],
)
def test_task_agent_name(task: str, taken: list[str], name: str) -> None:
    assert task_agent_name(task, taken) == name
    assert len(name) <= 64


@pytest.mark.parametrize(
    ("make", "value", "name"),
    [
        (merge_agent_name, "impl", "merge-impl"),
        (merge_agent_name, "y" * 64, "merge-" + "y" * 58),
        (project_agent_name, "backend", "auto-backend"),
    ],
    ids=["merge-agent", "merge-agent-cut", "project-agent"],
)
def test_names(make: Any, value: str, name: str) -> None:
    assert make(value) == name


@pytest.mark.parametrize(
    ("a", "b", "after"),
    [
        ("2-0", "1-9", True),
        ("10-0", "9-5", True),
        ("5-1", "5-0", True),
        ("5-0", "5-0", False),
        ("1-0", "2-0", False),
    ],
    ids=["later-ms", "numeric-not-text", "same-ms-later-seq", "same", "earlier"],
)
def test_is_after(a: str, b: str, after: bool) -> None:
    assert is_after(a, b) is after


@pytest.mark.parametrize(
    "action",
    [
        Claim("x"),
        GiveTask("a", "t", worktree=False),
        QueueMerge("a", "t", "main"),
        SpawnMergeAgent("m", "t", "a", "main", ("f1", "f2")),
        RetryMerge("m", "main", ("f1",)),
        RemoveAgent("a"),
        Publish("auto_finished", "done", "t", {"done": ["t"]}),
    ],
    ids=lambda a: a.kind,
)
def test_actions_survive_the_outbox(action: Action) -> None:
    assert action_from_dict(action_to_dict(action)) == action


def test_state_survives_its_hash() -> None:
    state = RESOLVING.replace(
        max_tasks=3, failed=("x",), reason="why: ünïcode", started_at="2026-01-01T00:00:00+00:00"
    )
    assert AutoState.from_hash(state.to_hash()) == state
