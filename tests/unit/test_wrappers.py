"""Bash rules through wrappers: a deny rule for `git push` sees the command `env`, `nice`, `sudo`, `xargs`,
`find -exec`, `sh -c`, `bash <<<`, a heredoc, a path or `command` runs; allow rules grow no wider."""

from __future__ import annotations

import pytest

from worker.permissions.policy import MANDATORY_DENY, Decision, Permissions, decide, mandatory_allow
from worker.permissions.wrappers import commands_run_by, shell_script

ROOT = "/work/proj"
WORKTREE = ROOT + "/.ib/agents/a1/repo"
HOME = "/home/dev"


def _decide(command: str, deny: tuple[str, ...], allow: tuple[str, ...] = ()) -> Decision:
    permissions = Permissions((*mandatory_allow(), *allow), (*MANDATORY_DENY, *deny))
    return decide(
        "Bash", {"command": command}, worktree=WORKTREE, root=ROOT, permissions=permissions, home=HOME
    )


WRAPPED_PUSH: dict[str, str] = {
    "plain": "git push",
    "env": "env git push",
    "env-ignore-environment": "env -i git push",
    "env-dash": "env - git push",
    "env-options-and-assignments": "env -u HOME -C /tmp FOO=1 BAR=2 git push",
    "env-split-string": "env -S 'git push' origin",
    "assignment-prefix": "GIT_TRACE=1 git push",
    "nice": "nice git push",
    "nice-adjustment": "nice -n 5 git push",
    "nice-old-style": "nice -10 git push",
    "nohup": "nohup git push",
    "timeout": "timeout 10 git push",
    "timeout-options": "timeout -s KILL --kill-after=5 10 git push",
    "stdbuf": "stdbuf -o L -eL git push",
    "ionice": "ionice -c 3 git push",
    "setsid": "setsid -w git push",
    "chrt": "chrt -f 10 git push",
    "taskset": "taskset -c 0,1 git push",
    "sudo": "sudo git push",
    "sudo-options": "sudo -E -u root -iu root --preserve-env=PATH git push",
    "sudo-assignment": "sudo FOO=1 git push",
    "doas": "doas -u root git push",
    "xargs": "xargs git push",
    "xargs-options": "printf x | xargs -0 -n 1 -I{} git push {}",
    "find-exec": "find . -name x -exec git push \\;",
    "find-execdir-plus": "find . -execdir git push {} +",
    "find-ok-quoted-end": "find . -ok git push ';'",
    "sh-c": "sh -c 'git push'",
    "bash-lc": "bash -lc 'git push origin main'",
    "zsh-c-with-option": "zsh -o errexit -c 'git push'",
    "bash-here-string": 'bash <<< "git push"',
    "sh-heredoc": "sh <<EOF\necho start\ngit push\nEOF",
    "bash-heredoc-dash-quoted": "bash <<-'END'\n\tgit push\n\tEND",
    "bash-s-heredoc": "bash -s arg <<EOF\ngit push\nEOF",
    "absolute-path": "/usr/bin/git push",
    "relative-path": "./bin/git push",
    "command": "command git push",
    "command-p": "command -p git push",
    "exec": "exec git push",
    "exec-a": "exec -a name git push",
    "builtin": "builtin git push",
    "time": "time git push",
    "time-p": "time -p git push",
    "eval": "eval 'git push'",
    "eval-words": "eval git push",
    "wrappers-around-wrappers": "sudo -u root env -i A=1 nice -n 5 timeout 10 /usr/bin/git push",
    "shell-in-sudo": "sudo sh -c 'nohup git push'",
    "in-compound": "true && sudo git push; echo done",
    "in-substitution": "echo $(env -i git push)",
    "in-pipe": "ls | xargs git push",
}


@pytest.mark.parametrize("command", WRAPPED_PUSH.values(), ids=WRAPPED_PUSH.keys())
def test_a_deny_rule_sees_through_the_wrapper(command: str) -> None:
    got = _decide(command, ("Bash(git push:*)",))
    assert got.verdict == "deny", got.reason
    assert got.reason.endswith("It matches the deny rule Bash(git push:*).")


NOT_RUN: dict[str, str] = {
    "other-subcommand": "sudo git status",
    "named-as-text": "echo git push",
    "command-v-looks-it-up": "command -v git push",
    "sudo-list": "sudo -l git push",
    "heredoc-of-cat-is-text": "cat <<EOF\ngit push\nEOF",
    "here-string-of-grep-is-text": 'grep push <<< "git push"',
    "script-file-not-read": "bash deploy.sh <<< 'git push'",
    "find-without-action": "find . -name 'git push'",
    "timeout-duration-only": "timeout 10",
}


@pytest.mark.parametrize("command", NOT_RUN.values(), ids=NOT_RUN.keys())
def test_a_deny_rule_does_not_reach_what_is_not_run(command: str) -> None:
    assert _decide(command, ("Bash(git push:*)",)).verdict == "none"


def test_a_deny_rule_for_the_wrapper_itself_still_holds() -> None:
    assert _decide("ls && sudo git status", ("Bash(sudo:*)",)).verdict == "deny"
    assert _decide("find . -exec rm {} +", ("Bash(find:*)",)).verdict == "deny"


