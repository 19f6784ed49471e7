"""The prompt an agent starts with: role marker, worktree and manager, instructions, completion protocol.

Pure: the caller reads the person's custom prompts and passes their text in.
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.markers import COMPLETION_MARKER, WAITING_MARKER


@dataclass(frozen=True)
class PromptFacts:
    agent_id: str
    role: str  # manager | worker
    goal: str
    worktree: str  # "" when the agent works in the main checkout
    branch: str
    base_branch: str
    root: str
    manager: str = ""
    task_id: str = ""
    custom_all: str = ""
    custom_role: str = ""


def build_prompt(facts: PromptFacts) -> str:
    parts = [
        f"<ittybus>You are an ittybus {facts.role} agent (id {facts.agent_id}).</ittybus>",
        _where(facts),
        _manager(facts),
        _instructions(facts),
        _custom(facts),
        _task(facts),
        _completion(),
        f"[USER TASK]\n{facts.goal.strip()}",
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def _where(f: PromptFacts) -> str:
    if not f.worktree:
        return f"[WORKTREE]\nYou work directly in the repository at {f.root} (no worktree of your own)."
    return (
        f"[WORKTREE]\nYou work in your own git worktree at {f.worktree}, on branch {f.branch}, "
        f"made from {f.base_branch}. Commit your work on this branch; it is merged when you are done.\n"
        "It is the work tree of a repository of your own (the main repository is read-only to you): "
        "`git fetch` brings its branches up to date; the worker takes your branch from here.\n"
        f"[PATH ISOLATION]\nStay inside {f.worktree} (and /tmp, ~/.claude). Do not read or change files in "
        f"{f.root} outside your worktree, nor in other agents' folders: such tool calls are refused."
    )


def _manager(f: PromptFacts) -> str:
    if not f.manager:
        return "[MANAGER]\nYou have no manager: you report to the person through ittybus."
    return (
        f"[MANAGER]\nYour manager is agent {f.manager}. Messages from it arrive prefixed "
        f'`[sent by agent {f.manager}]:`. Reach it with: ib send {f.manager} "message"'
    )


def _instructions(f: PromptFacts) -> str:
    common = (
        "Useful commands: `ib status <id>` and `ib diff <id>` (your own work too), "
        '`ib log "note"` (your log), `ib ask "question"` (ask the person and wait), '
        '`ib send user "..."` (a message for the person: start it with `?` for a question, `!` for an '
        "alert, `DONE:` when you finished something)."
    )
    if f.role == "worker":
        return (
            "[INSTRUCTIONS]\nYou are a worker: do the task yourself; you cannot spawn agents. "
            "If you are stuck, say so and explain what you need, then say WAITING.\n" + common
        )
    return (
        "[INSTRUCTIONS]\nYou are a manager: small tasks you do yourself; larger ones you split and give to "
        'workers with `ib new-agent --worker "goal"`, follow with `ib list`, `ib look <id>`, '
        "review with `ib diff <id>` and merge with `ib merge <id>` (resolve conflicts in your worktree).\n"
        + common
    )


def _custom(f: PromptFacts) -> str:
    parts = []
    if f.custom_all.strip():
        parts.append(f"[CUSTOM INSTRUCTIONS]\n{f.custom_all.strip()}")
    if f.custom_role.strip():
        parts.append(f"[CUSTOM {f.role.upper()} INSTRUCTIONS]\n{f.custom_role.strip()}")
    return "\n\n".join(parts)


def _task(f: PromptFacts) -> str:
    if not f.task_id:
        return ""
    return (
        f"[TASK]\nYou work on task {f.task_id}. When it is finished and committed, run:\n"
        f'  ib task done {f.task_id} --summary "one line on what you did"\n'
        f'If you cannot finish it, run: ib task fail {f.task_id} --reason "why"'
    )


def _completion() -> str:
    return (
        "[COMPLETION]\nWhen the goal is fully done (work committed), end your reply with this line alone:\n"
        f"{COMPLETION_MARKER}\n"
        f"When you need input to go on, end your reply with this line alone:\n{WAITING_MARKER}"
    )
