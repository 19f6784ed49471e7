"""`ib new-agent`: a repository of its own on `agent/<id>`, a prompt, the agent program's settings with our
hooks (worker.programs), a tmux session.

Called by the CLI on this machine and by the worker service for `new-agent` commands from the bus.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bus.commands.worker_commands import NewAgent
from bus.errors import Conflict, InvalidInput
from bus.events.spool import spool_dirs
from bus.settings.permission_modes import BYPASS, permission_mode
from bus.settings.relay_port import RELAY_QUEUE, VIA_RELAY, relay_address
from bus.settings.repo_paths import agent_from_path, ensure_state_dir, shared_git_dir
from bus.settings.settings import MODEL_PROGRAMS
from bus.settings.settings_file import read_text
from bus.stores.agent_store import Agent
from bus.wire.ids import folder_project, validate_id
from worker.agents import agent_log
from worker.agents.agent_env import agent_path, env_command, passed_names
from worker.agents.layout import AgentPaths, session_name
from worker.agents.prompt import PromptFacts, build_prompt
from worker.errors import WorkerError
from worker.git import agent_repo
from worker.git.agent_repo import AgentRepo
from worker.git.repo import Git
from worker.permissions.config_file import read_config
from worker.permissions.policy import merge_permissions
from worker.programs import registry
from worker.programs.claude.sandbox import sandbox_problem
from worker.programs.claude.settings import persons_default_mode
from worker.programs.confinement import Confinement
from worker.programs.program import AgentProgram, Launch
from worker.programs.registry import program_of
from worker.runtime import Runtime

logger = logging.getLogger(__name__)

USER_HOOK_TIMEOUT = 30
RESERVED_NAMES = frozenset({"user", "user-claude"})  # `ib send user ...` is a message for the person


class SpawnRefused(WorkerError):
    """The agent cannot be made as asked (a worker asking to spawn, a name in use, ...)."""


@dataclass(frozen=True)
class SpawnRequest:
    goal: str
    name: str | None = None
    manager: str | None = None
    worker: bool = False
    no_worktree: bool = False
    model: str | None = None
    permission_mode: str | None = None  # None: the configured one for the agent's role
    prompt_file: str | None = None
    instructions: str | None = None  # what the agent is told, when more than the goal (a planner's prompt)
    project: str | None = None
    task: str | None = None
    caller: str | None = None  # the agent asking, when an agent runs `ib new-agent`
    cli: str | None = None  # the agent program (worker.programs); None: IB_DEFAULT_CLI
    on_note: Callable[[str], None] | None = None  # told what to know before the agent starts

    @classmethod
    def from_command(cls, c: NewAgent, on_note: Callable[[str], None] | None = None) -> SpawnRequest:
        """The request a `NewAgent` command (from this machine's CLI or over the bus) asks for."""
        return cls(
            goal=c.goal,
            name=c.name,
            manager=c.manager,
            worker=c.worker,
            no_worktree=c.no_worktree,
            model=c.model,
            permission_mode=c.permission_mode,
            project=c.project,
            task=c.task,
            caller=c.caller,
            cli=c.cli,
            on_note=on_note,
        )


def new_agent(rt: Runtime, req: SpawnRequest) -> Agent:
    """Make and start one agent; returns its record (state `creating`)."""
    program = chosen_program(rt, req.cli)
    goal = _goal(req)
    manager = _manager(rt, req)
    agent_id = validate_id("agent", req.name) if req.name is not None else f"agent-{secrets.token_hex(3)}"
    if agent_id in RESERVED_NAMES:
        raise SpawnRefused(
            f"{agent_id!r} is reserved (`ib send {agent_id}` reaches the person); pick another --name"
        )
    root = rt.root
    paths = AgentPaths(root, agent_id)
    if paths.folder.exists():
        raise SpawnRefused(
            f"an agent named {agent_id!r} already exists; pick another --name or `ib kill {agent_id}`"
        )
    command = program.command(rt.settings.agent_command)
    registry.check_startable(program, command, lambda warning: _note(req, warning))
    mode = _permission_mode(rt, req)
    if program.name == "claude" and not req.permission_mode:
        _note_persons_mode(req, str(root), mode)
    for note in program.notes(command, str(root)):
        _note(req, note)
    holder = rt.agents.reserve(agent_id, rt.worker_id)  # atomic: one machine gets the name
    if holder is not None:
        raise SpawnRefused(
            f"an agent named {agent_id!r} already exists on worker {holder!r}; pick another --name "
            f"or `ib kill {agent_id}`"
        )
    git = Git(root)
    branch = "" if req.no_worktree else f"agent/{agent_id}"
    try:
        ensure_state_dir(str(root))
        base = _base_branch(git, rt, manager)
        paths.folder.mkdir(parents=True)
        if branch:
            own = AgentRepo(paths.worktree, paths.git_dir, branch)
            agent_repo.create(git, own, base)
            agent_repo.publish(git, own)  # `git branch` in the person's repository lists it at once
        agent = _record(rt, req, agent_id, goal, manager, paths, branch, base, mode, program.name)
        _write_files(rt, agent, paths, req)
        rt.agents.save(agent)
        cwd = paths.worktree if branch else root
        rt.tmux.scrub_global_secrets()
        rt.tmux.new_session(
            agent.session, cwd, f"sh {shlex.quote(str(paths.start_script))}", {}, remain_on_exit=True
        )
    except BaseException:
        _undo(rt, git, paths, branch, agent_id)
        raise
    agent_log.append(paths.log, f"Agent created (manager: {manager or 'none'}, prompt: {goal[:200]})")
    if manager:
        agent_log.append(
            AgentPaths(root, manager).log, f"Spawned {agent.role} subagent: {agent_id} (prompt: {goal[:200]})"
        )
    _run_user_hook(root, agent, paths)
    rt.publish(
        "spawned",
        f"{agent_id} started: {goal.splitlines()[0][:200]}",
        sender=manager or "system",
        **agent.event_fields(),
        data={
            "goal": goal[:2000],
            "manager": manager,
            "worktree": str(paths.worktree) if branch else "",
            "role": agent.role,
            "branch": branch,
            "cli": agent.cli,
        },
    )
    return agent


def chosen_program(rt: Runtime, cli: str | None) -> AgentProgram:
    """The program `--cli` names, else IB_DEFAULT_CLI's; one line listing the known ones when unknown."""
    if cli:
        return registry.program(cli)
    return registry.program(rt.settings.default_cli, option="IB_DEFAULT_CLI")


def _note(req: SpawnRequest, note: str) -> None:
    """What a person should know before the agent starts: to the caller, else the log."""
    if req.on_note is not None:
        req.on_note(note)
    else:
        logger.warning("%s", note)


def read_goal(req: SpawnRequest) -> str:
    """The goal text: `--prompt-file`'s content, then the goal given, refused when both are empty."""
    return _goal(req)


def _goal(req: SpawnRequest) -> str:
    goal = req.goal
    if req.prompt_file:
        try:
            goal = Path(req.prompt_file).read_text(encoding="utf-8") + ("\n\n" + goal if goal.strip() else "")
        except (OSError, UnicodeDecodeError) as e:
            raise InvalidInput(f"cannot read --prompt-file {req.prompt_file}: {e}") from e
    if not goal.strip():
        raise InvalidInput('the agent needs a goal: ib new-agent "what to do" (or --prompt-file FILE)')
    return goal


def _manager(rt: Runtime, req: SpawnRequest) -> str:
    """The explicit --manager, else the agent running this command (inside a worktree it is the manager)."""
    caller = req.caller or agent_from_path(str(rt.cwd)) or rt.settings.agent_id
    manager = req.manager or caller or ""
    if caller:
        parent = rt.agents.find(caller)
        if parent is not None and parent.role == "worker":
            raise SpawnRefused(f"{caller} is a worker agent: workers cannot spawn agents; ask your manager")
    if manager:
        validate_id("agent", manager)
        if rt.agents.find(manager) is None:
            raise InvalidInput(f"manager {manager!r} is not an agent (see `ib list`)")
    return manager


def _note_persons_mode(req: SpawnRequest, root: str, mode: str) -> None:
    """The person's own defaultMode does not reach agents (theirs outranks it): say so when it differs."""
    found = persons_default_mode(root, os.path.expanduser("~"))
    if found is not None and found[0] != mode:
        _note(
            req,
            f"your Claude Code defaultMode {found[0]!r} ({found[1]}) is not used for agents: this one "
            f"starts in {mode} (--permission-mode or IB_PERMISSION_MODE picks another)",
        )


def _permission_mode(rt: Runtime, req: SpawnRequest) -> str:
    """The mode asked for, else the role's configured one. Claude Code refuses bypassPermissions as root
    unless told it runs in a sandbox (IS_SANDBOX=1): ittybus says so only when the agent's commands do
    run in Claude Code's sandbox, and refuses the mode as root where there is none."""
    role = "worker" if req.worker else "manager"
    mode = requested_mode(req.permission_mode) or rt.settings.permission_mode_for(role)
    if mode == BYPASS and _root():
        problem = sandbox_problem()
        if problem is not None:
            raise SpawnRefused(
                f"{BYPASS} as root needs Claude Code's sandbox, and this machine has none ({problem}); "
                "pick another permission mode, e.g. acceptEdits"
            )
    return mode


def requested_mode(value: str | None) -> str | None:
    """The mode `--permission-mode` names, None when none is given; InvalidInput lists the known ones."""
    if not value:
        return None
    try:
        return permission_mode(value)
    except ValueError as e:
        raise InvalidInput(f"--permission-mode {e} (got {value!r})") from e


def _root() -> bool:
    return hasattr(os, "getuid") and os.getuid() == 0


def _base_branch(git: Git, rt: Runtime, manager: str) -> str:
    """Workers of a manager start from the manager's branch (as its repository has it now); others from
    the branch checked out here."""
    if manager:
        parent = rt.agents.get(manager)
        if parent.branch and parent.worker == rt.worker_id:  # another machine's branch is not here
            folder = AgentPaths(Path(parent.root), parent.id)
            agent_repo.publish(git, AgentRepo(folder.worktree, folder.git_dir, parent.branch))
            return parent.branch
    branch = git.current_branch()
    if branch is None:
        raise Conflict(f"{rt.root} is on a detached HEAD; check out a branch before spawning agents")
    return branch


def _record(
    rt: Runtime,
    req: SpawnRequest,
    agent_id: str,
    goal: str,
    manager: str,
    paths: AgentPaths,
    branch: str,
    base: str,
    mode: str,
    program: str,
) -> Agent:
    inherited = rt.agents.get(manager).project if manager else ""
    project = req.project or inherited or folder_project(rt.root.name)
    if req.project:
        validate_id("project", req.project)
    now = time.time()
    return Agent(
        id=agent_id,
        goal=goal,
        role="worker" if req.worker else "manager",
        manager=manager,
        project=project,
        task=req.task or "",
        root=str(rt.root),
        worktree=str(paths.worktree) if branch else "",
        branch=branch,
        base_branch=base,
        session=session_name(rt.root, agent_id),
        worker=rt.worker_id,
        model=req.model or rt.settings.model_for(program),
        program=program,
        permission_mode=mode,
        created_at=now,
        state="creating",
        state_at=now,
        claude_session=str(uuid.uuid4()),
    )


def _write_files(rt: Runtime, agent: Agent, paths: AgentPaths, req: SpawnRequest) -> None:
    prompts = rt.root / ".ib" / "prompts"
    facts = PromptFacts(
        agent_id=agent.id,
        role=agent.role,
        goal=req.instructions or agent.goal,
        worktree=agent.worktree,
        branch=agent.branch,
        base_branch=agent.base_branch,
        root=agent.root,
        manager=agent.manager,
        task_id=agent.task,
        custom_all=_read(prompts / "all.md"),
        custom_role=_read(prompts / f"{agent.role}.md"),
    )
    paths.prompt.write_text(build_prompt(facts), encoding="utf-8")
    paths.bin.mkdir(exist_ok=True)
    paths.cache.mkdir(exist_ok=True)
    paths.relay_queue.mkdir(exist_ok=True)
    launch = agent_launch(rt, agent, paths)
    program_of(agent).prepare(launch)
    paths.meta.write_text(
        json.dumps(json.loads(agent.to_json()), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    paths.start_script.write_text(start_script(rt, agent, paths), encoding="utf-8")
    (paths.bin / "ib").symlink_to(rt.ib_command)


def agent_launch(rt: Runtime, agent: Agent, paths: AgentPaths, resume: bool = False) -> Launch:
    """What the agent's program is told to set up and start (worker.programs.program.Launch)."""
    permissions = merge_permissions(
        agent.role,
        read_config(rt.root / ".ib" / "config.json"),
        read_config(Path.home() / ".ib" / "config.json"),
    )
    return Launch(
        agent_id=agent.id,
        role=agent.role,
        command=program_of(agent).command(rt.settings.agent_command),
        cwd=agent.worktree or agent.root,
        root=agent.root,
        folder=paths.folder,
        prompt_file=paths.prompt,
        ib_command=rt.ib_command,
        permission_mode=agent.permission_mode,
        permissions=permissions,
        confinement=_confinement(rt, agent, paths),
        session=agent.claude_session,
        model=agent.model,
        resume=resume,
        note=lambda line: agent_log.append(paths.log, line),
    )


def _confinement(rt: Runtime, agent: Agent, paths: AgentPaths) -> Confinement:
    """Where the agent may write: its worktree and own repository, or for an agent without a worktree
    the root, with the branches it must not move."""
    if agent.branch:
        return Confinement(
            agent.worktree,
            agent.root,
            (),
            rt.ib_command,
            git_dir=str(paths.git_dir),
            bin=str(paths.bin),
            cache=str(paths.cache),
            relay=_relay(rt),
            queue=str(paths.relay_queue),
            spool=spool_dirs(str(rt.settings.spool_dir)),
        )
    refs = Path(shared_git_dir(str(rt.root))) / "refs" / "heads"
    branches = Git(rt.root).output("for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    protected = [b for b in branches if (refs / b).is_file()]
    return Confinement(
        agent.root,
        agent.root,
        protected,
        rt.ib_command,
        bin=str(paths.bin),
        cache=str(paths.cache),
        relay=_relay(rt),
        queue=str(paths.relay_queue),
        spool=spool_dirs(str(rt.settings.spool_dir)),
    )


def _relay(rt: Runtime) -> str:
    """The worker's relay, the one loopback address the agent's sandboxed `ib` may reach."""
    return relay_address(ensure_state_dir(str(rt.root)))


def start_script(rt: Runtime, agent: Agent, paths: AgentPaths, resume: bool = False) -> str:
    """The shell script the agent's pane runs: the agent program under `env -i` with an explicit
    environment (worker.agents.agent_env), whatever the tmux server's own environment holds; with
    `resume`, its conversation goes on."""
    env = {
        "IB_AGENT_ID": agent.id,
        "IB_AGENT_ROLE": agent.role,
        "IB_ROOT": agent.root,
        "IB_AGENT_WORKTREE": agent.worktree or agent.root,  # where its tools may write (hook pre-tool-use)
        "IB_NAMESPACE": rt.settings.namespace,
        "IB_WORKER_ID": rt.worker_id,  # the agent's own `ib` commands act on this machine's agents
        "IB_SPOOL_DIR": str(rt.settings.spool_dir),
        "PATH": agent_path(os.environ.get("PATH", "/usr/bin:/bin"), _ittybus_bin(rt), str(paths.bin)),
        "npm_config_cache": str(paths.cache / "npm"),  # the sandbox lets it write there, not in ~/.npm
        "IB_RELAY": _relay(rt),  # where its sandboxed `ib` sends commands (worker.boundary.relay)
    }
    start = program_of(agent).start(agent_launch(rt, agent, paths, resume))
    if start.relayed:  # no bus address where the agent's commands can read it: the relay runs its `ib`
        env[VIA_RELAY] = "1"
        env[RELAY_QUEUE] = str(paths.relay_queue)  # its hooks wait there while no worker runs
    elif rt.settings.redis_url:
        env["IB_REDIS_URL"] = rt.settings.redis_url
    if rt.settings.tmux_socket:
        env["IB_TMUX_SOCKET"] = rt.settings.tmux_socket
    if agent.role == "manager":
        env.update(_spawn_settings(rt))
    env.update(start.environment)
    passed = passed_names(os.environ, rt.settings.agent_env)
    cwd = agent.worktree or agent.root
    return (
        "#!/bin/sh\n"
        f"# written by ittybus for agent {agent.id}\n"
        f"cd {shlex.quote(cwd)} || exit 1\n"
        f"exec {env_command(env, passed)} \\\n"
        f"  {start.words}\n"
    )


def _spawn_settings(rt: Runtime) -> dict[str, str]:
    """What a manager's own `ib new-agent` needs to start its children as this spawn starts it: the
    agent program, model, extra variables and permission modes, which the pane's explicit environment
    would leave out."""
    settings = {"IB_AGENT_COMMAND": rt.settings.agent_command, "IB_DEFAULT_CLI": rt.settings.default_cli}
    if rt.settings.model:
        settings["IB_MODEL"] = rt.settings.model
    for program in MODEL_PROGRAMS:
        if own := getattr(rt.settings, f"{program}_model"):
            settings[f"IB_{program.upper()}_MODEL"] = own
    if rt.settings.agent_env:
        settings["IB_AGENT_ENV"] = ",".join(rt.settings.agent_env)
    settings["IB_PERMISSION_MODE"] = rt.settings.permission_mode
    for role_setting in ("IB_MANAGER_PERMISSION_MODE", "IB_WORKER_PERMISSION_MODE"):
        if mode := getattr(rt.settings, role_setting[3:].lower()):
            settings[role_setting] = mode
    return settings


def _ittybus_bin(rt: Runtime) -> str:
    """The bin folder of ittybus's own virtual environment, kept off agents' PATH ("" outside one: then
    `ib` sits beside the person's own tools, which stay)."""
    return str(Path(rt.ib_command).parent) if sys.prefix != sys.base_prefix else ""


def _run_user_hook(root: Path, agent: Agent, paths: AgentPaths) -> None:
    hook = root / ".ib" / "hooks" / "post-create-agent"
    if not (hook.is_file() and os.access(hook, os.X_OK)):
        return
    env = {
        **os.environ,
        "IB_AGENT_ID": agent.id,
        "IB_AGENT_TYPE": agent.role,
        "IB_AGENT_DIR": str(paths.folder),
        "IB_AGENT_BRANCH": agent.branch,
        "IB_AGENT_MANAGER": agent.manager,
        "IB_AGENT_PROMPT": agent.goal,
        "IB_AGENT_MODEL": agent.model,
    }
    try:
        done = subprocess.run(
            [str(hook)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=USER_HOOK_TIMEOUT,
            check=False,
        )
        output = (done.stdout + done.stderr).strip()
        note = f"post-create-agent hook exited {done.returncode}" + (f": {output}" if output else "")
    except (OSError, subprocess.TimeoutExpired) as e:
        note = f"post-create-agent hook failed: {e}"
    agent_log.append(paths.log, note)


def _undo(rt: Runtime, git: Git, paths: AgentPaths, branch: str, agent_id: str) -> None:
    """A spawn that failed half way leaves nothing behind (each step may find nothing to undo)."""
    import shutil

    session = session_name(rt.root, agent_id)
    steps: list[Callable[[], object]] = [lambda: rt.tmux.kill_session(session)]
    if branch:
        steps += [
            lambda: agent_repo.remove(AgentRepo(paths.worktree, paths.git_dir, branch)),
            lambda: git.delete_branch(branch, force=True),
        ]
    steps += [lambda: rt.agents.remove(agent_id), lambda: shutil.rmtree(paths.folder, ignore_errors=True)]
    for step in steps:
        with contextlib.suppress(Exception):  # best effort: the original error is what the person sees
            step()


def _read(path: Path) -> str:
    """A prompt addition of the person's, through the settings-file reader (a FIFO never blocks a spawn)."""
    return read_text(str(path)) or ""
