"""The hot path: Claude Code hooks (small, fast commands that run inside an agent's turn and never fail
it), `ib notify`, and the pure Stop-message decision they use.

Every module here runs on every tool call of every agent, so it imports only the standard library's
start-up modules and bus's hot-path modules (resp, hotconf, fastjson, publish, spool, repo_paths);
tests/unit/test_hot_imports.py guards that. Never pydantic, redis-py, typer or libtmux.
"""
