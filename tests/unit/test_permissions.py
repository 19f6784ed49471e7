"""Agent permissions: the mandatory lists and their merge with config, Claude Code's rule syntax, the
path isolation of an agent (file tools and `cd`), and the primary session's guard."""

from __future__ import annotations

import pytest

from worker.errors import PermissionsConfigError, WorkerError
from worker.permissions.paths import normalize
from worker.permissions.policy import (
    MANDATORY_DENY,
    Decision,
    Permissions,
    decide,
    decide_primary,
    describe,
    mandatory_allow,
    merge_permissions,
)
from worker.permissions.rules import tool_matches
from worker.permissions.shell_words import cd_targets, simple_commands

ROOT = "/work/proj"
AGENTS = ROOT + "/.ib/agents"
WORKTREE = AGENTS + "/a1/repo"
HOME = "/home/dev"
PERMS = merge_permissions("worker", None, None, ib_path="/opt/venv/bin/ib")
HINT = f"An agent works only in its worktree {WORKTREE} (and ~/.claude, /tmp)."


# --- the lists -----------------------------------------------------------------------------------

SEED_ALLOW = [
    "Bash(ib:*)",
    "Bash(git status:*)",
    "Bash(git add:*)",
    "Bash(git commit:*)",
    "Bash(git diff:*)",
    "Bash(git show:*)",
    "Bash(git log:*)",
    "Bash(git ls-files:*)",
    "Bash(git grep:*)",
    "Bash(git rm:*)",
    "Bash(git merge:*)",
    "Bash(git rebase:*)",
    "Bash(pwd:*)",
    "Bash(ls:*)",
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "LS",
    "TodoWrite",
    "Task",
    "TaskOutput",
    "KillShell",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "AskUserQuestion",
]


def test_mandatory_lists_are_the_seeds() -> None:
    """The seed's lists without its blanket read commands (cat, head, tail, grep read anything)."""
    assert list(mandatory_allow()) == SEED_ALLOW
    assert mandatory_allow("/opt/venv/bin/ib")[:2] == ("Bash(ib:*)", "Bash(/opt/venv/bin/ib:*)")
    assert MANDATORY_DENY == ("EnterPlanMode",)


def _cfg(role: str, allow: list[str] | None = None, deny: list[str] | None = None) -> dict[str, object]:
    lists: dict[str, object] = {}
    if allow is not None:
        lists["allow"] = allow
    if deny is not None:
        lists["deny"] = deny
    return {"permissions": {role: lists}}


MERGES: dict[str, tuple[str, dict[str, object] | None, dict[str, object] | None, list[str], list[str]]] = {
    "no-config": ("worker", None, None, [], []),
    "project-only": (
        "worker",
        _cfg("worker", ["Bash(npm test)"], ["WebFetch"]),
        None,
        ["Bash(npm test)"],
        ["WebFetch"],
    ),
    "user-only": ("manager", None, _cfg("manager", ["Bash(make:*)"]), ["Bash(make:*)"], []),
    "project-wins-per-key": (
        "worker",
        _cfg("worker", allow=["Bash(p:*)"]),
        _cfg("worker", ["Bash(u:*)"], ["Bash(rm:*)"]),
        ["Bash(p:*)"],
        ["Bash(rm:*)"],
    ),
    "empty-project-list-still-wins": (
        "worker",
        _cfg("worker", allow=[]),
        _cfg("worker", ["Bash(u:*)"]),
        [],
        [],
    ),
    "other-role-ignored": ("worker", _cfg("manager", ["Bash(m:*)"]), None, [], []),
    "duplicates-once": (
        "worker",
        _cfg("worker", ["Read", " Bash(x) ", ""], ["EnterPlanMode"]),
        None,
        ["Bash(x)"],
        [],
    ),
}


@pytest.mark.parametrize(
    ("role", "project", "user", "extra_allow", "extra_deny"), MERGES.values(), ids=MERGES.keys()
)
def test_merge_permissions(
    role: str,
    project: dict[str, object] | None,
    user: dict[str, object] | None,
    extra_allow: list[str],
    extra_deny: list[str],
) -> None:
    merged = merge_permissions(role, project, user, ib_path="/opt/venv/bin/ib")
    assert merged == Permissions(
        allow=(*mandatory_allow("/opt/venv/bin/ib"), *extra_allow), deny=(*MANDATORY_DENY, *extra_deny)
    )


