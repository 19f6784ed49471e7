"""What `ib watch` draws, as a pure function of a `Snapshot`: the agents as a tree, the task and merge
queues, the pending questions and the last events, fitted to the terminal's width and height.

`lines()` lays it out; `render()` wraps the lines for rich, `render_plain()` is the same text without
styles (for a stdout that is not a terminal). Nothing here reads the bus, the clock or the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Group
from rich.text import Text

from bus.costs.usage import dollars
from worker.frontends.fleet_view import MANY, Rows, project_rows
from worker.service.supervisor_state import span
from worker.terminal_text import printable

HELP = "a answer · s send · l look · ↑↓ select · q quit"
STATE_STYLES = {
    "running": "green",
    "waiting": "yellow",
    "complete": "cyan",
    "creating": "dim",
    "compacting": "magenta",
    "rate_limited": "red",
    "limited": "red",
    "permission": "yellow bold",
    "error": "red bold",
    "stopped": "red dim",
    "unknown": "dim",
    "paused": "yellow dim",
}
TASK_STATUSES = ("ready", "claimed", "pending", "draft", "done", "failed")
STATUS_STYLES = {"ready": "green", "claimed": "yellow", "failed": "red", "done": "dim"}
GLYPHS = {True: ("●", "green"), False: ("✗", "red"), None: ("○", "dim")}


@dataclass(frozen=True)
class AgentRow:
    id: str
    state: str
    created_at: float
    manager: str = ""
    task: str = ""
    goal: str = ""
    paused: bool = False
    doing: str = ""  # the live status line of a working agent (bus.events.activity), shown under its row
    usd: float | None = None  # what it has cost so far (bus.costs.usage); None: no answer read yet
    cli: str = "claude"  # the agent program it runs
    project: str = ""


@dataclass(frozen=True)
class ProjectTasks:
    """One project's queue: how many tasks in each status, the next ready ones and who holds which."""

    project: str
    counts: tuple[tuple[str, int], ...]
    ready: tuple[tuple[str, str, int], ...] = ()  # (id, title, priority) in the order claims take them
    claimed: tuple[tuple[str, str], ...] = ()  # (id, claimed by)


@dataclass(frozen=True)
class MergeRow:
    project: str
    id: str
    agent: str = ""
    state: str = ""


@dataclass(frozen=True)
class QuestionRow:
    id: str
    agent: str
    text: str
    asked_at: float


@dataclass(frozen=True)
class EventRow:
    time: str  # as the person reads it (local HH:MM:SS)
    type: str
    msg: str


@dataclass(frozen=True)
class ServiceRow:
    text: str
    ok: bool | None  # None: not meant to run (the bot without a token)


@dataclass(frozen=True)
class Snapshot:
    """Everything the dashboard shows at one moment. `look` is (agent, pane text) while looking at one."""

    now: float
    clock: str = ""
    title: str = ""
    bus: str = ""
    services: tuple[ServiceRow, ...] = ()
    agents: tuple[AgentRow, ...] = ()
    tasks: tuple[ProjectTasks, ...] = ()
    merges: tuple[MergeRow, ...] = ()
    questions: tuple[QuestionRow, ...] = ()
    events: tuple[EventRow, ...] = ()
    selected: str = ""
    footer: str = ""
    look: tuple[str, str] | None = None


@dataclass
class Section:
    name: str
    rows: Sequence[Text]  # laid out when shown (fleet_view.Rows) or already
    heading: Text = field(default_factory=Text)
    tail: bool = False  # keep the last rows (a log) rather than the first
    focus: int = 0  # a row that must stay in view (the selected agent)


def render(snapshot: Snapshot, width: int, height: int, interactive: bool = True) -> Group:
    return Group(*lines(snapshot, width, height, interactive))


def render_plain(snapshot: Snapshot, width: int = 80) -> str:
    return "\n".join(line.plain for line in lines(snapshot, width, None, interactive=False)) + "\n"


