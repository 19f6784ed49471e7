"""Reading `git merge-tree --write-tree -z --stdin` (git >= 2.38): one outcome per merged pair, the conflicted
files with their kind (content, binary, modify/delete, rename/delete, add/add, ...) and the index stages git
would leave, and the hunks of a file from the conflict markers in the merged tree. Pure: bytes in, values out.

Paths are kept exactly: bytes decoded as UTF-8 with `surrogateescape`, so a name with control characters or
bytes that are not UTF-8 goes back to git unchanged; `printable` makes one line of it for people.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ENCODING = "utf-8"
ERRORS = "surrogateescape"

_KIND_RANK = {"binary": 0, "modify/delete": 1, "rename/delete": 1, "add/add": 2, "content": 3}
"""When git says several things about one path, the most telling one names it (a binary file is also a
content conflict to git)."""


class MergeTreeOutputError(ValueError):
    """`git merge-tree` printed something this parser does not read (a newer git, or a failed merge)."""


@dataclass(frozen=True)
class Stage:
    """One side git would leave in the index: 1 = the merge base, 2 = ours, 3 = theirs."""

    stage: int
    mode: str
    oid: str


@dataclass(frozen=True)
class ConflictedFile:
    path: str
    kind: str
    """`content`, `binary`, `add/add`, `modify/delete`, `rename/delete`, ... as git names it."""
    stages: tuple[Stage, ...] = ()
    related: tuple[str, ...] = ()
    """Other paths git names with it (the old name of a renamed file)."""

    @property
    def textual(self) -> bool:
        """Both sides hold the file and git wrote conflict markers into it (hunks can be read)."""
        sides = {s.stage for s in self.stages}
        return self.kind in ("content", "add/add") and {2, 3} <= sides


@dataclass(frozen=True)
class MergeOutcome:
    clean: bool
    tree: str
    files: tuple[ConflictedFile, ...] = ()


@dataclass(frozen=True)
class Hunk:
    """One conflict region: where it starts (1-based, counted in `ours`'s lines as far as the merged file
    shows them) and each side's lines."""

    line: int
    ours: tuple[str, ...]
    theirs: tuple[str, ...]
    base: tuple[str, ...] = field(default=())


def parse_batch(output: bytes) -> list[MergeOutcome]:
    """Every merge of one `git merge-tree --write-tree -z --stdin` run, in input order. Raises
    MergeTreeOutputError for a merge git could not run (status < 0) or output it does not recognise."""
    items = output.decode(ENCODING, ERRORS).split("\0")
    outcomes: list[MergeOutcome] = []
    at = 0
    while at < len(items) and items[at] != "":
        outcome, at = _one(items, at)
        outcomes.append(outcome)
    return outcomes


def _one(items: list[str], at: int) -> tuple[MergeOutcome, int]:
    status = items[at]
    if status not in ("0", "1") or at + 2 >= len(items):
        raise MergeTreeOutputError(f"git merge-tree could not merge (status {status!r})")
    tree = items[at + 1]
    at += 2
    if status == "1":
        return MergeOutcome(True, tree), at + 1  # a clean merge ends with an empty item
    stages: dict[str, list[Stage]] = {}
    while at < len(items) and items[at] != "":
        path, stage = _stage(items[at])
        stages.setdefault(path, []).append(stage)
        at += 1
    kinds, related, at = _messages(items, at + 1)
    files = tuple(
        ConflictedFile(path, _kind(kinds.get(path, [])), tuple(found), tuple(related.get(path, ())))
        for path, found in stages.items()
    )
    return MergeOutcome(False, tree, files), at


def _stage(item: str) -> tuple[str, Stage]:
    """`<mode> <oid> <stage>\\t<path>`; the path may hold anything but NUL (tabs and newlines included)."""
    head, tab, path = item.partition("\t")
    parts = head.split(" ")
    if not tab or len(parts) != 3 or not parts[2].isdigit():
        raise MergeTreeOutputError(f"unexpected conflicted-file line in git merge-tree output: {item[:80]!r}")
    return path, Stage(int(parts[2]), parts[0], parts[1])


