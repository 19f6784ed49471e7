"""The agent programs ittybus can run besides its own assumptions about Claude Code. Each program lives in
its own subpackage; `codex/` holds Codex CLI's pure readers (its screen, its dialogs, its hook and notify
signals). May import bus, worker.tmux and the small pure modules.
"""
