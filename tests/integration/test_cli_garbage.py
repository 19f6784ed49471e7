"""Every `ib` command, found by walking the typer application, given garbage: an unknown option, words
where numbers go, nan / inf where durations go, its required arguments left out. Each answer is one line
`ib <command>: error: ...` on stderr with exit code 2, never a traceback. Runs `ib`'s entry point in this
process (the same code the console script runs), so the whole walk takes seconds."""

from __future__ import annotations

import sys

import pytest
import typer
from typer._click.core import Command
from typer.core import TyperGroup

from worker.cli.app import app
from worker.cli.entry import main


def _commands(command: Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Command]]:
    if isinstance(command, TyperGroup):
        found = []
        for name, sub in sorted(command.commands.items()):
            found += _commands(sub, (*path, name))
        return found
    return [(path, command)]


COMMANDS = _commands(typer.main.get_command(app))


def _cases() -> list[tuple[str, list[str]]]:
    cases = []
    for path, command in COMMANDS:
        name = " ".join(path)
        if path[0] == "hook":
            continue  # hooks ignore their arguments and exit 0 whatever comes (test_agent_hooks: bad stdin)
        cases.append((f"{name} --no-such-option", [*path, "--no-such-option"]))
        required = [p for p in command.params if p.param_type_name == "argument" and p.required]
        if required:
            cases.append((f"{name} (no arguments)", list(path)))
        filler = ["x"] * len(required)
        for param in command.params:
            if param.param_type_name != "option" or getattr(param, "is_flag", False) or not param.opts:
                continue
            annotation = param.type_descriptor.annotation  # type: ignore[attr-defined]
            bad = {int: ["garbage", "1.5"], float: ["garbage", "nan", "inf", "-inf"]}.get(annotation, [])
            for value in bad:
                cases.append((f"{name} {param.opts[0]} {value}", [*path, *filler, param.opts[0], value]))
    return cases


CASES = _cases()


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(p) for p, _c in COMMANDS}
    assert {
        "notify",
        "listen",
        "events",
        "task add",
        "task claim",
        "hook stop",
        "auto stop",
        "bus status",
    } <= names
    assert len(CASES) > 3 * len(COMMANDS) // 2


@pytest.mark.parametrize("argv", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_garbage_gets_one_line_and_exit_2(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    monkeypatch.setattr(sys, "argv", ["ib", *argv])
    monkeypatch.setenv("IB_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing may get as far as Redis
    monkeypatch.setenv("IB_SPOOL_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert exited.value.code == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"ib {argv[0]}") and ": error: " in lines[0], lines[0]
    assert "Traceback" not in err


GARBAGE = "\x1b[2J../../etc/passwd;$(rm -rf /) \u202e"
# `up` starts services and `bot` a Telegram client: they run, so they are not fed garbage here
RUNS_SERVICES = {("up",), ("bot",)}


def _with_garbage() -> list[tuple[str, list[str]]]:
    cases = []
    for path, command in COMMANDS:
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        if not arguments or path in RUNS_SERVICES or path[0] == "hook":
            continue
        cases.append((" ".join(path), [*path, *[GARBAGE] * len(arguments)]))
    return cases


@pytest.mark.parametrize("argv", [c[1] for c in _with_garbage()], ids=[c[0] for c in _with_garbage()])
def test_garbage_arguments_get_at_most_one_line(
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    repo: object,
    tmp_path: object,
) -> None:
    """Garbage where ids, titles and files go, with Redis unreachable: a refusal in one line (or the
    command's answer), never a traceback."""
    monkeypatch.chdir(str(repo))
    monkeypatch.setattr(sys, "argv", ["ib", *argv])
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))  # noqa: SIM115 - closed with the test's process
    monkeypatch.setenv("IB_REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("IB_CONNECT_TIMEOUT", "0.2")
    monkeypatch.setenv("IB_SPOOL_DIR", str(tmp_path))
    code: object = 0
    try:
        main()
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert code in (0, None) or (code in (1, 2, 3) and len(errors) == 1), (code, err)
