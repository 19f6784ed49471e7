"""`ib web`'s options, and what follows from them alone: whether they may serve (a non-loopback host needs TLS
or the flag that says what it does), the address a person opens, and where `.ib/` is. Light: `ib web
--invite` needs it without the server's imports.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

from bus.settings.settings import Settings
from web.guard import QUERY_TOKEN

LOOPBACK = "127.0.0.1"
EXPOSE_FLAG = "--expose-agents-without-tls"


@dataclass(frozen=True)
class Options:
    host: str = LOOPBACK
    port: int = 0  # 0: a free one
    tls_cert: str = ""
    tls_key: str = ""
    expose: bool = False
    verbose: bool = False
    hide_token: bool = False  # the address printed without it (`ib up` logs what its services print)


def exposure_problem(options: Options) -> str | None:
    """Why these options may not serve, or None. Pure."""
    if bool(options.tls_cert) != bool(options.tls_key):
        return "--tls-cert and --tls-key go together: give both, or neither"
    if not 0 <= options.port <= 65535:
        return f"--port {options.port} is not a port: use 1-65535, or leave it out for a free one"
    if loopback(options.host) or options.tls_cert or options.expose:
        return None
    return (
        f"--host {options.host} would show every agent, its dialogs and their buttons to the network over "
        f"plain HTTP: serve it with --tls-cert and --tls-key, or say {EXPOSE_FLAG} to do it anyway"
    )


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def address(options: Options, port: int | str, token: str) -> str:
    scheme = "https" if options.tls_cert else "http"
    shown = f"[{options.host}]" if ":" in options.host else options.host
    return f"{scheme}://{shown}:{port}/?{QUERY_TOKEN}={token}"


def state_root(settings: Settings, cwd: str | None) -> str:
    """The folder whose `.ib/` keeps the page's token and its people: the repository's, else this one."""
    root = settings.repository(cwd)
    return str(root) if root else os.path.abspath(cwd or os.getcwd())
