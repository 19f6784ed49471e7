"""F10, a full disk: the spool (and its fallback) on a 16 KiB tmpfs that fills and frees while Redis is
down. A notify is either kept whole (exit 0) or refused in one line (exit 1); nothing accepted is lost,
nothing is sent twice, and a record cut short never takes the next one with it."""

from __future__ import annotations

import contextlib
import json
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.redis_server import RedisServer
from tests.streams import stream_entries

CYCLES, EACH = 7, 10
PADDING = "x" * 600  # a record larger than what is left of a page, so a write comes back short


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 KiB tmpfs of the test's own (the suite runs as root)."""
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=0700", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def _fill(folder: Path) -> Path:
    """Take every free byte of the tmpfs with one file."""
    filler = folder / "filler"
    with open(filler, "ab", buffering=0) as f, contextlib.suppress(OSError):  # ENOSPC: it is full
        while f.write(b"\0" * 512):
            continue
    return filler


def test_full_disk_loses_nothing_and_doubles_nothing(
    ib: IbRunner, own_redis: RedisServer, small_disk: Path, tally: Tally
) -> None:
    env = {
        "IB_REDIS_URL": own_redis.url,
        "IB_SPOOL_DIR": str(small_disk / "spool"),
        "TMPDIR": str(small_disk),
    }
    own_redis.stop()
    accepted: list[str] = []
    refused = 0
    for cycle in range(CYCLES):
        filler = _fill(small_disk) if cycle % 2 else None
        for i in range(EACH):
            text = f"disk-{cycle}-{i}"
            done = ib.run("notify", f"{text} {PADDING}", env=env)
            if done.returncode == 0:
                assert "kept in" in done.stderr, done.stderr
                accepted.append(text)
            else:  # told in one line, never a traceback: the sender knows it was not kept
                assert done.stderr.startswith("ib notify: error: cannot spool the event"), done.stderr
                assert len(done.stderr.splitlines()) == 1
                refused += 1
            if filler is not None and i == EACH // 2:
                filler.unlink()  # room again half way through a full cycle
                filler = None
        if filler is not None:
            filler.unlink()
    assert refused > 0 and accepted, (refused, accepted)  # the disk was full for some, not for all

    own_redis.start()
    assert ib.run("spool", "--flush", env=env).returncode == 0
    seen = [
        json.loads(f["e"])["msg"].split(" ")[0]
        for _id, f in stream_entries(own_redis.client(), ib.env["IB_NAMESPACE"] + "events")
    ]
    damaged = list(small_disk.rglob("*.damaged"))
    for path in damaged:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    row = tally.count(
        "F10 full disk: spool and fallback on a 16 KiB tmpfs, filled and freed 3 times, Redis down",
        accepted,
        seen,
        note=f"{CYCLES * EACH} notifies: {len(accepted)} kept (exit 0), {refused} refused in one line "
        f"(exit 1, not counted as sent); {len(damaged)} damaged files",
    )
    assert (row.lost, row.twice, damaged) == (0, 0, [])
