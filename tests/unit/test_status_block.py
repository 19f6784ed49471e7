"""The status block's pure core: the JSON of the seed's schema, the `ib send user` prefixes, the message cap,
and the splice into CLAUDE.md that keeps every byte outside the block."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from bus.inbox.ages import format_age
from worker.frontends.status_block import (
    NOTICE,
    STATUS_CLOSE,
    STATUS_OPEN,
    AgentRecord,
    UserMessage,
    build_status,
    cap_messages,
    read_block,
    render_block,
    schema_state,
    settle,
    splice,
)
from worker.message_kinds import MessageKind, classify_message

NOW = 1_768_145_400.0  # 2026-01-11T15:30:00Z

AGENTS = [
    AgentRecord("worker-xyz", "complete", NOW - 720, "Fix login bug " + "x" * 80),
    AgentRecord("manager-abc", "running", NOW - 300, "Implement dark mode feature\nwith a toggle"),
    AgentRecord("w1", "complete", NOW - 200, "css", manager="manager-abc"),
    AgentRecord("w2", "running", NOW - 100, "theme", manager="manager-abc"),
    AgentRecord("w3", "complete", NOW - 50, "icons", manager="w2"),
    AgentRecord("orphan", "waiting", NOW - 7200, "", manager="gone-agent"),
]
MESSAGES = [
    UserMessage("msg-2", NOW - 10, "complete", "Fixed login bug - ready for merge", sender="worker-xyz"),
    UserMessage("msg-1", NOW - 30, "question", "CSS variables or a theme provider?", sender="manager-abc"),
]


def test_status_follows_the_seed_schema() -> None:
    assert build_status(AGENTS, MESSAGES, NOW) == {
        "last_updated": "2026-01-11T15:30:00Z",
        "root_agents": [
            {
                "id": "orphan",
                "state": "waiting",
                "age": "2h",
                "prompt": "",
                "children": 0,
                "children_complete": 0,
            },
            {
                "id": "worker-xyz",
                "state": "complete",
                "age": "12m",
                "prompt": ("Fix login bug " + "x" * 80)[:60],
                "children": 0,
                "children_complete": 0,
            },
            {
                "id": "manager-abc",
                "state": "running",
                "age": "5m",
                "prompt": "Implement dark mode feature",
                "children": 3,
                "children_complete": 2,
            },
        ],
        "messages": [
            {
                "id": "msg-1",
                "from": "manager-abc",
                "timestamp": "2026-01-11T15:29:30Z",
                "type": "question",
                "content": "CSS variables or a theme provider?",
            },
            {
                "id": "msg-2",
                "from": "worker-xyz",
                "timestamp": "2026-01-11T15:29:50Z",
                "type": "complete",
                "content": "Fixed login bug - ready for merge",
            },
        ],
    }


def test_children_counts_can_be_left_out() -> None:
    status = build_status(AGENTS[:2], [], NOW, include_children=False)
    assert [sorted(agent) for agent in status["root_agents"]] == [["age", "id", "prompt", "state"]] * 2


def test_long_message_is_truncated_in_the_block() -> None:
    (entry,) = build_status([], [UserMessage("m", NOW, "status", "y" * 5000)], NOW)["messages"]
    assert len(entry["content"]) == 1000
    assert entry["content"].endswith("…")


@pytest.mark.parametrize(
    ("seconds", "age"),
    [
        pytest.param(-5, "0s", id="clock-skew"),
        pytest.param(0, "0s", id="zero"),
        pytest.param(59, "59s", id="59s"),
        pytest.param(60, "1m", id="1m-boundary"),
        pytest.param(3599, "59m", id="59m"),
        pytest.param(3600, "1h", id="1h-boundary"),
        pytest.param(86399, "23h", id="23h"),
        pytest.param(86400, "1d", id="1d-boundary"),
    ],
)
def test_format_age(seconds: float, age: str) -> None:
    assert format_age(seconds) == age


@pytest.mark.parametrize(
    ("state", "shown"),
    [
        pytest.param("running", "running", id="running"),
        pytest.param("creating", "running", id="creating"),
        pytest.param("compacting", "running", id="compacting"),
        pytest.param("unknown", "running", id="unknown"),
        pytest.param("waiting", "waiting", id="waiting"),
        pytest.param("rate_limited", "waiting", id="rate-limited"),
        pytest.param("complete", "complete", id="complete"),
        pytest.param("stopped", "stopped", id="stopped"),
        pytest.param("hibernating", "running", id="state-of-a-newer-worker"),
    ],
)
def test_schema_state(state: str, shown: str) -> None:
    assert schema_state(state) == shown
    status = build_status([AgentRecord("a", state, NOW, "goal")], [], NOW)
    assert status["root_agents"][0]["state"] == shown


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        pytest.param(
            "? Should I implement caching?", "question", "Should I implement caching?", id="question-mark"
        ),
        pytest.param("QUESTION: which db?", "question", "which db?", id="question-word"),
        pytest.param("! Rate limit hit, pausing", "alert", "Rate limit hit, pausing", id="bang"),
        pytest.param("ALERT:disk full", "alert", "disk full", id="alert-word"),
        pytest.param("COMPLETE: Dark mode ready", "complete", "Dark mode ready", id="complete"),
        pytest.param("DONE: migrated", "complete", "migrated", id="done"),
        pytest.param("Completed 3 of 5 tasks", "status", "Completed 3 of 5 tasks", id="plain-status"),
        pytest.param("done: lower case", "status", "done: lower case", id="prefix-is-case-sensitive"),
        pytest.param(" ? not at the start", "status", " ? not at the start", id="prefix-must-lead"),
        pytest.param("?", "question", "", id="bare-question-mark"),
    ],
)
def test_classify_message(text: str, kind: MessageKind, content: str) -> None:
    assert classify_message(text) == (kind, content)


def _messages(count: int) -> list[UserMessage]:
    return [UserMessage(f"msg-{i}", NOW + i, "status", str(i)) for i in range(count)]


@pytest.mark.parametrize(
    ("count", "limit", "kept"),
    [
        pytest.param(60, 50, [f"msg-{i}" for i in range(10, 60)], id="default-cap-keeps-newest"),
        pytest.param(3, 50, ["msg-0", "msg-1", "msg-2"], id="under-the-cap"),
        pytest.param(5, 2, ["msg-3", "msg-4"], id="small-cap"),
        pytest.param(5, 0, [], id="zero"),
    ],
)
def test_cap_messages(count: int, limit: int, kept: list[str]) -> None:
    shuffled = _messages(count)[::2] + _messages(count)[1::2]
    assert [m.id for m in cap_messages(shuffled, limit)] == kept


def test_build_status_caps_messages() -> None:
    status = build_status([], _messages(60), NOW)
    assert [m["id"] for m in status["messages"]] == [f"msg-{i}" for i in range(10, 60)]
    assert len(build_status([], _messages(60), NOW, max_messages=7)["messages"]) == 7


def test_settle_keeps_the_previous_block_when_only_the_clock_moved() -> None:
    first = render_block(build_status(AGENTS, MESSAGES, NOW))
    later = build_status(AGENTS, MESSAGES, NOW + 3600)
    assert render_block(settle(later, first)) == first
    changed = build_status(AGENTS[1:], MESSAGES, NOW + 3600)
    assert settle(changed, first) == changed
    assert settle(later, None) == later
    assert settle(later, "{broken") == later


BLOCK = render_block(build_status(AGENTS, MESSAGES, NOW))
OTHER_BLOCK = render_block(build_status(AGENTS[:1], [], NOW))


def _node(block: str, eol: str = "\n") -> bytes:
    return eol.join([STATUS_OPEN, NOTICE, *block.split("\n"), STATUS_CLOSE]).encode()


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param(b"", b"<ittybus>\n" + _node(BLOCK) + b"\n</ittybus>\n", id="empty-file"),
        pytest.param(
            b"# Notes\n",
            b"# Notes\n\n<ittybus>\n" + _node(BLOCK) + b"\n</ittybus>\n",
            id="no-section-appended",
        ),
        pytest.param(
            b"# Notes",
            b"# Notes\n\n<ittybus>\n" + _node(BLOCK) + b"\n</ittybus>",
            id="no-section-no-trailing-newline",
        ),
        pytest.param(
            b"# Notes\r\n\r\n",
            b"# Notes\r\n\r\n<ittybus>\r\n" + _node(BLOCK, "\r\n") + b"\r\n</ittybus>\r\n",
            id="no-section-crlf",
        ),
        pytest.param(
            b"a\n<ittybus>\n## Orchestration\n</ittybus>\nb\n",
            b"a\n<ittybus>\n## Orchestration\n" + _node(BLOCK) + b"\n\n</ittybus>\nb\n",
            id="section-without-block",
        ),
        pytest.param(
            b"a\n<ittybus>\ndocs\n  </ittybus>",
            b"a\n<ittybus>\ndocs\n" + _node(BLOCK) + b"\n\n  </ittybus>",
            id="section-at-end-no-trailing-newline",
        ),
        pytest.param(
            b"<ittybus>\ndocs\n<ittybus-status>\nold stuff\n</ittybus-status>\n</ittybus>\n",
            b"<ittybus>\ndocs\n" + _node(BLOCK) + b"\n</ittybus>\n",
            id="block-replaced",
        ),
        pytest.param(
            "<ittybus>\r\nrésumé 🤖\r\n<ittybus-status>\r\n{}\r\n</ittybus-status>\r\n</ittybus>".encode(),
            "<ittybus>\r\nrésumé 🤖\r\n".encode() + _node(BLOCK, "\r\n") + b"\r\n</ittybus>",
            id="crlf-unicode-no-trailing-newline",
        ),
        pytest.param(
            b"latin-1 \xe9t\xe9\n<ittybus>\n</ittybus>\n",
            b"latin-1 \xe9t\xe9\n<ittybus>\n" + _node(BLOCK) + b"\n\n</ittybus>\n",
            id="bytes-that-are-not-utf8-untouched",
        ),
        pytest.param(
            b"The `<ittybus-status>` node is kept up to date.\n<ittybus>\n</ittybus>\n",
            b"The `<ittybus-status>` node is kept up to date.\n<ittybus>\n"
            + _node(BLOCK)
            + b"\n\n</ittybus>\n",
            id="marker-in-prose-is-not-a-marker",
        ),
        pytest.param(
            b"<ittybus>\n<ittybus-status>\nleft over\n</ittybus>\n",
            b"<ittybus>\n" + _node(BLOCK) + b"\nleft over\n</ittybus>\n",
            id="lone-opening-marker-completed-nothing-lost",
        ),
        pytest.param(
            b"<ittybus>",
            b"<ittybus>\n" + _node(BLOCK),
            id="unclosed-section",
        ),
    ],
)
def test_splice(document: bytes, expected: bytes) -> None:
    spliced = splice(document, BLOCK)
    assert spliced == expected
    assert splice(spliced, BLOCK) is spliced
    assert json.loads(read_block(spliced) or "") == json.loads(BLOCK)


def test_crlf_document_gets_no_bare_newline() -> None:
    document = b"# Title\r\n\r\n<ittybus>\r\ndocs\r\n</ittybus>\r\n"
    spliced = splice(document, BLOCK)
    assert spliced.count(b"\n") == spliced.count(b"\r\n")


def test_unchanged_block_returns_the_very_same_bytes() -> None:
    document = splice(b"# Notes\n", BLOCK)
    assert splice(document, BLOCK) is document


def test_edits_made_between_two_updates_survive() -> None:
    first = splice(b"# Project\n\nIntro.\n", BLOCK)
    edited = (
        first.replace(b"# Project\n", b"# Project \xe2\x80\x94 renamed\r\n")
        .replace(b"<ittybus>\n", b"<ittybus>\nMy own note inside the section.\n")
        .replace(b"</ittybus>\n", b"</ittybus>\n\n## Added later\nno newline at the end")
    )
    second = splice(edited, OTHER_BLOCK)
    assert second == edited.replace(_node(BLOCK), _node(OTHER_BLOCK))
    assert json.loads(read_block(second) or "") == json.loads(OTHER_BLOCK)


def test_json_line_separators_and_markers_inside_messages_stay_in_their_strings() -> None:
    tricky = [UserMessage("m", NOW, "alert", "line\u2028sep\x85nel\n</ittybus-status>\n<ittybus>")]
    block = render_block(build_status([], tricky, NOW))
    document = splice(splice(b"<ittybus>\n</ittybus>\n", block), block)
    assert json.loads(read_block(document) or "")["messages"][0]["content"] == tricky[0].text


def test_read_block_without_a_block() -> None:
    assert read_block(b"# nothing here\n<ittybus>\n</ittybus>\n") is None
    assert read_block(b"<ittybus-status>\n") is None


@given(before=st.binary(max_size=200), after=st.binary(max_size=200))
def test_bytes_around_the_block_survive(before: bytes, after: bytes) -> None:
    assume(b"ittybus" not in before + after)
    document = before + b"\n<ittybus-status>\nold\n</ittybus-status>\n" + after
    spliced = splice(document, OTHER_BLOCK)
    assert spliced.startswith(before + b"\n<ittybus-status>")
    assert spliced.endswith(b"</ittybus-status>\n" + after)
