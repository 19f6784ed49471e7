"""The scenarios `capture` runs: each drives the real CLI into agent states and saves the screens.

A scenario is a function of a Stage; SCENARIOS maps its name to it and the widths it makes sense at
(empty: every width asked for). Saved names carry the state the pane parser must read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from tests.fake_anthropic.capture import Stage
from tests.fake_anthropic.client import write_home
from tests.fake_anthropic.script import (
    ask_user_question,
    bash,
    edit,
    exit_plan_mode,
    overloaded,
    rate_limited,
    reply,
    write,
)
from tests.fake_anthropic.server import COMPACT_ANSWER
from worker.programs.claude.sandbox import sandbox_problem, sandbox_settings
from worker.programs.confinement import Confinement

DONE = "I HAVE COMPLETED THE GOAL"
RUNNING = "esc to interrupt"
IDLE = "mode on"  # the status bar names the permission mode; without "esc to interrupt" nothing runs
DEFAULT_MODE = "--permission-mode default"
EXIT_WAIT = 180.0  # the CLI sometimes takes a minute to exit after /exit on a loaded machine


def _idle_with(text: str) -> Callable[[str], bool]:
    return lambda screen: text in screen and RUNNING not in screen and IDLE in screen


def _queued(screen: str) -> bool:
    """A message sent while the turn runs waits under it, out of the input box."""
    return "Queued ·" in screen and RUNNING in screen


def blank(s: Stage) -> None:
    s.start(f"{DEFAULT_MODE} 'hello'")
    screen = s.text()  # before the CLI drew anything: what a pane shows in its first moments
    if not screen.strip():
        s.save("creating", "blank", screen)


def trust(s: Stage) -> None:
    folder = s.work / "untrusted"
    folder.mkdir()
    s.start(f"{DEFAULT_MODE} 'hello'", cwd=folder)
    s.wait("Yes, I trust this folder")
    s.save("permission", "trust-folder")


def thinking(s: Stage) -> None:
    hold = threading.Event()
    s.fake.script(reply("Let me look at the parser first.", hold=hold))
    s.start(f"{DEFAULT_MODE} 'fix the parser'")
    s.wait(RUNNING)
    s.save("running", "spinner")
    hold.set()
    s.wait(_idle_with("Let me look at the parser first."))
    s.save("waiting", "finished-without-marker")


def queued(s: Stage) -> None:
    """A message typed while the turn runs waits under the spinner: the turn still runs."""
    hold = threading.Event()
    s.fake.script(reply("Reading the parser.", hold=hold), reply("Noted the tests too."))
    s.start(f"{DEFAULT_MODE} 'fix the parser'")
    s.wait(RUNNING)
    s.type("also run the tests")
    s.wait(_queued)
    s.save("running", "queued-message")
    hold.set()


def bash_running(s: Stage) -> None:
    s.fake.script(reply("Waiting for the build.", bash("sleep 30", "Wait for the build")))
    s.start("--allowedTools 'Bash(sleep:*)' -- 'wait for the build'")
    s.wait("$ sleep 30")
    s.save("running", "bash")


def escape(s: Stage) -> None:
    hold = threading.Event()
    s.fake.script(reply("Thinking about the schema.", hold=hold))
    s.start(f"{DEFAULT_MODE} 'design the schema'")
    s.wait(RUNNING)
    s.keys("Escape")
    s.wait(_idle_with("Interrupted"))
    s.save("waiting", "after-escape")
    hold.set()


def complete(s: Stage) -> None:
    s.fake.script(reply(f"The flag is added and documented.\n\n{DONE}"))
    s.start(f"{DEFAULT_MODE} 'add a flag'")
    s.wait(_idle_with(DONE))
    s.save("complete", "bullet")


def waiting_marker(s: Stage) -> None:
    s.fake.script(reply("Should the flag be --verbose or -v?\n\nWAITING"))
    s.start(f"{DEFAULT_MODE} 'add a flag'")
    s.wait(_idle_with("WAITING"))
    s.save("waiting", "marker")


def diff_panel(s: Stage) -> None:
    """After a file edit, panes 120 columns or wider get the right-hand diff panel."""
    s.fake.script(
        reply("Writing the notes.", write(str(s.repo / "notes.txt"), "first line\nsecond line\n")),
        reply(f"Wrote notes.txt.\n\n{DONE}"),
        reply("Which colour should the shed be?\n\nWAITING"),
    )
    s.start("--permission-mode acceptEdits 'write notes'")
    s.wait(lambda screen: DONE in screen and RUNNING not in screen and "Wrote 2 lines" in screen)
    what = "diff-panel" if s.width >= 120 else "after-write"
    s.wait(lambda screen: s.width < 120 or "/diff to close" in screen)
    s.save("complete", what)
    s.type("paint the shed")
    s.wait(lambda screen: "WAITING" in screen and RUNNING not in screen)
    s.save("waiting", f"marker-{what}")


def permission_bash(s: Stage) -> None:
    s.fake.script(reply("I need to rebuild.", bash("rm -rf build && make", "Rebuild from scratch")))
    s.start(f"{DEFAULT_MODE} 'rebuild'")
    s.wait("Do you want to proceed?")
    s.save("permission", "bash-proceed")


def permission_files(s: Stage) -> None:
    s.fake.script(
        reply("Creating the file.", write(str(s.repo / "a.txt"), "hello\n")),
        reply("Now the README.", edit(str(s.repo / "README.md"), "test repo", "a test repository")),
    )
    s.start(f"{DEFAULT_MODE} 'write files'")
    s.wait("Do you want to create")
    s.save("permission", "write-create")
    s.keys("Enter")
    s.wait("Do you want to make this edit")
    s.save("permission", "edit")


def ask(s: Stage) -> None:
    question = ask_user_question("Which database should I use?", ["Postgres", "SQLite"], "Database")
    s.fake.script(reply("Before I start:", question))
    s.start(f"{DEFAULT_MODE} 'store the users'")
    s.wait("Enter to select")
    s.save("permission", "ask-user-question")
    s.keys("Escape")
    s.wait(_idle_with("Declined"))
    s.save("waiting", "declined-question")


def auto_mode_offer(s: Stage) -> None:
    """A user whose settings pin the manual mode is asked, after a turn, to switch to auto mode."""
    write_home(s.work / "home", [s.repo], {"permissions": {"defaultMode": "default"}})
    s.fake.script(reply(f"Hello.\n\n{DONE}"))
    s.start("'hello'")
    s.wait("Make auto mode your default")
    s.save("permission", "auto-mode-offer")


def plan(s: Stage) -> None:
    steps = "1. Add a --verbose flag\n2. Document it in the README\n3. Test it"
    s.fake.script(reply("Here is my plan.", exit_plan_mode(steps)))
    s.start("--permission-mode plan 'plan a flag'")
    s.wait("Exit plan mode?")
    s.save("permission", "exit-plan-mode")


def api_overloaded(s: Stage) -> None:
    s.fake.script(overloaded())
    s.start(f"{DEFAULT_MODE} 'add a flag'")
    s.wait(_idle_with("529"))
    s.save("error", "api-529-overloaded")


def api_rate_limited(s: Stage) -> None:
    s.fake.script(rate_limited())
    s.start(f"{DEFAULT_MODE} 'add a flag'")
    s.wait(_idle_with("429"))
    s.save("rate_limited", "api-429-turn-ended")


def rate_limit_retrying(s: Stage) -> None:
    s.fake.script(*[rate_limited(retry_after=1, retry=True) for _ in range(10)])
    s.start(f"{DEFAULT_MODE} 'add a flag'")
    s.wait("attempt 4/10")
    s.save("running", "retrying-429")
    s.keys("Escape")


def overloaded_retrying(s: Stage) -> None:
    s.fake.script(*[overloaded(retry=True) for _ in range(10)])
    s.start(f"{DEFAULT_MODE} 'add a flag'")
    s.wait("attempt 2/10")
    s.save("running", "retrying-529")
    s.keys("Escape")


def compact(s: Stage) -> None:
    hold = threading.Event()
    s.fake.script(reply(f"Hello.\n\n{DONE}"))
    s.fake.set_compaction(reply(COMPACT_ANSWER, hold=hold))
    s.start(f"{DEFAULT_MODE} 'hello'")
    s.wait(_idle_with(DONE))
    s.type("/compact")
    s.wait("Compacting")
    s.save("compacting", "compact-command")
    hold.set()
    s.wait(_idle_with("Compacted"))
    s.save("waiting", "after-compact")


def exit_dead(s: Stage) -> None:
    s.fake.script(reply(f"Hello.\n\n{DONE}"))
    s.start(f"{DEFAULT_MODE} 'hello'")
    s.wait(_idle_with(DONE))
    s.type("/exit")
    s.wait("Pane is dead", timeout=EXIT_WAIT)
    s.save("stopped", "pane-is-dead")


def exit_shell(s: Stage) -> None:
    s.fake.script(reply(f"Hello.\n\n{DONE}"))
    s.start(f"{DEFAULT_MODE} 'hello'", shell_after=True)
    s.wait(_idle_with(DONE))
    s.type("/exit")
    s.wait(lambda screen: screen.rstrip().endswith("$"))
    s.save("stopped", "shell-prompt")


SCENARIOS: dict[str, tuple[Callable[[Stage], None], frozenset[int]]] = {
    "blank": (blank, frozenset()),
    "trust": (trust, frozenset()),
    "thinking": (thinking, frozenset()),
    "queued": (queued, frozenset()),
    "bash": (bash_running, frozenset()),
    "escape": (escape, frozenset()),
    "complete": (complete, frozenset()),
    "waiting-marker": (waiting_marker, frozenset()),
    "diff-panel": (diff_panel, frozenset()),
    "permission-bash": (permission_bash, frozenset()),
    "permission-files": (permission_files, frozenset()),
    "ask": (ask, frozenset()),
    "plan": (plan, frozenset()),
    "auto-mode-offer": (auto_mode_offer, frozenset()),
    "overloaded": (api_overloaded, frozenset()),
    "rate-limited": (api_rate_limited, frozenset()),
    "rate-limit-retrying": (rate_limit_retrying, frozenset()),
    "overloaded-retrying": (overloaded_retrying, frozenset()),
    "compact": (compact, frozenset()),
    "exit": (exit_dead, frozenset()),
    "exit-shell": (exit_shell, frozenset()),
}


# --- auto mode's dialogs (the CLI started with no permission mode: what a user gets) -----------------

AUTO_PROBE = 'curl -s http://127.0.0.1:9/ ; echo "rc=$?"'  # compound: auto mode's check cannot pass it


def auto_mode_dialogs(s: Stage) -> None:
    """Behind a base URL auto mode cannot check a compound command: it says so, then asks."""
    s.fake.script(reply("Probing the server.", bash(AUTO_PROBE, "Probe the server")), reply(DONE))
    s.start("'probe the server'")
    s.wait("Auto mode can't check")
    s.save_dialog("dialog", "auto-mode-cannot-check")
    s.settle()  # a key pressed while the notice is still being set up is lost
    s.keys("Enter")
    s.wait("Do you want to proceed?")
    s.save_dialog("permission", "auto-mode-approval")


def auto_mode_nag(s: Stage) -> None:
    """After a turn in manual mode: "Make auto mode your default permission mode?"."""
    write_home(s.work / "home", [s.repo], {"permissions": {"defaultMode": "default"}})
    s.fake.script(reply(f"Hello.\n\n{DONE}"))
    s.start("'hello'")
    s.wait("Make auto mode your default")
    s.save_dialog("dialog", "auto-mode-default")


PANEL_PROBE = 'touch x; echo "exit=$?"'  # compound: acceptEdits cannot check it before it runs


def dialog_beside_diff_panel(s: Stage) -> None:
    """ittybus's default mode (acceptEdits): a Write opens the diff panel (120 columns or wider), then a
    command that asks draws its dialog beside the panel."""
    s.fake.script(
        reply("Writing the notes.", write(str(s.repo / "notes.txt"), "first line\nsecond line\n")),
        reply("Marking it.", bash(PANEL_PROBE, "Mark the notes")),
        reply(DONE),
    )
    s.start("--permission-mode acceptEdits 'write notes'")
    s.wait("Do you want to proceed?")
    s.wait(lambda screen: s.width < 120 or "1 file changed" in screen)  # the panel's heading
    screen = s.settle()
    what = "beside-diff-panel" if s.width >= 120 else "after-write"
    s.save_dialog("permission", what, screen)
    s.save("permission", f"dialog-{what}", screen)


SCENARIOS |= {
    "auto-mode-dialogs": (auto_mode_dialogs, frozenset()),
    "auto-mode-nag": (auto_mode_nag, frozenset()),
    "dialog-beside-diff-panel": (dialog_beside_diff_panel, frozenset({100, 200})),
}


ENV_PREFIXED = "FOO=1 ib notify hi"  # an assignment before `ib`: not the sandbox's `ib:*` exclusion


def env_prefixed_command(s: Stage) -> None:
    """An agent's sandbox (ittybus's settings, acceptEdits): a command that starts with a variable
    assignment is not the excluded `ib`, so Claude Code asks before it runs it; after a Write, as in
    tests/integration/test_agent_boundary_claude.py, so at 120 columns or more it is drawn beside the
    diff panel."""
    confinement = Confinement(str(s.repo), str(s.repo), (), "ib")
    settings = s.work / "settings.json"
    sandbox = sandbox_settings(confinement, available=sandbox_problem() is None)
    settings.write_text(json.dumps({"sandbox": sandbox}), encoding="utf-8")
    s.fake.script(
        reply("Writing the hook.", write(str(s.repo / "evil" / "sitecustomize.py"), "print('hi')\n")),
        reply("Notifying.", bash(ENV_PREFIXED, "Notify the person")),
        reply(DONE),
    )
    s.start(f"--permission-mode acceptEdits --settings {settings} 'notify me'")
    # the dialog's footer with the command above it (the tip line keeps the screen from settling)
    s.wait(lambda screen: ENV_PREFIXED in screen and "Esc to cancel" in screen)
    screen = s.wait(lambda screen: s.width < 120 or "1 file changed" in screen)  # the panel's heading
    s.save_dialog("permission", "env-prefixed-command", screen)


SCENARIOS |= {"env-prefixed-command": (env_prefixed_command, frozenset())}
