"""The permission lists a person writes in `.ib/config.json` (and `~/.ib/config.json` for every repository):
read through the one settings-file reader (`bus.settings.settings_file`) and checked whole where read, so a
wrong shape is one line naming the file and the field, whichever role the agent being made has.
"""

from __future__ import annotations

import json
from pathlib import Path

from bus.errors import InvalidInput
from bus.settings.settings_file import read_text
from worker.permissions.policy import ROLES

LISTS = ("allow", "deny")
EXAMPLE = '{"permissions": {"worker": {"allow": ["Bash(npm test:*)"], "deny": []}}}'


def read_config(path: Path) -> dict[str, object]:
    """The file's object; {} when there is none. InvalidInput in one line for anything else."""
    text = read_text(str(path))
    if text is None:
        return {}
    try:
        loaded = json.loads(text)
    except ValueError as e:
        raise InvalidInput(f"{path} is not valid JSON ({e}); fix or remove it") from e
    problem = shape_problem(loaded)
    if problem:
        raise InvalidInput(f"{path} {problem}")
    if not isinstance(loaded, dict):  # shape_problem said so; this tells the checker
        raise InvalidInput(f"{path} is not a JSON object")
    return loaded


def shape_problem(loaded: object) -> str | None:
    """What is wrong with a config file's JSON, naming the field, or None. Pure."""
    if not isinstance(loaded, dict):
        return f'holds a JSON {_kind(loaded)}; it must be an object like {{"permissions": {{...}}}}'
    unknown = _unknown(loaded, ("permissions",), "")
    if unknown or "permissions" not in loaded:
        return unknown
    roles = loaded["permissions"]
    if not isinstance(roles, dict):
        return _wrong("permissions", roles, f"an object of roles ({', '.join(ROLES)}), like {EXAMPLE}")
    return _unknown(roles, ROLES, "permissions.") or next(
        (found for role in ROLES if role in roles and (found := _role_problem(role, roles[role]))), None
    )


def _role_problem(role: str, lists: object) -> str | None:
    field = f"permissions.{role}"
    if not isinstance(lists, dict):
        return _wrong(field, lists, f"an object with allow and deny, like {EXAMPLE}")
    unknown = _unknown(lists, LISTS, field + ".")
    if unknown:
        return unknown
    for key in LISTS:
        rules = lists.get(key, [])
        if not isinstance(rules, list):
            return _wrong(f"{field}.{key}", rules, 'a list of rule strings, like ["Bash(npm test:*)"]')
        bad = next((i for i, rule in enumerate(rules) if not isinstance(rule, str)), None)
        if bad is not None:
            return _wrong(f"{field}.{key}[{bad}]", rules[bad], 'a rule string, like "Bash(npm test:*)"')
    return None


def _unknown(found: dict[str, object], known: tuple[str, ...], prefix: str) -> str | None:
    extra = [name for name in found if name not in known]
    if not extra:
        return None
    return f"has an unknown field {prefix}{extra[0]!s}: the fields there are {', '.join(known)}"


def _wrong(field: str, value: object, expected: str) -> str:
    return f"has {field} as a JSON {_kind(value)}; it must be {expected}"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    names = {dict: "object", list: "array", str: "string", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)
