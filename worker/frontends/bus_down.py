"""The dashboard's line while the bus does not answer: why, in words (never redis-py's `Error 111
connecting to …`), and the time of the view it keeps showing. Pure."""

from __future__ import annotations

import re

_CONNECTING = re.compile(r"^Error (-?\d+) connecting to (\S+?)\.? (.*?)\.?$", re.DOTALL)
# a connection that was up and went: "Error while reading from HOST:PORT : (104, 'Connection reset by peer')"
_BROKEN = re.compile(
    r"^Error (?:\d+ )?while (?:reading from|writing to) (\S+?) ?: \((\d+), '(.*?)'\)", re.DOTALL
)
_WORDS = {
    "111": "nothing listens at {where}",  # ECONNREFUSED
    "113": "no route to {where}",  # EHOSTUNREACH
    "110": "{where} does not answer",  # ETIMEDOUT
    "-2": "no host is named {host}",  # EAI_NONAME
    "-3": "the name {host} cannot be looked up now",  # EAI_AGAIN
}


def reason(error: str) -> str:
    """What went wrong, said for a person."""
    found = _CONNECTING.match(error.strip())
    if found is None:
        return _broken(error.strip())
    code, where, said = found.groups()
    words = _WORDS.get(code)
    if words is None:
        return f"cannot connect to {where}: {said.lower()}"
    return words.format(where=where, host=where.rsplit(":", 1)[0])


def bus_down(error: str, since: str = "") -> str:
    """The footer while the bus is down; `since` is the clock time of the view still shown, if any."""
    shown = f"showing the view of {since}, " if since else ""
    return f"the bus is down: {reason(error)}; {shown}waiting for it to come back"


def _broken(error: str) -> str:
    """An error of a connection that was up: the server went away under it."""
    if error.startswith(("Timeout connecting", "Timeout reading")):
        return "it does not answer in time"
    if error.startswith("Connection closed by server"):
        return "it closed the connection"
    found = _BROKEN.match(error)
    if found is not None:
        where, _, said = found.groups()
        return f"the connection to {where} broke: {said.lower()}"
    return error or "it does not answer"
