"""The order of the tests over the test processes (tests/schedule.py)."""

from __future__ import annotations

from tests.schedule import shares, spread, weight


def test_long_tests_are_the_end_to_end_faults_real_clis_and_slow_ones() -> None:
    assert weight("tests/integration/test_x.py", {"claude"}) == 1
    assert weight("tests/unit/test_x.py", {"slow"}) == 1
    assert weight("tests/faults/test_x.py", set()) == 1
    assert weight("tests/integration/test_x.py", {"timeout"}) == 1
    assert weight("tests/unit/test_x.py", set()) == 0


def test_shares_are_cut_as_work_stealing_cuts_them() -> None:
    assert shares(10, 4) == [2, 2, 3, 3]
    assert sum(shares(6730, 4)) == 6730


def test_each_share_starts_with_its_part_of_the_long_ones_in_order_and_none_is_lost() -> None:
    items = [f"u{i}" for i in range(12)] + [f"h{i}" for i in range(8)]
    ordered = spread(items, lambda item: 1 if item.startswith("h") else 0, 4)
    assert sorted(ordered) == sorted(items)
    cuts = shares(len(items), 4)
    starts = [sum(cuts[:k]) for k in range(4)]
    assert [ordered[s : s + 2] for s in starts] == [["h0", "h1"], ["h2", "h3"], ["h4", "h5"], ["h6", "h7"]]
    assert [x for x in ordered if x.startswith("u")] == [f"u{i}" for i in range(12)]  # order kept


def test_more_long_tests_than_a_share_holds_are_all_kept() -> None:
    items = ["u0", "h0", "h1", "h2", "h3", "h4"]
    ordered = spread(items, lambda item: 1 if item.startswith("h") else 0, 2)
    assert sorted(ordered) == sorted(items)


def test_one_process_runs_the_long_ones_first() -> None:
    assert spread(["a", "b", "c"], lambda item: 1 if item == "c" else 0, 1) == ["c", "a", "b"]
