"""Gemini CLI as an agent program, its pure parts: the settings.json an agent gets (hooks on the events
ittybus reads, API-key auth, no folder trust, the bus's variables redacted), the bubblewrap command line
(what stays writable, what is hidden), the screen's state in ittybus's words, and the answers to its
dialogs in the words the events offer."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.unit.test_agent_programs import _launch
from worker.agents.dialog_answer import refusal_note
from worker.markers import COMPLETION_MARKER
from worker.programs.bubblewrap import box
from worker.programs.confinement import Confinement
from worker.programs.gemini.program import REDACTED, GeminiCli, approval_mode, policy, settings
from worker.programs.gemini.signals import HOOKED
from worker.tmux.gemini_screen import read_screen
from worker.tmux.pane_state import PaneState

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini-0.61.0"
ROOT = "/work/repo"
OWN = f"{ROOT}/.ib/agents/a1"


def test_settings_hook_every_event_the_reader_reads() -> None:
    made = settings("/opt/ib bin/ib", "gemini-2.5-flash")
    hooks = made["hooks"]
    assert isinstance(hooks, dict)
    assert set(hooks) == set(HOOKED)
    command = hooks["AfterAgent"][0]["hooks"][0]["command"]
    assert command == "'/opt/ib bin/ib' hook gemini"
    security = made["security"]
    assert isinstance(security, dict)
    assert security["folderTrust"] == {"enabled": False}
    assert security["environmentVariableRedaction"] == {"enabled": True, "blocked": list(REDACTED)}
    assert "IB_REDIS_URL" in REDACTED
    assert made["model"] == {"name": "gemini-2.5-flash"}
    assert settings("ib")["model"] == {}


def test_policy_lets_git_commit_unasked_and_nothing_else_of_the_shell() -> None:
    """What Claude Code's agents run unasked (`Bash(git commit:*)`): a task's agent commits without a
    person. One allow rule naming git's subcommands, no deny: every other shell command still asks."""
    [rule] = tomllib.loads(policy())["rule"]
    assert (rule["toolName"], rule["decision"]) == ("run_shell_command", "allow")
    assert {"git add", "git commit", "git status"} <= set(rule["commandPrefix"])
    assert all(prefix.startswith("git ") for prefix in rule["commandPrefix"])
    assert "deny" not in policy()
    assert "tools" not in settings("ib")  # tools.allowed would refuse every shell command it does not name


def _confinement(worktree: str = f"{OWN}/repo") -> Confinement:
    own = worktree != ROOT
    return Confinement(
        worktree, ROOT, (), "ib", git_dir=f"{OWN}/git" if own else "", bin=f"{OWN}/bin", cache=f"{OWN}/cache"
    )


def _pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_box_writes_only_the_agent_s_own_places_and_hides_the_bus() -> None:
    args = box(_confinement(), [f"{OWN}/home"], "/nonexistent-home", ["gemini", "-i", "go"])
    assert args[:5] == ["bwrap", "--ro-bind", "/", "/", "--dev"]
    assert args[-4:] == ["--", "gemini", "-i", "go"]
    assert _pairs(args, "--bind") == [f"{OWN}/repo", f"{OWN}/git", f"{OWN}/cache", f"{OWN}/home"]
    assert f"{ROOT}/.ib" in _pairs(args, "--tmpfs")
    assert args.index(f"{ROOT}/.ib") < args.index(f"{OWN}/repo")  # hidden first, the agent's own bound back
    assert [f"{OWN}/git/{n}" for n in ("config", "hooks", "info")] == _pairs(args, "--ro-bind-try")
    assert ROOT not in _pairs(args, "--bind") and ROOT in _pairs(args, "--ro-bind")
    assert "--unshare-net" not in args  # the model API and the hooks' bus are on the network


def test_box_of_an_agent_without_a_worktree_writes_the_root_but_not_its_state() -> None:
    args = box(_confinement(ROOT), [f"{OWN}/home"], "/nonexistent-home", ["gemini"])
    assert _pairs(args, "--bind")[0] == ROOT
    assert args.index(ROOT) < args.index(f"{ROOT}/.ib")


def test_box_hides_the_person_s_credentials(tmp_path: Path) -> None:
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".netrc").write_text("machine x password y\n")
    args = box(_confinement(), [f"{OWN}/home"], str(tmp_path), ["gemini"])
    assert str(tmp_path / ".ssh") in _pairs(args, "--tmpfs")
    assert str(tmp_path / ".netrc") in args
    assert str(tmp_path / ".aws") not in args  # absent: nothing to hide


STATES = {
    "idle-startup-w80.txt": PaneState.WAITING,
    "idle-turn-end-w100.txt": PaneState.WAITING,
    "idle-api-error-w200.txt": PaneState.ERROR,
    "working-held-stream-w80.txt": PaneState.RUNNING,
    "dialog-shell-w100.txt": PaneState.PERMISSION,
    "dialog-replace-w200.txt": PaneState.PERMISSION,
    "exited-quit-w80.txt": PaneState.STOPPED,
    "limited-usage-limit-reset-w80.txt": PaneState.RATE_LIMITED,  # the pane watcher parks the agent on it
    "limited-usage-limit-daily-w200.txt": PaneState.RATE_LIMITED,
    "idle-quota-error-w100.txt": PaneState.ERROR,  # the AfterAgent hook tells it `limited`
}


@pytest.mark.parametrize(("name", "expected"), STATES.items(), ids=STATES.keys())
def test_pane_state_in_ittybus_words(name: str, expected: PaneState) -> None:
    assert GeminiCli().pane_state((FIXTURES / name).read_text(encoding="utf-8")) == expected