BAD_CONFIGS: dict[str, tuple[str, dict[str, object], str]] = {
    "unknown-role": ("boss", {}, "unknown agent role 'boss'"),
    "permissions-not-object": ("worker", {"permissions": ["Read"]}, "permissions.worker.allow"),
    "role-not-object": ("worker", {"permissions": {"worker": "Read"}}, "permissions.worker.allow"),
    "allow-not-list": ("worker", {"permissions": {"worker": {"allow": "Read"}}}, "permissions.worker.allow"),
    "deny-has-number": (
        "worker",
        {"permissions": {"worker": {"deny": ["Read", 3]}}},
        "permissions.worker.deny",
    ),
}


@pytest.mark.parametrize(("role", "project", "message"), BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_merge_permissions_rejects_bad_shapes(role: str, project: dict[str, object], message: str) -> None:
    with pytest.raises(PermissionsConfigError, match=message) as caught:
        merge_permissions(role, project, None)
    assert isinstance(caught.value, WorkerError)


def test_bad_user_config_names_the_user_file() -> None:
    with pytest.raises(PermissionsConfigError, match=r"user config \(~/.ib/config.json\)"):
        merge_permissions("worker", None, {"permissions": {"worker": {"allow": {}}}})


# --- rule syntax ---------------------------------------------------------------------------------

MATCHES: dict[str, tuple[str, str, dict[str, object], bool]] = {
    "bare-name": ("Read", "Read", {"file_path": "/x"}, True),
    "bare-name-other-tool": ("Read", "Write", {"file_path": "/x"}, False),
    "empty-spec": ("Bash()", "Bash", {"command": "rm -rf /"}, True),
    "star-spec": ("Bash(*)", "Bash", {"command": "anything"}, True),
    "legacy-prefix": ("Bash(git status:*)", "Bash", {"command": "git status --short"}, True),
    "legacy-prefix-bare": ("Bash(git status:*)", "Bash", {"command": "git status"}, True),
    "legacy-prefix-word-boundary": ("Bash(ls:*)", "Bash", {"command": "lsof -i"}, False),
    "legacy-prefix-other": ("Bash(git status:*)", "Bash", {"command": "git push"}, False),
    "space-star-prefix": ("Bash(npm run lint *)", "Bash", {"command": "npm run lint --fix"}, True),
    "exact": ("Bash(npm test)", "Bash", {"command": "npm test"}, True),
    "exact-with-blanks": ("Bash(npm test)", "Bash", {"command": "  npm test\n"}, True),
    "exact-longer": ("Bash(npm test)", "Bash", {"command": "npm test -- -x"}, False),
    "inner-star": ("Bash(git * main)", "Bash", {"command": "git push origin main"}, True),
    "bash-no-command": ("Bash(ls:*)", "Bash", {}, False),
    "absolute-ib": ("Bash(/opt/venv/bin/ib:*)", "Bash", {"command": "/opt/venv/bin/ib send x hi"}, True),
    "webfetch-domain": (
        "WebFetch(domain:example.com)",
        "WebFetch",
        {"url": "https://api.example.com/a"},
        True,
    ),
    "webfetch-other-domain": (
        "WebFetch(domain:example.com)",
        "WebFetch",
        {"url": "https://evil-example.com"},
        False,
    ),
    "path-glob": ("Read(/etc/**)", "Read", {"file_path": "/etc/ssh/sshd_config"}, True),
    "path-single-star-one-level": ("Edit(/src/*.py)", "Edit", {"file_path": "/src/a/b.py"}, False),
    "mcp-server": ("mcp__github", "mcp__github__get_issue", {}, True),
    "mcp-server-star": ("mcp__github__*", "mcp__github__get_issue", {}, True),
    "mcp-other-server": ("mcp__github", "mcp__gitlab__get_issue", {}, False),
    "garbage-rule": ("Bash(", "Bash", {"command": "ls"}, False),
}


@pytest.mark.parametrize(("rule", "tool", "tool_input", "expected"), MATCHES.values(), ids=MATCHES.keys())
def test_tool_matches(rule: str, tool: str, tool_input: dict[str, object], expected: bool) -> None:
    assert tool_matches(rule, tool, tool_input) is expected


# --- shell parsing -------------------------------------------------------------------------------

COMMANDS: dict[str, tuple[str, list[list[str]]]] = {
    "plain": ("git status", [["git", "status"]]),
    "and-or-pipe": ("cd a && ls || echo x | cat", [["cd", "a"], ["ls"], ["echo", "x"], ["cat"]]),
    "quotes": ("cd 'my dir'; echo \"a b\"", [["cd", "my dir"], ["echo", "a b"]]),
    "newlines": ("cd a\nls", [["cd", "a"], ["ls"]]),
    "keywords-and-assignments": (
        "if true; then X=1 builtin cd /z; fi",
        [["true"], ["builtin", "cd", "/z"], ["cd", "/z"], ["fi"]],
    ),
    "subshell": ("(cd /q)", [["cd", "/q"]]),
    "quoted-substitution-runs-first": (
        'echo "$(cd /q && pwd)"',
        [["cd", "/q"], ["pwd"], ["echo", "$(cd /q && pwd)"]],
    ),
    "backticks": ("echo `cd /q`", [["echo", "$"], ["cd", "/q"]]),
    "sh-c": ("bash -c 'cd /q'", [["bash", "-c", "cd /q"], ["cd", "/q"]]),
    "unbalanced-quote": ("cd /q 'oops", [["cd", "/q", "'oops"]]),
}


@pytest.mark.parametrize(("command", "expected"), COMMANDS.values(), ids=COMMANDS.keys())
def test_simple_commands(command: str, expected: list[list[str]]) -> None:
    assert simple_commands(command) == expected


CD: dict[str, tuple[str, list[str]]] = {
    "absolute": ("cd /srv/x", ["/srv/x"]),
    "relative-follows-along": ("cd src && cd ../..", [WORKTREE + "/src", AGENTS + "/a1"]),
    "bare-cd-is-home": ("cd", [HOME]),
    "tilde": ("cd ~/code", [HOME + "/code"]),
    "options": ("cd -P -- /srv", ["/srv"]),
    "dash-unknown": ("cd -", []),
    "pushd": ("pushd /srv >/dev/null", ["/srv"]),
    "pushd-rotate-unknown": ("pushd +1", []),
    "known-variables": ("cd $IB_ROOT && cd ${HOME}/x && cd $PWD/..", [ROOT, HOME + "/x", HOME]),
    "unknown-variable": ("cd $SOMEWHERE", []),
    "not-cd": ("echo cd /srv", []),
}


@pytest.mark.parametrize(("command", "expected"), CD.values(), ids=CD.keys())
def test_cd_targets(command: str, expected: list[str]) -> None:
    assert cd_targets(command, cwd=WORKTREE, home=HOME, variables={"IB_ROOT": ROOT}) == expected


NORMALIZE: dict[str, tuple[str, str]] = {
    "absolute": ("/a/b", "/a/b"),
    "relative": ("x/y", WORKTREE + "/x/y"),
    "dot-dot": ("../../b2/repo/x", AGENTS + "/b2/repo/x"),
    "above-root": ("/../../etc", "/etc"),
    "double-slash": ("//etc//passwd", "/etc/passwd"),
    "tilde": ("~/.claude/x", HOME + "/.claude/x"),
    "tilde-user-is-relative": ("~other/x", WORKTREE + "/~other/x"),
}


@pytest.mark.parametrize(("path", "expected"), NORMALIZE.values(), ids=NORMALIZE.keys())
def test_normalize(path: str, expected: str) -> None:
    assert normalize(path, base=WORKTREE, home=HOME) == expected


# --- the agent's decisions -----------------------------------------------------------------------


def _main(tool: str, path: str) -> str:
    return f"Path violation: {tool} tried to access main repo: {path}. {HINT}"


def _other(tool: str, path: str, agent: str = "agent b2's") -> str:
    return f"Path violation: {tool} tried to access {agent} folder: {path}. {HINT}"


def _cd(into: str, path: str) -> str:
    return f"Path violation: Bash tried to cd into {into}: {path}. {HINT}"


ALLOWED = "inside the worktree, ~/.claude or /tmp"
DECISIONS: dict[str, tuple[str, dict[str, object], Decision]] = {
    "allow-read-in-worktree": ("Read", {"file_path": WORKTREE + "/src/a.py"}, Decision("allow", ALLOWED)),
    "allow-read-worktree-itself": ("LS", {"path": WORKTREE}, Decision("allow", ALLOWED)),
    "allow-relative-path": ("Edit", {"file_path": "src/a.py", "old_string": "a"}, Decision("allow", ALLOWED)),
    "allow-tmp": ("Write", {"file_path": "/tmp/scratch.txt", "content": "x"}, Decision("allow", ALLOWED)),
    "allow-claude-home": ("Read", {"file_path": "~/.claude/settings.json"}, Decision("allow", ALLOWED)),
    "allow-glob-without-path": ("Glob", {"pattern": "**/*.py"}, Decision("allow", ALLOWED)),
    "allow-grep-in-worktree": (
        "Grep",
        {"pattern": "TODO", "path": WORKTREE + "/src"},
        Decision("allow", ALLOWED),
    ),
    "deny-read-main-repo": (
        "Read",
        {"file_path": ROOT + "/README.md"},
        Decision("deny", _main("Read", ROOT + "/README.md")),
    ),
    "deny-write-main-repo": (
        "Write",
        {"file_path": ROOT + "/x", "content": "x"},
        Decision("deny", _main("Write", ROOT + "/x")),
    ),
    "deny-read-other-agent": (
        "Read",
        {"file_path": AGENTS + "/b2/repo/a.py"},
        Decision("deny", _other("Read", AGENTS + "/b2/repo/a.py")),
    ),
    "deny-read-other-agent-data": (
        "Read",
        {"file_path": AGENTS + "/b2/prompt.txt"},
        Decision("deny", _other("Read", AGENTS + "/b2/prompt.txt")),
    ),
    "deny-own-agent-folder": (
        "Read",
        {"file_path": AGENTS + "/a1/settings.json"},
        Decision("deny", _main("Read", AGENTS + "/a1/settings.json")),
    ),
    "deny-dotdot-escape": (
        "Read",
        {"file_path": WORKTREE + "/../../../../x.py"},
        Decision("deny", _main("Read", ROOT + "/x.py")),
    ),
    "deny-relative-dotdot-escape": (
        "Edit",
        {"file_path": "../../b2/repo/a.py"},
        Decision("deny", _other("Edit", AGENTS + "/b2/repo/a.py")),
    ),
    "deny-worktree-prefix-lookalike": (
        "Read",
        {"file_path": WORKTREE + "2/a.py"},
        Decision("deny", _main("Read", WORKTREE + "2/a.py")),
    ),
    "deny-outside": (
        "Read",
        {"file_path": "/etc/passwd"},
        Decision("deny", f"Permission denied: Read (file_path: /etc/passwd). {HINT}"),
    ),
    "deny-home-outside-claude": (
        "Read",
        {"file_path": "~/.ssh/id_rsa"},
        Decision("deny", f"Permission denied: Read (file_path: ~/.ssh/id_rsa). {HINT}"),
    ),
    "deny-tmp-lookalike": (
        "Read",
        {"file_path": "/tmpfoo/x"},
        Decision("deny", f"Permission denied: Read (file_path: /tmpfoo/x). {HINT}"),
    ),
    "deny-notebook-main-repo": (
        "NotebookEdit",
        {"notebook_path": ROOT + "/n.ipynb", "new_source": "x"},
        Decision("deny", _main("NotebookEdit", ROOT + "/n.ipynb")),
    ),
    "deny-grep-main-repo": ("Grep", {"pattern": "x", "path": ROOT}, Decision("deny", _main("Grep", ROOT))),
    "deny-glob-pattern-escape": (
        "Glob",
        {"pattern": "../../b2/**/*.py"},
        Decision("deny", _other("Glob", AGENTS + "/b2/**/*.py")),
    ),
    "deny-glob-absolute-main": (
        "Glob",
        {"pattern": ROOT + "/**/*.py"},
        Decision("deny", _main("Glob", ROOT + "/**/*.py")),
    ),
    "deny-glob-star-agents": (
        "Glob",
        {"pattern": AGENTS + "/*/repo/*.py"},
        Decision("deny", _other("Glob", AGENTS + "/*/repo/*.py", "another agent's")),
    ),
    "deny-multiedit-main": (
        "MultiEdit",
        {"file_path": ROOT + "/a.py", "edits": []},
        Decision("deny", _main("MultiEdit", ROOT + "/a.py")),
    ),
    "deny-cd-main-repo": (
        "Bash",
        {"command": f"cd {ROOT} && git status"},
        Decision("deny", _cd("main repo", ROOT)),
    ),
    "deny-cd-dotdot-to-main": (
        "Bash",
        {"command": "cd ../../../.. && ls"},
        Decision("deny", _cd("main repo", ROOT)),
    ),
    "deny-cd-own-agent-folder": (
        "Bash",
        {"command": "cd .."},
        Decision("deny", _cd("main repo", AGENTS + "/a1")),
    ),
    "deny-cd-other-agent": (
        "Bash",
        {"command": f"pushd {AGENTS}/b2/repo"},
        Decision("deny", _cd("agent b2's folder", AGENTS + "/b2/repo")),
    ),
    "deny-cd-ib-root-variable": (
        "Bash",
        {"command": 'cd "$IB_ROOT"'},
        Decision("deny", _cd("main repo", ROOT)),
    ),
    "deny-cd-in-substitution": (
        "Bash",
        {"command": f'x="$(cd {ROOT}; pwd)"'},
        Decision("deny", _cd("main repo", ROOT)),
    ),
    "deny-cd-in-sh-c": (
        "Bash",
        {"command": f"sh -c 'cd {ROOT} && make'"},
        Decision("deny", _cd("main repo", ROOT)),
    ),
    "allow-cd-inside-worktree": ("Bash", {"command": "cd src && cd .. && ls"}, Decision("none")),
    "allow-cd-tmp": ("Bash", {"command": "cd /tmp && ls"}, Decision("none")),
    "allow-cd-elsewhere": ("Bash", {"command": "cd /usr/share"}, Decision("none")),
    "allow-cat-main-repo-file": ("Bash", {"command": f"cat {ROOT}/README.md"}, Decision("none")),
    "allow-echo-cd": ("Bash", {"command": f"echo 'cd {ROOT}'"}, Decision("none")),
    "deny-plan-mode": (
        "EnterPlanMode",
        {},
        Decision("deny", "Permission denied: EnterPlanMode. Agents work directly; plan mode is off."),
    ),
    "none-exit-plan-mode": ("ExitPlanMode", {"plan": "do it"}, Decision("none")),  # the person answers it
    "none-other-tool": ("WebSearch", {"query": "python"}, Decision("none")),
    "none-todo": ("TodoWrite", {"todos": []}, Decision("none")),
}


@pytest.mark.parametrize(("tool", "tool_input", "expected"), DECISIONS.values(), ids=DECISIONS.keys())
def test_decide(tool: str, tool_input: dict[str, object], expected: Decision) -> None:
    assert decide(tool, tool_input, worktree=WORKTREE, root=ROOT, permissions=PERMS, home=HOME) == expected


USER_DENY: dict[str, tuple[str, dict[str, object], str | None]] = {
    "deny-rule-whole-command": ("Bash", {"command": "curl https://x.io"}, "Bash(curl:*)"),
    "deny-rule-in-compound": ("Bash", {"command": "ls && curl https://x.io"}, "Bash(curl:*)"),
    "deny-rule-bare-tool": ("WebFetch", {"url": "https://x.io"}, "WebFetch"),
    "deny-rule-beats-worktree-allow": ("Write", {"file_path": WORKTREE + "/.env"}, "Write(**/.env)"),
    "no-deny-rule-hit": ("Bash", {"command": "git status"}, None),
}


@pytest.mark.parametrize(("tool", "tool_input", "rule"), USER_DENY.values(), ids=USER_DENY.keys())
def test_user_deny_rules(tool: str, tool_input: dict[str, object], rule: str | None) -> None:
    perms = merge_permissions(
        "worker", {"permissions": {"worker": {"deny": ["Bash(curl:*)", "WebFetch", "Write(**/.env)"]}}}, None
    )
    got = decide(tool, tool_input, worktree=WORKTREE, root=ROOT, permissions=perms, home=HOME)
    if rule is None:
        assert got.verdict != "deny"
    else:
        assert got == Decision(
            "deny", f"Permission denied: {describe(tool, tool_input)}. It matches the deny rule {rule}."
        )


def test_describe_keeps_a_log_line_short() -> None:
    text = describe("Write", {"file_path": "/x", "content": "line\n" * 1000})
    assert "\n" not in text
    assert text.startswith("Write (file_path: /x, content: line\\nline\\n")
    assert text.endswith("…)") and len(text) < 400


def test_worktree_outside_the_usual_layout_still_isolated() -> None:
    got = decide(
        "Read", {"file_path": ROOT + "/a"}, worktree="/elsewhere/wt", root=ROOT, permissions=PERMS, home=HOME
    )
    assert got.verdict == "deny"


# --- the primary session -------------------------------------------------------------------------

PRIMARY: dict[str, tuple[str, dict[str, object], str, str | None]] = {
    "deny-cd-agent-worktree": (
        "Bash",
        {"command": "cd .ib/agents/a1/repo && git log"},
        ROOT,
        AGENTS + "/a1/repo",
    ),
    "deny-cd-below-worktree": ("Bash", {"command": f"cd {AGENTS}/a1/repo/src"}, "/", AGENTS + "/a1/repo/src"),
    "deny-pushd-agent-worktree": ("Bash", {"command": "pushd .ib/agents/a1/repo"}, ROOT, AGENTS + "/a1/repo"),
    "deny-cd-glob-worktree": ("Bash", {"command": "cd .ib/agents/*/repo"}, ROOT, AGENTS + "/*/repo"),
    "deny-cd-from-subfolder": (
        "Bash",
        {"command": "cd ../.ib/agents/a1/repo"},
        ROOT + "/src",
        AGENTS + "/a1/repo",
    ),
    "allow-cd-agents-folder": ("Bash", {"command": "cd .ib/agents"}, ROOT, None),
    "allow-cd-agent-data": ("Bash", {"command": "cd .ib/agents/a1"}, ROOT, None),
    "allow-cd-src": ("Bash", {"command": "cd src"}, ROOT, None),
    "allow-read-in-worktree": ("Read", {"file_path": AGENTS + "/a1/repo/a.py"}, ROOT, None),
    "allow-git-c": ("Bash", {"command": "git -C .ib/agents/a1/repo log"}, ROOT, None),
    "allow-plan-mode": ("EnterPlanMode", {}, ROOT, None),
}


@pytest.mark.parametrize(("tool", "tool_input", "cwd", "denied"), PRIMARY.values(), ids=PRIMARY.keys())
def test_decide_primary(tool: str, tool_input: dict[str, object], cwd: str, denied: str | None) -> None:
    got = decide_primary(tool, tool_input, cwd=cwd, root=ROOT, home=HOME)
    if denied is None:
        assert got == Decision("none")
    else:
        assert got.verdict == "deny"
        assert got.reason.startswith("Path violation: Bash tried to cd into ")
        assert f"worktree: {denied}. The main session stays" in got.reason


NO_WORKTREE = {
    "write-in-root": ("Write", {"file_path": "/repo/src/app.py"}, "allow"),
    "read-agents-folder": ("Read", {"file_path": "/repo/.ib/agents/solo/agent.log"}, "deny"),
    "read-other-agent": ("Read", {"file_path": "/repo/.ib/agents/other/repo/x.py"}, "deny"),
    "cd-other-agent": ("Bash", {"command": "cd /repo/.ib/agents/other/repo"}, "deny"),
    "outside": ("Read", {"file_path": "/etc/passwd"}, "deny"),
}


@pytest.mark.parametrize(("tool", "tool_input", "verdict"), NO_WORKTREE.values(), ids=NO_WORKTREE.keys())
def test_agent_without_worktree_works_in_the_root_but_not_in_other_agents(
    tool: str, tool_input: dict[str, object], verdict: str
) -> None:
    """`--no-worktree` agents get the repository root as their worktree (IB_AGENT_WORKTREE)."""
    permissions = Permissions(mandatory_allow(), MANDATORY_DENY)
    decision = decide(tool, tool_input, worktree="/repo", root="/repo", permissions=permissions, home="/h")
    assert (decision.verdict if decision.verdict == "deny" else "allow") == verdict, decision.reason
