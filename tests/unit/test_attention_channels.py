"""The escalation channels' setting: URLs split, refused ones named by their scheme only, the server
each would deliver to, and the reminder's words."""

from __future__ import annotations

import logging

import apprise
import pytest

from bot.attention.channels import load_channels, scheme_of, server_of
from bus.inbox.attention_rules import reminder
from bus.settings.setting_checks import channel_urls


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("", []),
        ("  ", []),
        ("ntfy://ntfy.sh/a", ["ntfy://ntfy.sh/a"]),
        (
            "ntfy://ntfy.sh/a json://h/ ,mailtos://u:p@x.org",
            ["ntfy://ntfy.sh/a", "json://h/", "mailtos://u:p@x.org"],
        ),
        ("a,\nb", ["a", "b"]),
    ],
    ids=["empty", "blank", "one", "spaces-and-commas", "newline"],
)
def test_channel_urls(text: str, urls: list[str]) -> None:
    assert channel_urls(text) == urls


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("nonsense://token:secret@host", "nonsense://…"),
        ("no scheme at all", "(not a URL)"),
        ("b@d://x", "(not a URL)"),
    ],
    ids=["unknown-scheme", "no-scheme", "odd-scheme"],
)
def test_a_refused_url_shows_its_scheme_only(url: str, shown: str) -> None:
    assert scheme_of(url) == shown


@pytest.mark.parametrize(
    ("url", "server"),
    [
        ("json://127.0.0.1:9/", ("127.0.0.1", 9)),
        ("jsons://example.com/hook", ("example.com", 443)),
        ("ntfy://ntfy.example.org/topic", ("ntfy.example.org", 80)),
        ("tgram://123456:abcdef/12345", ("api.telegram.org", 443)),
        ("mailtos://user:pass@example.com", ("example.com", 587)),
        ("slack://T1/B1/C1", None),  # a token where a host would be: only the service knows
    ],
    ids=["json", "jsons", "ntfy-self-hosted", "telegram-cloud", "mail", "slack"],
)
def test_server_of(url: str, server: tuple[str, int] | None) -> None:
    assert server_of(apprise.Apprise.instantiate(url)) == server


def test_bad_urls_are_one_line_each_and_the_others_kept(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        channels = load_channels(
            "nonsense://t:secret@x json://127.0.0.1:9/ json:// mailtos://u:pw@example.com"
        )
    assert [c.number for c in channels] == [2, 4]
    assert channels[1].shown.startswith("mailtos://u:****@example.com")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "channel 1 (nonsense://…) is not a URL apprise can use" in lines[0]
    assert "channel 3 (json://…)" in lines[1]
    assert not any("secret" in line or "pw@" in line for line in lines)


@pytest.mark.parametrize(
    ("kind", "answer"),
    [
        ("permission", "ib approve agent-1 / ib deny agent-1"),
        ("question", "ib questions"),
        ("waiting", 'ib send agent-1 "..."'),
        ("error", 'ib send agent-1 "..."'),
        ("runaway", 'ib send agent-1 "..."'),
        ("limited", "goes on by itself at the reset"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v else None,
)
def test_reminder_says_how_long_and_how_to_answer(kind: str, answer: str) -> None:
    title, body = reminder(kind, "agent-1", "agent-1 asks to use Bash: rm -rf build", 330)
    assert title == f"agent-1 has waited 5m for you ({kind})"
    assert body.startswith("agent-1 asks to use Bash") and answer in body
