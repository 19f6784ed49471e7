"""The bot's commands: the list shown by /help and registered with setMyCommands, and reading what
people type after a command.

Pure. Parsers raise CommandUsage with the usage line, so the handler only has to say it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.errors import CommandUsage
from bus.errors import InvalidInput
from bus.tasks.task_defaults import DEFAULT_PRIORITY
from bus.tasks.task_model import check_priority
from bus.wire.ids import validate_id
from bus.wire.names import worker_id_problem

COMMANDS: tuple[tuple[str, str], ...] = (
    ("help", "Show the commands"),
    ("project", "Make this topic a project's topic: /project NAME"),
    ("unbind", "Detach this topic from its project, task or agent"),
    ("agents", "List the agents (of this topic's project)"),
    ("tasks", "Show the project's task queue"),
    ("add", "Add a task to the project: /add TITLE [-p PRIORITY]"),
    ("new", "Start an agent on a goal in this project: /new [--on WORKER] GOAL"),
    ("auto", "Work through the project's ready tasks: /auto [--worktrees] [--on WORKER]"),
    ("stop", "Stop auto mode; the current task stays claimed"),
    ("merges", "Show the project's merge queue in merge order (the smaller overlapping change first)"),
    ("esc", "Press Escape in this topic's agent"),
    ("look", "Show the agent's screen: /look [AGENT] [LINES]"),
    ("shot", "A picture of the agent's screen, in colour: /shot [AGENT]"),
    ("diff", "Show the agent's changes: /diff [AGENT]"),
    ("merge", "Merge the agent's branch: /merge [AGENT]"),
    ("kill", "Kill the agent: /kill [AGENT]"),
    ("status", "Status of this topic's agent, or of the project"),
    ("pause", "Interrupt the agent and leave it waiting: /pause [AGENT]"),
    ("resume", "Let a paused or stopped agent go on: /resume [AGENT]"),
    ("send", "Type text into a named agent: /send AGENT TEXT"),
    ("questions", "The questions agents asked that nobody answered yet"),
    ("attention", "What waits on you, oldest first, with how long"),
    ("cost", "Tokens and cost of this topic's agent or project: /cost [AGENT] [--since 1d]"),
    ("limits", "Usage limits in force: until when, and the agents parked on them"),
    ("plan", "Plan tasks for a goal with a planner agent: /plan GOAL"),
    ("plans", "List the plans (of this topic's project)"),
    ("schedules", "List the scheduled tasks (of this topic's project)"),
    ("schedule", "Add a scheduled task: /schedule CRON TITLE [-p N], e.g. /schedule 0 9 * * mon-fri Audit"),
    ("unschedule", "Delete a schedule: /unschedule ID"),
)

_COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]+))?(?:\s|$)")
_COMMAND_PREFIX = re.compile(r"^/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?\s?")
_ON_FLAG = re.compile(r"^--on(?:=|\s+)(\S+)(?:\s+|$)")
_CLI_FLAG = re.compile(r"^--cli(?:=|\s+)(\S+)(?:\s+|$)")
_PRIORITY_FLAG = re.compile(r"^(?:-p|--priority)(?:=?(-?\d+))?$")
_CRON_WORD = re.compile(r"[\d,-]*[*/][\d*/,-]*")  # `*`, `*/5`, `1-5/2`: a field, not a title's word
LOOK_LINES = 40
MAX_LOOK_LINES = 200


def command_of(text: str, bot_username: str | None) -> str | None:
    """The command a message starts with (`/look@ittybus_bot 20` → `look`), or None.

    A command addressed to another bot (`/look@other_bot`) is none of ours.
    """
    m = _COMMAND.match(text)
    if m is None:
        return None
    addressee = m.group(2)
    if addressee and (bot_username is None or addressee.lower() != bot_username.lower()):
        return None
    return m.group(1).lower()


def help_text() -> str:
    return "\n".join(f"/{name} — {description}" for name, description in COMMANDS)


def rest_of(text: str) -> str:
    """What follows the command in a message (`/new@bot fix it` → `fix it`), line breaks kept."""
    return _COMMAND_PREFIX.sub("", text.strip(), count=1).strip()


def parse_project(args: list[str]) -> str:
    if len(args) != 1:
        raise CommandUsage("usage: /project NAME — e.g. /project backend")
    try:
        return validate_id("project", args[0])
    except InvalidInput as e:
        raise CommandUsage(f"{e}; usage: /project NAME") from e


@dataclass(frozen=True)
class NewTask:
    title: str
    priority: int


def parse_add(text: str) -> NewTask:
    """`/add Write the tests -p 8` (the flag anywhere: -p N, -pN is not taken, --priority=N)."""
    usage = "usage: /add TITLE [-p PRIORITY 0-10] — e.g. /add Write the login tests -p 8"
    words = rest_of(text).split()
    priority = DEFAULT_PRIORITY
    title: list[str] = []
    i = 0
    while i < len(words):
        flag = _PRIORITY_FLAG.match(words[i])
        if flag is None:
            title.append(words[i])
            i += 1
            continue
        value = flag.group(1)
        if value is None:
            if i + 1 >= len(words):
                raise CommandUsage(usage)
            value, i = words[i + 1], i + 1
        try:
            priority = check_priority(int(value))
        except (ValueError, InvalidInput) as e:
            raise CommandUsage(f"bad priority {value!r}: give 0-10; {usage}") from e
        i += 1
    if not title:
        raise CommandUsage(usage)
    return NewTask(" ".join(title), priority)


@dataclass(frozen=True)
class NewAgent:
    goal: str
    on: str | None = None  # the worker (machine) to start it on; None: the default one
    cli: str | None = None  # the agent program; None: the worker's IB_DEFAULT_CLI (the worker checks it)


def parse_new(text: str) -> NewAgent:
    """`/new [--on WORKER] [--cli CLI] GOAL`: the options come first, in any order, so the goal's own
    words are never options."""
    usage = (
        "usage: /new [--on WORKER] [--cli claude|codex|gemini] GOAL — e.g. /new --cli codex Add rate "
        "limiting to the login endpoint"
    )
    goal, on, cli = rest_of(text), None, None
    while flag := _ON_FLAG.match(goal) or _CLI_FLAG.match(goal):
        if flag.re is _ON_FLAG:
            on = _worker(flag.group(1), usage)
        else:
            cli = _cli(flag.group(1), usage)
        goal = goal[flag.end() :].strip()
    if not goal:
        raise CommandUsage(usage)
    return NewAgent(goal, on, cli)


def _cli(value: str, usage: str) -> str:
    """A name shaped like an agent program's; which programs exist the worker says."""
    try:
        return validate_id("cli", value)
    except InvalidInput as e:
        raise CommandUsage(f"{e}; {usage}") from None


