"""Path isolation against bad input: symlinks (loops, links out of the worktree, `..` inside links),
relative paths from another folder, unparsable parameters, MCP path arguments, and Bash lines that reach
out through redirections, `git -C`, variables, `$()`, backticks, `eval`, `sh -c` and heredocs.

The symlink cases build a real repository layout in a temporary folder: resolving links needs them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from worker.permissions.bash_reach import Reach, reaches
from worker.permissions.policy import MANDATORY_DENY, Permissions, decide, mandatory_allow, sandbox_writable

PERMS = Permissions(mandatory_allow(), MANDATORY_DENY)


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """root/, root/.ib/agents/{a1,b2}/repo, home/ — real folders, so links can be made between them."""
    root = tmp_path / "proj"
    worktree = root / ".ib" / "agents" / "a1" / "repo"
    other = root / ".ib" / "agents" / "b2" / "repo"
    home = tmp_path / "home"
    for folder in (worktree / "src", other, home / ".ssh"):
        folder.mkdir(parents=True)
    (root / "README.md").write_text("main\n")
    (other / "b.py").write_text("b2\n")
    return {"root": root, "worktree": worktree, "other": other, "home": home}


def _decide(layout: dict[str, Path], tool: str, tool_input: dict[str, object]) -> str:
    got = decide(
        tool,
        tool_input,
        worktree=str(layout["worktree"]),
        root=str(layout["root"]),
        permissions=PERMS,
        home=str(layout["home"]),
    )
    return got.verdict + (": " + got.reason if got.verdict == "deny" else "")


def test_a_link_in_the_worktree_to_the_main_repository_is_followed(layout: dict[str, Path]) -> None:
    (layout["worktree"] / "up").symlink_to(layout["root"])
    got = _decide(layout, "Write", {"file_path": str(layout["worktree"] / "up" / "evil.txt"), "content": "x"})
    assert got.startswith(f"deny: Path violation: Write tried to access main repo: {layout['root']}/evil.txt")


def test_a_link_to_another_agent_through_dotdot_inside_the_link(layout: dict[str, Path]) -> None:
    (layout["worktree"] / "src" / "sneak").symlink_to("../../../b2/repo")
    got = _decide(layout, "Read", {"file_path": "src/sneak/b.py"})
    assert got.startswith(
        f"deny: Path violation: Read tried to access agent b2's folder: {layout['other']}/b.py"
    )


def test_a_link_that_stays_inside_the_worktree_is_fine(layout: dict[str, Path]) -> None:
    (layout["worktree"] / "alias").symlink_to(layout["worktree"] / "src")
    assert (
        _decide(layout, "Edit", {"file_path": "alias/a.py", "old_string": "a", "new_string": "b"}) == "allow"
    )


def test_a_symlink_loop_is_judged_where_it_is_written(layout: dict[str, Path]) -> None:
    (layout["worktree"] / "loop1").symlink_to(layout["worktree"] / "loop2")
    (layout["worktree"] / "loop2").symlink_to(layout["worktree"] / "loop1")
    assert _decide(layout, "Read", {"file_path": "loop1/x"}) == "allow"
    (layout["root"] / "l1").symlink_to(layout["root"] / "l2")
    (layout["root"] / "l2").symlink_to(layout["root"] / "l1")
    assert _decide(layout, "Read", {"file_path": str(layout["root"] / "l1")}).startswith(
        "deny: Path violation"
    )


def test_the_worktree_itself_reached_through_a_link_is_the_worktree(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    alias = tmp_path / "wt-alias"
    alias.symlink_to(layout["worktree"])
    got = decide(
        "Read",
        {"file_path": str(layout["worktree"] / "src" / "a.py")},
        worktree=str(alias),
        root=str(layout["root"]),
        permissions=PERMS,
        home=str(layout["home"]),
    )
    assert got.verdict == "allow"


def test_relative_paths_are_taken_from_the_worktree_whatever_the_hooks_cwd(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(layout["root"])
    assert _decide(layout, "Read", {"file_path": "README.md"}) == "allow"  # the worktree's README.md
    assert _decide(layout, "Read", {"file_path": "../../../../README.md"}).startswith("deny")


def test_a_link_made_after_the_check_is_the_sandboxs_job(layout: dict[str, Path]) -> None:
    """Time of check: a path that is a plain file now passes; the link swapped in later is not seen
    here. The sandbox (bubblewrap) is what holds then; this pins down what the hook can and cannot do."""
    target = layout["worktree"] / "later"
    assert _decide(layout, "Write", {"file_path": str(target), "content": "x"}) == "allow"
    target.symlink_to(layout["root"] / "README.md")
    assert _decide(layout, "Write", {"file_path": str(target), "content": "x"}).startswith("deny")


UNPARSABLE: dict[str, tuple[str, dict[str, object], str]] = {
    "file-path-list": (
        "Write",
        {"file_path": ["/etc/x"], "content": "x"},
        "file_path is a list, not a string",
    ),
    "file-path-number": ("Read", {"file_path": 7}, "file_path is a int, not a string"),
    "file-path-missing": ("Edit", {"old_string": "a", "new_string": "b"}, "file_path is missing"),
    "file-path-empty": ("Read", {"file_path": ""}, "file_path is empty or holds a NUL character"),
    "file-path-nul": ("Read", {"file_path": "a\0/etc/passwd"}, "file_path is empty or holds a NUL character"),
    "notebook-object": ("NotebookEdit", {"notebook_path": {"p": 1}}, "notebook_path is a dict, not a string"),
    "glob-pattern-number": ("Glob", {"pattern": 3}, "pattern is a int, not a string"),
    "grep-path-null": ("Grep", {"pattern": "x", "path": None}, "path is a NoneType, not a string"),
    "bash-command-list": ("Bash", {"command": ["rm", "-rf", "/"]}, "command is not a string"),
}


@pytest.mark.parametrize(("tool", "tool_input", "why"), UNPARSABLE.values(), ids=UNPARSABLE.keys())
def test_unparsable_input_is_denied(
    layout: dict[str, Path], tool: str, tool_input: dict[str, object], why: str
) -> None:
    got = _decide(layout, tool, tool_input)
    assert got.startswith("deny: Permission denied: ") and why in got


MCP: dict[str, tuple[dict[str, object], str]] = {
    "write-file-etc": ({"path": "/etc/x", "content": "x"}, "deny"),
    "absolute-value-any-key": ({"query": "x", "where": "/etc/passwd"}, "deny"),
    "nested-destination": ({"ops": [{"destination": "../../b2/repo/x"}]}, "deny"),
    "filename-key": ({"filename": "/etc/hosts"}, "deny"),
    "relative-in-worktree": ({"path": "src/a.py"}, "allow"),
    "no-paths": ({"query": "select 1", "limit": 3}, "none"),
    "path-key-number": ({"file_count": 3, "path": "src"}, "allow"),
    "url-is-not-a-path": ({"url": "https://example.com/a/b"}, "none"),
}


@pytest.mark.parametrize(("tool_input", "verdict"), MCP.values(), ids=MCP.keys())
def test_mcp_path_arguments(layout: dict[str, Path], tool_input: dict[str, object], verdict: str) -> None:
    assert _decide(layout, "mcp__fs__write_file", tool_input).partition(":")[0] == verdict


BASH: dict[str, tuple[str, str]] = {
    "redirect-absolute-main": ("echo x > {root}/evil.txt", "write to main repo"),
    "redirect-relative-escape": ("echo hi > ../../../escape3.txt", "write to main repo"),
    "redirect-append-other-agent": ("echo x >> {other}/b.py", "write to agent b2's folder"),
    "redirect-ib-root-variable": ('echo x > "$IB_ROOT/evil.txt"', "write to main repo"),
    "redirect-etc": ("echo x > /etc/x", "write to a path outside the worktree"),
    "redirect-unknown-variable": ("echo x > $OUT/f", "cannot tell"),
    "rm-other-agent": ("rm -rf {other}/b.py", "write to agent b2's folder"),
    "touch-etc": ("touch /etc/x", "write to a path outside the worktree"),
    "cp-into-main": ("cp src/a.py {root}/", "write to main repo"),
    "tee-in-pipe": ("echo x | tee {root}/t", "write to main repo"),
    "sed-in-place-main": ("sed -i s/a/b/ {root}/README.md", "write to main repo"),
    "dd-of": ("dd if=/dev/zero of={root}/z bs=1 count=1", "write to main repo"),
    "git-C-root": ("git -C {root} commit -m x", "run git in main repo"),
    "git-dir": ("git --git-dir={root}/.git log", "run git in main repo"),
    "git-work-tree-other": ("git --work-tree {other} status", "run git in agent b2's folder"),
    "cd-via-assigned-variable": ("D={root}; cd $D && ls", "cd into main repo"),
    "cd-via-unknown-variable": ("cd $SOMEWHERE", "cannot tell"),
    "substitution": ('x="$(echo y > {root}/s)"', "write to main repo"),
    "backticks": ("echo `rm {other}/b.py`", "write to agent b2's folder"),
    "eval": ("eval 'echo x > {root}/e'", "write to main repo"),
    "sh-c": ("sh -c 'touch {root}/c'", "write to main repo"),
    "bash-c-nested": ("bash -c \"sh -c 'rm {other}/b.py'\"", "write to agent b2's folder"),
    "heredoc-target": ("cat <<EOF > {root}/h\nline\nEOF", "write to main repo"),
    "cat-ssh-key": ("cat ~/.ssh/id_rsa", "read a secret"),
    "cat-home-variable": ("cat $HOME/.ssh/id_rsa", "read a secret"),
    "read-other-agent": ("grep -r x {other}", "read agent b2's folder"),
    "read-redirect-other-agent": ("wc -l < {other}/b.py", "read agent b2's folder"),
    "read-dotenv": ("cat {root}/.env", "read a secret"),
    "read-own-settings": ("cat ../settings.json", "read a secret"),
    "proc-environ": ("cat /proc/1/environ", "read a secret"),
}


@pytest.mark.parametrize(("command", "why"), BASH.values(), ids=BASH.keys())
def test_bash_lines_that_reach_out_are_denied(layout: dict[str, Path], command: str, why: str) -> None:
    line = command.format(root=layout["root"], other=layout["other"])
    got = _decide(layout, "Bash", {"command": line})
    assert got.startswith("deny: Path violation: Bash ") and why in got, got


BASH_OK: dict[str, str] = {
    "tests": "python -m pytest -q tests 2>&1 | tail -5",
    "redirect-in-worktree": "echo x > notes.txt && cat notes.txt >> src/log 2>/dev/null",
    "redirect-tmp": "make > /tmp/build.log 2>&1",
    "dup-fd": "echo err >&2",
    "git-in-worktree": "git add -A && git commit -m 'x' && git -C src status",
    "pip-into-worktree": "python -m venv .venv && .venv/bin/pip install -e . > /dev/null",
    "heredoc-body-is-text": "cat <<'EOF' > notes.md\nrm -rf /etc\ncd /\nEOF",
    "read-main-repo-file": "cat {root}/README.md",
    "read-system": "ls /usr/lib && head /etc/os-release",
    "cd-tmp-variable-assigned": "T=/tmp/work; mkdir -p $T && cd $T",
    "cd-substitution-left-to-sandbox": 'cd "$(git rev-parse --show-toplevel)"',
}


@pytest.mark.parametrize("command", BASH_OK.values(), ids=BASH_OK.keys())
def test_normal_work_passes(layout: dict[str, Path], command: str) -> None:
    assert _decide(layout, "Bash", {"command": command.format(root=layout["root"])}) == "none"


def test_reaches_lists_each_kind() -> None:
    got = reaches("cd /w/src && git -C /x log > out 2>&1 < in", cwd="/w", home="/h", variables={})
    assert got == [
        Reach("cd", "/w/src", "/w/src"),
        Reach("write", "/w/src/out", "out"),
        Reach("read", "/w/src/in", "in"),
        Reach("git", "/x", "/x"),
    ]


def test_no_file_is_touched_by_checking(layout: dict[str, Path]) -> None:
    before = sorted(os.listdir(layout["root"]))
    _decide(layout, "Bash", {"command": f"touch {layout['root']}/made"})
    assert sorted(os.listdir(layout["root"])) == before


# With the sandbox on, the hook allows Bash writes exactly where the sandbox does (the agent's settings'
# allowWrite and the sandbox's $TMPDIR): the person is never asked to approve a write that then fails
# with "Read-only file system" (issue 33).
SANDBOXED_WRITES = {
    "elsewhere-in-tmp": ("echo hi > /tmp/elsewhere.txt", "deny"),
    "tmp-itself-by-tee": ("echo hi | tee /tmp/x.log", "deny"),
    "sandbox-tmpdir-by-name": ("echo hi > /tmp/claude-0/x.txt", "none"),
    "sandbox-tmpdir-by-variable": ("echo hi > $TMPDIR/x.txt", "none"),
    "worktree": ("echo hi > notes.txt", "none"),
    "claude-home": ("echo hi > ~/.claude/x.md", "deny"),
    "dev-null": ("echo hi > /dev/null", "none"),
}


@pytest.mark.parametrize(("command", "verdict"), SANDBOXED_WRITES.values(), ids=SANDBOXED_WRITES.keys())
def test_bash_writes_are_allowed_where_the_sandbox_allows_them(
    layout: dict[str, Path], command: str, verdict: str
) -> None:
    cache = layout["root"] / ".ib" / "agents" / "a1" / "cache"
    sandboxed = Permissions(mandatory_allow(), MANDATORY_DENY, sandbox_writable([str(cache)], 0))
    got = decide(
        "Bash",
        {"command": command},
        worktree=str(layout["worktree"]),
        root=str(layout["root"]),
        permissions=sandboxed,
        home=str(layout["home"]),
    )
    assert got.verdict == verdict, got.reason
    if verdict == "deny":
        assert got.reason.startswith("Path violation: Bash tried to write to ")
        assert got.reason.endswith(
            f"write only in the worktree {layout['worktree']} and $TMPDIR (/tmp/claude-0)."
        )


def test_without_a_sandbox_the_hook_keeps_tmp_shared(layout: dict[str, Path]) -> None:
    assert _decide(layout, "Bash", {"command": "echo hi > /tmp/elsewhere.txt"}) == "none"
