"""The commands a worker runs for others (the CLI on another machine, the dashboard, the bot): one frozen
model per command, tagged by its wire name `op`, and `WorkerCommand`, their union.

What used to be tables keyed by the name lives on each class: how long a caller waits for the answer
(`timeout`), whether any worker may run it (`bus_only`), and which field names the agent or question
whose worker must run it (`routed_by`). `parse_command` turns an `op` and its arguments into a command,
or raises `BadCommand` with one line naming the command and the argument that is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal, TypeAlias, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from bus.errors import InvalidInput
from bus.settings.permission_modes import permission_mode

DEFAULT_TIMEOUT = 60.0
SHOWN_INPUT = 40  # characters of a bad value quoted back in an error

RoutedBy: TypeAlias = Literal["agent", "question"] | None


def _none_if_empty(value: str | None) -> str | None:
    return value or None


# A text that may be left out; empty means left out, as the operations always read it.
OptionalText = Annotated[str | None, AfterValidator(_none_if_empty)]


def _known_mode(value: str | None) -> str | None:
    return permission_mode(value) if value else None


# A Claude Code permission mode, spelled as Claude Code spells it; empty means the configured one.
OptionalMode = Annotated[str | None, AfterValidator(_known_mode)]


class BadCommand(InvalidInput):
    """A command whose name or arguments are wrong; the message is one line naming both."""


class Command(BaseModel):
    """What every command shares: frozen, strict about types, no arguments beyond its own."""

    # each class's validator is built when that command is first made or read, not at import: a process
    # uses a few of the 26, and every `ib` service imports them
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)

    op: str
    timeout: ClassVar[float] = DEFAULT_TIMEOUT  # seconds a caller waits for another worker's answer
    bus_only: ClassVar[bool] = False  # changes only the bus: any worker may run it
    routed_by: ClassVar[RoutedBy] = None  # the field whose agent (or question's asker) decides the worker

    def routing_id(self) -> str | None:
        """The agent or question id that decides which worker runs this; None when it names neither."""
        if self.routed_by is None:
            return None
        value = getattr(self, self.routed_by)
        return value if isinstance(value, str) and value else None


class OnAgent(Command):
    """A command about one agent: it runs on that agent's worker."""

    agent: str
    routed_by: ClassVar[RoutedBy] = "agent"


class NewAgent(Command):
    """Spawn an agent; with a task and no goal, the task's text is the goal."""

    op: Literal["new-agent"] = "new-agent"
    timeout: ClassVar[float] = 120.0
    goal: str = ""
    name: OptionalText = None
    manager: OptionalText = None
    worker: bool = False
    no_worktree: bool = False
    model: OptionalText = None
    permission_mode: OptionalMode = None
    project: OptionalText = None
    task: OptionalText = None
    caller: OptionalText = None
    cli: OptionalText = None  # the agent program; None: the worker's IB_DEFAULT_CLI


class Send(OnAgent):
    op: Literal["send"] = "send"
    text: str
    sender: OptionalText = None


class PressKeys(OnAgent):
    op: Literal["keys"] = "keys"
    keys: tuple[str, ...] = Field(default=(), strict=False)  # a JSON list is a tuple here


class Look(OnAgent):
    op: Literal["look"] = "look"
    lines: int | None = None


class TakeScreenshot(OnAgent):
    op: Literal["screenshot"] = "screenshot"


class Answer(Command):
    """The answer to a question an agent asked: on the asker's worker."""

    op: Literal["answer"] = "answer"
    routed_by: ClassVar[RoutedBy] = "question"
    question: str
    text: str
    sender: OptionalText = None


class Kill(OnAgent):
    op: Literal["kill"] = "kill"
    force: bool = False


class Merge(OnAgent):
    op: Literal["merge"] = "merge"
    timeout: ClassVar[float] = 600.0
    into: OptionalText = None


class MergeCheck(OnAgent):
    op: Literal["merge-check"] = "merge-check"
    into: OptionalText = None


class Approve(OnAgent):
    op: Literal["approve"] = "approve"
    always: bool = False
    prompt: OptionalText = None


class Deny(OnAgent):
    op: Literal["deny"] = "deny"
    reason: str = ""
    prompt: OptionalText = None
    always: bool = False  # older bots sent it with every deny; it means nothing here


class Choose(OnAgent):
    op: Literal["choose"] = "choose"
    answer: str
    prompt: OptionalText = None


class Pause(OnAgent):
    op: Literal["pause"] = "pause"


class Resume(OnAgent):
    op: Literal["resume"] = "resume"


