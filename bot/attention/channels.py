"""The channels beyond Telegram that an unanswered "needs you" goes out through (IB_ATTENTION_CHANNELS):
push, e-mail and chat webhooks, each an apprise URL, delivered by the apprise library.

A URL apprise cannot use is left out and one line says so; a server that does not answer at start-up
is one line too, and kept (each escalation tries it again). Neither stops the others.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from bus.settings.setting_checks import channel_urls

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import apprise

PROBE_TIMEOUT = 3.0  # seconds a start-up check waits for a channel's server to accept a connection


@dataclass(frozen=True)
class Channel:
    """One configured channel: its place in the setting (1-based), its URL with secrets masked, and the
    apprise object that delivers to it."""

    number: int
    shown: str
    notifier: apprise.Apprise

    @property
    def name(self) -> str:
        """Its delivery mark (bus.inbox.attention_rules.Round.target): the position, never the secret URL."""
        return str(self.number)

    async def deliver(self, title: str, body: str) -> bool:
        """Whether the channel took the message."""
        try:
            return bool(await self.notifier.async_notify(body=body, title=title))
        except Exception:  # a service's plugin that breaks must not take the bot's other work down
            log.exception("channel %d (%s): apprise failed", self.number, self.shown)
            return False


def scheme_of(url: str) -> str:
    """What of a refused URL a log line may show: its scheme, never the rest (it may hold a secret)."""
    scheme, found, _rest = url.partition("://")
    return f"{scheme}://…" if found and scheme.isalnum() else "(not a URL)"


def load_channels(text: str) -> list[Channel]:
    """The channels apprise can use, in order; one warning line for each URL it cannot."""
    urls = channel_urls(text)
    if not urls:
        return []
    import apprise  # here, not above: its plugins cost a sixth of the bot's start, and most set no channel

    # apprise logs each refused URL (secrets and all) and each failed send, every time: the bot says
    # each problem once, in its own words, with the URL masked
    logging.getLogger("apprise").setLevel(logging.CRITICAL)
    channels = []
    for number, url in enumerate(urls, start=1):
        notifier = apprise.Apprise()
        if not notifier.add(url):
            log.warning(
                "IB_ATTENTION_CHANNELS: channel %d (%s) is not a URL apprise can use; left out, the others "
                "are used (see https://github.com/caronc/apprise/wiki for the URL of each service)",
                number,
                scheme_of(url),
            )
            continue
        channels.append(Channel(number, _masked(notifier[0]), notifier))
    return channels


def server_of(service: Any) -> tuple[str, int] | None:
    """The host and port a channel delivers to, when its URL says: a cloud service's API, a mail server,
    or the host a self-hosted one names; None when only the service knows (a token in the host's place)."""
    api = getattr(service, "notify_url", None)
    if isinstance(api, str) and api.startswith(("http://", "https://")):
        parts = urlsplit(api)
        return (
            (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
            if parts.hostname
            else None
        )
    host = getattr(service, "smtp_host", None) or getattr(service, "host", None)
    if not isinstance(host, str) or not ("." in host or ":" in host or host == "localhost"):
        return None
    port = getattr(service, "port", None)
    return host, int(port) if port else (443 if getattr(service, "secure", False) else 80)


async def check_reachable(channels: list[Channel], timeout: float = PROBE_TIMEOUT) -> list[int]:
    """The numbers of the channels whose server accepts no connection now; one warning line each."""
    results = await asyncio.gather(*(_probe(c, timeout) for c in channels))
    down = []
    for channel, problem in zip(channels, results, strict=True):
        if problem:
            down.append(channel.number)
            log.warning(
                "IB_ATTENTION_CHANNELS: channel %d (%s) is unreachable (%s); kept, each escalation tries it "
                "again, and the others are used meanwhile",
                channel.number,
                channel.shown,
                problem,
            )
    return down


async def _probe(channel: Channel, timeout: float) -> str:
    server = server_of(channel.notifier[0])
    if server is None:
        return ""
    host, port = server
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except TimeoutError:
        return f"{host}:{port} did not answer in {timeout:g} s"
    except OSError as e:
        return f"{host}:{port}: {e.strerror or e}"
    writer.close()
    return ""


def _masked(service: Any) -> str:
    url = service.url(privacy=True)
    return str(url).split("?", 1)[0]
