"""The two lines an agent ends a reply with (the completion protocol every prompt teaches)."""

from __future__ import annotations

COMPLETION_MARKER = "I HAVE COMPLETED THE GOAL"
WAITING_MARKER = "WAITING"