# allow rules stay Claude Code's, matched as written: the hook never answers `allow` for Bash, so no
# wrapper, path or shell around an allowed command is let through by ittybus.
ALLOW_NO_WIDER: dict[str, tuple[str, str]] = {
    "allow-status-not-push": ("env git push", "deny"),
    "allow-status-not-sudo-push": ("sudo git push", "deny"),
    "sudo-around-allowed-not-allowed": ("sudo git status", "none"),
    "env-around-allowed-not-allowed": ("env -i git status", "none"),
    "path-named-like-allowed-not-allowed": ("./git status", "none"),
    "shell-around-allowed-not-allowed": ("bash -c 'git status'", "none"),
    "xargs-around-allowed-not-allowed": ("xargs git status", "none"),
    "allowed-itself": ("git status --short", "none"),
}


@pytest.mark.parametrize(("command", "verdict"), ALLOW_NO_WIDER.values(), ids=ALLOW_NO_WIDER.keys())
def test_allow_rules_grow_no_wider(command: str, verdict: str) -> None:
    got = _decide(command, ("Bash(git push:*)",), allow=("Bash(git status:*)",))
    assert got.verdict == verdict, got.reason


RUNS: dict[str, tuple[list[str], list[list[str]]]] = {
    "not-a-wrapper": (["git", "push"], []),
    "empty": ([], []),
    "path": (["/usr/bin/git", "push"], [["git", "push"]]),
    "trailing-slash-path": (["dir/", "x"], []),
    "nested": (
        ["sudo", "-u", "x", "nice", "/usr/bin/git", "push"],
        [["nice", "/usr/bin/git", "push"], ["/usr/bin/git", "push"], ["git", "push"]],
    ),
    "double-dash": (["env", "--", "git", "push"], [["git", "push"]]),
    "wrapper-alone": (["nohup"], []),
    "find-two-actions": (
        ["find", ".", "-exec", "a", "{}", ";", "-execdir", "b", "+"],
        [["a", "{}"], ["b"]],
    ),
    "chrt-pid-mode": (["chrt", "-p", "5", "1234"], []),
    "env-split-string-bad-quote": (["env", "-S", "git 'push"], [["git", "'push"]]),
    "too-deep-is-cut": (["nice"] * 40 + ["git"], [["nice"] * n + ["git"] for n in range(39, 23, -1)]),
}


@pytest.mark.parametrize(("words", "expected"), RUNS.values(), ids=RUNS.keys())
def test_commands_run_by(words: list[str], expected: list[list[str]]) -> None:
    assert commands_run_by(words) == expected


SCRIPTS: dict[str, tuple[list[str], list[tuple[str, str]], str | None]] = {
    "c": (["sh", "-c", "x y"], [], "x y"),
    "c-in-cluster": (["bash", "-ec", "x"], [], "x"),
    "c-without-string": (["bash", "-c"], [], None),
    "here-string": (["bash"], [("<<<", "x")], "x"),
    "stdin-dash": (["bash", "-"], [("<<", "x\ny")], "x\ny"),
    "script-file": (["bash", "run.sh"], [("<<<", "x")], None),
    "rcfile-value-is-no-script": (["bash", "--rcfile", "rc", "-c", "x"], [], "x"),
    "no-stdin": (["sh"], [(">", "out")], None),
    "eval": (["eval", "a", "b"], [], "a b"),
    "eval-empty": (["eval"], [], None),
    "not-a-shell": (["python3", "-c", "x"], [], None),
    "path-to-shell": (["/bin/sh", "-c", "x"], [], "x"),
}


@pytest.mark.parametrize(("words", "redirects", "expected"), SCRIPTS.values(), ids=SCRIPTS.keys())
def test_shell_script(words: list[str], redirects: list[tuple[str, str]], expected: str | None) -> None:
    assert shell_script(words, redirects) == expected


WRAPPED_REACH: dict[str, tuple[str, str]] = {
    "sudo-touch": ("sudo touch /work/proj/x", "write to main repo: /work/proj/x"),
    "env-rm": ("env -i rm /work/proj/README.md", "write to main repo: /work/proj/README.md"),
    "nice-git-c": ("nice git -C /work/proj commit -m x", "run git in main repo: /work/proj"),
    "xargs-rm": ("ls | xargs rm /work/proj/a", "write to main repo: /work/proj/a"),
    "find-exec-rm": ("find . -exec rm /work/proj/a \\;", "write to main repo: /work/proj/a"),
    "timeout-cd": ("timeout 5 cd /work/proj", "cd into main repo: /work/proj"),
    "here-string-touch": ("bash <<< 'touch /work/proj/x'", "write to main repo: /work/proj/x"),
    "heredoc-touch": ("sh <<EOF\ntouch /work/proj/x\nEOF", "write to main repo: /work/proj/x"),
    "command-cat-secret": ("command cat ~/.ssh/id_rsa", "read a secret: /home/dev/.ssh/id_rsa"),
}


@pytest.mark.parametrize(("command", "reason"), WRAPPED_REACH.values(), ids=WRAPPED_REACH.keys())
def test_path_checks_see_through_the_wrapper(command: str, reason: str) -> None:
    got = _decide(command, ())
    assert got.verdict == "deny"
    assert got.reason.startswith(f"Path violation: Bash tried to {reason}."), got.reason
