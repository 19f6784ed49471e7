"""The options of a dialog or a question, as every event carries them in `data.options`.

One shape whichever producer made the event (a hook, the pane watcher, `ib ask`):
`[{"number": 1, "label": "Yes"}, ...]`, in the order shown. `number` is the digit the dialog draws beside
the option (what `ib answer AGENT N` types), or null when it draws none or the producer cannot know it: a
hook tells of a dialog before Claude Code draws it, so its permission and plan options are the answers
`ib answer` takes by meaning (`approve`, `approve always`, `deny`; `approve`, `keep planning`), and the
options of `ib ask` are answered by their text. `label` is the option's text.

Pure and light (the hooks' path): no imports at run time. `options_of` also reads the plain list of words
older producers wrote, so events already on the stream still read.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterable


def listed(labels: Iterable[str], numbered: bool = False) -> list[dict[str, object]]:
    """`labels` in the events' shape: numbered 1, 2, ... as a dialog draws them, or without numbers."""
    return [{"number": index + 1 if numbered else None, "label": label} for index, label in enumerate(labels)]


def options_of(value: object) -> list[tuple[int | None, str]] | None:
    """(number, label) of each option in an event's `data.options`; [] for none; None when the value is
    not a list of options (an option without a text label, a number that is not a whole number, plain
    words mixed with options)."""
    if value is None:
        return []
    if not isinstance(value, list):
        return None
    if value and all(isinstance(option, str) for option in value):  # an older producer's plain words
        return [(None, option) for option in value]
    found: list[tuple[int | None, str]] = []
    for option in value:
        number = option.get("number") if isinstance(option, dict) else None
        label = option.get("label") if isinstance(option, dict) else None
        if not isinstance(label, str) or (number is not None and type(number) is not int):
            return None
        found.append((number, label))
    return found
