"""What `ib ps` says of the person's sessions: one whose process is gone (killed with SIGKILL, its socket
file left) is dropped there in one line; one in bypassPermissions is said with the setting that lets it
take pushed messages, which ittybus never writes into the person's settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.session_inbox import RecordingInbox, killed_session, record_session


def test_akilled_session_is_dropped_by_ib_ps_in_one_line(
    ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "socks"
    folder.mkdir()
    left = killed_session(folder)
    record_session(rds, keys, "s-killed", left, "t", repo)
    out = ib.run("ps").stdout
    lines = [line for line in out.splitlines() if "dropped session s-killed" in line]
    assert len(lines) == 1 and "is gone (the session was killed)" in lines[0], out
    assert not rds.smembers(keys.session_inboxes)
    assert "sessions with an inbox: none" in out


def test_a_session_in_bypass_permissions_is_told_the_setting_never_written(
    ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    ib.env["HOME"] = str(home)
    with RecordingInbox(tmp_path / f"{os.getpid()}.sock") as inbox:
        record_session(rds, keys, "s-bypass", inbox.path, inbox.token, repo, "bypassPermissions")
        out = ib.run("ps").stdout
        assert "session s-bypass: pid" in out and "sessions with an inbox: 1" in out, out
        [held] = [line for line in out.splitlines() if "runs in bypassPermissions" in line]
        assert '"crossSessionInbound": "accept"' in held and str(home / ".claude" / "settings.json") in held
        assert not (home / ".claude" / "settings.json").exists()  # said, never written
        assert not (repo / ".claude" / "settings.local.json").exists()

        (home / ".claude" / "settings.json").write_text(json.dumps({"crossSessionInbound": "accept"}))
        out = ib.run("ps").stdout
        assert "runs in bypassPermissions" not in out and "crossSessionInbound: accept" in out, out
        assert inbox.texts() == []  # looking never writes into the session
