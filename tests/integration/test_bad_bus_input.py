"""The bad input of issue 20, each refused in one line (never a traceback), the same for every command:
stream ids out of range, names with `/`, `..` and newlines, empty options, bad URLs, and settings that
`ib list` refuses given to `ib notify`."""

from __future__ import annotations

import pytest

from tests.cli import IbRunner

ARGUMENTS = {
    "since-out-of-range": ["events", "--since", "99999999999999999999-0"],
    "since-seq-out-of-range": ["events", "--since", "1-99999999999999999999"],
    "notify-from-path": ["notify", "--from", "../../x", "hello"],
    "notify-from-newline": ["notify", "--from", "a\nb", "hello"],
    "notify-project-slash": ["notify", "--project", "a/b", "hello"],
    "listen-name-path": ["listen", "--name", "../x", "--timeout", "1"],
    "listen-name-empty": ["listen", "--name", "", "--timeout", "1"],
    "listen-name-newline": ["listen", "--name", "a\nb", "--timeout", "1"],
    "listen-types-empty": ["listen", "--types", "", "--timeout", "1"],
    "events-group-empty": ["events", "--group", ""],
    "events-group-dots": ["events", "--group", "a..b"],
    "new-agent-model-empty": ["new-agent", "goal", "--model", ""],
    "new-agent-name-slash": ["new-agent", "goal", "--name", "a/b"],
}


@pytest.mark.parametrize("argv", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_bad_arguments_are_one_line(ib: IbRunner, argv: list[str]) -> None:
    done = ib.run(*argv, timeout=30)
    assert done.returncode in (1, 2), done
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"ib {argv[0]}: error:"), done.stderr


SETTINGS = {
    "worker-id-slash": {"IB_WORKER_ID": "a/b"},
    "heartbeat-too-short": {"IB_HEARTBEAT_TTL": "1"},
    "pane-interval-zero": {"IB_PANE_INTERVAL": "0"},
    "listen-timeout-inf": {"IB_LISTEN_TIMEOUT": "inf"},
    "listener-name-path": {"IB_LISTENER_NAME": "../x"},
    "url-unclosed-ipv6": {"IB_REDIS_URL": "redis://[::1"},
    "url-unknown-option": {"IB_REDIS_URL": "redis://127.0.0.1:6379/0?bogus=1"},
    "url-db-not-a-number": {"IB_REDIS_URL": "redis://127.0.0.1:6379/x"},
}


@pytest.mark.parametrize("env", SETTINGS.values(), ids=SETTINGS.keys())
def test_bad_settings_are_refused_alike_by_notify_and_list(ib: IbRunner, env: dict[str, str]) -> None:
    (name,) = env
    said = []
    for argv in (["notify", "hello"], ["list"], ["events", "--since", "0"]):
        done = ib.run(*argv, env=env, timeout=30)
        assert done.returncode == 1, done
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
        assert name in done.stderr and "(set in the environment)" in done.stderr, done.stderr
        said.append(done.stderr.partition("error: ")[2])
    assert said[0] == said[1] == said[2]  # the same refusal, word for word


def test_a_bad_url_in_dotenv_names_the_file(ib: IbRunner) -> None:
    (ib.cwd / ".env").write_text('IB_REDIS_URL="redis://[::1" # prod\n')
    from_file = IbRunner(ib.cwd, {k: v for k, v in ib.env.items() if k != "IB_REDIS_URL"})
    for argv in (["notify", "hello"], ["list"]):
        done = from_file.run(*argv, timeout=30)
        assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert f"(set in {ib.cwd / '.env'})" in done.stderr, done.stderr
