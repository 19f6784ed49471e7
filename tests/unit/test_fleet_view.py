"""Many agents on the dashboard: a screen lays out only the rows it shows, and a plain snapshot of more than
`MANY` agents counts them by project and state."""

from __future__ import annotations

import pytest
from rich.text import Text

from worker.frontends.dashboard_render import AgentRow, Snapshot, lines, render_plain
from worker.frontends.fleet_view import MANY, Rows, by_project

NOW = 1_800_000_000.0
FLEET = Snapshot(
    now=NOW,
    agents=tuple(
        AgentRow(
            f"a{n:05d}",
            ("running", "waiting", "stopped")[n % 3],
            NOW - n,
            project=f"p{n % 4}" if n % 5 else "",
        )
        for n in range(10_000)
    ),
    selected="a05000",
)


def test_rows_are_laid_out_only_when_shown() -> None:
    made: list[int] = []

    def make(i: int) -> Text:
        made.append(i)
        return Text(str(i))

    rows = Rows(10_000, make)
    assert len(rows) == 10_000
    assert [r.plain for r in rows[4_998:5_001]] == ["4998", "4999", "5000"]
    assert rows[-1].plain == "9999"
    with pytest.raises(IndexError):
        rows[10_000]
    assert made == [4_998, 4_999, 5_000, 9_999]


def test_a_screen_of_ten_thousand_agents_shows_the_selected_one_and_how_many_more() -> None:
    screen = [line.plain for line in lines(FLEET, 120, 40)]
    assert len(screen) == 40
    assert any(line.startswith("› a05000") for line in screen)
    assert any("more" in line and "…" in line for line in screen)


@pytest.mark.parametrize(("count", "grouped"), [(MANY, False), (MANY + 1, True)], ids=["few", "many"])
def test_a_plain_snapshot_of_many_agents_counts_them_by_project(count: int, grouped: bool) -> None:
    snapshot = Snapshot(now=NOW, agents=FLEET.agents[:count])
    text = render_plain(snapshot, 100)
    assert ("by project" in text) is grouped
    assert (f"a{count - 1:05d}" in text) is not grouped


def test_projects_are_counted_by_state_most_first_and_no_project_last() -> None:
    agents = [AgentRow(f"a{n}", state, NOW, project=project) for n, (project, state) in enumerate(
        [("api", "running"), ("api", "waiting"), ("api", "running"), ("", "stopped"), ("web", "waiting")]
    )]  # fmt: skip
    assert by_project(agents) == [
        ("api", 3, [("running", 2), ("waiting", 1)]),
        ("web", 1, [("waiting", 1)]),
        ("(no project)", 1, [("stopped", 1)]),
    ]
    plain = render_plain(Snapshot(now=NOW, agents=tuple(agents * 50)), 100)
    assert "  api  150 agents · running 100 · waiting 50" in plain
