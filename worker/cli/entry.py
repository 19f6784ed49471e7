"""The `ib` console script: hot commands (hooks, notify) dispatch before anything heavy is imported.

Hooks run on every tool call of every agent, so they must not pay for typer, rich or pydantic.
Everything else goes to the typer application in `worker.cli`: run by the warm server
(worker.cli.warm) when one answers, else in this process.
"""

from __future__ import annotations

import sys

from worker.boundary.identity import act_as, agent_caller
from worker.boundary.reach import unreachable
from worker.hooks.registry import HOT_HOOKS


def main() -> None:
    argv = sys.argv[1:]
    caller = agent_caller()
    if caller is not None:  # inside an agent: its own IB_* environment, whatever this process was given
        act_as(caller)
    problem = unreachable(argv)
    if problem:
        from worker.boundary import relay_client

        if relay_client.configured():  # the worker's relay runs it, as this agent, outside the sandbox
            sys.exit(relay_client.forward(argv))
        print(f"ib {argv[0]}: error: {problem}", file=sys.stderr)
        sys.exit(0 if argv[0] == "hook" else 1)  # a hook never fails the agent's session
    if argv and argv[0] == "notify":
        from worker.hooks.notify import main as notify

        sys.exit(notify(argv[1:]))
    if len(argv) >= 2 and argv[0] == "hook" and argv[1] in HOT_HOOKS and "--help" not in argv:
        from importlib import import_module

        module = import_module(HOT_HOOKS[argv[1]])
        sys.exit(module.main(argv[2:]))
    from worker.cli.warm import wire  # not above: the hooks dispatched before this need none of it

    if wire.served(argv):  # the server finds the agent it acts for as this process would (its ancestry)
        from worker.cli.warm import client

        try:
            sys.exit(client.run(argv))
        except client.NotServed as e:
            if e.absent and caller is None:  # a person's command starts one; an agent's never
                client.start_server()
    from worker.cli.app import run

    run()
