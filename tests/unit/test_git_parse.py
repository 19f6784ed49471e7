"""worker.git.parse on text as git prints it: worktree lists, porcelain status with renames and every
unmerged code, our log format, diff --stat totals, error summaries and the identity fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.errors import stderr_summary
from worker.git.parse import (
    UNMERGED,
    ChangeSize,
    Commit,
    StatusEntry,
    WorktreeInfo,
    changes,
    conflicted,
    identity_env,
    parse_config_list,
    parse_log,
    parse_names,
    parse_numstat,
    parse_status,
    parse_tree_changes,
    parse_worktrees,
    ref_slug,
    unquote_path,
)

SHA1 = "1" * 40
SHA2 = "2" * 40

WORKTREE_CASES = [
    ("empty", "", []),
    (
        "main-only",
        f"worktree /r\nHEAD {SHA1}\nbranch refs/heads/main\n\n",
        [WorktreeInfo(Path("/r"), SHA1, "main")],
    ),
    (
        "no-trailing-blank-line",
        f"worktree /r\nHEAD {SHA1}\nbranch refs/heads/main",
        [WorktreeInfo(Path("/r"), SHA1, "main")],
    ),
    (
        "agent-and-detached",
        f"worktree /r\nHEAD {SHA1}\nbranch refs/heads/main\n\n"
        f"worktree /r/.ib/agents/a1/repo\nHEAD {SHA2}\nbranch refs/heads/agent/a1\n\n"
        f"worktree /r/.ib/merge-tmp/main-x\nHEAD {SHA1}\ndetached\n\n",
        [
            WorktreeInfo(Path("/r"), SHA1, "main"),
            WorktreeInfo(Path("/r/.ib/agents/a1/repo"), SHA2, "agent/a1"),
            WorktreeInfo(Path("/r/.ib/merge-tmp/main-x"), SHA1, None, detached=True),
        ],
    ),
    ("bare", "worktree /srv/r.git\nbare\n\n", [WorktreeInfo(Path("/srv/r.git"), bare=True)]),
    (
        "locked-without-reason",
        f"worktree /w\nHEAD {SHA1}\nbranch refs/heads/x\nlocked\n\n",
        [WorktreeInfo(Path("/w"), SHA1, "x", locked="")],
    ),
    (
        "locked-with-reason",
        f"worktree /w\nHEAD {SHA1}\nbranch refs/heads/x\nlocked on a usb stick\n\n",
        [WorktreeInfo(Path("/w"), SHA1, "x", locked="on a usb stick")],
    ),
    (
        "prunable",
        f"worktree /gone\nHEAD {SHA1}\ndetached\nprunable gitdir file points to non-existent location\n\n",
        [
            WorktreeInfo(
                Path("/gone"),
                SHA1,
                None,
                detached=True,
                prunable="gitdir file points to non-existent location",
            )
        ],
    ),
    (
        "quoted-path",
        f'worktree "/r/a\\nb"\nHEAD {SHA1}\ndetached\n\n',
        [WorktreeInfo(Path("/r/a\nb"), SHA1, None, detached=True)],
    ),
    (
        "nul-terminated",
        f"worktree /r\0HEAD {SHA1}\0branch refs/heads/main\0\0worktree /r/a b\0HEAD {SHA2}\0detached\0\0",
        [WorktreeInfo(Path("/r"), SHA1, "main"), WorktreeInfo(Path("/r/a b"), SHA2, None, detached=True)],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in WORKTREE_CASES], ids=[c[0] for c in WORKTREE_CASES]
)
def test_parse_worktrees(text: str, expected: list[WorktreeInfo]) -> None:
    assert parse_worktrees(text) == expected


UNQUOTE_CASES = [
    ("plain", "/a/b", "/a/b"),
    ("quote-inside-unquoted", 'a"b', 'a"b'),
    ("tab-and-newline", '"a\\tb\\nc"', "a\tb\nc"),
    ("escaped-quote-and-backslash", '"a\\"b\\\\c"', 'a"b\\c'),
    ("octal-utf8", '"caf\\303\\251"', "café"),
    ("lone-backslash-kept", '"a\\qb"', "a\\qb"),
    ("just-quotes", '""', ""),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in UNQUOTE_CASES], ids=[c[0] for c in UNQUOTE_CASES]
)
def test_unquote_path(text: str, expected: str) -> None:
    assert unquote_path(text) == expected


STATUS_CASES = [
    ("clean", "", []),
    ("modified", " M a.py\0", [StatusEntry(" M", "a.py")]),
    ("staged-and-modified", "MM a.py\0", [StatusEntry("MM", "a.py")]),
    (
        "untracked-and-ignored",
        "?? new.txt\0!! build/\0",
        [StatusEntry("??", "new.txt"), StatusEntry("!!", "build/")],
    ),
    (
        "rename-carries-origin",
        "R  new.py\0old.py\0 M z\0",
        [StatusEntry("R ", "new.py", "old.py"), StatusEntry(" M", "z")],
    ),
    ("copy-carries-origin", "C  b\0a\0", [StatusEntry("C ", "b", "a")]),
    ("path-with-spaces-and-arrow", " M a -> b.txt\0", [StatusEntry(" M", "a -> b.txt")]),
    ("path-with-newline", "?? a\nb\0", [StatusEntry("??", "a\nb")]),
    *[(f"unmerged-{code}", f"{code} f\0", [StatusEntry(code, "f")]) for code in sorted(UNMERGED)],
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES]
)
def test_parse_status(text: str, expected: list[StatusEntry]) -> None:
    assert parse_status(text) == expected


CONFLICT_CASES = [
    ("none", " M a\0?? b\0", []),
    ("both-modified", "UU src/x.py\0 M a\0", ["src/x.py"]),
    (
        "every-code-sorted",
        "".join(f"{code} {code.lower()}\0" for code in sorted(UNMERGED)),
        sorted(c.lower() for c in UNMERGED),
    ),
    ("rename-is-not-a-conflict", "R  new\0old\0AA both\0", ["both"]),
    ("added-and-deleted-are-not", "A  a\0D  d\0 D e\0", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in CONFLICT_CASES], ids=[c[0] for c in CONFLICT_CASES]
)
def test_conflicted(text: str, expected: list[str]) -> None:
    assert conflicted(parse_status(text)) == expected


CHANGES_CASES = [
    ("clean", "", True, []),
    ("only-our-folder", "?? .ib/\0", True, []),
    ("our-folder-files", "?? .ib/agents/a/repo/\0?? .ib/merge-tmp/x\0", True, []),
    ("untracked-counts", "?? notes.txt\0", True, ["notes.txt"]),
    ("untracked-ignored-when-asked", "?? notes.txt\0", False, []),
    ("lookalike-folder-counts", "?? .ibx/a\0", True, [".ibx/a"]),
    ("tracked-under-ib-counts", " M .ib/tracked\0", False, [".ib/tracked"]),
    ("ignored-never-counts", "!! build/\0", True, []),
    ("staged", "A  x\0", False, ["x"]),
    ("conflict", "UU x\0", False, ["x"]),
]


@pytest.mark.parametrize(
    ("text", "untracked", "expected"), [c[1:] for c in CHANGES_CASES], ids=[c[0] for c in CHANGES_CASES]
)
def test_changes(text: str, untracked: bool, expected: list[str]) -> None:
    assert [entry.path for entry in changes(parse_status(text), untracked=untracked)] == expected


NAMES_CASES = [
    ("empty", "", []),
    ("nul", "a\0b c\0", ["a", "b c"]),
    ("lines", "a\nb\n", ["a", "b"]),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in NAMES_CASES], ids=[c[0] for c in NAMES_CASES])
def test_parse_names(text: str, expected: list[str]) -> None:
    assert parse_names(text) == expected


LOG_CASES = [
    ("empty", "", []),
    ("one", f"{SHA1}\x1fAdd the parser\n", [Commit(SHA1, "Add the parser")]),
    (
        "two-newest-first",
        f"{SHA2}\x1fsecond\n{SHA1}\x1ffirst\n",
        [Commit(SHA2, "second"), Commit(SHA1, "first")],
    ),
    ("empty-subject", f"{SHA1}\x1f\n", [Commit(SHA1, "")]),
    ("subject-with-tabs-and-separators", f"{SHA1}\x1fa\tb | c\x1fd\n", [Commit(SHA1, "a\tb | c\x1fd")]),
    ("stray-line-skipped", f"warning: something\n{SHA1}\x1fx\n", [Commit(SHA1, "x")]),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in LOG_CASES], ids=[c[0] for c in LOG_CASES])
def test_parse_log(text: str, expected: list[Commit]) -> None:
    assert parse_log(text) == expected


SUMMARY_CASES = [
    ("empty", "", ""),
    (
        "fatal",
        "fatal: a branch named 'agent/a' already exists\n",
        "fatal: a branch named 'agent/a' already exists",
    ),
    (
        "error-and-hints",
        "error: could not apply 1a2b... x\nhint: Resolve all conflicts\nhint: run git rebase --abort\n",
        "error: could not apply 1a2b... x",
    ),
    (
        "several-key-lines",
        "Auto-merging f\nCONFLICT (content): Merge conflict in f\nAutomatic merge failed\n",
        "CONFLICT (content): Merge conflict in f",
    ),
    ("last-plain-line", "Preparing worktree\nsomething odd\nhint: x\n", "something odd"),
    ("only-hints", "hint: a\nhint: b\n", ""),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in SUMMARY_CASES], ids=[c[0] for c in SUMMARY_CASES]
)
def test_stderr_summary(text: str, expected: str) -> None:
    assert stderr_summary(text) == expected


CONFIG_CASES = [
    ("empty", "", {}),
    (
        "get-regexp",
        "user.name Ada Lovelace\nuser.email ada@example.com\n",
        {"user.name": "Ada Lovelace", "user.email": "ada@example.com"},
    ),
    ("last-wins", "user.name A\nuser.name B\n", {"user.name": "B"}),
    ("value-with-spaces", "user.name A  B \n", {"user.name": "A  B "}),
    ("key-without-value", "user.name\n", {"user.name": ""}),
    ("keys-lowercased", "Author.Name X\n", {"author.name": "X"}),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in CONFIG_CASES], ids=[c[0] for c in CONFIG_CASES]
)
def test_parse_config_list(text: str, expected: dict[str, str]) -> None:
    assert parse_config_list(text) == expected


FALLBACK_ALL = {
    "GIT_AUTHOR_NAME": "ittybus",
    "GIT_AUTHOR_EMAIL": "ittybus@localhost",
    "GIT_COMMITTER_NAME": "ittybus",
    "GIT_COMMITTER_EMAIL": "ittybus@localhost",
}

IDENTITY_CASES = [
    ("nothing-configured", {}, {}, FALLBACK_ALL),
    ("user-configured", {"user.name": "A", "user.email": "a@x"}, {}, {}),
    (
        "only-name-configured",
        {"user.name": "A"},
        {},
        {"GIT_AUTHOR_EMAIL": "ittybus@localhost", "GIT_COMMITTER_EMAIL": "ittybus@localhost"},
    ),
    (
        "empty-name-is-none",
        {"user.name": "", "user.email": "a@x"},
        {},
        {"GIT_AUTHOR_NAME": "ittybus", "GIT_COMMITTER_NAME": "ittybus"},
    ),
    (
        "environment-wins",
        {},
        {k: "set" for k in FALLBACK_ALL},
        {},
    ),
    (
        "committer-config-only",
        {"committer.name": "C", "committer.email": "c@x"},
        {},
        {"GIT_AUTHOR_NAME": "ittybus", "GIT_AUTHOR_EMAIL": "ittybus@localhost"},
    ),
    (
        "email-variable",
        {"user.name": "A"},
        {"EMAIL": "a@x"},
        {},
    ),
]


@pytest.mark.parametrize(
    ("config", "environ", "expected"), [c[1:] for c in IDENTITY_CASES], ids=[c[0] for c in IDENTITY_CASES]
)
def test_identity_env(config: dict[str, str], environ: dict[str, str], expected: dict[str, str]) -> None:
    assert identity_env(config, environ) == expected


SLUG_CASES = [
    ("plain", "main", "main"),
    ("slash", "agent/a1", "agent-a1"),
    ("odd-characters", "feat/ü x", "feat-x"),
    ("only-odd", "///", "branch"),
    ("leading-dot", ".hidden", "hidden"),
]


@pytest.mark.parametrize(("name", "expected"), [c[1:] for c in SLUG_CASES], ids=[c[0] for c in SLUG_CASES])
def test_ref_slug(name: str, expected: str) -> None:
    assert ref_slug(name) == expected


NUMSTAT = [
    pytest.param("", ChangeSize(), id="nothing"),
    pytest.param("3\t1\tcalc.py\x00", ChangeSize(("calc.py",), 4), id="one-file"),
    pytest.param(
        "-\t-\tlogo.bin\x002\t0\ta.py\x00", ChangeSize(("a.py", "logo.bin"), 3), id="binary-counts-one"
    ),
    pytest.param(
        "0\t5\told.txt\x005\t0\tnew.txt\x00", ChangeSize(("new.txt", "old.txt"), 10), id="rename-both-paths"
    ),
    pytest.param("1\t1\ttab\there.py\x00", ChangeSize(("tab\there.py",), 2), id="tab-in-name"),
    pytest.param("1\t0\tnew\nline.py\x00", ChangeSize(("new\nline.py",), 1), id="newline-in-name"),
]


@pytest.mark.parametrize(("text", "expected"), NUMSTAT)
def test_parse_numstat(text: str, expected: ChangeSize) -> None:
    assert parse_numstat(text) == expected


SHA_A = "a" * 40
SHA_B = "b" * 40
NONE = "0" * 40


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (f":100644 100644 {SHA_A} {SHA_B} M\0a.txt\0", [("a.txt", SHA_A, SHA_B, True)]),
        (f":000000 100644 {NONE} {SHA_B} A\0new dir/b c.txt\0", [("new dir/b c.txt", None, SHA_B, True)]),
        (f":100755 000000 {SHA_A} {NONE} D\0gone.sh\0", [("gone.sh", SHA_A, None, True)]),
        (f":120000 120000 {SHA_A} {SHA_B} T\0link\0", [("link", SHA_A, SHA_B, False)]),
        (f":160000 160000 {SHA_A} {SHA_B} M\0sub\0", [("sub", SHA_A, SHA_B, False)]),
        ("", []),
    ],
    ids=["modified", "added-with-spaces", "deleted", "symlink", "submodule", "nothing"],
)
def test_parse_tree_changes(raw: str, expected: list[tuple[str, str | None, str | None, bool]]) -> None:
    got = [(c.path, c.old_blob, c.new_blob, c.plain) for c in parse_tree_changes(raw)]
    assert got == expected
