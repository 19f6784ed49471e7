"""The tasks page's pure parts: the task graph's layout (web.task_graph), its drawing with untrusted names
(web.render), and the pairs at risk read from the conflict check's marks (web.at_risk)."""

from __future__ import annotations

import random

import pytest

from bus.tasks.task_model import Task
from web.at_risk import MAX_FILES, AtRisk, at_risk, sides_of
from web.queues import Queues, task_graphs, task_rows
from web.render import queues_html
from web.task_graph import BOX_H, BOX_W, MAX_LABEL, MISSING, Graph, Node, layers, layout


def _layers(graph: Graph) -> dict[str, int]:
    return {b.id: b.layer for b in graph.boxes}


def _kinds(graph: Graph) -> dict[tuple[str, str], str]:
    return {(e.source, e.target): e.kind for e in graph.edges}


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        (
            [Node("a", "done"), Node("b", "ready", ("a",)), Node("c", "pending", ("b",))],
            {"a": 0, "b": 1, "c": 2},
        ),
        (
            [
                Node("a", "done"),
                Node("b", "ready", ("a",)),
                Node("c", "ready", ("a",)),
                Node("d", "", ("b", "c")),
            ],
            {"a": 0, "b": 1, "c": 1, "d": 2},
        ),
        ([Node("a", ""), Node("b", "", ("a",)), Node("c", "", ("a", "b"))], {"a": 0, "b": 1, "c": 2}),
        ([Node("c", "", ("b",)), Node("b", "", ("a",)), Node("a", "")], {"a": 0, "b": 1, "c": 2}),
        ([Node("a", "", ("a",))], {"a": 0}),
        ([Node("a", ""), Node("a", "", ("b",)), Node("b", "")], {"a": 0, "b": 0}),
    ],
    ids=["chain", "diamond", "longest-path", "any-input-order", "waits-for-itself", "a-twice-first-kept"],
)
def test_each_task_sits_one_layer_after_its_deepest_dependency(
    nodes: list[Node], expected: dict[str, int]
) -> None:
    assert layers(nodes) == expected
    assert _layers(layout(nodes)) == expected


def test_a_diamond_has_its_arrows_and_no_two_boxes_in_one_place() -> None:
    graph = layout(
        [
            Node("a", "done"),
            Node("b", "ready", ("a",)),
            Node("c", "pending", ("a",)),
            Node("d", "", ("b", "c")),
        ]
    )
    assert _kinds(graph) == {("a", "b"): "done", ("a", "c"): "done", ("b", "d"): "open", ("c", "d"): "open"}
    assert len({(b.x, b.y) for b in graph.boxes}) == 4
    at = {b.id: b for b in graph.boxes}
    assert at["a"].x < at["b"].x == at["c"].x < at["d"].x
    edge = next(e for e in graph.edges if e.target == "d" and e.source == "b")
    assert edge.path.startswith(f"M{at['b'].x + BOX_W},{at['b'].y + BOX_H // 2} ")
    assert edge.path.endswith(f" {at['d'].x},{at['d'].y + BOX_H // 2}")


@pytest.mark.parametrize(
    "nodes",
    [
        [Node("a", "", ("b",)), Node("b", "", ("a",))],
        [Node("a", "", ("c",)), Node("b", "", ("a",)), Node("c", "", ("b",)), Node("d", "", ("c",))],
        [Node(f"t{i}", "", (f"t{(i + 1) % 300}",)) for i in range(300)],
    ],
    ids=["two", "three-and-one-after", "a-ring-of-300"],
)
def test_a_cycle_is_laid_out_with_one_arrow_marked_and_the_rest_forward(nodes: list[Node]) -> None:
    graph = layout(nodes)
    placed = _layers(graph)
    assert set(placed) == {n.id for n in nodes}
    assert [k for k in _kinds(graph).values() if k == "cycle"] == ["cycle"]
    if "d" in placed:
        assert placed["d"] > placed["c"]  # what waits on the cycle stays after it


def test_a_missing_dependency_is_a_dashed_box_before_its_dependant() -> None:
    graph = layout([Node("a", "pending", ("gone", "other")), Node("b", "ready")], {"other": "done"})
    at = {b.id: b for b in graph.boxes}
    assert (at["gone"].ghost, at["gone"].state, at["gone"].layer) == (True, MISSING, 0)
    assert (at["other"].ghost, at["other"].state) == (True, "done")
    assert (at["a"].layer, at["b"].layer, at["b"].ghost) == (1, 0, False)
    assert _kinds(graph) == {("gone", "a"): "open", ("other", "a"): "done"}


