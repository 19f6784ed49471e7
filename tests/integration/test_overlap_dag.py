"""The done-when of the overlap check, on a real Redis and real git: the task queue over the DAG of
bench/overlap_dag_bench.py reaches no merge conflict with IB_OVERLAP=hold, and does reach some with ignore
(so the DAG's overlaps are real and the count can fail)."""

from __future__ import annotations

from pathlib import Path

import redis

from bench.overlap_dag_bench import DAG, base_repo, run_dag
from bus.wire.keys import Keys
from tests.cli import git


def test_hold_reaches_no_merge_conflict_on_the_overlap_dag(
    rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    repo = base_repo(tmp_path / "repo")
    got = run_dag("hold", 3, rds, keys, repo)
    assert got.conflicts == [] and got.merged == len(DAG)
    assert got.held > 0  # it did hold overlapping tasks back
    subjects = git(repo, "log", "--format=%s", "--no-merges", "main").split("\n")
    assert sorted(s for s in subjects if s not in {"", "the project", "initial"}) == sorted(t.id for t in DAG)


def test_ignore_reaches_the_conflicts_the_dag_was_made_with(
    rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    got = run_dag("ignore", 3, rds, keys, base_repo(tmp_path / "repo"))
    assert got.conflicts == ["add-floats", "docs-all"] and got.merged == len(DAG)
