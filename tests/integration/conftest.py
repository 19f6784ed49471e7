"""Fixtures for tests that run `ib` for real: a temp repository and a runner bound to the test's bus."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import IbRunner, init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


@pytest.fixture
def ib(repo: Path, tmp_path: Path, redis_url: str, namespace: str, rds: object) -> IbRunner:
    """`ib` on the shared test Redis in the test's namespace (the `rds` fixture scrubs it afterwards)."""
    return IbRunner(
        repo,
        {"IB_REDIS_URL": redis_url, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path / "spool")},
    )
