"""The agent programs ittybus can run (Claude Code, Codex CLI, Gemini CLI): one `AgentProgram` each
(`program`: the protocol) behind a registry by name (`registry`). A program says how it is started, which
files and environment it needs, which version it was tested with and how to install it, how its screen
and dialogs read and the keys that answer them. Claude Code's implementation and the modules it is made of
live in `claude/`, Codex CLI's in `codex/`, Gemini CLI's in `gemini/`; `bubblewrap` is the box ittybus
starts Gemini CLI in, and Codex CLI around its own sandbox, and `boxed_program` what those two share.
May import bus, worker.permissions, worker.tmux and the small pure modules; the agents area (spawn,
resume, answers) calls it and never asks which program an agent runs.
"""
