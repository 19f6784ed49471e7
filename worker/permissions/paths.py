"""Paths as the permission checks compare them: the tool parameters that name a path, and a path made
absolute and normal without touching the file system.

Imported by the policy, the rule syntax and the shell reader alike, so none of them imports another.
"""

from __future__ import annotations

import posixpath

PATH_KEYS = ("file_path", "notebook_path", "path")
"""The parameters of Claude Code's file tools that hold a path."""


def normalize(path: str, *, base: str, home: str) -> str:
    """`path` as an absolute path without `.`, `..` or doubled slashes; `~` is `home`, a relative path
    is taken from `base`. Symlinks are not followed (no file system access)."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    if not path.startswith("/"):
        path = posixpath.join(base, path)
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/")
