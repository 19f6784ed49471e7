"""Ids people type and read: the one rule for task, agent and project ids, and slugs made from titles.

Pure: no I/O. An id is 1-64 characters of lower-case letters, digits, '_' and '-', starting with a
letter or digit, so it is safe in Redis keys, branch names, folder names and tmux targets (tmux reads
'.' and ':' in a target as window and pane separators, which is why '.' is refused too).
"""

from __future__ import annotations

import re
import unicodedata

from bus.errors import InvalidInput

MAX_ID_LENGTH = 64
ALLOWED = "1-64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit"
_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
SLUG_LENGTH = 48
FALLBACK_SLUG = "task"


def validate_id(kind: str, value: str) -> str:
    """`value` when it is a good id, else InvalidInput naming the value and what is allowed."""
    if not isinstance(value, str):
        raise InvalidInput(f"bad {kind} id {value!r}: expected text, {ALLOWED}")
    if not value:
        raise InvalidInput(f"bad {kind} id: it is empty; use {ALLOWED}")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidInput(f"bad {kind} id {value!r}: {len(value)} characters; use {ALLOWED}")
    if not _ID.fullmatch(value):
        raise InvalidInput(f"bad {kind} id {value!r}: use {ALLOWED}")
    return value


def slugify(text: str, limit: int = SLUG_LENGTH) -> str:
    """A readable id from free text ("Design the auth API!" -> "design-the-auth-api"); never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    slug = slug[:limit].rstrip("-")
    return slug or FALLBACK_SLUG


def folder_project(folder_name: str) -> str:
    """The default project id of a repository: its folder's name when that is a good id, else a slug of
    it ("MyApp" -> "myapp"), so every repository has one."""
    if _ID.fullmatch(folder_name) and len(folder_name) <= MAX_ID_LENGTH:
        return folder_name
    return slugify(folder_name, MAX_ID_LENGTH)
