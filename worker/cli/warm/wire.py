"""Where the warm server listens and what goes over its socket. Hot: stdlib only.

The client sends one request: a 4-byte length, then a marshalled tuple (argv[0], the arguments, the
environment, the umask, the names of its standard streams' encodings), with its standard input, output
and error and its working folder as descriptors beside it (SCM_RIGHTS). The server answers in lines:
`pid N` when the command's process started, then `exit N` or `signal N` when it ended; or `no WHY` when it
does not serve this request (the client then runs the command itself).
"""

from __future__ import annotations

import marshal
import os
import sys

OFF = "IB_WARM"
"""`IB_WARM=0` runs every command in its own interpreter, as without a server (and starts none)."""
IDLE_EXIT = 1800.0  # seconds without a command after which the server ends
HEADER = 4
MAX_REQUEST = 4 * 1024 * 1024  # an environment and arguments this large are not a real `ib` call

# the commands that stay in their own process: services that run for hours under their own name (`ib up`
# supervises them by pid and command line), and the ones that own the terminal; `ib mcp`, whose client
# ends it by signal while a call may be in flight (a served one was cut mid-spawn beside a CPU hog)
UNSERVED = frozenset({"up", "watch", "worker", "bot", "bus", "mcp", "web"})
ONE_SHOT = "--once"  # `ib worker --once`: one pass of the worker and out, a command like the others

# why the server did not take a request (`no WHY`)
STALE = "stale"  # ittybus's code changed on disk since the server loaded it
OTHER_ROOM = "other-room"  # the client is in another mount or pid namespace (a sandbox), or another user


def folder() -> str:
    """The folder of the servers' sockets: the user's runtime folder, else one of theirs under /tmp."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "ittybus")
    return f"/tmp/ittybus-{os.getuid()}"


def address() -> str:
    """This installation's server socket: one per environment (venv) and checkout: two never share."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(folder(), f"warm-{_digest(f'{sys.prefix}{chr(0)}{package}'):08x}.sock")


def _digest(text: str) -> int:
    """32-bit FNV-1a of `text`: a stable short name (zlib's crc32 costs the hot path a library load)."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def private_folder(path: str) -> bool:
    """Whether `path` is a folder only this user can enter (made so when missing); a socket in any other
    is not trusted either way."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return info.st_uid == os.getuid() and (info.st_mode & 0o40777) == 0o40700


def encode_request(
    argv0: str, args: list[str], environ: dict[str, str], umask: int, encodings: tuple[str, ...]
) -> bytes:
    body = marshal.dumps((argv0, args, environ, umask, encodings))
    return len(body).to_bytes(HEADER, "big") + body


class BadRequest(Exception):
    """A request that is not one `encode_request` makes."""


def decode_request(body: bytes) -> tuple[str, list[str], dict[str, str], int, tuple[str, ...]]:
    try:
        argv0, args, environ, umask, encodings = marshal.loads(body)
    except (EOFError, ValueError, TypeError) as e:
        raise BadRequest(str(e)) from e
    if not (
        isinstance(argv0, str)
        and isinstance(args, list)
        and all(isinstance(a, str) for a in args)
        and isinstance(environ, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in environ.items())
        and isinstance(umask, int)
        and isinstance(encodings, tuple)
        and len(encodings) == 6
        and all(isinstance(e, str) for e in encodings)
    ):
        raise BadRequest("not a request")
    return argv0, args, environ, umask, encodings


def served(argv: list[str]) -> bool:
    """Whether the warm server runs this command line (the others run in `ib`'s own process)."""
    if os.environ.get(OFF) == "0":
        return False
    word = next((a for a in argv if not a.startswith("-")), "")
    return word not in UNSERVED or (word == "worker" and ONE_SHOT in argv)
