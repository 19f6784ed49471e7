"""The fault suite's counts: each scenario records what was sent, what arrived, what was lost and what
arrived twice; the suite writes them to a JSON file (`IB_FAULTS_REPORT`, default in the temp dir) and
`python -m tests.faults.tally [FILE]` prints them as the README's table."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path


def report_path() -> Path:
    return Path(os.environ.get("IB_FAULTS_REPORT") or Path(tempfile.gettempdir()) / "ittybus-faults.json")


@dataclass
class Row:
    scenario: str
    sent: int
    delivered: int
    lost: int
    twice: int
    note: str = ""


@dataclass
class Tally:
    rows: list[Row] = field(default_factory=list)

    def count(self, scenario: str, sent: Iterable[str], seen: Iterable[str], note: str = "") -> Row:
        """Compare what was sent with what was seen (each a message key): lost and duplicated."""
        wanted, got = list(sent), Counter(seen)
        row = Row(
            scenario,
            sent=len(wanted),
            delivered=sum(1 for key in set(wanted) if got[key]),
            lost=sum(1 for key in set(wanted) if not got[key]),
            twice=sum(n - 1 for key, n in got.items() if n > 1 and key in set(wanted)),
            note=note,
        )
        self.rows.append(row)
        return row

    def write(self, path: Path) -> None:
        path.write_text(json.dumps([asdict(r) for r in self.rows], indent=1) + "\n", encoding="utf-8")


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| fault | sent | delivered | lost | twice | notes |", "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        cells = (r["scenario"], r["sent"], r["delivered"], r["lost"], r["twice"], r["note"])
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else report_path()
    print(table(json.loads(path.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
