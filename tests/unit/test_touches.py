"""The files a task touches: what a person may give, and when two tasks overlap (bus.tasks.touches)."""

from __future__ import annotations

import pytest

from bus.errors import InvalidInput
from bus.tasks.plans import parse_plan
from bus.tasks.touches import Hold, Running, check_overlap_mode, check_touches, claim_order, covers, holds


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (["calc.py"], ("calc.py",)),
        (["./src//auth/", "src/auth"], ("src/auth",)),
        (["a.py", "b/", "a.py"], ("a.py", "b")),
        ([" docs/guide.md "], ("docs/guide.md",)),
        ([], ()),
    ],
    ids=["file", "normalised-and-deduplicated", "order-kept", "blanks-trimmed", "none"],
)
def test_paths_kept(given: list[str], kept: tuple[str, ...]) -> None:
    assert check_touches(given) == kept


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("/etc/passwd", "absolute"),
        ("~/notes", "absolute"),
        ("C:/x", "absolute"),
        ("../other/x.py", "leaves the repository"),
        ("src/../../x", "leaves the repository"),
        ("src/*.py", "globs are not supported"),
        ("test_[ab].py", "globs are not supported"),
        ("", "empty --touches path"),
        ("   ", "empty --touches path"),
        (".", "the whole repository"),
        ("a\nb", "one line"),
    ],
    ids=[
        "absolute",
        "home",
        "drive",
        "dotdot",
        "dotdot-inside",
        "star",
        "bracket",
        "empty",
        "blank",
        "root",
        "newline",
    ],
)
def test_bad_paths_refused_in_one_line(given: str, says: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_touches([given])
    assert says in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("calc.py", "calc.py", True),
        ("src", "src/auth/login.py", True),
        ("src/auth/login.py", "src", True),
        ("src/auth", "src/authz.py", False),
        ("src/a.py", "src/b.py", False),
        ("calc.py", "calc.py.bak", False),
        ("docs", "src/docs", False),
    ],
    ids=[
        "same-file",
        "dir-holds-file",
        "file-in-dir",
        "prefix-not-dir",
        "siblings",
        "name-prefix",
        "same-name-elsewhere",
    ],
)
def test_covers(a: str, b: str, overlap: bool) -> None:
    assert covers(a, b) is overlap
    assert covers(b, a) is overlap


def test_holds_names_the_first_task_in_flight_and_the_shared_paths() -> None:
    ready = [("t2", ("calc.py", "README.md")), ("t3", ("docs/",)), ("t4", ("src/x.py",)), ("t5", ())]
    running = [Running("t0", ("other.py",)), Running("t1", ("calc.py", "src"))]
    found = holds(ready, running)
    assert found == {
        "t2": Hold("t2", "t1", ("calc.py",)),
        "t4": Hold("t4", "t1", ("src/x.py",)),
    }
    assert found["t2"].status() == "held: overlaps t1"


def test_a_task_never_holds_itself() -> None:
    assert holds([("t1", ("a.py",))], [Running("t1", ("a.py",))]) == {}


@pytest.mark.parametrize(
    ("mode", "order"),
    [("hold", ["t1", "t3"]), ("warn", ["t1", "t2", "t3"]), ("ignore", ["t1", "t2", "t3"])],
    ids=["hold-skips", "warn-keeps", "ignore-keeps"],
)
def test_claim_order(mode: str, order: list[str]) -> None:
    held = {"t2": Hold("t2", "t0", ("a.py",))}
    assert claim_order(["t1", "t2", "t3"], held, mode) == order


@pytest.mark.parametrize("value", ["hold", "warn", "ignore", " HOLD "])
def test_overlap_modes(value: str) -> None:
    assert check_overlap_mode(value) == value.strip().lower()


def test_bad_overlap_mode_says_what_is_allowed() -> None:
    with pytest.raises(ValueError, match=r"bad overlap mode 'later': use one of hold, warn, ignore"):
        check_overlap_mode("later")


def test_plan_may_declare_touches() -> None:
    tasks = '[{"id": "a", "title": "A", "touches": ["./src/a.py", "docs/"]}, {"id": "b", "title": "B"}]'
    plan = parse_plan(f'{{"tasks": {tasks}}}')
    assert [t.touches for t in plan.tasks] == [["src/a.py", "docs"], []]


def test_plan_with_an_absolute_touch_is_refused() -> None:
    with pytest.raises(InvalidInput, match="absolute"):
        parse_plan('{"tasks": [{"id": "a", "title": "A", "touches": ["/etc/x"]}]}')
