"""The environment an agent starts with: an explicit list, never what the tmux server happened to be
started with. Claude Code and the agent's work get what they need (home, locale, terminal, proxies,
certificates, Claude Code's own `ANTHROPIC_*` / `CLAUDE_*` settings), ittybus adds `IB_AGENT_ID`,
`IB_ROOT`, the bus URL and PATH (the person's own, with a folder holding only `ib` in front and never
ittybus's virtual environment); no other `IB_*` variable (the bot token above all) gets in.

Pure: the spawn writes `env_command` into the agent's start script. Which variables are secrets is
worker.secret_env's, which the tmux layer reads too.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping

from bus.inbox.session_inbox import SOCKET_VAR, TOKEN_VAR

PASS_NAMES = (
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TERM_PROGRAM",
    "TMPDIR",
    "TZ",
    "TMUX",
    "TMUX_PANE",
    "DISPLAY",
    "EDITOR",
    "VISUAL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "DISABLE_ERROR_REPORTING",
)
"""Passed on when the pane's environment has them."""
FAKE_AGENT_PREFIX = "IB_FAKE_"
PASS_PREFIXES = ("LC_", "XDG_", "ANTHROPIC_", "CLAUDE_", "DISABLE_", "GEMINI_", "GOOGLE_", FAKE_AGENT_PREFIX)
"""Variables with these prefixes in the spawner's environment are passed on as well (`GEMINI_*` and
`GOOGLE_*`: Gemini CLI's key, base URL and Vertex settings; `IB_FAKE_*`: the
fake agent's own settings, the one `IB_*` family an agent program reads)."""
NEVER_PASSED = frozenset({SOCKET_VAR, TOKEN_VAR})
"""The inbox of the person's Claude Code session (when it spawned the agent): an agent has its own, and
with the person's its hooks would record the person's inbox as the agent's (bus.inbox.session_inbox)."""


def passed_names(spawner_env: Iterable[str], extra: Iterable[str] = ()) -> list[str]:
    """The variables an agent takes from its pane's environment: the fixed list, the prefixed names the
    spawner has, and `extra` (the IB_AGENT_ENV setting) — never an `IB_*` one."""
    names = dict.fromkeys(PASS_NAMES)
    names.update(dict.fromkeys(n for n in sorted(spawner_env) if n.startswith(PASS_PREFIXES)))
    names.update(dict.fromkeys(extra))
    return [
        n
        for n in names
        if n.isidentifier()
        and (not n.startswith("IB_") or n.startswith(FAKE_AGENT_PREFIX))
        and n not in NEVER_PASSED
    ]


def agent_path(person_path: str, ittybus_bin: str, ib_folder: str) -> str:
    """The agent's PATH: `ib_folder` (the agent's `bin/`, holding only `ib`) first, then the person's own
    PATH without `ittybus_bin` (the bin folder of ittybus's virtual environment, "" when ittybus runs in no
    environment of its own), whose `python3` and `pip` are not the project's."""
    drop = os.path.normpath(ittybus_bin) if ittybus_bin else None
    kept = [d for d in person_path.split(os.pathsep) if d and os.path.normpath(d) != drop]
    return os.pathsep.join(dict.fromkeys([ib_folder, *kept]))


def env_command(explicit: Mapping[str, str], passed: Iterable[str]) -> str:
    """`env -i` with `passed` taken from the script's own environment when set there (`${NAME+...}`
    adds nothing for an unset one) and `explicit` written out: the start of the agent's exec line."""
    words = ["/usr/bin/env", "-i"]  # absolute: the pane's own PATH is not to be trusted either
    words += [f'${{{name}+"{name}=${name}"}}' for name in passed if name not in explicit]
    words += [shlex.quote(f"{key}={value}") for key, value in explicit.items()]
    return " ".join(words)
