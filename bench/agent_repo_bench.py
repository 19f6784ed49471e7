"""What an agent's own repository costs beside a plain `git worktree`: spawn time (the git part of
`ib new-agent`) and disk per agent, both layouts in the same run, on a copy of this checkout's history
(or --files synthetic files of 4 KiB in a fresh repository).

  worktree     `git worktree add -b agent/<id>` (the layout before: the agent writes the person's .git)
  own repo     worker/git/agent_repo.create + publish (the agent's clone, objects borrowed by alternates)

Disk is what a new agent adds: its work tree, plus its git folder (own repo) or its entry under
.git/worktrees (worktree), in KiB as `du` counts them. Times are medians of --agents spawns each.

    .venv/bin/python -m bench.agent_repo_bench [--agents 10] [--files 0]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from tests.cli import git, init_repo
from worker.git import agent_repo
from worker.git.agent_repo import AgentRepo
from worker.git.repo import Git

CHECKOUT = Path(__file__).resolve().parent.parent


def _kib(*paths: Path) -> int:
    done = subprocess.run(["du", "-sk", *map(str, paths)], capture_output=True, text=True, check=True)
    return sum(int(line.split()[0]) for line in done.stdout.splitlines())


def _person_repo(folder: Path, files: int) -> Path:
    if files == 0:
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(CHECKOUT), str(folder)], check=True)
        git(folder, "checkout", "-q", "-B", "main")
        return folder
    root = init_repo(folder)
    for n in range(files):
        (root / f"f{n // 100}" / f"{n}.txt").parent.mkdir(exist_ok=True)
        (root / f"f{n // 100}" / f"{n}.txt").write_text(f"{n}\n" * 1000)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "files")
    return root


def _worktrees(root: Path, agents: int) -> list[float]:
    times = []
    for n in range(agents):
        start = time.perf_counter()
        Git(root).add_worktree(root / ".ib" / "agents" / f"w{n}" / "repo", f"agent/w{n}", "main")
        times.append(time.perf_counter() - start)
    return times


def _own_repos(root: Path, agents: int) -> list[float]:
    times = []
    for n in range(agents):
        folder = root / ".ib" / "agents" / f"o{n}"
        repo = AgentRepo(folder / "repo", folder / "git", f"agent/o{n}")
        start = time.perf_counter()
        agent_repo.create(Git(root), repo, "main")
        agent_repo.publish(Git(root), repo)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--files", type=int, default=0, help="synthetic files instead of this checkout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = _person_repo(Path(tmp) / "repo", args.files)
        tracked = len(git(root, "ls-files").splitlines())
        objects = _kib(root / ".git" / "objects")
        before = _kib(root / ".git")
        plain_times = _worktrees(root, args.agents)
        plain_git = (_kib(root / ".git") - before) // args.agents  # .git/worktrees/<id>: index, HEAD, logs
        plain_tree = _kib(root / ".ib" / "agents" / "w0" / "repo")
        own_times = _own_repos(root, args.agents)
        own_tree = _kib(root / ".ib" / "agents" / "o0" / "repo")
        own_git = _kib(root / ".ib" / "agents" / "o0" / "git")
    print(f"agent repositories ({args.agents} spawns each, median; {tracked} files, objects {objects} KiB)")
    print(f"{'':14}{'spawn':>10}{'work tree':>12}{'git':>10}")
    for name, times, tree, own in (
        ("worktree", plain_times, plain_tree, plain_git),
        ("own repo", own_times, own_tree, own_git),
    ):
        print(f"{name:14}{statistics.median(times) * 1000:>8.0f} ms{tree:>8} KiB{own:>6} KiB")


if __name__ == "__main__":
    main()