def lines(snapshot: Snapshot, width: int, height: int | None, interactive: bool = True) -> list[Text]:
    """The screen, one Text a line, none wider than `width`; at most `height` lines when it is given."""
    width = max(20, width)
    if snapshot.look is not None:
        return _fit(_look(snapshot, width, height, interactive), width)
    head = [_title(snapshot, width), _services(snapshot)]
    foot = [Text(snapshot.footer or HELP, style="bold" if snapshot.footer else "dim")] if interactive else []
    if not interactive and snapshot.footer:
        foot = [Text(snapshot.footer, style="bold")]
    sections = _sections(snapshot, width, interactive)
    budget = None if height is None else max(0, height - len(head) - len(foot))
    body = _arrange(sections, budget)
    if height is not None and height < len(head) + len(foot):
        return _fit((foot + head)[:height], width)
    return _fit(head + body + foot, width)


# layout


PRIORITY = ("questions", "agents", "tasks", "merges", "events")


def allot(wants: Sequence[int], budget: int, floor: int = 2) -> list[int]:
    """Lines for each section, the sections in priority order: each first gets up to `floor` (its heading
    and a row), then what is left goes to them in order."""
    got = [0] * len(wants)
    for i, want in enumerate(wants):
        got[i] = min(want, floor, budget)
        budget -= got[i]
    for i, want in enumerate(wants):
        more = min(want - got[i], budget)
        got[i] += more
        budget -= more
    return got


def _arrange(sections: list[Section], budget: int | None) -> list[Text]:
    if budget is None:
        sized = {s.name: 1 + len(s.rows) for s in sections}
    else:
        ranked = sorted(sections, key=lambda s: PRIORITY.index(s.name))
        sized = dict(
            zip((s.name for s in ranked), allot([1 + len(s.rows) for s in ranked], budget), strict=True)
        )
    out: list[Text] = []
    for section in sections:
        out += _squeeze(section, sized[section.name])
    return out


def _squeeze(section: Section, size: int) -> list[Text]:
    """The section in `size` lines: its heading, then its rows, with `… N more` when they do not fit."""
    rows = section.rows
    if size <= 0:
        return []
    if size >= 1 + len(rows):
        return [section.heading, *rows]
    if section.tail:
        return [section.heading, *rows[len(rows) - (size - 1) :]] if size > 1 else [section.heading]
    if size == 1:
        return [section.heading + Text(f" … {len(rows)} more", style="dim")]
    shown = size - 2
    start = max(0, min(section.focus - shown + 1, len(rows) - shown))
    return [section.heading, *rows[start : start + shown], Text(f"  … {len(rows) - shown} more", style="dim")]


def _fit(out: list[Text], width: int) -> list[Text]:
    for line in out:
        line.no_wrap = True
        line.overflow = "ellipsis"
        line.truncate(width, overflow="ellipsis")
        line.rstrip()
    return out


def _heading(name: str, note: str = "") -> Text:
    text = Text(name.upper(), style="bold")
    if note:
        text.append(note, style="dim")
    return text


def _sections(s: Snapshot, width: int, interactive: bool) -> list[Section]:
    sections = [_agents(s, width, interactive)]
    if s.tasks:
        sections.append(Section("tasks", _task_rows(s.tasks), _heading("tasks")))
    if s.merges:
        sections.append(Section("merges", _merge_rows(s.merges), _heading("merges")))
    if s.questions:
        hint = " · a answers" if interactive else ""
        sections.append(
            Section("questions", _question_rows(s), _heading(f"questions {len(s.questions)}", hint))
        )
    if s.events:
        rows = [_event_row(e) for e in s.events]
        sections.append(Section("events", rows, _heading("events"), tail=True))
    return sections


# header


def _title(s: Snapshot, width: int) -> Text:
    left = Text("ittybus", style="bold")
    if s.title:
        left.append(" · " + s.title)
    right = " · ".join(p for p in (s.bus, s.clock) if p)
    gap = width - left.cell_len - len(right)
    if right and gap >= 2:
        left.append(" " * gap + right, style="dim")
    return left


