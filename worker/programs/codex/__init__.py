"""Codex CLI (npm @openai/codex) as an agent program: how its pane reads (`screen`: the state and the
approval dialog, with the keys that answer it) and what its own signals mean (`signals`: hooks.json
payloads and the notify program's `agent-turn-complete`), both pure and table-tested on real captures of
Codex 0.169.0 (tests/fixtures/codex-0.169.0).
"""
