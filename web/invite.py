"""`ib web --invite NAME`, `--revoke NAME`, `--people`: the owner lets a person into the page by name, ends
it, lists who is let in. An invitation prints the person's address once (only its token's hash is kept);
a running `ib web` takes each change at the person's next request. Every mistake is one line, exit 1, and
changes nothing.
"""

from __future__ import annotations

import secrets
import sys
from dataclasses import dataclass

from bus.errors import BusError
from bus.settings.settings import load_settings
from web.errors import WebConfigError, WebError
from web.options import Options, address, exposure_problem, loopback, state_root
from web.people_file import changing, people_path, read_people, write_people

TOKEN_BYTES = 32
PORT_PLACEHOLDER = "PORT"


@dataclass(frozen=True)
class Change:
    """What the owner asked: one of invite (a name), revoke (a name), or the list."""

    invite: str | None = None
    revoke: str | None = None
    people: bool = False

    def problem(self) -> str | None:
        asked = [self.invite is not None, self.revoke is not None, self.people]
        return "give one of --invite, --revoke and --people at a time" if sum(asked) > 1 else None

    @property
    def asked(self) -> bool:
        return self.invite is not None or self.revoke is not None or self.people


def person_address(options: Options, port: int, token: str) -> str:
    """The address a person opens: this page's, with the person's token (`PORT` when no port is known)."""
    return address(options, port or PORT_PLACEHOLDER, token)


def manage(change: Change, options: Options, cwd: str | None = None) -> int:
    """Do `change`; a bad name, an unknown one, a second invitation or a bad people file: one line, exit 1."""
    try:
        problem = change.problem() or exposure_problem(options)
        if problem:
            raise WebConfigError(problem)
        settings = load_settings(cwd)
        path = people_path(state_root(settings, cwd))
        if change.people:
            names = read_people(path).names
            print("\n".join(names) if names else "nobody but you: ib web --invite NAME lets a person in")
            return 0
        if change.revoke is not None:
            with changing(path) as people:
                write_people(path, people.without(change.revoke))
            print(f"{change.revoke} is let in no more: the next request with that address or cookie gets 401")
            return 0
        name, token = change.invite or "", secrets.token_urlsafe(TOKEN_BYTES)
        with changing(path) as people:
            write_people(path, people.invited(name, token))
    except (WebError, BusError, OSError) as e:
        print(f"ib web: error: {e}", file=sys.stderr)
        return 1
    port = options.port or settings.web_port or 0
    print(person_address(options, port, token), flush=True)
    _hint(name, options, port)
    return 0


def _hint(name: str, options: Options, port: int) -> None:
    lines = [f"{name} is let in: give {name} this address (shown once); ib web --revoke {name} ends it"]
    if not port:
        lines.append(f"{PORT_PLACEHOLDER}: the port ib web serves on (--port or IB_WEB_PORT fills it in)")
    if loopback(options.host):
        lines.append(
            "this address works on this machine only: for another one, serve ib web with --host and TLS"
        )
        lines.append("and invite with the same --host, --port and --tls-cert")
    print("\n".join(lines), file=sys.stderr)
