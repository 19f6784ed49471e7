"""The one settings class: every `IB_*` setting, its default, and where its effective value came from.

Built once at the edge (the CLI, a service's main) and passed in; library code never reads the environment.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from bus.costs.budgets import Amount, parse_amount
from bus.costs.prices import parse_prices
from bus.errors import ConfigError
from bus.settings import defaults, dotenv_file, settings_file
from bus.settings.permission_modes import DEFAULT_PERMISSION_MODE, permission_mode
from bus.settings.repo_paths import repo_root
from bus.settings.setting_checks import (
    NUMBERS,
    SECRETS,
    agent_env_problem,
    number,
    overlap_mode,
    user_ids,
    value_problem,
)
from bus.wire.address import Address
from bus.wire.names import name_problem, worker_id_problem

MODEL_PROGRAMS = defaults.AGENT_PROGRAMS  # each has a model setting of its own
# the `.env` values `load_settings` read, for the source that stands in for pydantic-settings' own
_ENV_FILE_VALUES: ContextVar[Mapping[str, str | None] | None] = ContextVar("ib_env_file_values", default=None)


class _Values(PydanticBaseSettingsSource):
    """`IB_*` values as strings, each given to the field it names (in any case) for the class to validate:
    what pydantic-settings' environment and dotenv sources do for these fields (none is decoded as JSON:
    the lists and maps are NoDecode), without their type analysis of every field on every load
    (milliseconds on every command). The `.env` values are the ones `bus.settings.settings_file` let be read:
    pydantic-settings' own dotenv source would open the file itself, a FIFO too, without a size cap."""

    def __init__(self, settings_cls: type[BaseSettings], values: Mapping[str, str | None]) -> None:
        super().__init__(settings_cls)
        self._values = values

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ reads every field at once

    def __call__(self) -> dict[str, Any]:
        names = _field_names(self.settings_cls)
        found: dict[str, Any] = {}
        for key, value in self._values.items():
            field = names.get(key.lower())
            if field is not None and value is not None:
                found[field] = value
        return found


@cache
def _field_names(settings_cls: type[BaseSettings]) -> dict[str, str]:
    """Each field by the lower-case name of its variable (`ib_redis_url` → `redis_url`)."""
    return {(defaults.ENV_PREFIX + name).lower(): name for name in settings_cls.model_fields}


