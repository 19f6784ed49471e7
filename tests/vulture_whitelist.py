"""Names vulture reports as unused that are used all the same, each by something vulture cannot see: a library
that calls or reads it, a string that names it, a reader of the data it describes. `make lint` runs
vulture over bus/, worker/, bot/, web/ and this file ([tool.vulture] in pyproject.toml, with the decorators it
ignores).
A name only tests use is dead code and is deleted, not listed here, unless its reason below says why not.
Each line marks one name as used; nothing imports this module, and mypy keeps its names real."""

from __future__ import annotations

import shlex
from typing import Any

from rich.text import Text

from bus.commands.worker_commands import Command
from bus.connection import clients
from bus.events.event_model import Event
from bus.inbox.attention import Item
from bus.settings import settings
from bus.stores.agent_store import Agent
from bus.stores.hash_record import HashRecord
from bus.tasks.merge_request import MergeRequest
from bus.tasks.plans import Plan, PlannedTask
from bus.tasks.schedules import Schedule
from bus.wire.fastjson import _ScanContext
from worker.boundary import relay_wire
from worker.cli import (
    agent_commands,
    bus_commands,
    plan_commands,
    question_commands,
    stack_commands,
    web_commands,
)
from worker.frontends.status_node import StatusNode
from worker.git.repo import Git
from worker.mcp import http
from worker.mcp.agent_tools import AgentTools
from worker.mcp.board_tools import BoardTools
from worker.programs import stop_message
from worker.service.supervisor_state import ServiceRecord, StackRecord
from worker.tmux import gemini_screen
from worker.tmux.client import Tmux

_: Any = None  # stands for an object of any type, where the name is all that matters

# pydantic reads each model's configuration from the class attribute it names
Event.model_config
HashRecord.model_config
PlannedTask.model_config
Plan.model_config
settings.Settings.model_config
Command.model_config
ServiceRecord.model_config
StackRecord.model_config

# redis-py's sentinel pools call it to find the primary (bus.connection.clients overrides it, sync and async)
clients.NamedPrimary.discover_master

# pydantic-settings calls these and passes its sources by keyword (the override must keep their names)
settings._Values.get_field_value
settings.Settings.settings_customise_sources
_.env_settings
_.dotenv_settings

# settings read by name: getattr(settings, f"{program}_model") in bus/settings/settings.py and
# worker/agents/spawn.py
settings.Settings.claude_model
settings.Settings.codex_model
settings.Settings.gemini_model

# record fields written by name (Lua scripts, hash_fields(...), HSET from the hooks) and shown whole in the
# record's JSON (`ib list --json`, `ib attention --json`, the hashes themselves)
Agent.state_by
Agent.limited_until
Item.answered_by
MergeRequest.requested_at
MergeRequest.finished_at
Schedule.last_due

# the C JSON scanner reads these attributes off the decoder it is given (json.decoder.JSONDecoder)
_ScanContext.object_hook
_ScanContext.object_pairs_hook
_ScanContext.parse_float
_ScanContext.parse_int
_ScanContext.memo
_ScanContext.parse_constant

# attributes set for a library, which reads them: rich's Text when it renders, shlex's lexer when it splits
Text().no_wrap
Text().overflow
shlex.shlex.whitespace_split

# keys of TypedDicts: the status block written to CLAUDE.md as JSON (worker/frontends/status_block.py)
_.children_complete
_.last_updated

# `ib` commands the CLI's table names by string (worker/cli/app.py: Entry(..., "new_agent_cmd", ...) and
# _commands(...), whose names are the functions' with `-` for `_`), loaded on first use
agent_commands.new_agent_cmd
agent_commands.list_cmd
agent_commands.esc
bus_commands.spool_cmd
plan_commands.plan_approve
plan_commands.plan_edit
plan_commands.plan_discard
question_commands.parse_state
stack_commands.ps
web_commands.web

# the page's templates read these by name (web/templates/board.html)
_.machine  # web.board.AgentRow
_.linkable  # web.board.AgentRow
_.waiting_on  # web.queues.TaskRow
_.graphs  # web.queues.Queues (web/templates/queues.html)
_.ghost  # web.task_graph.Box (web/templates/task_graph.html)
_.box_size  # web.task_graph.Graph

# the CLI module's __getattr__ (PEP 562) builds `app` when asked; commands whose help is made at run time
_.__getattr__
_.__doc__

# MCP tools, registered by name: getattr over AGENT_TOOLS and BOARD_TOOLS in worker/mcp/server.py
AgentTools.list_agents
AgentTools.agent_info
AgentTools.review_comment
BoardTools.task_add
BoardTools.task_show
BoardTools.task_done
BoardTools.auto_start
BoardTools.auto_status
BoardTools.wait_for_events

# in progress: worker/mcp/ is being reworked on another branch; its author decides (unused on main today)
http.DEFAULT_PORT

# the closed set of answers a pure reader gives; the fixture tests check every fixture's expected answer
# (its file name) is one of them, so a renamed answer cannot leave a fixture behind
stop_message.DECISIONS
gemini_screen.STATES

# how the tests see the status node's debounce: how many times it wrote the file (its mtime cannot tell two
# writes in one tick apart)
StatusNode.writes

# used by the benchmarks (product code only bench/ and tests call): the wire's reading half of a relay reply
# (bench/relay_bench.py is a relay client), the linked-worktree baseline of bench/agent_repo_bench.py (tests
# also build a person's own worktrees with it), and the end of a throw-away tmux server (bench/ and tests)
relay_wire.decode_reply
Git.add_worktree
Tmux.kill_server