def _services(s: Snapshot) -> Text:
    if not s.services:
        return Text("no services: `ib up` runs them, `ib ps` shows them", style="dim")
    out = Text()
    for i, service in enumerate(s.services):
        glyph, style = GLYPHS[service.ok]
        if i:
            out.append("  ")
        out.append(glyph + " ", style=style)
        out.append(service.text, style="" if service.ok is not False else "red")
    return out


# agents


AGENT_COLUMNS = (  # (name, narrowest, widest): dropped from the end when the terminal is narrow
    ("agent", 12, 24),
    ("state", 12, 12),
    ("age", 4, 4),
    ("cli", 6, 6),
    ("task", 8, 16),
    ("manager", 8, 16),
    ("cost", 6, 8),
    ("goal", 12, 200),
)
MARK = 2  # the selection marker before the tree


def agent_columns(width: int) -> list[tuple[str, int]]:
    """Which columns fit in `width` and how wide each is: every kept column gets its narrowest, then the
    spare room widens them in order; the last kept column takes what remains."""
    room = width - MARK
    kept: list[tuple[str, int, int]] = []
    used = 0
    for name, low, high in AGENT_COLUMNS:
        need = low + (1 if kept else 0)
        if used + need > room:
            break
        kept.append((name, low, high))
        used += need
    spare = room - used
    widths = []
    for name, low, high in kept:
        grow = min(high - low, spare)
        spare -= grow
        widths.append((name, low + grow))
    if widths and spare > 0:
        name, w = widths[-1]
        widths[-1] = (name, w + spare)
    return widths


def tree(agents: Sequence[AgentRow]) -> list[tuple[str, AgentRow]]:
    """(prefix, agent) in display order: managers, their workers indented below them."""
    ids = {a.id for a in agents}
    kids: dict[str, list[AgentRow]] = {}
    for a in sorted(agents, key=lambda a: (a.created_at, a.id)):
        kids.setdefault(a.manager if a.manager in ids else "", []).append(a)
    out: list[tuple[str, AgentRow]] = []

    def walk(parent: str, indent: str) -> None:
        children = kids.get(parent, [])
        for i, a in enumerate(children):
            last = i == len(children) - 1
            branch = "" if not parent else ("└─ " if last else "├─ ")
            out.append((indent + branch, a))
            if a.id != parent:
                walk(a.id, indent + ("" if not parent else ("   " if last else "│  ")))

    walk("", "")
    return out


def _agents(s: Snapshot, width: int, interactive: bool) -> Section:
    columns = agent_columns(width)
    heading = Text()
    for i, (name, w) in enumerate(columns):
        label = f"AGENTS {len(s.agents)}" if i == 0 else name
        heading.append(_cell(label, w, "bold" if i == 0 else "dim", space=i > 0))
    heading = Text(" " * MARK) + heading
    if not s.agents:
        return Section("agents", [Text('  no agents: ib new-agent "goal" starts one', style="dim")], heading)
    if not interactive and len(s.agents) > MANY:  # a plain snapshot has no height: count them instead
        heading = Text(" " * MARK) + Text(f"AGENTS {len(s.agents)}", style="bold")
        return Section(
            "agents", project_rows(s.agents, STATE_STYLES), heading + Text(" by project", style="dim")
        )
    shown: list[tuple[str, AgentRow, bool]] = []  # (prefix, agent, its activity line)
    focus = 0
    for prefix, agent in tree(s.agents):
        focus = len(shown) if interactive and agent.id == s.selected else focus
        shown.append((prefix, agent, False))
        if agent.doing:
            shown.append((prefix, agent, True))

    def row(i: int) -> Text:
        prefix, agent, doing = shown[i]
        if doing:
            return Text(" " * (MARK + 2 + len(prefix)) + agent.doing, style="cyan")
        return _agent_row(s, prefix, agent, columns, interactive and agent.id == s.selected)

    return Section("agents", Rows(len(shown), row), heading, focus=focus)


