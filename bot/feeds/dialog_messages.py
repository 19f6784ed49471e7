"""One message per dialog in each topic. The pane watcher may see a dialog before the agent's hook has
told it: both publish a `permission` event with the same `prompt_id`, the hook's carrying what the pane
does not show (the tool, its command, the plan). The second replaces the first's message (an edit) rather
than adding a second message with a second set of buttons.

Pure: the consumer asks what to do with each dialog event and says which message showed it. It keeps
each message it learns of in Redis too (bot.feeds.dialog_memory) and hands back what a restart would forget.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

Dialog = tuple[int | None, str]  # (topic, prompt id)
KEEP = 512  # dialogs remembered (oldest forgotten first): enough for every dialog still open


@dataclass
class _Told(Generic[T]):
    first: T
    message_id: int | None = None  # None: its first message is not yet accepted by Telegram
    later: list[T] = field(default_factory=list)  # told again meanwhile: edits once the id is known


@dataclass(frozen=True)
class Send:
    """Show it as a new message."""


@dataclass(frozen=True)
class Edit(Generic[T]):
    """Show it in place of message `message_id`, which showed `first` (what the first telling had that
    this one lacks, the options as drawn, still holds)."""

    message_id: int
    first: T


@dataclass(frozen=True)
class Wait:
    """Hold it: the dialog's first message is on its way; `shown` hands it back once it is accepted."""


@dataclass
class Shown(Generic[T]):
    """What a message Telegram accepted changed: the items that waited for it (`ready`), and the dialogs
    it is now the message of, each with the item that first told it (`placed`)."""

    ready: list[T] = field(default_factory=list)
    placed: list[tuple[Dialog, T]] = field(default_factory=list)


class DialogMessages(Generic[T]):
    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._told: OrderedDict[Dialog, _Told[T]] = OrderedDict()
        self._first: dict[str, Dialog] = {}  # the token of a dialog's first message → the dialog

    def tell(self, dialog: Dialog, token: str, item: T) -> Send | Edit[T] | Wait:
        """What to do with `item` (sent with `token`), an event telling `dialog`."""
        told = self._told.get(dialog)
        if told is None:
            self._told[dialog] = _Told(item)
            self._first[token] = dialog
            self._forget_oldest()
            return Send()
        if told.message_id is None:
            told.later.append(item)
            return Wait()
        return Edit(told.message_id, told.first)

    def knows(self, dialog: Dialog) -> bool:
        return dialog in self._told

    def remember(self, dialog: Dialog, message_id: int, first: T) -> None:
        """`dialog` is shown by `message_id` (a message an earlier bot process sent), told first by
        `first`; what this process knows of it already stays."""
        if dialog not in self._told:
            self._told[dialog] = _Told(first, message_id)
            self._forget_oldest()

    def shown(self, tokens: tuple[str, ...], message_id: int | None) -> Shown[T]:
        """Telegram accepted a message carrying `tokens` as `message_id`: the items that waited for a
        dialog first shown there, to be told again (now an edit of it; a new message when no id came)."""
        shown = Shown[T]()
        for token in tokens:
            dialog = self._first.pop(token, None)
            if dialog is None or (told := self._told.get(dialog)) is None:
                continue
            told.message_id = message_id
            shown.ready.extend(told.later)
            told.later.clear()
            if message_id is None:
                del self._told[dialog]
            else:
                shown.placed.append((dialog, told.first))
        return shown

    def _forget_oldest(self) -> None:
        """Past `keep`, the oldest dialogs whose message is known are forgotten; none that holds items."""
        over = len(self._told) - self.keep
        for dialog in [d for d, told in self._told.items() if told.message_id is not None][: max(over, 0)]:
            del self._told[dialog]