def _messages(items: list[str], at: int) -> tuple[dict[str, list[str]], dict[str, list[str]], int]:
    """The informational records (`<n> NUL <path>... NUL <type> NUL <message> NUL`) up to the empty item
    that ends this merge: the conflict kinds said of each path, and the paths named together."""
    kinds: dict[str, list[str]] = {}
    related: dict[str, list[str]] = {}
    while at < len(items) and items[at] != "":
        if not items[at].isdigit():
            raise MergeTreeOutputError(f"unexpected message record in git merge-tree output: {items[at]!r}")
        count = int(items[at])
        paths = items[at + 1 : at + 1 + count]
        kind_type, message = [*items[at + 1 + count : at + 3 + count], "", ""][:2]
        at += 3 + count
        kind = conflict_kind(kind_type, message)
        if kind is None:
            continue
        for path in paths:
            kinds.setdefault(path, []).append(kind)
            related.setdefault(path, []).extend(p for p in paths if p != path)
    return kinds, related, at + 1


def conflict_kind(kind_type: str, message: str) -> str | None:
    """The kind of a conflict record (None for `Auto-merging` and other news): the message's
    `CONFLICT (<kind>):` prefix (it tells add/add from content), else the type's."""
    for text in (message, kind_type):
        if text.startswith("CONFLICT (") and ")" in text:
            kind = text[len("CONFLICT (") : text.index(")")]
            return "content" if kind == "contents" else kind
    return None


def _kind(kinds: list[str]) -> str:
    if not kinds:
        return "content"
    return min(kinds, key=lambda k: (_KIND_RANK.get(k, 1), k))


def parse_hunks(text: str) -> tuple[Hunk, ...]:
    """The conflict regions of a merged file's text (`<<<<<<<`, optional `|||||||` base, `=======`,
    `>>>>>>>`; a longer marker of the same sign counts too). An unterminated region is ignored."""
    hunks: list[Hunk] = []
    ours_line = 0
    section: str | None = None
    sides: dict[str, list[str]] = {}
    start = 0
    for line in text.split("\n"):
        marker = _marker(line)
        if section is None:
            if marker == "<":
                section, sides, start = "ours", {"ours": [], "base": [], "theirs": []}, ours_line + 1
            else:
                ours_line += 1
            continue
        if marker == "|" and section == "ours":
            section = "base"
        elif marker == "=" and section in ("ours", "base"):
            section = "theirs"
        elif marker == ">" and section == "theirs":
            hunks.append(Hunk(start, tuple(sides["ours"]), tuple(sides["theirs"]), tuple(sides["base"])))
            ours_line += len(sides["ours"])
            section = None
        else:
            sides[section].append(line)
    return tuple(hunks)


def _marker(line: str) -> str | None:
    """`<`, `|`, `=` or `>` for a conflict marker line (seven or more of the sign; `=` alone on its line),
    else None."""
    sign = line[:1]
    if sign not in "<|=>" or not line.startswith(sign * 7):
        return None
    rest = line.lstrip(sign)
    if sign == "=":
        return "=" if rest.strip() == "" else None
    return sign if rest == "" or rest.startswith(" ") else None


def printable(path: str) -> str:
    """A path on one line for people: bytes that are not UTF-8 as U+FFFD, control characters escaped
    (`\\t`, `\\n`, `\\x1b`)."""
    text = path.encode(ENCODING, ERRORS).decode(ENCODING, "replace")
    out = []
    for char in text:
        code = ord(char)
        if char == "\\":
            out.append("\\\\")
        elif char == "\t":
            out.append("\\t")
        elif char == "\n":
            out.append("\\n")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        else:
            out.append(char)
    return "".join(out)
