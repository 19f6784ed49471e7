"""The bubblewrap command line a task's test command runs in for an agent."""

from __future__ import annotations

from worker.boundary.done_check_box import boxed


def test_the_box_hides_state_and_secrets_and_opens_only_the_worktree_and_scratch() -> None:
    args = boxed("pytest -q", "/r/.ib/agents/a/repo", "/r/", "/tmp/s", ["/h/.ssh"], ["/h/.netrc"])
    line = " ".join(args)
    assert args[:5] == ["bwrap", "--ro-bind", "/", "/", "--dev"]
    assert "--unshare-net" in args and "--die-with-parent" in args
    assert "--tmpfs /r/.ib" in line and "--tmpfs /h/.ssh" in line and "--ro-bind /dev/null /h/.netrc" in line
    # the worktree is bound after .ib/ is hidden, or the tmpfs would cover it
    assert line.index("--tmpfs /r/.ib") < line.index("--bind /r/.ib/agents/a/repo /r/.ib/agents/a/repo")
    assert "--setenv TMPDIR /tmp/s" in line
    assert args[-5:] == ["--chdir", "/r/.ib/agents/a/repo", "sh", "-c", "pytest -q"]
