"""What an agent may do: the mandatory allow and deny lists merged with the user's own, Claude Code's
rule syntax (`Bash(git status:*)`, `Write(**/.env)`), and the shell-word reading the Bash checks need.

Pure (no I/O beyond reading settings files), imported by the PreToolUse hook on every tool call, so it
stays import-light: `re`, `shlex` and `fnmatch` are imported inside the functions that need them.
May import only the standard library and bus's hot-path modules.
"""
