"""The tools about agents: list, inspect, spawn, talk to, answer, review, merge and end them. Each checks
the call as the `ib` command it stands for, then does what that command does."""

from __future__ import annotations

from typing import Literal

from mcp.types import CallToolResult, ImageContent

from bus.commands.worker_commands import (
    Approve,
    Choose,
    Deny,
    Diff,
    Kill,
    Look,
    Merge,
    Resume,
    TakeScreenshot,
)
from bus.errors import InvalidInput
from worker.agents import views
from worker.cli import agent_commands, review_commands
from worker.mcp.session import Session, reply


class AgentTools:
    def __init__(self, session: Session) -> None:
        self.session = session

    def list_agents(self) -> CallToolResult:
        """Every agent with its state, role, program, manager and goal (as `ib list`)."""
        self.session.allow("list")
        agents = self.session.agents()
        rt = self.session.runtime()
        rows = agent_commands.agent_rows(rt, agents)
        lines = [
            f"{a.id}  {views.with_detail(str(row['state']), a.detail)}  {a.role}  {a.cli}  "
            f"{views.first_line(a.goal, 60)}"
            for a, row in zip(agents, rows, strict=True)
        ]
        return reply("\n".join(lines) or "no agents", {"agents": rows})

    def agent_info(self, agent: str) -> CallToolResult:
        """Everything about one agent: state, branch, worktree, and how to attach to its terminal."""
        self.session.allow("info", target=agent)
        rt = self.session.runtime()
        record = rt.agents.get(agent)
        return reply("\n".join(views.info_lines(rt, record)), views.info_record(rt, record))

    def look(self, agent: str, lines: int | None = None, png: bool = False) -> CallToolResult:
        """What the agent's terminal shows (the last `lines` lines, scrollback included), and with `png`
        a picture of the screen with its colours."""
        self.session.allow("look", target=agent)
        text = str(self.session.on_owner(Look(agent=agent, lines=lines or None)))
        if not png:
            return reply(text, {"agent": agent, "screen": text})
        shot = self.session.on_owner(TakeScreenshot(agent=agent))
        picture = ImageContent(type="image", data=str(shot["png"]), mime_type="image/png")
        data = {"agent": agent, "screen": text, "width": shot["width"], "height": shot["height"]}
        return reply(text, data, picture)

    def spawn(
        self,
        goal: str = "",
        name: str | None = None,
        program: Literal["claude", "codex", "gemini"] | None = None,
        role: Literal["manager", "worker"] = "manager",
        task: str | None = None,
        worktree: bool = True,
        model: str | None = None,
        project: str | None = None,
        manager: str | None = None,
        on: str | None = None,
    ) -> CallToolResult:
        """Start an agent in its own worktree and tmux session (as `ib new-agent`); its id. With `task`
        it is given that task (its title and body are the goal when `goal` is empty)."""
        options = {"--no-worktree"} if not worktree else set()
        options |= {"--on"} if on else set()
        self.session.allow("new-agent", acting=manager, options=options)
        ctx = self.session.ctx
        command = agent_commands.new_agent_command(
            ctx,
            goal,
            name=name,
            manager=manager,
            worker=role == "worker",
            no_worktree=not worktree,
            model=model,
            project=project,
            task=task,
            cli=program,
        )
        notes: list[str] = []
        made = agent_commands.spawn(ctx, command, on, notes.append)
        return reply("\n".join([f"spawned {made}", *notes]), {"agent": made, "notes": notes})

    def send(self, agent: str, text: str, sender: str | None = None) -> CallToolResult:
        """Type a message into an agent's session (verbatim, then Enter); `user` queues it for the person."""
        self.session.allow("send", target=agent, acting=sender)
        done = agent_commands.deliver(self.session.ctx, agent, text, sender)
        return reply(done, {"agent": agent, "done": done})

    def approve(self, agent: str, always: bool = False, prompt: str | None = None) -> CallToolResult:
        """Allow the tool call an agent asks permission for, trust its folder, or accept its plan."""
        self.session.allow("approve", target=agent)
        said = self.session.on_owner(Approve(agent=agent, always=always, prompt=prompt))
        return self._answered(agent, said)

    def deny(self, agent: str, reason: str = "", prompt: str | None = None) -> CallToolResult:
        """Refuse the tool call (and tell the agent why), refuse the folder, or keep planning."""
        self.session.allow("deny", target=agent)
        return self._answered(agent, self.session.on_owner(Deny(agent=agent, reason=reason, prompt=prompt)))

    def answer(self, agent: str, option: str, prompt: str | None = None) -> CallToolResult:
        """Pick an option of the dialog an agent shows: its number or its label, as `look` shows them."""
        self.session.allow("answer", target=agent)
        return self._answered(agent, self.session.on_owner(Choose(agent=agent, answer=option, prompt=prompt)))

    def _answered(self, agent: str, said: object) -> CallToolResult:
        return reply(str(said), {"agent": agent, "done": str(said)})

    def diff(self, agent: str, stat: bool = False) -> CallToolResult:
        """Everything the agent's branch changed since it started (`stat`: a summary of changed files)."""
        self.session.allow("diff", target=agent, options={"--stat"} if stat else ())
        text = str(self.session.on_owner(Diff(agent=agent, stat=stat)))
        return reply(text, {"agent": agent, "diff": text})

    def review_comment(
        self,
        agent: str,
        file: str | None = None,
        comment: str | None = None,
        lines: str | None = None,
        request_changes: bool = False,
    ) -> CallToolResult:
        """Review an agent's change (as `ib review`): keep a `comment` on `file` (its path, or its number in
        `diff`'s file list) about `lines` (A-B; default every line of its diff), and with `request_changes`
        send every comment waiting (also those made in Telegram) to the agent as one prompt."""
        self.session.allow("review", target=agent)
        if comment is None and not request_changes:
            raise InvalidInput("give a comment on a file to keep, or request_changes to send those waiting")
        if comment is not None and file is None:
            raise InvalidInput("name the file the comment is about (its path, or its number in the change)")
        ctx, kept, said = self.session.ctx, None, []
        if comment is not None and file is not None:
            prompt, waiting = review_commands.keep_comment(ctx, agent, file, comment, lines)
            kept = {"comment": prompt, "waiting": waiting}
            said.append(f"kept for {agent} ({waiting} waiting): {prompt}")
        sent = review_commands.request_changes(ctx, agent) if request_changes else None
        said += [f"sent to {agent}:\n{sent}"] if sent else []
        return reply("\n".join(said), {"agent": agent, "kept": kept, "sent": sent})

    def merge(self, agent: str, into: str | None = None) -> CallToolResult:
        """Rebase the agent's branch onto the target, merge it, and close the agent."""
        self.session.allow("merge", target=agent, options={"--into"} if into else ())
        done = self.session.on_owner(Merge(agent=agent, into=into))
        return reply(agent_commands.merged_line(done), dict(done))

    def resume(self, agent: str) -> CallToolResult:
        """Let a paused agent go on, or restart a stopped agent's session with its conversation."""
        self.session.allow("resume", target=agent)
        said = str(self.session.on_owner(Resume(agent=agent)))
        return reply(said, {"agent": agent, "done": said})

    def kill(self, agent: str, force: bool = False) -> CallToolResult:
        """Stop an agent without merging (its archive is kept in .ib/archive); `force` also when it has
        unmerged work."""
        self.session.allow("kill", target=agent, options={"--force"} if force else ())
        self.session.on_owner(Kill(agent=agent, force=force))
        return reply(f"killed {agent}", {"agent": agent, "killed": True})
