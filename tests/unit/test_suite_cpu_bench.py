"""bench.suite_cpu reads the kernel's v3 accounting records: the 16-bit times, the name, the grouping."""

from __future__ import annotations

from bench.suite_cpu import RECORD, comp_t, group, read_records, table


def _record(name: bytes, utime: int, stime: int, version: bytes = b"\x03") -> bytes:
    times = (utime, stime, 0, 0, 0, 0, 0, 0)
    return RECORD.pack(b"\0", version, 0, 0, 0, 0, 7, 1, 1_800_000_000, 250.0, *times, name)


def test_comp_t_is_a_mantissa_and_a_base_8_exponent() -> None:
    assert (comp_t(0), comp_t(5), comp_t(0x1FFF), comp_t((1 << 13) | 3), comp_t((2 << 13) | 3)) == (
        0,
        5,
        8191,
        24,
        192,
    )


def test_records_are_read_and_grouped() -> None:
    data = _record(b"ib", 40, 5) + _record(b"ib", 2, 1) + _record(b"claude", (1 << 13) | 100, 0)
    ended = read_records(data + b"\0" * 10)  # a torn record at the end is not one
    assert [(e.command, e.cpu, e.elapsed) for e in ended] == [
        ("ib", 0.45, 2.5),
        ("ib", 0.03, 2.5),
        ("claude", 8.0, 2.5),
    ]
    assert [group(e) for e in ended] == [
        "ib ≥ 0.3 s (services, long commands)",
        "ib < 0.3 s (short)",
        "claude",
    ]
    lines = table(ended)
    assert lines[1].split() == ["8.0", "94.3%", "1", "claude"]  # 8 of 8.48
    assert lines[-1].split()[:3] == ["8.5", "100.0%", "3"]


def test_a_file_of_another_layout_is_not_read() -> None:
    assert read_records(_record(b"ib", 1, 1, version=b"\x02")) == []
