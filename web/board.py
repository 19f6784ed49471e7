"""What the page shows, read from the bus: the agents as a tree (manager above its workers) and every open
dialog with its buttons. `read_board` does the reading (sync redis, run in a thread by the routes);
`agent_rows` and `dialog_view` are pure.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import cast

import redis

from bus.inbox.prompts import Prompt
from bus.inbox.questions import QuestionStore
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from bus.wire.names import name_problem

PROGRAMS = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}
MAX_BUTTONS = 20

# a dialog told by a hook alone, with no options drawn: its kind's buttons, as the bot draws them
KNOWN_BUTTONS = {
    "permission": (("Allow", "approve"), ("Always allow", "always"), ("Deny", "deny")),
    "plan": (("Approve", "approve"), ("Keep planning", "deny")),
    "trust": (("Trust", "approve"), ("Refuse", "deny")),
}
ACTIONS = ("approve", "always", "deny", "choose")
USAGE_FIELD = "usage_usd"  # what the worker's transcript tail summed of the agent's cost
ASKING = "waiting on you"  # the state an agent's row reads while a dialog of its is open
FROM_PANE = "(pane)"  # the tool of a dialog only the screen told (worker.markers, which web may not import)


@dataclass(frozen=True)
class AgentRow:
    id: str
    depth: int  # 0 for a root agent, 1 for its workers, ...
    state: str
    status: str
    program: str
    machine: str
    elapsed: str
    goal: str
    cost: str = ""  # "$0.42", "" when nothing was counted
    linkable: bool = True  # its id is a name ib makes: it gets a page of its own


@dataclass(frozen=True)
class Button:
    label: str
    action: str  # one of ACTIONS
    option: int = 0  # the option's number, for "choose"


@dataclass(frozen=True)
class DialogView:
    agent: str
    prompt: str  # the prompt id: a click answers this dialog and no other
    kind: str
    question: str
    buttons: tuple[Button, ...]


@dataclass(frozen=True)
class QuestionView:
    """A question an agent asked with `ib ask` (not a dialog): answered with text or one of its options."""

    id: str
    agent: str
    text: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class PauseView:
    """An agent a budget or the runaway watchdog paused: Raise (a budget) or Continue (the watchdog), or
    Stop."""

    agent: str
    kind: str  # "budget" or the watchdog's
    reason: str


@dataclass(frozen=True)
class LimitView:
    """An agent parked on its plan's usage limit until the reset (it goes on by itself then)."""

    agent: str
    until: str  # "14:05 UTC"
    line: str


@dataclass(frozen=True)
class Board:
    agents: tuple[AgentRow, ...]
    dialogs: tuple[DialogView, ...]
    questions: tuple[QuestionView, ...] = ()
    pauses: tuple[PauseView, ...] = ()
    limits: tuple[LimitView, ...] = ()

    @property
    def waiting(self) -> int:
        return len(self.dialogs) + len(self.questions) + len(self.pauses) + len(self.limits)


