"""Running the real `ib` console script in tests, with an environment of the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

IB = str(Path(sys.executable).with_name("ib"))


@dataclass
class IbRunner:
    """`ib` with the test's namespace, Redis and spool folder, run in `cwd`."""

    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    unset_prefixes: tuple[str, ...] = ("IB_",)  # variables of this process that `ib` must not see
    program: str = IB  # the `ib` it runs: the checkout's (editable) unless a test installs another

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(self.unset_prefixes) and k not in ("TMUX", "TMUX_PANE")
        }
        return {**base, **self.env, **(extra or {})}

    def run(
        self,
        *args: str | bytes,
        stdin: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        data = stdin.decode() if isinstance(stdin, bytes) else stdin
        return subprocess.run(
            [self.program, *args],
            input=data,
            capture_output=True,
            text=True,
            env=self.environ(env),
            cwd=cwd or self.cwd,
            timeout=timeout,
            check=False,
        )

    def popen(
        self, *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [self.program, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.environ(env),
            cwd=cwd or self.cwd,
        )


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def init_repo(path: Path) -> Path:
    """A git repository with one commit on `main`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "user.name", "Test")
    (path / "README.md").write_text("test repo\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


__all__ = ["IB", "IbRunner", "git", "init_repo"]
