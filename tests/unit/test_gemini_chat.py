"""Gemini CLI's chat log (a real 0.61.0 session: a command and a new file, approved, then a second turn)
read as the agent's output and its tokens: a message written again with its tool calls shows its text
and counts its tokens once, the same items however the file is cut into reads, and unknown or broken
lines never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.costs.usage import spend
from worker.programs.gemini.chat import ChatParser, result_text, shell_output, turn_end
from worker.programs.gemini.program import GeminiCli
from worker.programs.gemini.usage import UsageReader, read_chat
from worker.programs.output import OutputItem

CHAT = Path(__file__).parents[1] / "fixtures" / "gemini-0.61.0" / "chat-two-turns.jsonl"
NOTES = "/tmp/ib-gemini-capture/repo/notes.txt"


def _fed(data: bytes, cut: int) -> list[OutputItem]:
    """What the worker's tail gets reading `data` `cut` bytes at a time from its stored offset."""
    parser, items, offset, end = ChatParser(), [], 0, 0
    while end < len(data):
        end = min(len(data), end + cut)
        found, consumed = parser.feed(data[offset:end])
        items += found
        offset += consumed
    return items


def test_the_output_of_two_turns() -> None:
    items, consumed = GeminiCli().transcript_reader().feed(CHAT.read_bytes())
    assert consumed == CHAT.stat().st_size
    assert [(i.kind, i.text, i.tool) for i in items] == [
        ("prompt", "", None),  # the session context Gemini CLI writes first is not a prompt
        ("text", "Let me run the build first.", None),
        ("tool_use", "**Bash**(echo built > build.log && cat build.log)", "Bash"),
        ("tool_result", "Output 1 line", "Bash"),
        ("text", "Now the notes file.", None),
        ("tool_use", f"**Write**({NOTES})", "Write"),
        ("tool_result", "Wrote 2 lines", "Write"),
        ("text", "Built and wrote the notes.\n\nI HAVE COMPLETED THE GOAL", None),
        ("prompt", "", None),
        ("text", "Which one?\n\nWAITING", None),
    ]
    assert [i.tokens for i in items if i.kind == "text"] == [1234, 1227, 1213, 1204]


@pytest.mark.parametrize("cut", [1, 61, 4096])
def test_the_same_items_however_the_log_is_cut(cut: int) -> None:
    whole, _ = ChatParser().feed(CHAT.read_bytes())
    assert _fed(CHAT.read_bytes(), cut) == whole


def test_each_answer_s_tokens_once() -> None:
    records, unreadable = read_chat(str(CHAT))
    assert unreadable == 0
    assert [(r.model, r.input, r.cache_read, r.output) for r in records] == [
        ("gemini-2.5-flash", 1200, 0, 34),
        ("gemini-2.5-flash", 1200, 0, 27),
        ("gemini-2.5-flash", 1200, 0, 13),
        ("gemini-2.5-flash", 1200, 0, 4),
    ]


def test_an_answer_rewritten_in_the_next_read_counts_once() -> None:
    lines = CHAT.read_bytes().splitlines()
    first = GeminiCli().usage_reader("", "t-2")
    early = first.lines(lines[:5])  # the answer's first line; its rewrite with the tool call is line 7
    late = GeminiCli().usage_reader(first.last, "t-2").lines(lines[5:])
    assert (len(early), len(late)) == (1, 3)
    assert {r.task for r in early + late} == {"t-2"}


def test_cached_thoughts_and_tool_tokens() -> None:
    tokens = '{"input":1000,"output":10,"cached":600,"thoughts":5,"tool":7,"total":1022}'
    line = f'{{"id":"m1","type":"gemini","content":"x","tokens":{tokens},"model":"gemini-9"}}'
    [record] = UsageReader().lines([line])
    assert (record.input, record.cache_read, record.output) == (407, 600, 15)
    assert spend([record]).unpriced == ("gemini-9",)


def test_a_cut_line_is_unreadable_and_other_lines_are_not_usage() -> None:
    reader = UsageReader()
    assert reader.lines(['{"id":"m1","type":"gemini","tokens":{"inp', "not json", "{}", '{"$set":{}}']) == []
    assert reader.unreadable == 2


