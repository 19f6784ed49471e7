"""Claude Code's permission rule syntax: does a rule like `Bash(git status:*)`, `Write(**/.env)` or
`WebFetch(domain:example.com)` cover one tool call.

Imports `re`, so the hot hook loads it only for a deny rule that is more than a plain tool name.
"""

from __future__ import annotations

import re

from worker.permissions.paths import PATH_KEYS

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

_RULE = re.compile(r"\s*([^()\s]+)\s*(?:\((.*)\))?\s*", re.DOTALL)
_SUBJECT_KEYS = (*PATH_KEYS, "pattern", "url", "query")


def tool_matches(pattern: str, tool_name: str, tool_input: Mapping[str, object]) -> bool:
    """Does a Claude Code permission rule cover this call? `Read` covers every Read; `Bash(git status:*)`
    and `Bash(git status *)` cover `git status` and `git status <anything>`; `Bash(npm test)` only that
    exact command; `*` inside a specifier is a wildcard; `WebFetch(domain:example.com)` covers the host
    and its subdomains; other specifiers are globs over the tool's path (or pattern, url, query)."""
    rule = _RULE.fullmatch(pattern)
    if not rule:
        return False
    name, spec = rule.group(1), rule.group(2)
    if not _name_matches(name, tool_name):
        return False
    if spec is None or spec.strip() in ("", "*"):
        return True
    return _spec_matches(spec.strip(), tool_name, tool_input)


def _spec_matches(spec: str, tool_name: str, tool_input: Mapping[str, object]) -> bool:
    if tool_name == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and command_matches(spec, command)
    subject = next((v for k in _SUBJECT_KEYS if isinstance(v := tool_input.get(k), str) and v), None)
    if subject is None:
        return False
    if tool_name == "WebFetch" and spec.startswith("domain:"):
        host = _host(subject)
        domain = spec.removeprefix("domain:").lower()
        return host == domain or host.endswith("." + domain)
    return _glob_regex(spec, path=True).fullmatch(subject) is not None


def _name_matches(name: str, tool_name: str) -> bool:
    if name == tool_name:
        return True
    if name.startswith("mcp__"):  # `mcp__server` and `mcp__server__*` cover every tool of that server
        server = name.removesuffix("__*").removesuffix("*")
        return tool_name.startswith(server.rstrip("_") + "__")
    return False


def command_matches(spec: str, command: str) -> bool:
    """A Bash specifier against one command line (surrounding blanks ignored)."""
    command = command.strip()
    if spec.endswith(":*"):
        spec = spec[:-2] + " *"
    if "*" not in spec:
        return command == spec
    return _glob_regex(spec, path=False).fullmatch(command) is not None


def _glob_regex(spec: str, *, path: bool) -> re.Pattern[str]:
    """`*` as a wildcard; for commands a trailing ` *` also matches nothing (word boundary), for paths
    a single `*` stays inside one folder and `**` crosses folders."""
    if not path and spec.endswith(" *"):
        return re.compile(_glob_body(spec[:-2], path) + r"(?:\s.*)?", re.DOTALL)
    return re.compile(_glob_body(spec, path), re.DOTALL)


def _glob_body(spec: str, path: bool) -> str:
    parts = re.split(r"(\*\*|\*)", spec)
    out = []
    for part in parts:
        if part == "**":
            out.append(".*")
        elif part == "*":
            out.append("[^/]*" if path else ".*")
        else:
            out.append(re.escape(part))
    return "".join(out)


def _host(url: str) -> str:
    rest = url.split("://", 1)[-1]
    host = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    return host.split(":", 1)[0].lower()