class Settings(BaseSettings):
    """ittybus configuration, from the environment (`IB_` prefix) and the repository's `.env`."""

    model_config = SettingsConfigDict(
        env_prefix=defaults.ENV_PREFIX, extra="ignore", validate_default=True, allow_inf_nan=False
    )

    # the bus
    redis_url: str | None = Field(None, description="Redis to use; unset: the repository's embedded Redis")
    namespace: str = Field(
        defaults.NAMESPACE, description="prefix of every key, so installations can share a Redis"
    )
    events_maxlen: int = Field(
        defaults.EVENTS_MAXLEN, description="approximate length the events stream is trimmed to"
    )
    connect_timeout: float = Field(
        defaults.CONNECT_TIMEOUT, description="seconds to wait for Redis before spooling"
    )
    embedded_port: int | None = Field(
        None,
        description="the embedded bus's port; unset: a free one, kept across restarts",
    )
    redis_wait_replicas: int | None = Field(
        None,
        description="replicas that must hold an event or a task, merge, message or command change before it "
        "counts as done; unset: 1 behind Sentinel",
    )
    redis_wait_ms: int = Field(
        defaults.REDIS_WAIT_MS,
        description="milliseconds such a write waits for those replicas (`WAIT`)",
    )
    spool_dir: Path = Field(
        default_factory=lambda: Path(defaults.spool_dir()),
        description="where events wait while Redis is down",
    )
    max_message_bytes: int = Field(
        defaults.MAX_MESSAGE_BYTES, description="largest message `ib notify` accepts"
    )

    # listeners
    listen_timeout: float = Field(570.0, description="seconds `ib listen` waits before the restart reminder")
    listener_name: str = Field(
        defaults.LISTENER_NAME, min_length=1, max_length=64, description="default `ib listen --name`"
    )
    listen_backlog: int = Field(
        3600, description="seconds of past events a brand-new listener group starts with"
    )
    heartbeat_ttl: int = Field(15, description="seconds a heartbeat key lives without renewal")
    push_to_session: bool = Field(
        True,
        description="the worker pushes what you must act on into your own Claude Code sessions' inboxes "
        "(Claude Code >= 2.1.224); off: only `ib listen` tells them",
    )

    # this machine
    root: Path | None = Field(None, description="the repository; unset: found from the current folder")
    agent_id: str | None = Field(None, description="the agent this process acts for; set in agent sessions")
    worker_id: str = Field(
        default_factory=socket.gethostname, min_length=1, description="name of this machine's worker"
    )

    # agents
    agent_command: str = Field(
        "claude",
        min_length=1,
        description="program that runs a Claude Code agent; gets --settings, --session-id, PROMPT",
    )
    default_cli: str = Field(
        "claude",
        description="agent program for new agents when --cli is not given: claude, codex or gemini "
        "(empty: claude)",
    )
    model: str | None = Field(
        None, description="model for new agents (--model); unset: the program's default"
    )
    claude_model: str | None = Field(None, description="model for new Claude Code agents; unset: IB_MODEL")
    codex_model: str | None = Field(None, description="model for new Codex CLI agents; unset: IB_MODEL")
    gemini_model: str | None = Field(None, description="model for new Gemini CLI agents; unset: IB_MODEL")
    permission_mode: str = Field(
        DEFAULT_PERMISSION_MODE,
        description="Claude Code permission mode of new agents (acceptEdits, default, plan, dontAsk, ...)",
    )
    manager_permission_mode: str | None = Field(
        None, description="permission mode of new manager agents; unset: IB_PERMISSION_MODE"
    )
    worker_permission_mode: str | None = Field(
        None, description="permission mode of new worker agents; unset: IB_PERMISSION_MODE"
    )
    agent_env: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="comma-separated names of more variables agents get from the tmux server (never IB_*)",
    )
    tmux_socket: str | None = Field(None, description="tmux server socket name (tmux -L); unset: the default")
    pane_interval: float = Field(1.0, description="seconds between two looks at the agents' panes")
    send_delay: float = Field(0.1, description="seconds between typing into a pane and pressing Enter")
    overlap: str = Field(
        "hold",
        description="a ready task whose --touches overlap a task in flight: hold (wait for its merge), "
        "warn (claim it with a note) or ignore",
    )
    task_test_timeout: float = Field(
        600.0, description="seconds `ib task done` lets a task's test command run before failing it"
    )
    schedule_min_interval: float = Field(
        60.0, description="seconds a schedule must leave between two firings at least (cron: >= 60)"
    )
    plan_timeout: float = Field(
        600.0,
        description="seconds a planner (/plan, ib plan) has to write its plan before it fails",
    )
    plan_max_tasks: int = Field(100, description="most tasks a plan may have; more is refused")

    # the CLAUDE.md status block (`ib status-node`)
    status_max_messages: int = Field(
        50, description="messages for the person the status block shows (the newest)"
    )
    status_debounce: float = Field(
        2.0, description="seconds between two writes of the status block (then a final one)"
    )
    status_node_auto: bool = Field(
        True, description="the worker starts `ib status-node --auto` when the first root agent appears"
    )

    prices: Annotated[dict[str, tuple[float, ...]], NoDecode] = Field(
        default_factory=dict,
        description="model prices over the built-in table: MODEL=INPUT,OUTPUT,CACHE_WRITE,CACHE_READ;... "
        "in dollars per million tokens, MODEL a family (opus-4.6) or an exact model id",
    )

    # what waits on a person, repeated until answered (bus.inbox.attention, bot/attention/escalation.py)
    attention_dm_after: float = Field(
        300.0,
        description="seconds unanswered before a needs-you is repeated to each allowed user as a DM",
    )
    attention_channels_after: float = Field(
        900.0,
        description="seconds unanswered before a needs-you goes out through IB_ATTENTION_CHANNELS",
    )
    attention_repeat: float = Field(
        0.0, description="seconds between two repeats of each of those while unanswered; 0: once"
    )
    attention_channels: SecretStr | None = Field(
        None,
        description="apprise URLs (push, e-mail, chat webhooks) for what stays unanswered, separated by "
        "spaces or commas, e.g. ntfy://ntfy.sh/my-topic mailtos://user:pass@example.com",
    )
    # budgets and the runaway watchdog
    day_budget: str | None = Field(
        None,
        description="what all agents together may spend a day (UTC) unless `ib budget set --day` says "
        "otherwise: dollars (20$) or tokens (5M); unset: no day budget",
    )
    runaway_repeats: int = Field(
        6,
        description="the same tool call with the same arguments this many times in a row pauses the agent",
    )
    runaway_quiet_minutes: float = Field(
        20.0, description="minutes of a turn with no file change and no new text that pause the agent"
    )
    runaway_tokens_per_minute: int = Field(
        500_000,
        description="fresh tokens (input, output, cache writes) a minute, over 5 minutes, that pause "
        "the agent",
    )

    # the page
    web_port: int | None = Field(
        None,
        description="the port of `ib web`, the page (on 127.0.0.1); set, `ib up` starts it too; unset: a "
        "free port, and `ib up` starts no page",
    )

    # telegram
    telegram_token: SecretStr | None = Field(None, description="Bot API token; unset: no bot")
    telegram_chat_id: int | None = Field(None, description="the forum supergroup the bot serves")
    telegram_allowed_users: Annotated[list[int], NoDecode] = Field(
        default_factory=list, description="comma-separated user ids allowed to command the bot"
    )
    telegram_api_url: str = Field("https://api.telegram.org/bot", description="Bot API base URL")
    telegram_time_scale: float = Field(
        1.0, description="how much faster the bot's flood limits run: 1 for Telegram (tests: >1)"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The call's values, then the environment, then the `.env` read by `load_settings`."""
        environment = _Values(settings_cls, os.environ)
        env_file = _Values(settings_cls, _ENV_FILE_VALUES.get() or {})
        return init_settings, environment, env_file, file_secret_settings

    @field_validator(*(n.removeprefix(defaults.ENV_PREFIX).lower() for n in NUMBERS), mode="before")
    @classmethod
    def _plain_number(cls, value: Any, info: ValidationInfo) -> Any:
        """Numbers are read and bounded as the hot paths read them: by `bus.settings.setting_checks`, whose
        NUMBERS table holds each one's bounds (the only place they are written). A number given by a program
        (`Settings(events_maxlen=…)`) is held to the same bounds."""
        if value is None or isinstance(value, bool):
            return value  # an optional number left unset; a bool fails the field's own type
        name = defaults.ENV_PREFIX + str(info.field_name).upper()
        raw = value if isinstance(value, str) else str(value)
        found = value_problem(name, raw)
        if found:
            raise ValueError(found)
        return number(raw, NUMBERS[name][0]) if isinstance(value, str) else value

    @field_validator("listener_name")
    @classmethod
    def _listener_name_usable(cls, value: str) -> str:
        problem = name_problem("listener name", value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("namespace")
    @classmethod
    def _namespace_usable(cls, value: str) -> str:
        problem = defaults.namespace_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url_usable(cls, value: str | None) -> str | None:
        if value:
            try:
                Address.from_url(value)
            except ConfigError as e:
                raise ValueError(str(e).removeprefix("IB_REDIS_URL: ")) from e
        return value or None

    @field_validator("default_cli", "attention_channels", mode="before")
    @classmethod
    def _checked_text(cls, value: Any, info: ValidationInfo) -> Any:
        """Checked as the hot paths check them (`bus.settings.setting_checks.value_problem`)."""
        if isinstance(value, str):
            found = value_problem(defaults.ENV_PREFIX + str(info.field_name).upper(), value)
            if found:
                raise ValueError(found)
        return value

    @field_validator("default_cli")
    @classmethod
    def _default_cli(cls, value: str) -> str:
        return value.strip() or defaults.AGENT_PROGRAMS[0]

    @field_validator("overlap")
    @classmethod
    def _overlap_known(cls, value: str) -> str:
        return overlap_mode(value)

    @field_validator("model", "claude_model", "codex_model", "gemini_model")
    @classmethod
    def _model_name(cls, value: str | None) -> str | None:
        """Empty or blank: unset (the program's default, or IB_MODEL)."""
        return (value or "").strip() or None

    def model_for(self, program: str) -> str:
        """The model new agents of `program` (claude, codex, gemini) get: its own setting, else IB_MODEL,
        else "" (the program's default)."""
        own = getattr(self, f"{program}_model", None) if program in MODEL_PROGRAMS else None
        return own or self.model or ""

    @field_validator("permission_mode")
    @classmethod
    def _permission_mode_known(cls, value: str) -> str:
        return permission_mode(value)

    @field_validator("manager_permission_mode", "worker_permission_mode")
    @classmethod
    def _role_permission_mode_known(cls, value: str | None) -> str | None:
        return permission_mode(value) if value else None  # empty: the role has none of its own

    @field_validator("agent_env", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):
            problem = agent_env_problem(value)
            if problem:
                raise ValueError(problem)
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> Any:
        return parse_prices(value) if isinstance(value, str) else value

    @field_validator("day_budget")
    @classmethod
    def _day_budget(cls, value: str | None) -> str | None:
        if value and value.strip():
            parse_amount(value)
            return value.strip()
        return None

    @field_validator("worker_id")
    @classmethod
    def _worker_id_usable(cls, value: str) -> str:
        problem = worker_id_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("telegram_allowed_users", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return user_ids(value)
            except ValueError as e:
                raise ValueError(f"must be comma-separated numeric user ids, got {value!r}") from e
        return value

    @property
    def day_limit(self) -> Amount | None:
        """IB_DAY_BUDGET as an amount, None when unset."""
        return parse_amount(self.day_budget) if self.day_budget else None

    @property
    def replicas_to_wait(self) -> int:
        return defaults.replicas_to_wait(self.redis_wait_replicas, self.redis_url)

    @property
    def write_wait(self) -> tuple[int, int]:
        """(replicas, ms) every write that must outlive a failover waits for (bus.events.replication)."""
        return self.replicas_to_wait, self.redis_wait_ms

    def permission_mode_for(self, role: str) -> str:
        """The permission mode a new agent of `role` (manager, worker) starts in."""
        by_role = {"manager": self.manager_permission_mode, "worker": self.worker_permission_mode}
        return by_role.get(role) or self.permission_mode

    def repository(self, cwd: str | None = None) -> Path | None:
        """The repository root: `IB_ROOT`, else the one containing the current folder."""
        if self.root is not None:
            return self.root
        found = repo_root(cwd or os.getcwd())
        return Path(found) if found else None


def env_file_for(cwd: str | None = None, environ: dict[str, str] | None = None) -> Path | None:
    """The `.env` that applies: the repository root's (so agent worktrees see the same one)."""
    env = os.environ if environ is None else environ
    root = env.get(defaults.ENV_PREFIX + "ROOT") or repo_root(cwd or os.getcwd())
    if not root:
        return None
    candidate = Path(root) / ".env"
    # bus.settings.settings_file says what is wrong with it
    return candidate if os.path.lexists(candidate) else None


def env_file_values(env_file: Path | None) -> dict[str, str | None]:
    """What the `.env` sets, read by the one reader (ConfigError, one line, for a file it must not read)."""
    text = settings_file.read_text(str(env_file)) if env_file is not None else None
    return dotenv_file.read(text, os.environ) if text else {}


def load_settings(cwd: str | None = None, **overrides: Any) -> Settings:
    """Settings from env and `.env`; a bad value raises ConfigError naming the setting."""
    env_file = env_file_for(cwd)
    reading = _ENV_FILE_VALUES.set(env_file_values(env_file))
    try:
        return Settings(**overrides)
    except ValidationError as e:
        raise ConfigError(_describe(e, env_file, frozenset(overrides))) from e
    finally:
        _ENV_FILE_VALUES.reset(reading)


def _describe(error: ValidationError, env_file: Path | None, given: frozenset[str] = frozenset()) -> str:
    lines = []
    for item in error.errors():
        name = defaults.ENV_PREFIX + str(item["loc"][0]).upper() if item["loc"] else "settings"
        got = item.get("input")
        # a URL can hold a password (its validator shows it masked), a secret is never shown
        quoted = isinstance(got, str | int | float) and name != "IB_REDIS_URL" and name not in SECRETS
        shown = f" (got {got!r})" if quoted else ""
        if item["loc"] and str(item["loc"][0]) in given:
            where = "the call"  # a value the program passed, not one a person set
        else:
            where = "the environment" if name in os.environ or env_file is None else str(env_file)
        lines.append(f"{name}: {str(item['msg']).removeprefix('Value error, ')}{shown} (set in {where})")
    return "bad configuration: " + "; ".join(lines)


def sources(settings: Settings, cwd: str | None = None) -> list[tuple[str, str, str]]:
    """(setting, effective value with secrets masked, source) for `ib config`."""
    env_file = env_file_for(cwd)
    from_file = {k.upper(): v for k, v in env_file_values(env_file).items()}
    rows = []
    for name, field in Settings.model_fields.items():
        var = defaults.ENV_PREFIX + name.upper()
        if var in os.environ:
            source = "env"
        elif var in from_file:
            source = f".env ({env_file})"
        else:
            source = "default"
        rows.append((var, _shown(getattr(settings, name), field.annotation), source))
    return rows


def _shown(value: Any, annotation: Any) -> str:
    if isinstance(value, SecretStr):
        secret = value.get_secret_value()
        return "****" + secret[-4:] if len(secret) > 8 else "****"
    if value is None:
        return "(unset)"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "(none)"
    if isinstance(value, dict):  # IB_PRICES, as it is written
        return ";".join(f"{k}={','.join(f'{p:g}' for p in v)}" for k, v in value.items()) or "(none)"
    return str(value)
