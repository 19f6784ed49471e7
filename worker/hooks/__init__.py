"""The hot path: the agent programs' hooks (small, fast commands that run inside an agent's turn and never
fail it) and `ib notify`. Each program's hook reads its payload with that program's own reader
(worker.programs: claude, codex, gemini) into one outcome (worker.programs.hook_outcome), and the modules
here act on it the same way whichever program sent it: a turn's end (`stop`), any other outcome
(`agent_event`), through `payload_hook`.

Every module here runs on every tool call of every agent, so it imports only the standard library's
start-up modules, bus's hot-path modules (resp, hotconf, fastjson, publish, spool, repo_paths) and the
programs' light hook readers; tests/unit/test_hot_imports.py guards that. Never pydantic, redis-py, typer
or libtmux.
"""
