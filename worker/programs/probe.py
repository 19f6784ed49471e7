"""Asking an installed agent program about itself: is its binary on PATH, which version it reports. The
parsing is pure; the one subprocess call (`<command> --version`) is kept per command line."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

from worker.programs.program import AgentProgram, Version

VERSION_TIMEOUT = 30.0
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_reported: dict[tuple[str, str], Version | None] = {}  # what each (command line, shape) answered


def parse_version(text: str, shape: re.Pattern[str] | None = None) -> Version | None:
    """(major, minor, patch) from `--version` output; None when absent or when the output does not
    have the program's `shape` (another program answered)."""
    if shape is not None and not shape.search(text):
        return None
    found = _VERSION.search(text)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def program_word(command: str) -> str | None:
    """The program a command line runs (leading `NAME=value` words skipped, as in sh); None when the
    line is not shell words or names nothing."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    return words[0] if words else None


def installed(command: str, path: str | None = None) -> bool:
    """Is the program of `command` found on `path` (default PATH)?"""
    word = program_word(command)
    return word is not None and shutil.which(word, path=path) is not None


def not_installed(program: AgentProgram, command: str) -> str | None:
    """Why `command` cannot start `program` (its binary is not on PATH), with how to install it; None
    when it is there."""
    if installed(command):
        return None
    return f"{program.title} (`{program.binary}`) is not installed or not on PATH: {program.release.install}"


def reported_version(command: str, shape: str = "") -> Version | None:
    """The version `<command> --version` prints; None when it fails or prints another program's. An
    answer is kept per command line; a run cut off by VERSION_TIMEOUT is not (a loaded machine may answer
    the next time: Gemini CLI loads all of itself, seconds of CPU, to print its version)."""
    if (command, shape) in _reported:
        return _reported[(command, shape)]
    try:
        done = subprocess.run(
            [*shlex.split(command), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    except (OSError, ValueError, subprocess.SubprocessError):
        done = None
    found = None
    if done is not None and done.returncode == 0:
        found = parse_version(done.stdout, re.compile(shape) if shape else None)
    _reported[(command, shape)] = found
    return found
