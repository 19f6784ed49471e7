"""The pure half of the fake agent (worker.fake.agent): its script steps, which configured hooks run
for an event, what a hook's answer decides, and the keyboard decoder (typing, bracketed paste, Escape).
Nothing here touches a file, a process or the terminal."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

# A step is a line `fake: <verb> <argument>` in the prompt or a submitted message, or an entry of the
# JSON list in $IB_FAKE_SCRIPT. Tool steps: `write PATH TEXT` (Write; `\n` in TEXT is a new line, the file
# ends with one), `read PATH` (Read), `commit MESSAGE`, `run CMD`, `ask QUESTION` (Bash: `git add -A &&
# git commit -m "MESSAGE"`, CMD, `ib ask "QUESTION"`). Others: `say TEXT`, `sleep SECONDS`, `exit`.
# `ask`, `wait [TEXT]` and `done [TEXT]` end the turn with a reply (WAITING / the completion marker);
# `reply TEXT` ends it with TEXT alone, no marker (a plain question, as models often end a turn).
# Dialogs as Claude Code 2.1.332 draws them: `permission CMD` (Bash CMD after "Do you want to proceed?";
# 1 / 2 run it, 3 or Escape interrupt the turn) and `choose QUESTION | OPTION | OPTION...` (an
# AskUserQuestion dialog; the digit picks the option). `auto-permission CMD` is auto mode behind a base
# URL, with no hook: the "Auto mode can't check actions" notice (Enter goes on, Escape or shift+Tab end the
# turn), then "Do you want to proceed? ❯ No / Yes" (arrows and Enter; No ends the turn), then Bash CMD.
VERBS = (
    "write",
    "read",
    "commit",
    "ask",
    "run",
    "say",
    "sleep",
    "wait",
    "done",
    "reply",
    "exit",
    "permission",
    "choose",
    "auto-permission",
)
NEEDS_ARGUMENT = (
    "write",
    "read",
    "commit",
    "ask",
    "run",
    "say",
    "reply",
    "sleep",
    "permission",
    "choose",
    "auto-permission",
)
MAX_SLEEP = 3600.0
HOOK_TIMEOUT = 10.0

_STEP_LINE = re.compile(r"^\s*fake:\s*(.*?)\s*$")


@dataclass(frozen=True)
class Step:
    """One scripted action. `verb` is one of VERBS, or "invalid" (then `text` says why)."""

    verb: str
    arg: str = ""
    text: str = ""


def parse_step(line: str) -> Step:
    """`write PATH TEXT`, `commit MESSAGE`, `sleep SECONDS`, ... (the text after `fake:`)."""
    verb, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    problem = _step_problem(verb, rest)
    if problem:
        return Step("invalid", line.strip(), problem)
    if verb == "write":
        path, _, text = rest.partition(" ")
        return Step("write", path, text.replace("\\n", "\n"))
    if verb == "sleep":
        return Step("sleep", str(min(max(float(rest), 0.0), MAX_SLEEP)))
    return Step(verb, rest)


def _step_problem(verb: str, rest: str) -> str:
    if verb not in VERBS:
        return f"unknown step {verb!r}"
    if verb in NEEDS_ARGUMENT and not rest:
        return f"{verb} needs an argument"
    if verb == "sleep":
        try:
            seconds = float(rest)
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds):
            return "sleep needs a number of seconds"
    return ""


def steps_in(text: str) -> list[Step]:
    """The steps a prompt or message carries: every line of the form `fake: <step>`."""
    return [parse_step(m.group(1)) for line in text.splitlines() if (m := _STEP_LINE.match(line))]


def parse_script(document: str) -> list[Step]:
    """The steps of a script file: a JSON list of step strings."""
    try:
        lines = json.loads(document)
    except ValueError as e:
        return [Step("invalid", document[:80], f"script is not JSON: {e}")]
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        return [Step("invalid", document[:80], "script must be a JSON list of strings")]
    return [parse_step(line) for line in lines]


def shell_quote(text: str) -> str:
    """Double-quoted for sh, the way a person (or Claude) writes an argument."""
    return '"' + re.sub(r'(["\\$`])', r"\\\1", text) + '"'


def step_command(step: Step) -> str:
    """The Bash tool command of a `commit`, `ask` or `run` step."""
    if step.verb == "commit":
        return f"git add -A && git commit -m {shell_quote(step.arg)}"
    if step.verb == "ask":
        return f"ib ask {shell_quote(step.arg)}"
    return step.arg


@dataclass(frozen=True)
class CommandLine:
    """What the fake agent takes from a `claude` command line; other options are accepted and ignored."""

    settings: str | None = None
    session_id: str | None = None
    prompt: str = ""


def parse_command_line(argv: list[str]) -> CommandLine:
    """`[--settings F] [--session-id ID | --resume ID] [--model M] [PROMPT]`: the prompt comes last."""
    values: dict[str, str] = {}
    positional: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--":
            positional.extend(args)
        elif arg in VALUE_OPTIONS:
            values[arg] = next(args, "")
        elif arg.startswith(tuple(f"{o}=" for o in VALUE_OPTIONS)):
            name, _, value = arg.partition("=")
            values[name] = value
        elif not arg.startswith("-"):
            positional.append(arg)
    return CommandLine(
        values.get("--settings") or None,
        values.get("--session-id") or values.get("--resume") or None,
        positional[-1] if positional else "",
    )


# options of `claude` that take a value (so the value is never taken for the prompt)
VALUE_OPTIONS = ("--settings", "--session-id", "--resume", "--model")


def project_dir_name(cwd: str) -> str:
    """Claude Code's folder for a working directory under ~/.claude/projects: non-alphanumerics become -."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def _matches(matcher: object, tool_name: str | None) -> bool:
    if tool_name is None or not isinstance(matcher, str) or matcher in ("", "*"):
        return True
    try:
        return re.fullmatch(matcher, tool_name) is not None
    except re.error:
        return matcher == tool_name