def test_inside_a_layer_the_higher_priority_goes_first_then_near_its_dependencies() -> None:
    graph = layout(
        [
            Node("low", "", priority=1),
            Node("high", "", priority=9),
            Node("x", "", ("low",)),
            Node("y", "", ("high",)),
        ]
    )
    rows = {b.id: b.y for b in graph.boxes}
    assert rows["high"] < rows["low"] and rows["y"] < rows["x"]
    assert (
        layout(list(reversed([Node("low", "", priority=1), Node("high", "", priority=9)]))).boxes
        == layout([Node("low", "", priority=1), Node("high", "", priority=9)]).boxes
    )  # the same tasks, the same picture


def test_200_tasks_are_all_placed_apart_with_every_arrow_forward_inside_the_picture() -> None:
    rng = random.Random(35)
    nodes = [
        Node(
            f"t{i:03}",
            rng.choice(["pending", "ready", "done"]),
            tuple(f"t{d:03}" for d in rng.sample(range(i), min(i, 3))),
        )
        for i in range(200)
    ]
    shuffled = rng.sample(nodes, len(nodes))
    graph = layout(shuffled)
    assert len(graph.boxes) == 200 and len({(b.x, b.y) for b in graph.boxes}) == 200
    assert all(e.kind != "cycle" for e in graph.edges) and len(graph.edges) == sum(
        len(n.after) for n in nodes
    )
    assert all(b.x + BOX_W <= graph.width and b.y + BOX_H <= graph.height for b in graph.boxes)
    assert graph.boxes == layout(nodes).boxes


def test_long_names_are_cut_on_the_box_and_whole_in_its_tooltip() -> None:
    name = "n" * 100
    (box,) = layout([Node(name, "ready", note="agent-" + "x" * 50)]).boxes
    assert box.label == name[: MAX_LABEL - 1] + "…" and box.title == name
    assert len(box.note) < 20 and box.note.endswith("…")


def test_untrusted_task_names_are_escaped_in_the_drawing() -> None:
    tasks = [
        Task(id="<script>alert(1)</script>", project="p<i>", title="<b>x</b>", status="done"),
        Task(
            id="../etc", project="p<i>", after=("<script>alert(1)</script>", "<img src=x>"), claimed_by='a"b'
        ),
    ]
    html = queues_html(Queues(task_rows(tasks), (), (), task_graphs(tasks)))
    assert "<script" not in html and "<img" not in html and "<b>" not in html and "<i>" not in html
    assert 'data-node="&lt;script&gt;alert(1)&lt;/script&gt;" data-state="done"' in html
    assert 'data-node="&lt;img src=x&gt;" data-state="missing" data-ghost="yes"' in html
    assert 'data-node="../etc" data-state="pending"' in html
    assert (
        "href" not in html.split('<section id="tasks"')[1].split("</svg>")[0]
    )  # nothing in the picture links
    assert html.count("<svg") == 1 and 'role="img"' in html


@pytest.mark.parametrize(
    ("pair", "sides"),
    [
        ("ann:bob", ("ann", "bob")),
        ("ann:branch:main", ("ann", "branch:main")),
        ("branch:main:zed", ("zed", "branch:main")),
        ("branch:branch:main", ("branch", "branch:main")),  # an agent named `branch`, against main
        ("branch:x", ("branch", "x")),  # two agents
        ("ann", None),
        ("ann:", None),
        ("a:b:c", None),
        ("a:b:c:d", None),
    ],
    ids=[
        "agents",
        "agent-branch",
        "branch-agent",
        "agent-named-branch",
        "agent-named-branch-2",
        "one",
        "empty",
        "three",
        "four",
    ],
)
def test_the_sides_of_a_pair_are_read_from_its_marks_key(pair: str, sides: tuple[str, str] | None) -> None:
    assert sides_of(pair) == sides


def test_a_pair_is_at_risk_while_its_marks_hold_files_and_its_agents_are_live() -> None:
    many = {f"f{i:02}.py": "fp" for i in range(MAX_FILES + 2)}
    marks = {
        "ann:bob": {"z.py": "1", "a.py": "2"},
        "cat:dan": {},
        "ann:eve": {"x.py": "1"},
        "fay:gus": many,
        "ann:branch:main": {"m.py": "1"},
        "garbage": {"x.py": "1"},
    }
    states = {
        "ann": "running",
        "bob": "complete",
        "cat": "running",
        "dan": "running",
        "eve": "stopped",
        "fay": "idle",
    }
    assert at_risk(marks, states) == (
        AtRisk("ann", "bob", "agent", ("a.py", "z.py"), 0),
        AtRisk("ann", "main", "branch", ("m.py",), 0),
    )  # cat/dan: nothing marked any more; eve stopped; gus gone from the bus
    states["gus"] = "running"
    (_bob, fay, _main) = at_risk(marks, states)
    assert (len(fay.files), fay.more, fay.files[0]) == (MAX_FILES, 2, "f00.py")