def test_a_failed_tool_and_shell_output() -> None:
    response = {"functionResponse": {"response": {"error": "Command exited with code 1"}}}
    failed = {
        "name": "run_shell_command",
        "args": {"command": "false"},
        "status": "error",
        "result": [response],
    }
    assert result_text(failed) == "Error: Command exited with code 1"
    report = "<untrusted_context>\nOutput: a\nb\nProcess Group PGID: 1\n</untrusted_context>"
    assert shell_output(report) == "a\nb"
    assert shell_output("Command produced no output") == ""


def test_unknown_messages_are_no_crash() -> None:
    data = (
        b'{"sessionId":"s","kind":"main"}\n'
        b'{"id":"i1","type":"info","content":"Switched model"}\n'
        b'{"id":"g1","type":"gemini","content":[{"text":"parts"}],"toolCalls":[{"name":"x"}, 3]}\n'
        b'{"$set":{"messages":[{"id":"u0","type":"user","content":"old"}]}}\n'
    )
    items, consumed = ChatParser().feed(data)
    assert consumed == len(data)
    assert [(i.kind, i.text) for i in items] == [("text", "parts")]


def test_a_resumed_session_s_replayed_history_counts_once() -> None:
    """`gemini --resume latest` appends to the same log, after a `$set` of every earlier message (a real
    capture, tests/integration/test_gemini_agents.py's resume): nothing in it is shown or counted again."""
    resumed = CHAT.with_name("chat-resumed.jsonl")
    items, _ = ChatParser().feed(resumed.read_bytes())
    assert [(i.kind, i.text) for i in items] == [
        ("prompt", ""),
        ("text", "Noted: the codeword is PERIWINKLE.\nWAITING"),
        ("prompt", ""),
        ("text", "It was PERIWINKLE.\nI HAVE COMPLETED THE GOAL"),
    ]
    assert len(read_chat(str(resumed))[0]) == 2


def _cut_before(data: bytes, text: bytes) -> bytes:
    """The log as it stood before the line holding `text` was written."""
    return data[: data.rfind(b"\n", 0, data.index(text)) + 1]


def test_the_turn_s_answer_is_its_last_message_whole() -> None:
    """What AfterAgent's turn ended with, read from the chat log, since `prompt_response` garbles a
    streamed answer: the last message with text since the person's last prompt."""
    data = CHAT.read_bytes()
    assert turn_end(data)[0] == "Which one?\n\nWAITING"
    first_turn = _cut_before(data, b'"and the docs"')
    assert turn_end(first_turn)[0] == "Built and wrote the notes.\n\nI HAVE COMPLETED THE GOAL"
    assert turn_end(_cut_before(data, b'"Which one?'))[0] == ""  # asked, not answered yet
    assert turn_end(b"")[0] == ""
    assert turn_end(b'{"type": "gemini", "content": "cut')[0] == ""  # a line still being written


ERRORS = CHAT.with_name("chat-api-errors.jsonl")  # a 400, then two used-up quotas, each dialog "2. Stop"
BAD_REQUEST = (
    '[API Error: {"error":{"code":400,"message":"The scripted request was refused.",'
    '"status":"INVALID_ARGUMENT"}}]'
)


def test_a_turn_an_api_error_ended_has_that_error() -> None:
    """0.61.0 hands AfterAgent only "[no response text]" for such a turn; its chat log has the error."""
    data = ERRORS.read_bytes()
    assert turn_end(_cut_before(data, b'"try once more"')) == ("Ready.\n\nWAITING", "")
    assert turn_end(_cut_before(data, b'"and now (1)"')) == ("", BAD_REQUEST)
    quota, _ = turn_end(_cut_before(data, b'"and again (1)"'))[1].split("\n", 1)
    assert quota.startswith("[API Error: You exceeded your current quota") and quota.endswith(
        "paid_tier_input_token_count"
    )
    answer, daily = turn_end(data)
    assert answer == "" and daily.startswith(
        "[API Error: You have exhausted your daily quota on this model.]\n"
    )
    assert turn_end(_cut_before(data, b"You have exhausted")) == ("", "")  # the error not written yet
