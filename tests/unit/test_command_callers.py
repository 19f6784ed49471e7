"""Nobody names a worker command by a bare string any more: every function that sends or runs one takes
a command object, and no source in bot/ or worker/ hands an operation's wire name to such a function,
dispatches on it, or builds a command from a name. The checker is shown the old code first, so a scan
that finds nothing means there is nothing, not that it looked nowhere."""

from __future__ import annotations

import ast
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.bot_runtime import BotRuntime
from bot.handlers.to_agents import _to_worker
from bus.commands.worker_commands import BY_OP, COMMAND_TYPES, Command
from bus.commands.worker_rpc import request, submit
from tests.sources import imports, nodes, python_files
from worker.cli.context import Context
from worker.frontends.dashboard import Dashboard
from worker.service.operations import OPERATIONS, run_operation
from worker.service.route import run_on_owner

REPO = Path(__file__).resolve().parents[2]
WIRE_NAMES = frozenset(BY_OP)
# Telegram's and the CLI's own commands share the plain words (look, send, pause): only a hyphenated
# wire name in a table is surely an operation's.
HYPHENATED = frozenset(name for name in WIRE_NAMES if "-" in name)

# Every function a command goes through on its way to a worker; each takes it as `command`.
ENTRY_POINTS: dict[str, Callable[..., Any]] = {
    "submit": submit,
    "request": request,
    "run_on_owner": run_on_owner,
    "run_operation": run_operation,
    "on_owner": Context.on_owner,
    "command": BotRuntime.command,
    "queue_command": BotRuntime.queue_command,
    "_to_worker": _to_worker,
    "_on_worker": Dashboard._on_worker,
}
DYNAMIC = frozenset({"parse_command", "BY_OP"})  # a command built from a name: for the bus's decoder only
NOT_COMMANDS = {
    # the Stop hook cannot load pydantic (tests/unit/test_hot_imports.py), so it encodes the one command it
    # sends by its wire name; tests/unit/test_manager_notes.py decodes that entry into a `Send`
    "worker/hooks/manager_notes.py": ["31: 'send' given to entry"],
    # not wire names: the allow-list is keyed by `ib` command paths (`new-agent`, `task add`), which the
    # guard maps worker commands onto by their type (worker.boundary.guard.RULE_OF)
    "worker/boundary/rules.py": [
        "47: a table keyed by 'new-agent'",
        "47: a table keyed by 'merge-check'",
        "67: a table keyed by 'new-agent'",
    ],
}


@pytest.mark.parametrize("function", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_every_entry_point_takes_a_command_object(function: Callable[..., Any]) -> None:
    parameters = inspect.signature(function).parameters
    assert "op" not in parameters and "args" not in parameters
    hints = typing.get_type_hints(function, localns={"Command": Command})
    kinds = typing.get_args(hints["command"]) or (hints["command"],)
    assert all(isinstance(kind, type) and issubclass(kind, Command) for kind in kinds), hints["command"]


def test_every_command_has_an_operation() -> None:
    assert set(OPERATIONS) == set(COMMAND_TYPES)


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        receiver = func.value
        if func.attr == "command" and isinstance(receiver, ast.Name) and receiver.id.endswith("app"):
            return "typer"  # app.command("new-agent") names a CLI command, not a worker operation
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _wire_names(node: ast.AST) -> Iterator[str]:
    for found in ast.walk(node):
        if isinstance(found, ast.Constant) and found.value in WIRE_NAMES:
            yield str(found.value)


def _is_op(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "op") or (
        isinstance(node, ast.Attribute) and node.attr == "op"
    )


def _in_a_call(node: ast.Call) -> Iterator[str]:
    """Wire names handed to an entry point or to the stream entry's encoder (bus.commands.command_wire),
    or to anything as `op=`."""
    callee = _callee(node)
    if callee in ENTRY_POINTS or callee == "entry":
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            yield from (f"{name!r} given to {callee}" for name in _wire_names(argument))
    for keyword in node.keywords:
        if keyword.arg == "op":
            yield from (f"op={name!r}" for name in _wire_names(keyword))


def _with_op(node: ast.AST) -> Iterator[str]:
    """Wire names bound to an `op`, or compared with one (dispatch by name)."""
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(_is_op(t) for t in targets):
            yield from (f"op = {name!r}" for name in _wire_names(node.value))
    if isinstance(node, ast.Compare) and any(_is_op(n) for n in [node.left, *node.comparators]):
        yield from (f"op compared with {name!r}" for name in _wire_names(node))


def _in_a_table(node: ast.AST) -> Iterator[str]:
    """A dict with an "op" key (a hand-made command), or a table keyed by operations' names."""
    if not isinstance(node, ast.Dict | ast.Set):
        return
    members = [
        m for m in (node.keys if isinstance(node, ast.Dict) else node.elts) if isinstance(m, ast.Constant)
    ]
    if isinstance(node, ast.Dict) and any(m.value == "op" for m in members):
        yield 'a dict with an "op" key'
    yield from (f"a table keyed by {m.value!r}" for m in members if m.value in HYPHENATED)


def _by_name(node: ast.AST) -> Iterator[str]:
    """The decoder's ways of building a command from a name."""
    if isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.alias):
        name = node.name
    else:
        return
    if name in DYNAMIC:
        yield f"{name} (a command built from a name)"