def test_marker_on_an_idle_screen_is_complete() -> None:
    screen = (FIXTURES / "idle-turn-end-w100.txt").read_text(encoding="utf-8")
    marked = screen.replace("✦ Checking the result once more.", "✦ Done.\n  I HAVE COMPLETED THE GOAL", 1)
    assert GeminiCli().pane_state(marked) == PaneState.COMPLETE


def test_the_marker_in_the_agent_s_own_prompt_is_not_its_answer() -> None:
    """The first prompt tells the agent to end with the marker, on a line of its own, and Gemini CLI
    shows it as sent: a turn denied at its first tool call left the screen `complete` (seen from
    Telegram's Deny)."""
    screen = (FIXTURES / "idle-turn-end-w100.txt").read_text(encoding="utf-8")
    asked = screen.replace(
        " > build it and write the notes", f" > build it and write the notes\n   {COMPLETION_MARKER}", 1
    )
    assert GeminiCli().pane_state(asked) == PaneState.WAITING
    unanswered = asked.replace("✦ ", "  ")  # cancelled before the model said anything
    assert GeminiCli().pane_state(unanswered) == PaneState.WAITING
    again = asked.replace(
        "✦ Checking the result once more.", f"✦ Done.\n  {COMPLETION_MARKER}\n\n > and once more", 1
    )
    assert GeminiCli().pane_state(again) == PaneState.WAITING  # the marker answered an earlier prompt


ANSWERS = {"approve": "1", "approve always": "2", "always": "2", "deny": "4", "refuse": "4", "3": "3"}


@pytest.mark.parametrize(("answer", "key"), ANSWERS.items(), ids=ANSWERS.keys())
def test_answers_in_the_events_words(answer: str, key: str) -> None:
    program = GeminiCli()
    dialog = program.read_dialog((FIXTURES / "dialog-write-file-w80.txt").read_text(encoding="utf-8"))
    assert dialog is not None
    assert program.option_keys(dialog, program.choose(dialog, answer)) == [key]


MODES = {
    "acceptEdits": "auto_edit",
    "default": "default",
    "manual": "default",
    "auto": "default",
    "dontAsk": "default",
    "plan": "plan",
    "bypassPermissions": "yolo",
}


@pytest.mark.parametrize(("mode", "expected"), MODES.items(), ids=MODES.keys())
def test_permission_mode_as_approval_mode(mode: str, expected: str) -> None:
    assert approval_mode(mode) == expected


def test_start_in_its_home_under_bubblewrap_with_the_prompt(tmp_path: Path) -> None:
    launch = _launch(tmp_path)  # acceptEdits, as configured out of the box
    start = GeminiCli().start(launch)
    prompt = tmp_path / "agent" / "prompt.txt"
    assert start.words.startswith("bwrap --ro-bind / / ")
    assert start.words.endswith(
        f' -- claude --approval-mode auto_edit --prompt-interactive "$(cat {prompt})"'
    )
    assert dict(start.environment) == {
        "HOME": str(tmp_path / "agent" / "home"),
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }
    assert start.relayed  # its pane gets no bus address: its hooks go through the worker's relay
    resumed = GeminiCli().start(_launch(tmp_path, resume=True))
    assert resumed.words.endswith(" -- claude --approval-mode auto_edit --resume latest")
    assert resumed.relayed


BOXES = {
    "idle-typed-one-line-w100.txt": "look at the notes file",
    "idle-typed-two-lines-w100.txt": "line one",  # the box's first line
    "idle-typed-long-paste-w100.txt": "[Pasted Text: 50 lines]",
    "idle-turn-end-w100.txt": "",  # the placeholder
    "idle-startup-w80.txt": "",
    "working-held-stream-w80.txt": "",  # a turn at work keeps its box (a message is queued)
    "dialog-shell-w100.txt": None,
}


@pytest.mark.parametrize(("name", "held"), BOXES.items(), ids=BOXES.keys())
def test_input_box_under_the_approval_mode_line(name: str, held: str | None) -> None:
    """The box sits under its rule, the approval mode's line and a blank: what `ib send` waits to see
    before Enter and looks for after it."""
    assert GeminiCli().input_text((FIXTURES / name).read_text(encoding="utf-8")) == held


def test_every_message_is_pasted() -> None:
    """A typed `?` in an empty box opens the shortcuts, `!` the shell mode: a paste is text."""
    assert GeminiCli().pastes


def test_a_refusal_is_told_by_the_call_it_refused() -> None:
    """Gemini CLI drops a cancelled call from the conversation: `ib deny` tells the model which one."""
    dialog = read_screen((FIXTURES / "dialog-shell-w100.txt").read_text(encoding="utf-8")).dialog
    assert dialog is not None and GeminiCli().refusal_untold
    assert refusal_note(dialog, "touch x.txt") == "I refused `touch x.txt`: it did not run."
    assert refusal_note(dialog) == "I refused the tool call (Allow execution of [Shell]?): it did not run."


def test_a_spawn_with_no_api_key_is_told_the_first_turn_would_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    [note] = GeminiCli().notes("gemini", str(tmp_path))
    assert "GEMINI_API_KEY is not set here" in note and "first turn fails" in note
    monkeypatch.setenv("GEMINI_API_KEY", "  ")  # blank is no key
    assert len(GeminiCli().notes("gemini", str(tmp_path))) == 1


def test_a_spawn_with_a_key_is_told_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "a-key")
    assert GeminiCli().notes("gemini", str(tmp_path)) == []
