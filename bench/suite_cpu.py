"""Where a test run's CPU goes, by program, from the kernel's process accounting.

    accton /var/log/account/pacct; bash tests/run.sh; accton off
    .venv/bin/python -m bench.suite_cpu /var/log/account/pacct

Every process that ended while accounting was on is one record (the Linux `acct_v3` layout): its command
name (the first 15 bytes of what it executed: `ib`, `claude`, `node`, `python3` for the warm server and the
commands it forks, `python` for pytest's workers and the fakes) and its user and system time. `ib`
processes are split at 0.3 s of CPU: above, the services the tests start (`ib worker`, `bot`, `web`, `mcp`,
`up`) and long commands; below, the short ones (the warm server's clients, the hooks). A process still
running when accounting stops is not counted.
"""

from __future__ import annotations

import struct
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

RECORD = struct.Struct("<ccHIIIIIIf8H16s")  # struct acct_v3 (linux/acct.h): 64 bytes
TICKS = 100  # AHZ: the units of the times
SERVICE_CPU = 0.3  # seconds: an `ib` process above this is a service or a long command


@dataclass(frozen=True)
class Ended:
    command: str
    cpu: float  # seconds, user + system
    started: int  # epoch seconds
    elapsed: float  # seconds


def comp_t(value: int) -> int:
    """The kernel's 16-bit time: a 13-bit mantissa and a 3-bit base-8 exponent."""
    return (value & 0x1FFF) << (3 * (value >> 13))


def read_records(data: bytes) -> list[Ended]:
    """Every whole v3 record of `data` (a record of another version ends the reading: not this layout)."""
    ended = []
    for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        if fields[1] != b"\x03":
            break
        utime, stime = comp_t(fields[10]), comp_t(fields[11])
        name = fields[18].split(b"\0", 1)[0].decode("utf-8", "replace")
        ended.append(Ended(name, (utime + stime) / TICKS, fields[8], fields[9] / TICKS))
    return ended


def group(record: Ended) -> str:
    if record.command == "ib":
        return "ib ≥ 0.3 s (services, long commands)" if record.cpu >= SERVICE_CPU else "ib < 0.3 s (short)"
    return record.command


def table(ended: list[Ended], rows: int = 15) -> list[str]:
    cpu: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for record in ended:
        cpu[group(record)] += record.cpu
        count[group(record)] += 1
    total = sum(cpu.values())
    lines = [f"{'CPU s':>8} {'share':>6} {'processes':>9}  program"]
    for name in sorted(cpu, key=lambda n: -cpu[n])[:rows]:
        lines.append(f"{cpu[name]:8.1f} {cpu[name] / total:6.1%} {count[name]:9d}  {name}")
    if ended:
        ends = [r.started + r.elapsed for r in ended]
        lines.append(
            f"{total:8.1f} {1:6.1%} {len(ended):9d}  in all, ended over {max(ends) - min(ends):.0f} s"
        )
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m bench.suite_cpu PACCT_FILE", file=sys.stderr)
        return 2
    try:
        data = Path(argv[0]).read_bytes()
    except OSError as e:
        print(f"bench.suite_cpu: cannot read {argv[0]}: {e.strerror}", file=sys.stderr)
        return 1
    print("\n".join(table(read_records(data))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
