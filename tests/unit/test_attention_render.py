"""What a person reads of the attention items: `ib attention`'s lines, /attention's message, and which
levels of escalation a configuration uses."""

from __future__ import annotations

import pytest

from bot.attention.escalation import schedule_for
from bot.handlers.attention_handlers import attention_text
from bus.inbox.attention import Item, listing
from bus.inbox.attention_rules import Schedule
from bus.settings.settings import Settings

NOW = 1_800_000_000.0


def _item(agent: str, kind: str, msg: str, waited: float) -> Item:
    return Item(id=f"n-{agent}", agent=agent, kind=kind, event="1-0", raised_at=NOW - waited, msg=msg)


def test_listing_says_how_long_who_what_and_how_to_answer() -> None:
    items = [
        _item("maker", "permission", "maker asks to use Bash: make", 400),
        _item("scribe", "error", "", 5),
    ]
    assert listing(items, NOW) == [
        "  6m  maker  permission: maker asks to use Bash: make  "
        "(ib approve maker / ib deny maker, or the buttons in its topic)",
        '  5s  scribe  error: error  (ib send scribe "..." or a message in its topic)',
    ]


def test_the_telegram_message_escapes_what_agents_wrote() -> None:
    items = [_item("maker", "question", "Agent maker asks: <b>x</b> & y?", 7200)]
    text = attention_text(items, NOW)
    assert text.startswith("<b>1 waiting on you</b>, oldest first:\n2h  maker  question: ")
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y?" in text
    assert attention_text([], NOW) == "Nothing waits on you."


@pytest.mark.parametrize(
    ("users", "channels", "schedule"),
    [
        (2, 1, Schedule(dm_after=300.0, channels_after=900.0)),
        (0, 1, Schedule(dm_after=None, channels_after=900.0)),
        (2, 0, Schedule(dm_after=300.0, channels_after=None)),
        (0, 0, Schedule(dm_after=None, channels_after=None)),
    ],
    ids=["both", "no-users", "no-channels", "neither"],
)
def test_a_level_with_nobody_to_send_to_is_left_out(users: int, channels: int, schedule: Schedule) -> None:
    settings = Settings(attention_dm_after=300, attention_channels_after=900, attention_repeat=0)
    assert schedule_for(settings, users, channels) == schedule
