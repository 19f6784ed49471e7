"""Paths as the permission checks compare them: the paths a tool call names (the file tools' path
parameters, a Glob pattern, the arguments of MCP tools that look like paths), made absolute (`normalize`,
no file system access) and resolved through symlinks (`resolve`), so a link in the worktree cannot point
a check elsewhere.

Imported by the policy, the rule syntax and the shell reader alike, so none of them imports another.
On the hooks' path: standard library only, no `re`.
"""

from __future__ import annotations

import posixpath

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

PATH_KEYS = ("file_path", "notebook_path", "path")
"""The parameters of Claude Code's file tools that hold a path."""
REQUIRED_KEY = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
"""The path parameter a file tool cannot do without; a call missing it is not understood, so denied."""
MCP_PATH_WORDS = (
    "path",
    "file",
    "dir",
    "folder",
    "root",
    "cwd",
    "source",
    "destination",
    "target",
    "src",
    "dest",
)
"""An MCP argument whose name holds one of these is a path (or a list of paths)."""
_MCP_DEPTH = 4
_HOME_VARIABLES = ("$HOME", "${HOME}")


class Unparsable(ValueError):
    """A path parameter that is not a usable path (not a string, empty, holding NUL)."""


def normalize(path: str, *, base: str, home: str) -> str:
    """`path` as an absolute path without `.`, `..` or doubled slashes; `~`, `$HOME` and `${HOME}` are
    `home`, a relative path is taken from `base`. Symlinks are not followed (no file system access)."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    for variable in _HOME_VARIABLES:
        if path == variable or path.startswith(variable + "/"):
            path = home + path[len(variable) :]
    if not path.startswith("/"):
        path = posixpath.join(base, path)
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/")


def resolve(path: str, *, base: str, home: str) -> str:
    """Where `path` really is: `normalize`, then every symlink on the way followed (a loop or a part
    that does not exist yet is kept as written)."""
    return posixpath.realpath(normalize(path, base=base, home=home))


def file_tool_paths(tool_name: str, tool_input: Mapping[str, object], *, base: str, home: str) -> list[str]:
    """The resolved paths a file tool would touch: its path parameters and, for Glob, its pattern.
    Raises Unparsable for a path parameter that is not a path, or a missing required one."""
    required = REQUIRED_KEY.get(tool_name)
    if required is not None and required not in tool_input:
        raise Unparsable(f"{required} is missing")
    paths = [
        resolve(_usable(key, tool_input[key]), base=base, home=home) for key in PATH_KEYS if key in tool_input
    ]
    if tool_name == "Glob" and "pattern" in tool_input:
        pattern = _usable("pattern", tool_input["pattern"])
        paths.append(resolve(pattern, base=paths[0] if paths else base, home=home))
    return paths


def mcp_paths(tool_input: Mapping[str, object], *, base: str, home: str) -> list[str]:
    """The resolved paths in an MCP tool's arguments: every string under a key that names a path
    (`path`, `file_path`, `source`, `targetDir`, ... also inside lists and objects), and every other
    string that starts with `/` or `~/`. Raises Unparsable for an empty path or one nested too deep."""
    return [resolve(p, base=base, home=home) for p in _mcp_strings(tool_input, False, 0)]


def _mcp_strings(value: object, pathish: bool, depth: int) -> Iterator[str]:
    if depth > _MCP_DEPTH:
        raise Unparsable("arguments nested too deep to check")
    if isinstance(value, str):
        if pathish:
            yield _usable("path", value)
        elif value.startswith(("/", "~/")) and "\n" not in value:
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            named = isinstance(key, str) and any(word in key.lower() for word in MCP_PATH_WORDS)
            yield from _mcp_strings(item, named, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _mcp_strings(item, pathish, depth + 1)


def _usable(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise Unparsable(f"{key} is a {type(value).__name__}, not a string")
    if not value or "\0" in value:
        raise Unparsable(f"{key} is empty or holds a NUL character")
    return value
