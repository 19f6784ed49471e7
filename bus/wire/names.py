"""The rule for names people give listeners, consumer groups and workers: what may go into a Redis key,
a log line and a file name. Pure and light (no `re`): `ib notify` and the hooks check settings with it."""

from __future__ import annotations

MAX_NAME = 64
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
NAME_RULE = (
    "1-64 characters of letters, digits, '.', '_', ':' and '-', starting with a letter or digit, no '..'"
)
WORKER_ID_RULE = (
    "1-64 characters of letters, digits, '.', '_' and '-', starting with a letter or digit, no '..'"
)


def name_problem(kind: str, value: str, extra: str = ".:_-", rule: str = NAME_RULE) -> str | None:
    """What is wrong with `value` as a `kind` name, or None. Pure."""
    allowed = _ALNUM | frozenset(extra)
    fine = (
        0 < len(value) <= MAX_NAME
        and value[0] in _ALNUM
        and all(c in allowed for c in value)
        and ".." not in value
    )
    return None if fine else f"bad {kind} {value!r}: use {rule}"


def worker_id_problem(value: str) -> str | None:
    """What is wrong with a worker id (it goes into key and stream names), or None. Pure."""
    return name_problem("worker id", value, "._-", WORKER_ID_RULE)


STREAM_ID_MAX = 2**64 - 1


def stream_id_problem(text: str) -> str | None:
    """What is wrong with `text` as a stream id (`ms` or `ms-seq`, each at most 2^64-1), or None. Pure."""
    ms, dash, seq = text.partition("-")
    parts = (ms, seq) if dash else (ms,)
    if all(p.isascii() and p.isdigit() and int(p) <= STREAM_ID_MAX for p in parts):
        return None
    return f"{text!r} is not a stream id: use MS or MS-SEQ, numbers from 0 to {STREAM_ID_MAX}"
