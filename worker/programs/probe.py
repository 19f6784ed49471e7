"""Asking an installed agent program about itself: is its binary on PATH, which version it reports. The
parsing is pure; the one subprocess call (`<command> --version`) is kept per command line."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from typing import Protocol

from worker.programs.program import Release, Version

VERSION_TIMEOUT = 30.0
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_reported: dict[tuple[str, str], Version | None] = {}  # what each (command line, shape) answered


class Installable(Protocol):
    """What the checks below name of a program: its title, its binary, the line that installs it."""

    title: str
    binary: str
    release: Release


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


def not_installed(program: Installable, command: str, path: str | None = None) -> str | None:
    """Why `command` cannot start `program` (its binary is not on `path`, default PATH, or is a broken
    symlink), with how to install it; None when it is there."""
    if installed(command, path):
        return None
    word = program_word(command) or program.binary
    link = broken_link(word, path)
    if link:
        return (
            f"{program.title} at {link} is a broken symlink (to {os.readlink(link)}, which does not exist): "
            f"reinstall it: {program.release.install}"
        )
    return f"{program.title} (`{program.binary}`) is not installed or not on PATH: {program.release.install}"


def broken_link(word: str, path: str | None = None) -> str:
    """The first symlink named `word` on `path` (default PATH; `word` itself when it holds a slash) whose
    target does not exist; "" when there is none."""
    if "/" in word:
        candidates = [word]
    else:
        folders = (os.environ.get("PATH", "") if path is None else path).split(os.pathsep)
        candidates = [os.path.join(folder, word) for folder in folders if folder]
    return next((c for c in candidates if os.path.islink(c) and not os.path.exists(c)), "")


def hidden_in_box(program: Installable, command: str, path: str | None = None) -> str | None:
    """Why `command` cannot run in the bubblewrap box `program` runs in (its binary, the file that is
    behind a link to it, or a script's interpreter lies where the box shows another folder: /tmp), with
    what to do; None when the box shows all of them."""
    from worker.programs.bubblewrap import unseen_in_box

    word = program_word(command)
    found = shutil.which(word, path=path) if word else None
    if found is None:
        return None  # not_installed says so
    for place in dict.fromkeys([found, os.path.realpath(found), *_interpreter(found, path)]):
        if unseen_in_box(place):
            return (
                f"{program.title} at {place} cannot run in the agent's bubblewrap box, whose /tmp is an "
                f"empty one of its own: install it outside /tmp ({program.release.install}) and put that "
                "first on PATH"
            )
    return None


def _interpreter(script: str, path: str | None) -> list[str]:
    """The interpreter a `#!` script names (`#!/usr/bin/env node`: node as found on `path`), resolved."""
    try:
        with open(script, "rb") as f:
            first = f.readline(256)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        found = shutil.which(words[0], path=path) if words else None
        return [found, os.path.realpath(found)] if found else []
    return [words[0], os.path.realpath(words[0])] if words else []


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