@dataclass(frozen=True)
class AutoOptions:
    worktrees: bool = False
    on: str | None = None


def parse_auto_options(args: list[str]) -> AutoOptions:
    """`/auto [--worktrees] [--on WORKER]` (--worktrees: a worktree and topic per task)."""
    usage = "usage: /auto [--worktrees] [--on WORKER]"
    worktrees, on = False, None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("--worktrees", "-w"):
            worktrees = True
        elif arg == "--on" and rest:
            on = _worker(rest.pop(0), usage)
        elif arg.startswith("--on="):
            on = _worker(arg.removeprefix("--on="), usage)
        else:
            raise CommandUsage(f"unknown option {arg!r}; {usage}")
    return AutoOptions(worktrees, on)


def _worker(value: str, usage: str) -> str:
    problem = worker_id_problem(value)
    if problem:
        raise CommandUsage(f"{problem}; {usage}")
    return value


@dataclass(frozen=True)
class Target:
    """The agent a command names (None: this topic's agent) and, for /look, how many lines."""

    agent: str | None
    lines: int | None = None


def parse_target(command: str, args: list[str], with_lines: bool = False) -> Target:
    usage = f"usage: /{command} [AGENT]" + (" [LINES]" if with_lines else "")
    agent: str | None = None
    lines: int | None = None
    for arg in args:
        if with_lines and arg.isdigit() and lines is None:
            lines = max(1, min(int(arg), MAX_LOOK_LINES))
        elif agent is None:
            try:
                agent = validate_id("agent", arg)
            except InvalidInput as e:
                raise CommandUsage(f"{e}; {usage}") from e
        else:
            raise CommandUsage(usage)
    return Target(agent, lines if lines is not None else (LOOK_LINES if with_lines else None))


@dataclass(frozen=True)
class NewSchedule:
    cron: str
    task: NewTask


def parse_schedule(text: str) -> NewSchedule:
    """`/schedule 0 9 * * mon-fri Audit the logs -p 3` or `/schedule @daily Audit`: five cron fields (or one
    `@` shorthand), then the task as for /add. The cron text itself is checked by the store."""
    usage = "usage: /schedule CRON TITLE [-p N] — e.g. /schedule 0 9 * * mon-fri Audit the logs"
    words = rest_of(text).split()
    size = 1 if words and words[0].startswith("@") else 5
    if size == 5 and len(words) > 6 and _CRON_WORD.fullmatch(words[5]):
        size = 6  # a seconds field: the store refuses it with its own line
    if len(words) <= size:
        raise CommandUsage(usage)
    try:
        task = parse_add("/add " + " ".join(words[size:]))
    except CommandUsage as e:
        raise CommandUsage(f"{e}".replace("/add TITLE", "/schedule CRON TITLE")) from e
    return NewSchedule(" ".join(words[:size]), task)


def parse_cost(args: list[str]) -> tuple[str | None, str | None]:
    """`/cost [AGENT] [--since SPAN]`: the agent named (None: the topic's) and the span (None: all)."""
    usage = "usage: /cost [AGENT] [--since SPAN] — e.g. /cost agent-1 --since 1d"
    since = None
    if "--since" in args:
        at = args.index("--since")
        if at + 1 >= len(args):
            raise CommandUsage(usage)
        since = args[at + 1]
        args = args[:at] + args[at + 2 :]
    if len(args) > 1:
        raise CommandUsage(usage)
    try:
        return (validate_id("agent", args[0]) if args else None), since
    except InvalidInput as e:
        raise CommandUsage(f"{e} — {usage}") from e
