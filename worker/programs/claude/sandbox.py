"""Claude Code's own sandbox for an agent's Bash commands, and the read block for its file tools and
@-mentions: the `sandbox` and extra `permissions` sections of the agent's settings.json.

On Linux the sandbox is bubblewrap (with socat for its network proxy), on macOS Seatbelt; elsewhere there
is none, and the spawn says so. What it holds, for every command and whatever runs below it: writes only
in the worktree, the agent's own repository (but its config, hooks and info/, which could make the worker
run code), its own cache folder (npm's: `npm install` needs a writable cache, and ~/.npm is not) and
Claude Code's per-user temp folder (`$TMPDIR`, /tmp/claude-<uid>); the person's whole `.git` is read-only
(for a root that is itself a linked worktree, its own git folder and the shared one). An agent without a
worktree works in the root itself: there only HEAD, index, packed-refs, config, hooks and the other
branches are kept read-only. No reads of the repository's `.ib/` (the agent's own worktree, repository,
`bin/` and cache aside) and `.env`, nor of the person's credentials; no host network beyond a few package
registries; Claude's API key and the bus URL hidden from commands. `ib` itself runs outside it (it must
reach the bus), through the normal permission rules.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bus.settings.repo_paths import git_dir, shared_git_dir
from worker.permissions.policy import SECRET_PLACES
from worker.programs.confinement import Confinement

REGISTRIES = (
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "github.com",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "proxy.golang.org",
    "sum.golang.org",
    "crates.io",
    "static.crates.io",
    "index.crates.io",
)
"""Hosts sandboxed commands may reach (package installs, git over https); the rest is refused."""
HIDDEN_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "IB_REDIS_URL")
"""Variables Claude Code keeps from sandboxed commands (`echo $ANTHROPIC_API_KEY` prints nothing)."""
_PROBE_TIMEOUT = 5.0


def permission_settings() -> dict[str, object]:
    """The `permissions` keys beside allow / deny: file tools and @-mentions read nothing outside the
    working folder (the worktree). Claude Code honours the block only from --settings at launch, which
    is how agents get theirs. No additional directories: a folder added here (say /tmp) is writable by
    sandboxed commands too, and so is every repository below it."""
    return {"blockFileToolReadsOutsideWorkingDirectories": True}


def sandbox_settings(c: Confinement, available: bool) -> dict[str, object]:
    """The `sandbox` section. Unavailable: off (the hook stays the only line; the spawn says so)."""
    if not available:
        return {"enabled": False}
    read_only_git = _read_only_own_repo(c) if c.git_dir else _read_only_git(c)
    # only what exists: for a missing path the sandbox would put an unreadable stand-in there, and git
    # cannot read a packed-refs it is not allowed to see
    read_only_git = [path for path in read_only_git if os.path.exists(path)]
    deny_read = [os.path.join(c.root, ".ib"), os.path.join(c.root, ".env"), *SECRET_PLACES, *c.spool]
    filesystem: dict[str, object] = {
        "denyWrite": read_only_git,
        "denyRead": deny_read,
    }
    writable = [path for path in (c.git_dir, c.cache) if path]
    if writable:
        filesystem["allowWrite"] = writable
    own = [c.worktree if c.worktree != c.root else "", c.git_dir, c.bin, c.cache]
    if any(own):  # inside the hidden .ib/: its own things only
        filesystem["allowRead"] = [path for path in own if path]
    return {
        "enabled": True,
        "failIfUnavailable": True,
        "autoAllowBashIfSandboxed": True,
        "allowUnsandboxedCommands": False,
        "excludedCommands": ["ib:*", f"{c.ib_command}:*"],
        "filesystem": filesystem,
        "network": network_settings(c.relay),
        "credentials": {"envVars": [{"name": name, "mode": "deny"} for name in HIDDEN_VARIABLES]},
    }


def network_settings(relay: str) -> dict[str, object]:
    """The registries, and the worker's relay (`127.0.0.1:<port>`: that port of loopback, no other),
    through Claude Code's proxy; every other host refused without asking (`strictAllowlist`: otherwise
    the proxy asks the person — and in bypassPermissions lets through — any host, loopback included)."""
    allowed = [*REGISTRIES, relay] if relay else list(REGISTRIES)
    return {"allowedDomains": allowed, "strictAllowlist": True}


def _read_only_own_repo(c: Confinement) -> list[str]:
    """For an agent with its own repository: the person's git folders whole, and in its own repository
    what the worker's git would obey (config, hooks, info/) and the work tree's `.git` that names it."""
    own = git_dir(c.root) or os.path.join(c.root, ".git")
    paths = [own, shared_git_dir(c.root)]
    paths += [os.path.join(c.git_dir, name) for name in ("config", "hooks", "info")]
    paths.append(os.path.join(c.worktree, ".git"))
    return list(dict.fromkeys(paths))


def _read_only_git(c: Confinement) -> list[str]:
    """The git files no agent command may change: the root checkout's HEAD and index, the shared
    packed-refs, config, hooks and the other branches. In a linked worktree root these live in two
    places (its own git folder and the common one the main checkout shares); each path once."""
    own = git_dir(c.root) or os.path.join(c.root, ".git")
    common = shared_git_dir(c.root)
    paths = [os.path.join(own, "HEAD"), os.path.join(own, "index")]
    paths += [os.path.join(common, name) for name in ("HEAD", "index", "packed-refs", "config", "hooks")]
    paths += [os.path.join(common, "refs", "heads", *b.split("/")) for b in c.protected_branches]
    return list(dict.fromkeys(paths))


def sandbox_problem() -> str | None:
    """Why this machine cannot sandbox agents' commands, or None when it can."""
    if sys.platform == "darwin":
        return None if os.path.exists("/usr/bin/sandbox-exec") else "macOS without sandbox-exec"
    if not sys.platform.startswith("linux"):
        return f"Claude Code has no sandbox on {sys.platform}"
    missing = [tool for tool in ("bwrap", "socat") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not installed (apt-get install bubblewrap socat)"
    try:
        probe = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "true"],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap does not run here: {e}"
    if probe.returncode != 0:
        return f"bubblewrap does not run here: {probe.stderr.strip() or probe.returncode}"
    return None


def sandbox_line(settings_file: Path) -> str:
    """`ib info`'s line: whether the agent's Bash commands run in the sandbox, from its settings.json."""
    try:
        sandbox = json.loads(settings_file.read_text(encoding="utf-8")).get("sandbox") or {}
    except (OSError, ValueError, AttributeError):
        sandbox = {}
    if isinstance(sandbox, dict) and sandbox.get("enabled") is True:
        return "sandbox:   on — Bash commands write only in the worktree and $TMPDIR"
    why = sandbox_problem() or "the agent was started without one"
    return f"sandbox:   none ({why}); only the PreToolUse hook checks Bash commands"