def hook_commands(settings: object, event: str, tool_name: str | None = None) -> list[tuple[str, float]]:
    """(command, timeout) of every command hook configured for `event` (and the tool, for tool events)."""
    hooks = settings.get("hooks") if isinstance(settings, Mapping) else None
    groups = hooks.get(event) if isinstance(hooks, Mapping) else None
    commands: list[tuple[str, float]] = []
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, Mapping) or not _matches(group.get("matcher"), tool_name):
            continue
        for hook in group.get("hooks") or []:
            if isinstance(hook, Mapping) and hook.get("type") == "command" and hook.get("command"):
                timeout = hook.get("timeout")
                seconds = float(timeout) if isinstance(timeout, int | float) else HOOK_TIMEOUT
                commands.append((str(hook["command"]), seconds))
    return commands


def denial(exit_code: int, stdout: str, stderr: str) -> str | None:
    """Why a PreToolUse hook refused the tool, or None when it let it run.

    Refusals: exit code 2 (reason on stderr), `hookSpecificOutput.permissionDecision == "deny"`,
    or the older `{"decision": "block"}`.
    """
    if exit_code == 2:
        return stderr.strip() or "blocked by a PreToolUse hook"
    try:
        answer = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(answer, Mapping):
        return None
    specific = answer.get("hookSpecificOutput")
    if isinstance(specific, Mapping) and specific.get("permissionDecision") == "deny":
        return str(specific.get("permissionDecisionReason") or "denied by a PreToolUse hook")
    if answer.get("decision") == "block":
        return str(answer.get("reason") or "blocked by a PreToolUse hook")
    return None


KeyKind = Literal["submit", "interrupt", "echo", "eof", "key"]


@dataclass(frozen=True)
class KeyEvent:
    """What the keyboard did: submitted a line (`data`), pressed Escape or Ctrl-C, typed `data`,
    pressed Ctrl-D on an empty line, or pressed a key that moves through a dialog (`data`: Up, Down, or
    Enter on an empty line)."""

    kind: KeyKind
    data: bytes = b""


ARROWS = {b"A": b"Up", b"B": b"Down", b"Z": b"BTab"}  # the end of CSI A / SS3 A ...; CSI Z is shift+Tab
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


@dataclass
class KeyDecoder:
    """Turns terminal input bytes into key events, the way Claude Code's input box reads them.

    Inside a bracketed paste every byte is text (CR and CRLF become LF); outside, CR or LF submits,
    DEL/BS erase, Ctrl-C interrupts, the up and down arrows (and Enter on an empty line) are keys for a
    dialog, and other escape sequences are ignored.
    A lone ESC is only known to be the Escape key when nothing follows it: the caller waits a moment
    and calls `flush_escape`.
    """

    line: bytearray = field(default_factory=bytearray)
    _escape: bytearray | None = None
    _paste: bytearray | None = None

    @property
    def escape_pending(self) -> bool:
        return self._escape is not None and len(self._escape) == 1

    def flush_escape(self) -> list[KeyEvent]:
        if not self.escape_pending:
            return []
        self._escape = None
        return [KeyEvent("interrupt")]

    def feed(self, data: bytes) -> list[KeyEvent]:
        events: list[KeyEvent] = []
        for byte in data:
            if self._paste is not None:
                self._paste_byte(byte, events)
            elif self._escape is not None:
                self._escape_byte(byte, events)
            else:
                self._plain_byte(byte, events)
        return events

    def _paste_byte(self, byte: int, events: list[KeyEvent]) -> None:
        assert self._paste is not None
        self._paste.append(byte)
        if self._paste.endswith(PASTE_END):
            text = bytes(self._paste[: -len(PASTE_END)]).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            self._paste = None
            self.line += text
            events.append(KeyEvent("echo", text))

    def _escape_byte(self, byte: int, events: list[KeyEvent]) -> None:
        assert self._escape is not None
        if len(self._escape) == 1 and byte not in b"[O":
            self._escape = None
            events.append(KeyEvent("interrupt"))
            self._plain_byte(byte, events)
            return
        self._escape.append(byte)
        done = len(self._escape) == 3 if self._escape[1:2] == b"O" else len(self._escape) > 2 and byte >= 0x40
        if done:
            if self._escape == PASTE_START:
                self._paste = bytearray()
            elif arrow := ARROWS.get(bytes(self._escape[2:])):
                events.append(KeyEvent("key", arrow))
            self._escape = None

    def _plain_byte(self, byte: int, events: list[KeyEvent]) -> None:
        if byte == 0x1B:
            self._escape = bytearray(b"\x1b")
        elif byte in b"\r\n":
            typed = bytes(self.line)
            events.append(KeyEvent("submit", typed) if typed.strip() else KeyEvent("key", b"Enter"))
            self.line.clear()
        elif byte in (0x7F, 0x08):
            while self.line and self.line[-1] & 0xC0 == 0x80:  # continuation bytes of one character
                self.line.pop()
            if self.line:
                self.line.pop()
                events.append(KeyEvent("echo", b"\b \b"))
        elif byte == 0x03:
            events.append(KeyEvent("interrupt"))
        elif byte == 0x04 and not self.line:
            events.append(KeyEvent("eof"))
        elif byte >= 0x20:
            self.line.append(byte)
            events.append(KeyEvent("echo", bytes([byte])))