def _agent_row(s: Snapshot, prefix: str, a: AgentRow, columns: list[tuple[str, int]], selected: bool) -> Text:
    state = "paused" if a.paused else a.state
    values = {
        "agent": (prefix + a.id, "bold" if selected else ""),
        "state": (state, STATE_STYLES.get(state, "")),
        "age": (span(s.now - a.created_at), "dim"),
        "cli": (a.cli, "dim"),
        "task": (a.task or "-", ""),
        "manager": (a.manager or "-", "dim"),
        "cost": (_cost(a.usd), ""),
        "goal": (_first_line(a.goal), "dim"),
    }
    row = Text("› " if selected else "  ", style="bold")
    for i, (name, w) in enumerate(columns):
        text, style = values[name]
        row.append(_cell(text, w, style, space=i > 0))
    if selected:
        row.stylize("reverse", MARK)
    return row


def _cost(usd: float | None) -> str:
    """`$0.42`, `<$0.01`, `-` (no answer read yet): short, the column is narrow."""
    if usd is None:
        return "-"
    return "<$0.01" if 0 < usd < 0.01 else dollars(usd)


def _cell(text: str, width: int, style: str = "", space: bool = False) -> Text:
    cell = Text(printable(text), style=style)
    cell.truncate(width, overflow="ellipsis", pad=True)
    return Text(" ") + cell if space else cell


def _first_line(text: str) -> str:
    stripped = text.strip()
    return printable(stripped.splitlines()[0]) if stripped else ""


# queues, questions, events


def _task_rows(projects: Sequence[ProjectTasks]) -> list[Text]:
    rows = []
    for p in projects:
        counts = dict(p.counts)
        line = Text("  " + p.project + " ", style="bold")
        shown = [s for s in TASK_STATUSES if counts.get(s)]
        for i, status in enumerate(shown):
            line.append(" · " if i else " ")
            line.append(f"{status} {counts[status]}", style=STATUS_STYLES.get(status, ""))
        if not shown:
            line.append(" no tasks", style="dim")
        rows.append(line)
        if p.ready:
            nxt = ", ".join(f"{tid} {_first_line(title)} (p{prio})" for tid, title, prio in p.ready)
            rows.append(Text("    next ", style="green") + Text(nxt))
        if p.claimed:
            held = ", ".join(f"{tid} → {by}" for tid, by in p.claimed)
            rows.append(Text("    claimed ", style="yellow") + Text(held))
    return rows


def _merge_rows(merges: Sequence[MergeRow]) -> list[Text]:
    by_project: dict[str, list[MergeRow]] = {}
    for m in merges:
        by_project.setdefault(m.project, []).append(m)
    rows = []
    for project, items in by_project.items():
        line = Text("  " + project + "  ", style="bold")
        line.append(" · ".join(" ".join(p for p in (m.id, m.agent, m.state) if p) for m in items))
        rows.append(line)
    return rows


def _question_rows(s: Snapshot) -> list[Text]:
    numbered = len(s.questions) > 1
    rows = []
    for n, q in enumerate(s.questions, 1):
        line = Text(f"  {n} " if numbered else "  ", style="bold")
        line.append(q.id, style="yellow")
        line.append(f" {q.agent} ", style="bold")
        line.append(f"{span(s.now - q.asked_at)}  ", style="dim")
        line.append(_first_line(q.text))
        rows.append(line)
    return rows


LOUD_EVENTS = frozenset(
    {"question", "complete", "waiting", "conflict_risk", "budget_warning", "budget_exceeded", "runaway"}
)
"""Event types the dashboard's feed shows in bold: someone should look."""


def _event_row(e: EventRow) -> Text:
    line = Text(f"  {e.time} ", style="dim")
    line.append(f"{e.type:<14}", style="bold" if e.type in LOUD_EVENTS else "")
    line.append(" " + _first_line(e.msg))
    return line


def _look(s: Snapshot, width: int, height: int | None, interactive: bool) -> list[Text]:
    agent, pane = s.look or ("", "")
    top = Text(f"look: {agent}", style="bold")
    top.append("  (the pane as it is now)", style="dim")
    foot = [Text(s.footer or "any key returns", style="dim")] if interactive else []
    body = [Text(line) for line in pane.rstrip("\n").splitlines()]
    if height is not None:
        room = max(0, height - 1 - len(foot))
        body = body[len(body) - room :] if room else []
    return [top, *body, *foot]
