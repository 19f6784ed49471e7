"""What each program's incidents are made of, for bench/incident_bench.py: per program and kind, the
scripted answers (the one that causes the incident first, then what answering it leads to), the event
type that tells it, and how the bench answers the dialog (an `ib` command) with the event that follows.
Pure data; the bench runs it against the real CLIs."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

from tests import fake_anthropic as claude
from tests import fake_openai as codex
from tests.fake_gemini import script as gemini
from worker.markers import COMPLETION_MARKER

DONE = f"Done.\n\n{COMPLETION_MARKER}"
ASKS = "Postgres or SQLite?"  # a turn that ends with neither marker: waiting
LIMIT_AHEAD = 3600  # seconds to a usage limit's reset: the worker resumes no agent during the bench
STOPPED = "stopped"  # a kind of its own: a fresh agent whose tmux session the bench kills
_calls = itertools.count(
    1
)  # Claude Code's calls differ: the runaway watchdog pauses an agent that repeats one


def _nth() -> int:
    return next(_calls)


@dataclass(frozen=True)
class Kind:
    """One row: `turns` the scripted answers, `told` the event type of the incident, `answer` the `ib`
    command words (after the agent) that close a dialog and `follows` the event that closing leads to;
    `mode` the agent's permission mode when it needs an agent of its own; `fresh` when each incident needs
    a new agent (the program goes on differently after it); `keys` what the bench presses afterwards."""

    turns: Callable[[], tuple[object, ...]]
    told: str
    answer: tuple[str, ...] = ()
    follows: str = ""
    mode: str = ""
    fresh: bool = False
    renew: int = 0  # a new agent after this many incidents
    keys: tuple[str, ...] = ()  # pressed in the pane afterwards when it shows `keys_if` (a dialog the
    keys_if: str = ""  # product does not answer)
    exhausted: Callable[[], object] | None = None  # every request's answer during the incident (a quota
    # used up answers them all: a program may try again before it tells)


def _stopped() -> tuple[object, ...]:
    return ()


CLAUDE: dict[str, Kind] = {
    "complete": Kind(lambda: (claude.reply(DONE),), "complete"),
    "waiting": Kind(lambda: (claude.reply(ASKS),), "waiting"),
    "question": Kind(
        lambda: (
            claude.reply(
                "One question.", claude.ask_user_question("Which database?", ["Postgres", "SQLite"])
            ),
            claude.reply(DONE),
        ),
        "question",
        ("answer", "1"),
        "complete",
    ),
    "permission": Kind(
        lambda: (
            claude.reply("Rebuilding.", claude.bash(f'make -v >/dev/null; echo "rc=$? {_nth()}"', "Rebuild")),
            claude.reply(DONE),
        ),
        "permission",
        ("approve",),
        "complete",
    ),
    "plan": Kind(
        lambda: (claude.reply("My plan.", claude.exit_plan_mode(f"1. Add flag {_nth()}\n2. Test it")),),
        "permission",
        ("deny",),  # keep planning: the agent stays in plan mode for the next one
        "waiting",
        mode="plan",
        # a fresh agent every five plans: Claude Code's PreToolUse hook gets no plan, and until the hook
        # read it from the transcript (worker.hooks.transcript_lines) six plans were one call to the watchdog
        renew=5,
    ),
    "error": Kind(lambda: (claude.overloaded(),), "error"),
    "limited": Kind(lambda: (claude.usage_limited(time.time() + LIMIT_AHEAD),), "limited"),
    STOPPED: Kind(_stopped, STOPPED),
}

CODEX: dict[str, Kind] = {
    "complete": Kind(lambda: (codex.reply(DONE),), "complete"),
    "waiting": Kind(lambda: (codex.reply(ASKS),), "waiting"),
    "permission": Kind(
        lambda: (
            codex.reply(
                "Asking first.",
                codex.exec_command('touch asked.txt; echo "rc=$?"', escalate="It runs outside the sandbox"),
            ),
            codex.reply(DONE),
        ),
        "permission",
        ("approve",),
        "complete",
    ),
    "error": Kind(  # Codex sends no signal for it: the pane watcher's state is the telling
        lambda: (codex.ApiError(400, "invalid_request_error", "The request is not valid."),), "state:error"
    ),
    # after its usage limit Codex goes on with another model, without the shell tool: a new agent each
    "limited": Kind(lambda: (codex.usage_limit_reached(LIMIT_AHEAD),), "limited", fresh=True),
    STOPPED: Kind(_stopped, STOPPED),
}

GEMINI: dict[str, Kind] = {
    "complete": Kind(lambda: (gemini.reply(DONE),), "complete"),
    "waiting": Kind(lambda: (gemini.reply(ASKS),), "waiting"),
    "permission": Kind(
        lambda: (
            gemini.reply("Making it.", gemini.shell("touch asked.txt && echo made")),
            gemini.reply(DONE),
        ),
        "permission",
        ("approve",),
        "complete",
    ),
    "error": Kind(lambda: (gemini.invalid(),), "error"),
    # Gemini CLI ends the turn on the 429, or asks "Usage limit reached for gemini-2.5-flash" with
    # 1. Keep trying, 2. Stop (the bench presses 2); it may try once more first
    "limited": Kind(
        lambda: (),
        "limited",
        keys=("2",),
        keys_if="Keep trying",
        exhausted=lambda: gemini.daily_quota(LIMIT_AHEAD),
    ),
    STOPPED: Kind(_stopped, STOPPED),
}

PROGRAMS: dict[str, dict[str, Kind]] = {"claude": CLAUDE, "codex": CODEX, "gemini": GEMINI}
KINDS = tuple(dict.fromkeys(k for kinds in PROGRAMS.values() for k in kinds))
