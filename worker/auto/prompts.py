"""What the /auto loop tells agents: a task's goal, the next task for the project's agent, and the
instructions of a merge agent. Pure: the caller reads the person's custom merge prompt and passes it in.
"""

from __future__ import annotations

from collections.abc import Sequence

from bus.tasks.task_model import Task
from worker.markers import COMPLETION_MARKER

MERGE_PROMPT_FILE = "merge.md"
"""Custom instructions for merge agents, in `.ib/prompts/` next to `all.md` and `<role>.md`."""


def task_goal(task: Task) -> str:
    """The goal of an agent spawned for `task`: title, body, and what its dependencies left for it."""
    parts = [task.title]
    if task.body.strip():
        parts.append(task.body.strip())
    context = [f"- {n.kind} from {n.source_task}: {n.text}" for n in task.notes if n.source_task != task.id]
    if context:
        parts.append("[CONTEXT FROM EARLIER TASKS]\n" + "\n".join(context))
    return "\n\n".join(parts)


def task_message(task: Task) -> str:
    """The next task, sent to the project's agent (auto mode without worktrees)."""
    return (
        f"[TASK {task.id}] {task_goal(task)}\n\n"
        f"When it is finished and committed, run:\n"
        f'  ib task done {task.id} --summary "one line on what you did"\n'
        f'If you cannot finish it, run: ib task fail {task.id} --reason "why"\n'
        f"Then end your reply with: {COMPLETION_MARKER}"
    )


def merge_goal(
    *, task: str, title: str, source: str, branch: str, target: str, files: Sequence[str], custom: str = ""
) -> str:
    """A merge agent's goal: bring the task's branch onto its own (made from `target`), resolving `files`."""
    listing = "\n".join(f"  - {name}" for name in files)
    text = (
        f"Resolve a merge conflict for task {task} ({title}).\n"
        f"The work of agent {source} is on branch {branch}; it does not apply cleanly onto {target}.\n"
        f"Conflicted files:\n{listing}\n\n"
        f"Your branch starts from {target}. Bring that work onto it, commit by commit:\n"
        f"  git cherry-pick {target}..{branch}\n"
        "At each conflict, edit the files so they keep what both sides meant, `git add` them, then run\n"
        "`git cherry-pick --continue`, until every commit is applied. Run the project's tests, if any.\n"
        f"When `git status` is clean, end your reply with {COMPLETION_MARKER}: the worker then merges "
        f"your branch into {target}."
    )
    if custom.strip():
        text += f"\n\n[CUSTOM MERGE INSTRUCTIONS]\n{custom.strip()}"
    return text


def merge_again(target: str, files: Sequence[str]) -> str:
    """For a merge agent whose branch conflicts in turn: `target` moved while it worked."""
    listing = "\n".join(f"  - {name}" for name in files)
    return (
        f"{target} moved while you worked: your branch does not apply cleanly onto it any more.\n"
        f"Conflicted files:\n{listing}\n"
        f"Run `git rebase {target}`, resolve each conflict, `git add` the files, `git rebase --continue`.\n"
        f"When `git status` is clean, end your reply with {COMPLETION_MARKER}."
    )
