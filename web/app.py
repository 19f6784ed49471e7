"""`ib web`: check the options, bind the port, print the address with its token, serve until stopped.

Bound to 127.0.0.1 by default. Another address is refused unless the page is served over TLS
(`--tls-cert`, `--tls-key`) or the person passes `--expose-agents-without-tls`, which says what it does.
The owner's token is printed once, for the owner; like the tokens of the people let in by name
(web.people_file, read again whenever their file changes), it is never logged (uvicorn's access log,
which would show the first visit's query string, stays off).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from dataclasses import replace

import uvicorn

from bus.connection.clients import async_client_for, client_for, resolve_url
from bus.errors import BusError
from bus.settings.settings import load_settings
from bus.wire.keys import Keys
from web.errors import WebConfigError, WebError
from web.options import Options, address, exposure_problem, state_root
from web.page_token import csrf_of, load_token
from web.people_file import PeopleWatch, people_path, read_people
from web.routes import Site, build

log = logging.getLogger(__name__)

SHUTDOWN_S = 1  # open event streams are cut after this; their pages reconnect and resume


def _bind(options: Options) -> socket.socket:
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host, options.port))
    except OSError as e:
        sock.close()
        raise WebConfigError(f"cannot listen on {options.host}:{options.port} ({e.strerror})") from e
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def run(options: Options, cwd: str | None = None) -> int:
    """Serve until SIGTERM or Ctrl-C; a bad option or setting is one line on stderr and exit 1."""
    logging.basicConfig(
        level=logging.INFO if options.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
    )
    try:
        problem = exposure_problem(options)
        if problem:
            raise WebConfigError(problem)
        settings = load_settings(cwd)
        if not options.port and settings.web_port:
            options = replace(options, port=settings.web_port)
        url = resolve_url(settings, cwd)
        root = state_root(settings, cwd)
        token = load_token(root)
        people = PeopleWatch(people_path(root))
        read_people(people.path)  # a bad file is said now, once, rather than in the log at each request
        sock = _bind(options)
    except (WebError, BusError) as e:
        print(f"ib web: error: {e}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    keys = Keys(settings.namespace)
    site = Site(
        keys,
        client_for(url, blocking=True),
        async_client_for(url),
        csrf_of(token),
        settings.events_maxlen,
        settings.day_limit,
    )
    for logger in ("uvicorn.error", "asyncio"):
        logging.getLogger(logger).addFilter(_not_the_cut_streams)
    config = uvicorn.Config(
        build(site, token, port, secure=bool(options.tls_cert), people=people.current),
        log_level="info" if options.verbose else "warning",
        access_log=False,
        ssl_certfile=options.tls_cert or None,
        ssl_keyfile=options.tls_key or None,
        timeout_graceful_shutdown=SHUTDOWN_S,
        lifespan="off",
    )
    shown = address(options, port, "<the token in .ib/web-token>" if options.hide_token else token)
    print(shown, flush=True)
    log.info("serving the page on %s:%d for namespace %s", options.host, port, keys.namespace)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    site.sync.close()
    return 0


CUT_STREAMS = (
    "timeout graceful shutdown exceeded",  # uvicorn, of the streams open at a stop
    "socket.send() raised exception.",  # asyncio, of frames written to a page that just went away
)


def _not_the_cut_streams(record: logging.LogRecord) -> bool:
    """uvicorn and asyncio log errors for an event stream that is cut (at a stop, or by a page that closed
    while frames were on their way): the page reconnects and resumes from its last event, so it is no
    error, and a person who runs `ib web` should not read one."""
    said = record.getMessage()
    return not any(line in said for line in CUT_STREAMS)
