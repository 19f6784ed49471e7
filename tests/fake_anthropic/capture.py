"""Capture real Claude Code pane screens, one per agent state, for the pane parser's fixtures.

    .venv/bin/python -m tests.fake_anthropic.capture [--out tests/fixtures/pane-states]
                                                    [--widths 80,100,200] [--only NAME,...] [--list]
                                                    [--cli-args=--ax-screen-reader]
                                                    [--dialogs tests/fixtures/dialogs]

Each scenario (tests/fake_anthropic/scenarios.py) starts the real CLI in a tmux pane of the given width
(50 rows, like an agent's) against the scripted Messages API, drives it to a state and saves the screen
as `<state>-cc<version>-<what>-w<width>.txt`: the expected state is the name's text before the first
hyphen. Dialog screens go to --dialogs as `<kind>-<what>-<width>.claude-<version>.txt` (the dialog kind
worker/tmux/dialogs.py must read). Run it again for a new CLI version (IB_TEST_CLAUDE_BIN=/path/to/claude)
and see which captures the parsers read wrong with `pytest tests/unit/test_pane_state.py
tests/unit/test_dialogs.py`.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli import init_repo
from tests.fake_anthropic.client import claude_binary, client_env, write_home
from tests.fake_anthropic.server import FakeAnthropic
from tests.tmux_screen import TmuxScreen


class CaptureFailed(RuntimeError):
    """A screen the scenario waits for did not appear."""


@dataclass
class Stage(TmuxScreen):
    """One run of a scenario at one width: a fake API, a repository, a tmux pane and where to save."""

    fake: FakeAnthropic
    width: int
    work: Path
    out: Path
    version: str
    extra: str = ""  # arguments every start of the CLI gets (e.g. --ax-screen-reader)
    verbose: bool = True  # print each file saved
    dialogs: Path = Path("tests/fixtures/dialogs")
    socket: str = field(default_factory=lambda: f"ibcap-{uuid.uuid4().hex[:8]}")
    saved: list[Path] = field(default_factory=list)
    missing = CaptureFailed

    @property
    def repo(self) -> Path:
        return self.work / "repo"

    def start(self, args: str = "", *, cwd: Path | None = None, shell_after: bool = False) -> None:
        """The CLI in a fresh pane; with `shell_after` a shell prompt follows when it exits."""
        variables = client_env(self.fake.base_url, self.work / "home")
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
        command = f"env {env} {shlex.quote(str(claude_binary()))} {self.extra} {args}"
        if shell_after:
            command = f"{command}; exec env PS1='$ ' sh -i"
        self.open(command, cwd or self.repo)

    def save(self, state: str, what: str, screen: str | None = None) -> Path:
        path = self.out / f"{state}-cc{self.version}-{what}-w{self.width}.txt"
        path.write_text(self.text() if screen is None else screen, encoding="utf-8")
        self.saved.append(path)
        if self.verbose:
            print(f"saved {path}", flush=True)
        return path

    def save_dialog(self, kind: str, what: str, screen: str | None = None) -> Path:
        """A dialog's screen, named for the dialog parser's table test (`kind` is what it must read)."""
        self.dialogs.mkdir(parents=True, exist_ok=True)
        path = self.dialogs / f"{kind}-{what}-{self.width}.claude-{self.version}.txt"
        path.write_text(self.text() if screen is None else screen, encoding="utf-8")
        self.saved.append(path)
        if self.verbose:
            print(f"saved {path}", flush=True)
        return path


def run_scenario(
    scenario: Callable[[Stage], None],
    width: int,
    out: Path,
    version: str,
    extra: str = "",
    *,
    verbose: bool = True,
    dialogs: Path = Path("tests/fixtures/dialogs"),
) -> list[Path]:
    folder = tempfile.TemporaryDirectory(prefix="ib-capture-", ignore_cleanup_errors=True)
    with folder as tmp, FakeAnthropic() as fake:
        work = Path(tmp)
        init_repo(work / "repo")
        write_home(work / "home", [work / "repo"])
        stage = Stage(fake, width, work, out, version, extra, verbose, dialogs)
        try:
            scenario(stage)
        finally:
            stage.close()
        return stage.saved


def cli_version() -> str:
    done = subprocess.run([str(claude_binary()), "--version"], capture_output=True, text=True, check=True)
    return done.stdout.split()[0]


def main(argv: list[str] | None = None) -> int:
    from tests.fake_anthropic.scenarios import SCENARIOS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/pane-states"))
    parser.add_argument("--dialogs", type=Path, default=Path("tests/fixtures/dialogs"))
    parser.add_argument("--widths", default="80,100,200")
    parser.add_argument("--only", default="", help="comma-separated scenario names")
    parser.add_argument("--list", action="store_true", help="print the scenario names and exit")
    parser.add_argument("--cli-args", default="", help="added to every start, e.g. --ax-screen-reader")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(SCENARIOS))
        return 0
    wanted = [n for n in args.only.split(",") if n] or list(SCENARIOS)
    unknown = [n for n in wanted if n not in SCENARIOS]
    if unknown:
        print(f"capture: error: unknown scenario {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    version = cli_version()
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in wanted:
        scenario, widths = SCENARIOS[name]
        for width in [int(w) for w in args.widths.split(",") if int(w) in widths or not widths]:
            try:
                run_scenario(scenario, width, args.out, version, args.cli_args, dialogs=args.dialogs)
            except CaptureFailed as e:
                failed += 1
                print(f"capture: {name} at width {width} failed: {e}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
