"""Conflicts seen before they happen: after an agent changes files, its work (committed and not) is merged in
memory with every other live agent's and with its target branch (`git merge-tree --write-tree`), and a
predicted conflict becomes one `conflict_risk` event and a note for the agent's next hook output.

`merge_tree` and `overlap` are pure (what git prints → conflicts, hunks, fingerprints, the words people
and agents read); `snapshot` runs git (a temporary index and a scratch object store, never the agent's own
index or checkout); `check` compares one agent with the others and keeps the once-per-overlap marks in
Redis; `watch` is the worker's thread that takes the requests the agents' PostToolUse hook enqueues.

May import bus, worker.errors, worker.agents' layout (where an agent's repository lives) and
worker.runtime; never the front ends or the cli.
"""
