"""A fast stand-in for Claude Code that tests run in tmux: same command line, pane text, transcript JSONL
and hook calls as the real client. `script` is its pure half (steps, which hooks run), `terminal` its raw
keyboard, `agent` the program. Tests only; the real client is tested too (see the README).

May import bus and worker.markers; nothing imports it but tests and `python -m worker.fake.agent`.
"""
