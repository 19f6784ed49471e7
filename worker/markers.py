"""The marks ittybus writes and reads back: the two lines an agent ends a reply with (the completion
protocol every prompt teaches), and the tool name of a prompt recorded from the pane. Plain strings, so
the hooks' path, the pane parser and the agents' operations can all import them."""

from __future__ import annotations

COMPLETION_MARKER = "I HAVE COMPLETED THE GOAL"
WAITING_MARKER = "WAITING"

# the tool of a dialog the pane watcher recorded (no hook told it); a hook's names the tool
FROM_PANE = "(pane)"