class Nuke(Command):
    """An agent and everything below it; without one, every agent of the worker's repository."""

    op: Literal["nuke"] = "nuke"
    timeout: ClassVar[float] = 300.0
    routed_by: ClassVar[RoutedBy] = "agent"
    agent: OptionalText = None
    tree: bool = True


class Diff(OnAgent):
    op: Literal["diff"] = "diff"
    stat: bool = False


class DiffReview(OnAgent):
    """The agent's change for review: file list and a picture per file, or (no `pictures`) fingerprints."""

    op: Literal["diff-review"] = "diff-review"
    timeout: ClassVar[float] = 120.0  # rendering a few thousand lines takes seconds on a busy machine
    pictures: bool = True


class Status(OnAgent):
    op: Literal["status"] = "status"


class AutoStart(Command):
    """Start or resume a project's /auto loop; with `agent`, on that agent's worker."""

    op: Literal["auto-start"] = "auto-start"
    timeout: ClassVar[float] = 120.0  # the worker answers once the first task's agent is started
    routed_by: ClassVar[RoutedBy] = "agent"
    project: str
    worktrees: bool = False
    max_tasks: int = 0
    agent: OptionalText = None


class AutoStop(Command):
    op: Literal["auto-stop"] = "auto-stop"
    project: str
    reason: str = ""


class AutoPause(Command):
    op: Literal["auto-pause"] = "auto-pause"
    project: str
    reason: str = ""
    interrupt: bool = False


class QueueMerge(OnAgent):
    """Put an agent's branch in its project's merge queue (worked by the agent's own worker)."""

    op: Literal["queue-merge"] = "queue-merge"
    bus_only: ClassVar[bool] = True
    task: OptionalText = None
    into: OptionalText = None


class PlanStart(Command):
    op: Literal["plan-start"] = "plan-start"
    goal: str
    project: OptionalText = None


class PlanApprove(Command):
    op: Literal["plan-approve"] = "plan-approve"
    plan: str


class PlanEdit(Command):
    op: Literal["plan-edit"] = "plan-edit"
    plan: str
    changes: str


class PlanDiscard(Command):
    op: Literal["plan-discard"] = "plan-discard"
    plan: str


WorkerCommand: TypeAlias = Annotated[
    NewAgent
    | Send
    | PressKeys
    | Look
    | TakeScreenshot
    | Answer
    | Kill
    | Merge
    | MergeCheck
    | Approve
    | Deny
    | Choose
    | Pause
    | Resume
    | Nuke
    | DiffReview
    | Diff
    | Status
    | AutoStart
    | AutoStop
    | AutoPause
    | QueueMerge
    | PlanStart
    | PlanApprove
    | PlanEdit
    | PlanDiscard,
    Field(discriminator="op"),
]

COMMAND_TYPES: tuple[type[Command], ...] = get_args(get_args(WorkerCommand)[0])
BY_OP: dict[str, type[Command]] = {kind.model_fields["op"].default: kind for kind in COMMAND_TYPES}


def parse_command(op: str, args: object) -> WorkerCommand:
    """The command `op` with these arguments (a mapping of its fields but the tag); BadCommand says in
    one line what is wrong."""
    if op not in BY_OP:
        raise BadCommand(f"unknown command {_shown(op)} (known: {', '.join(sorted(BY_OP))})")
    if not isinstance(args, Mapping):
        raise BadCommand(f"{op}: its arguments must be a JSON object, not {_shown(args)}")
    try:
        return BY_OP[op].model_validate({**args, "op": op})  # type: ignore[return-value]
    except ValidationError as e:
        errors = e.errors(include_url=False)
        first = errors[0]
        line = describe_error(op, first["type"], first["loc"], first["msg"], first.get("input"))
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BadCommand(line + more) from None


def describe_error(op: str, kind: str, loc: tuple[int | str, ...], message: str, value: object) -> str:
    """One line for one argument of `op` that is wrong: pydantic's error `kind` at `loc` (within the
    command), its `message`, and the `value` it got. Pure."""
    where = _where(loc)
    if kind == "missing":
        return f"{op}: the argument {where!r} is missing"
    if kind == "extra_forbidden":
        takes = ", ".join(name for name in BY_OP[op].model_fields if name != "op") or "none"
        return f"{op}: there is no argument {where!r} (it takes: {takes})"
    return f"{op}: the argument {where!r} is wrong: {message[:1].lower()}{message[1:]} (got {_shown(value)})"


def _where(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_INPUT else text[: SHOWN_INPUT - 1] + "…"
