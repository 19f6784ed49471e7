"""The few settings the hot paths need, read without pydantic.

Hooks and `ib notify` run on every tool call, and pydantic-settings takes ~170 ms to import. This reads
the same `IB_*` variables, from the environment and the repository's `.env` (through the one reader,
`bus.settings.settings_file`, then parsed as python-dotenv does: `bus.settings.dotenv_file`), with the same
defaults (`bus.settings.defaults`) and the same validation messages, each naming where the bad value was set;
a test keeps it equal to `bus.settings.settings.Settings`.
"""

from __future__ import annotations

import os

from bus.errors import ConfigError
from bus.settings import defaults, dotenv_file, setting_checks, settings_file
from bus.settings.repo_paths import repo_root
from bus.wire.address import Address
from bus.wire.record import Record

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping


class HotConf(Record):
    __slots__ = (
        "agent_id",
        "connect_timeout",
        "embedded_port",
        "events_maxlen",
        "listener_name",
        "max_message_bytes",
        "namespace",
        "prices",
        "redis_url",
        "root",
        "spool_dir",
        "wait_ms",
        "wait_replicas",
    )

    def __init__(
        self,
        *,
        redis_url: str | None,
        namespace: str,
        events_maxlen: int,
        connect_timeout: float,
        spool_dir: str,
        max_message_bytes: int,
        listener_name: str,
        agent_id: str | None,
        root: str | None,
        wait_replicas: int = 0,
        wait_ms: int = defaults.REDIS_WAIT_MS,
        embedded_port: int | None = None,
        prices: str = "",
    ) -> None:
        self.prices = (
            prices  # IB_PRICES as written (bus.costs.prices.parse_prices reads it for a turn's price)
        )
        self.embedded_port = embedded_port  # IB_EMBEDDED_PORT: where the embedded bus listens, when set
        self.redis_url, self.namespace, self.events_maxlen = redis_url, namespace, events_maxlen
        self.connect_timeout, self.spool_dir, self.max_message_bytes = (
            connect_timeout,
            spool_dir,
            max_message_bytes,
        )
        self.listener_name, self.agent_id, self.root = listener_name, agent_id, root
        self.wait_replicas, self.wait_ms = wait_replicas, wait_ms  # `WAIT` after each publish; 0: none


def read_hotconf(environ: Mapping[str, str] | None = None, cwd: str | None = None) -> HotConf:
    env = os.environ if environ is None else environ
    root = env.get("IB_ROOT") or repo_root(cwd or os.getcwd())
    merged, where = _merged(env, root)
    try:
        return _conf(merged, root)
    except ConfigError as e:
        name = str(e).removeprefix("bad configuration: ").partition(":")[0]
        raise ConfigError(f"{e} (set in {where.get(name, 'the defaults')})") from e


def _merged(env: Mapping[str, str], root: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """Every `IB_*` value (the environment over the repository's `.env`) and where each was set."""
    merged: dict[str, str] = {}
    where: dict[str, str] = {}
    if root:
        path = os.path.join(root, ".env")
        text = settings_file.read_text(path)  # ConfigError, one line, for a file it must not read
        found = dotenv_file.read(text, env) if text else {}
        for name, value in found.items():
            if value is not None and name.startswith(defaults.ENV_PREFIX):
                merged[name], where[name] = value, path
    for name, value in env.items():
        if name.startswith(defaults.ENV_PREFIX):
            merged[name], where[name] = value, "the environment"
    return merged, where


def _conf(merged: dict[str, str], root: str | None) -> HotConf:
    try:
        setting_checks.check(merged)
    except ValueError as e:
        raise ConfigError(f"bad configuration: {e}") from e
    redis_url = merged.get("IB_REDIS_URL") or None
    if redis_url:
        try:
            Address.from_url(redis_url)
        except ConfigError as e:
            raise ConfigError(f"bad configuration: {e}") from e
    return HotConf(
        redis_url=redis_url,
        namespace=merged.get("IB_NAMESPACE", defaults.NAMESPACE),
        events_maxlen=int(_number(merged, "IB_EVENTS_MAXLEN", defaults.EVENTS_MAXLEN)),
        connect_timeout=_number(merged, "IB_CONNECT_TIMEOUT", defaults.CONNECT_TIMEOUT),
        spool_dir=merged.get("IB_SPOOL_DIR") or defaults.spool_dir(),
        max_message_bytes=int(_number(merged, "IB_MAX_MESSAGE_BYTES", defaults.MAX_MESSAGE_BYTES)),
        listener_name=merged.get("IB_LISTENER_NAME", defaults.LISTENER_NAME),
        agent_id=merged.get("IB_AGENT_ID") or None,
        root=root,
        wait_replicas=defaults.replicas_to_wait(_whole(merged, "IB_REDIS_WAIT_REPLICAS"), redis_url),
        wait_ms=int(_number(merged, "IB_REDIS_WAIT_MS", defaults.REDIS_WAIT_MS)),
        embedded_port=_whole(merged, "IB_EMBEDDED_PORT"),
        prices=merged.get("IB_PRICES", ""),
    )


def _whole(values: Mapping[str, str], name: str) -> int | None:
    """A checked whole-number setting, or None when it is not set."""
    raw = values.get(name)
    return None if raw is None else int(setting_checks.number(raw, integer=True))


def _number(values: Mapping[str, str], name: str, default: float) -> float:
    """A checked number setting (`setting_checks.check` ran first), or its default."""
    raw = values.get(name)
    return default if raw is None else setting_checks.number(raw, setting_checks.NUMBERS[name][0])
