"""What Telegram checks in a message's markup: HTML entities (parse_mode=HTML) and inline keyboards.

`visible_text` returns the text a person sees, or raises the `can't parse entities` error Telegram
gives for markup it rejects: unsupported tags, unmatched or unclosed tags.
"""

from __future__ import annotations

import html
import re
from typing import Any

from tests.fake_telegram.errors import ApiError, bad_request

CALLBACK_DATA_MAX_BYTES = 64

# Tags of Telegram's HTML parse mode (https://core.telegram.org/bots/api#html-style).
TAGS = frozenset(
    [
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "span",
        "tg-spoiler",
        "a",
        "tg-emoji",
        "code",
        "pre",
        "blockquote",
    ]
)

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*)?)>")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});")
_BUTTON_ACTIONS = ("callback_data", "url", "switch_inline_query", "switch_inline_query_current_chat", "pay")


def _parse_error(what: str) -> ApiError:
    return bad_request(f"can't parse entities: {what}")


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def visible_text(text: str, parse_mode: str | None) -> str:
    """The text Telegram shows for `text` sent with `parse_mode` (only HTML is understood)."""
    if parse_mode is None or parse_mode == "":
        return text
    if parse_mode.lower() != "html":
        raise bad_request(f"unsupported parse_mode {parse_mode!r} (the fake speaks HTML only)")
    out: list[str] = []
    stack: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "<":
            i = _tag(text, i, stack)
            continue
        if char == "&" and (m := _ENTITY.match(text, i)):
            out.append(html.unescape(m.group(0)))
            i = m.end()
            continue
        out.append(char)
        i += 1
    if stack:
        raise _parse_error(f'Can\'t find end tag corresponding to start tag "{stack[-1]}"')
    return "".join(out)


def _tag(text: str, i: int, stack: list[str]) -> int:
    m = _TAG.match(text, i)
    offset = _byte_offset(text, i)
    if m is None:
        raise _parse_error(f"Unexpected end of name token at byte offset {offset}")
    closing, name = m.group(1) == "/", m.group(2).lower()
    if name not in TAGS:
        kind = "end" if closing else "start"
        raise _parse_error(f'Unsupported {kind} tag "{name}" at byte offset {offset}')
    if not closing:
        stack.append(name)
    elif not stack:
        raise _parse_error(f"Unexpected end tag at byte offset {offset}")
    elif stack[-1] != name:
        raise _parse_error(
            f'Unmatched end tag at byte offset {offset}, expected "</{stack[-1]}>", found "</{name}>"'
        )
    else:
        stack.pop()
    return m.end()


def check_reply_markup(markup: Any) -> dict[str, Any] | None:
    """The markup as stored, after Telegram's checks of inline keyboards (64-byte callback data)."""
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    keyboard = markup.get("inline_keyboard")
    if keyboard is None:
        return markup
    if not isinstance(keyboard, list) or not all(isinstance(row, list) for row in keyboard):
        raise bad_request('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays')
    for row in keyboard:
        for button in row:
            _check_button(button)
    return markup


def _check_button(button: Any) -> None:
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise bad_request('can\'t parse inline keyboard button: Field "text" must be of type String')
    if not any(key in button for key in _BUTTON_ACTIONS):
        raise bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    data = button.get("callback_data")
    if data is not None and not (
        isinstance(data, str) and 1 <= len(data.encode()) <= CALLBACK_DATA_MAX_BYTES
    ):
        raise bad_request("BUTTON_DATA_INVALID")
