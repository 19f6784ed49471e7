"""Review from the phone: an agent's change as pictures a phone can read.

`diff_files` is pure (what `git diff` prints → files, hunks, old and new line numbers, a fingerprint per
file); `diff_picture` is pure (a file's hunks → Pygments-highlighted rows wrapped for a narrow screen →
a PNG on the screenshot painter of worker.tmux.screenshot); `review` runs git for one agent and builds the
reply the bot turns into a file list and one picture per file.

May import bus, worker.errors, worker.agents (where an agent's diff comes from), worker.tmux.screenshot and
worker.runtime; never the front ends or the cli.
"""