def elapsed(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def agent_rows(
    agents: list[Agent],
    now: float,
    costs: dict[str, float] | None = None,
    asking: frozenset[str] = frozenset(),
) -> tuple[AgentRow, ...]:
    """Each manager followed by its workers, depth-first, in the order they were made; an agent in `asking`
    (a dialog of its waits on the person) reads `waiting on you`, whatever state its pane last had. Pure."""
    known = {a.id for a in agents}
    below: dict[str, list[Agent]] = {}
    for agent in agents:
        parent = agent.manager if agent.manager in known and agent.manager != agent.id else ""
        below.setdefault(parent, []).append(agent)
    rows: list[AgentRow] = []
    seen: set[str] = set()
    stack = [(a, 0) for a in reversed(below.get("", []))]
    while stack:
        agent, depth = stack.pop()
        if agent.id in seen:
            continue
        seen.add(agent.id)
        rows.append(_row(agent, depth, now, costs or {}, agent.id in asking))
        stack.extend((child, depth + 1) for child in reversed(below.get(agent.id, [])))
    rows.extend(_row(a, 0, now, costs or {}, a.id in asking) for a in agents if a.id not in seen)  # a cycle
    return tuple(rows)


def _row(agent: Agent, depth: int, now: float, costs: dict[str, float], asking: bool) -> AgentRow:
    status = agent.detail or ("paused" if agent.paused else "")
    spent = costs.get(agent.id)
    return AgentRow(
        id=agent.id,
        depth=depth,
        state=ASKING if asking else agent.state,
        status=status,
        program=PROGRAMS.get(agent.cli, agent.cli),
        machine=agent.worker,
        elapsed=elapsed(now - agent.created_at) if agent.created_at else "",
        goal=" ".join(agent.goal.split())[:200],
        cost=f"${spent:.2f}" if spent is not None else "",
        linkable=name_problem("agent", agent.id) is None,
    )


def dialog_view(prompt: Prompt) -> DialogView:
    """A dialog and one button per option as drawn, when it has a question people answer (any dialog the
    pane watcher read, an AskUserQuestion: `question_id`, as the bot reads it); a dialog only a hook told
    (its options are the hook's words, not the screen's) gets its kind's buttons. Pure."""
    if prompt.question_id and prompt.options and len(prompt.options) <= MAX_BUTTONS:
        buttons = tuple(Button(label or str(n), "choose", n) for n, label in enumerate(prompt.options, 1))
    else:
        known = KNOWN_BUTTONS.get(prompt.kind or "permission", KNOWN_BUTTONS["permission"])
        buttons = tuple(Button(label, action) for label, action in known)
    return DialogView(prompt.agent, prompt.id, prompt.kind or "permission", _question(prompt), buttons)


def _question(prompt: Prompt) -> str:
    if prompt.kind == "trust":
        return f"May Claude Code trust the folder {prompt.detail or '?'}?"
    asked = prompt.question.strip()
    if prompt.tool and prompt.tool != FROM_PANE:
        used = f"asks to use {prompt.tool}" + (f": {prompt.detail}" if prompt.detail else "")
        return f"{asked} ({used})" if asked else used
    return asked or prompt.detail or "a dialog waits for an answer"


def read_board(client: redis.Redis, keys: Keys) -> Board:
    """The agents and their open dialogs as stored now (a dialog already answered is not shown), in three
    round trips whatever the number of agents."""
    agents = AgentStore(client, keys).all()
    pipe = client.pipeline(transaction=False)
    for agent in agents:
        pipe.hgetall(keys.prompt(agent.id))
        pipe.hget(keys.agent(agent.id), USAGE_FIELD)
        pipe.hgetall(keys.hold(agent.id))
    found = cast(list[object], pipe.execute() if agents else [])
    prompts = _prompts(agents, found[0::3], keys)
    costs = {a.id: usd for a, raw in zip(agents, found[1::3], strict=True) if (usd := _usd(raw)) is not None}
    answered = _answered(client, keys, prompts)
    dialogs = tuple(dialog_view(p) for p, done in zip(prompts, answered, strict=True) if not done)
    now = time.time()
    return Board(
        agent_rows(agents, now, costs, frozenset(d.agent for d in dialogs)),
        dialogs,
        questions=_questions(client, keys),
        pauses=tuple(_pause(a.id, h) for a, h in zip(agents, found[2::3], strict=True) if h),
        limits=tuple(limit_view(a) for a in agents if a.limited_until > now),
    )


def _questions(client: redis.Redis, keys: Keys) -> tuple[QuestionView, ...]:
    """The questions agents asked that are no dialog (a dialog's question is answered by its buttons)."""
    pending = QuestionStore(client, keys).pending()
    return tuple(
        QuestionView(q.id, q.agent, q.text, q.options[:MAX_BUTTONS]) for q in pending if not q.dialog
    )


def _pause(agent: str, hold: object) -> PauseView:
    held = hold if isinstance(hold, dict) else {}
    return PauseView(agent, str(held.get("kind", "")), str(held.get("reason", "")))


def limit_view(agent: Agent) -> LimitView:
    """Pure."""
    until = time.strftime("%H:%M UTC", time.gmtime(agent.limited_until))
    return LimitView(agent.id, until, agent.limit_line or agent.detail)


def open_dialog(client: redis.Redis, keys: Keys, agent: str) -> DialogView | None:
    """The agent's dialog that waits for an answer, if any."""
    prompts = _prompts([Agent(id=agent)], [client.hgetall(keys.prompt(agent))], keys)
    return dialog_view(prompts[0]) if prompts and not _answered(client, keys, prompts)[0] else None


def _prompts(agents: list[Agent], hashes: list[object], keys: Keys) -> list[Prompt]:
    found = []
    for agent, data in zip(agents, hashes, strict=True):
        if isinstance(data, dict) and data.get("id"):
            found.append(Prompt.from_hash(data, key=keys.prompt(agent.id), agent=agent.id))
    return found


def _answered(client: redis.Redis, keys: Keys, prompts: list[Prompt]) -> list[bool]:
    if not prompts:
        return []
    pipe = client.pipeline(transaction=False)
    for prompt in prompts:
        pipe.exists(keys.prompt_answered(prompt.id))
    return [bool(n) for n in pipe.execute()]


def _usd(raw: object) -> float | None:
    try:
        return float(str(raw)) if raw not in (None, "") else None
    except ValueError:
        return None


@dataclass(frozen=True)
class OutputLine:
    kind: str
    text: str


def recent_output(client: redis.Redis, keys: Keys, agent: str, count: int = 40) -> tuple[OutputLine, ...]:
    """The agent's newest output items (its transcript as the worker parsed it), oldest first."""
    newest = cast(list[tuple[str, dict[str, str]]], client.xrevrange(keys.output(agent), count=count) or [])
    lines = []
    for _id, fields in reversed(newest):
        text = " ".join(x for x in (fields.get("tool", ""), fields.get("text", "")) if x)
        if text.strip():
            lines.append(OutputLine(fields.get("kind", ""), text[:2000]))
    return tuple(lines)