def violations(source: str) -> list[str]:
    """Where `source` names a worker command by a string: handed to an entry point, bound to or compared
    with an `op`, in a table or a hand-made command, or a command built from a name."""
    return _violations(ast.walk(ast.parse(source)))


def _violations(walked: Iterable[ast.AST]) -> list[str]:
    found: list[str] = []
    for node in walked:
        line = getattr(node, "lineno", 0)
        checks = [_with_op(node), _in_a_table(node), _by_name(node)]
        if isinstance(node, ast.Call):
            checks.append(_in_a_call(node))
        found += [f"{line}: {what}" for check in checks for what in check]
    return found


# Lines of the code before the command models: each must be caught.
OLD_CODE = {
    "cli": 'ctx.on_owner("send", {"agent": agent_id, "text": message})',
    "cli-context": 'Context().on_owner("kill", {"agent": agent_id, "force": force})',
    "cli-auto": 'request(client, ctx.keys, on, "auto-start", args, START_TIMEOUT)',
    "cli-control": '_control(project, "auto-stop", {"reason": reason})\nif op == "auto-stop":\n    pass',
    "bot": 'await rt.command(worker, "new-agent", args, ask.sender, timeout=SPAWN_TIMEOUT)',
    "bot-queue": 'await ask.rt.queue_command(agent.worker, "send", args, ask.sender)',
    "bot-relay": 'op = "deny" if tapped.action is Action.DENY else "approve"',
    "bot-to-worker": 'await _to_worker(ask, agent, "answer", {"question": q, "text": t}, message_id)',
    "dashboard": 'self._on_worker(agent_id, "look", {"agent": agent_id}, here)',
    "route": "return run_operation(rt, op, args)\nTIMEOUTS = {}\nx = run_operation(rt, 'merge', {})",
    "worker-rpc": 'body = {"id": command_id, "op": op, "args": args, "from": sender}',
    "encoded-by-name": 'command_wire.entry(command_id, "queue-merge", {"agent": a}, sender)',
    "keyword": 'submit(client, keys, worker, op="queue-merge", args={"agent": a})',
    "annotated": 'op: str = "plan-edit"',
    "by-name": "command = BY_OP[name](**args)",
    "parsed": "from bus.commands.worker_commands import parse_command",
    "operations": 'OPERATIONS = {"new-agent": _new_agent, "send": lambda rt, a: send(rt, a)}',
    "bus-only": 'BUS_ONLY = frozenset({"queue-merge"})',
    "timeouts": 'TIMEOUTS = {"merge": 600.0, "new-agent": 120.0, "nuke": 300.0, "auto-start": 120.0}',
}


@pytest.mark.parametrize("source", OLD_CODE.values(), ids=OLD_CODE.keys())
def test_the_checker_catches_the_old_code(source: str) -> None:
    assert violations(source)


def test_the_checker_leaves_other_words_alone() -> None:
    """The same words in other roles: typer's command names, pane states, git subcommands, bot commands."""
    source = (
        'app.command("new-agent")(agents.new_agent_cmd)\n'
        'if action.kind == "send":\n    pass\n'
        'parse_target("look", words)\n'
        'git.output("diff", "--stat")\n'
        'HANDLERS = {"pause": pause_command}\n'
        "await rt.command(worker, Send(agent=a, text=t), ask.sender)\n"
    )
    assert violations(source) == []


def _sources() -> list[Path]:
    return python_files("bot", "worker")


def test_no_source_names_a_worker_command_by_a_string() -> None:
    sources = _sources()
    assert len(sources) > 100  # the scan covers the packages
    found = {str(p.relative_to(REPO)): _violations(nodes(p)) for p in sources}
    assert {path: lines for path, lines in found.items() if lines} == NOT_COMMANDS


def _built(path: Path) -> set[str]:
    """The commands a module imports from bus.commands.worker_commands and calls."""
    imported = {
        alias.asname or alias.name
        for node in imports(path)
        if isinstance(node, ast.ImportFrom) and node.module == "bus.commands.worker_commands"
        for alias in node.names
    }
    return {
        node.func.id
        for node in nodes(path)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported
    }


def test_the_callers_build_command_objects() -> None:
    """Every command is built somewhere in bot/ or worker/ (the merge queue's by the review's Approve
    button; /auto queues merges inside the worker): the scan above looked where commands are sent."""
    built = set().union(*(_built(p) for p in _sources()))
    assert {kind.__name__ for kind in COMMAND_TYPES} - built == set()
