"""Rendering events as Telegram HTML: the seed's texts, escaping, buttons, odd data that must not crash."""

from __future__ import annotations

from typing import Any

import pytest

from bot.render.callbacks import CALLBACK_MAX_BYTES, Action, Callback, parse_callback
from bot.render.render import Button, Rendered, Style, escape, render, render_output, shorten
from bot.render.split import MESSAGE_LIMIT, split_message, telegram_length
from bus.events.envelope import ALL_TYPES
from bus.events.event_model import Event
from tests.fake_telegram.markup import visible_text


def event(type_: str, msg: str = "", **fields: Any) -> Event:
    body: dict[str, Any] = {"type": type_, "msg": msg, "project": "backend", "from": "agent-1"}
    body.update(fields)
    return Event.model_validate(body)


DIFF_ROW = (
    Button("Diff", "d:agent-x"),
    Button("Merge", "m:agent-x"),
    Button("Kill", "k:agent-x"),
    Button("Look", "l:agent-x"),
    Button("Screenshot", "s:agent-x"),
)

FULL = [
    (
        "task_claimed",
        event(
            "task_claimed",
            task="design-auth",
            agent="agent-1",
            data={"title": "", "priority": 8, "attempt": 1, "max_attempts": 3},
        ),
        "→ design-auth claimed by agent-1",
    ),
    (
        "task_claimed-retry-branch",
        event(
            "task_claimed",
            task="write-tests",
            agent="agent-2",
            data={
                "title": "Write tests",
                "priority": 5,
                "attempt": 2,
                "max_attempts": 3,
                "branch": "minuano/backend-write-tests",
            },
        ),
        "→ write-tests claimed by agent-2 (attempt 2/3)\nWrite tests\nBranch: minuano/backend-write-tests",
    ),
    (
        "task_added",
        event("task_added", task="design-auth", data={"title": "Design auth", "priority": 8}),
        "+ design-auth added (priority 8)\nDesign auth",
    ),
    (
        "task_added by a schedule",
        event("task_added", task="audit-1", data={"title": "Audit", "priority": 5, "schedule": "sched-1"}),
        "+ audit-1 added (priority 5) by schedule sched-1\nAudit",
    ),
    (
        "plan_failed",
        event("plan_failed", data={"plan": "plan-2", "error": "the plan has a cycle: a → a"}),
        "✗ plan-2 failed: the plan has a cycle: a → a — nothing was added",
    ),
    (
        "task_ready",
        event("task_ready", task="impl-endpoints", data={"priority": 7}),
        "→ impl-endpoints ready (priority 7)",
    ),
    (
        "task_done",
        event(
            "task_done",
            task="design-auth",
            data={"summary": "Implemented JWT auth with refresh tokens", "attempt": 1},
        ),
        '✓ design-auth completed: "Implemented JWT auth with refresh tokens"',
    ),
    (
        "task_done-no-summary",
        event("task_done", task="design-auth", agent="agent-1", data={"attempt": 1}),
        "✓ design-auth completed by agent-1",
    ),
    (
        "task_failed-will-retry",
        event(
            "task_failed",
            task="write-tests",
            data={"reason": "test timeout", "attempt": 2, "max_attempts": 3, "will_retry": True},
        ),
        "⚠ write-tests failed (attempt 2/3): test timeout\n→ write-tests back to ready (will retry)",
    ),
    (
        "task_failed-final",
        event(
            "task_failed",
            task="write-tests",
            data={"reason": "test timeout", "attempt": 3, "max_attempts": 3, "will_retry": False},
        ),
        "⚠ write-tests failed (attempt 3/3): test timeout\n✗ write-tests stays failed (no attempts left)",
    ),
    (
        "merge_ready",
        event("merge_ready", data={"branch": "agent/a1", "target": "main", "merge_id": "m1"}),
        "→ Merging agent/a1 → main...",
    ),
    (
        "merge_ready-smaller-first",
        event(
            "merge_ready",
            data={
                "branch": "agent/a2",
                "target": "main",
                "position": 1,
                "order": "before merge 3 (a1, 80 changed lines, both change calc.py): the smaller change "
                "goes first (4 changed lines)",
            },
        ),
        "→ Merging agent/a2 → main...\nQueue position 1: goes before merge 3 (a1, 80 changed lines, both "
        "change calc.py): the smaller change goes first (4 changed lines)",
    ),
    (
        "merge_ready-waits",
        event("merge_ready", data={"branch": "agent/a3", "target": "main", "position": 2}),
        "→ Merging agent/a3 → main...\nQueue position 2",
    ),
    (
        "merge_merged",
        event(
            "merge_merged",
            data={
                "branch": "minuano/backend-design-auth",
                "target": "main",
                "sha": "a1b2c3d4e5f6",
                "merge_id": "m1",
            },
        ),
        "✓ Merged → main (a1b2c3d)\nBranch: minuano/backend-design-auth",
    ),
    (
        "merge_conflict",
        event(
            "merge_conflict",
            data={
                "branch": "minuano/backend-impl-endpoints",
                "target": "main",
                "files": ["internal/auth/handler.go", "internal/auth/middleware.go"],
                "merge_id": "m2",
            },
        ),
        "⚠ Merge conflict on minuano/backend-impl-endpoints\nConflicted files:\n"
        "  - internal/auth/handler.go\n  - internal/auth/middleware.go",
    ),
    (
        "merge_failed",
        event(
            "merge_failed",
            data={"branch": "agent/a1", "target": "main", "error": "not a fast-forward", "merge_id": "m3"},
        ),
        "⚠ Merge of agent/a1 → main failed: not a fast-forward",
    ),
    (
        "auto_started",
        event("auto_started", data={"ready": 1, "blocked": 2, "worktrees": False}),
        "Auto mode started for project backend\n1 task ready, 2 blocked",
    ),
    (
        "auto_started-worktrees",
        event("auto_started", data={"ready": 2, "blocked": 0, "worktrees": True}),
        "Auto mode started for project backend (a worktree per task)\n2 tasks ready, 0 blocked",
    ),
    (
        "auto_finished",
        event("auto_finished", data={"done": 3, "total": 3, "failed": 0}),
        "→ Queue empty. Auto mode finished. 3/3 tasks done.",
    ),
    (
        "auto_finished-failed",
        event("auto_finished", data={"done": 2, "total": 3, "failed": 1}),
        "→ Queue empty. Auto mode finished. 2/3 tasks done. 1 failed.",
    ),
    (
        "auto_paused",
        event("auto_paused", data={"reason": "merge failed"}),
        "⏸ Auto mode paused: merge failed",
    ),
    ("auto_stopped", event("auto_stopped"), "⏹ Auto mode stopped. The current task stays claimed."),
    (
        "auto_finished-lists",
        event("auto_finished", data={"done": ["a", "b"], "failed": ["c"], "taken": ["a", "b", "c"]}),
        "→ Queue empty. Auto mode finished. 2/3 tasks done. 1 failed.",
    ),
    (
        "auto_finished-worded-by-the-loop",
        event("auto_finished", "Queue empty. Auto mode finished. 3/3 tasks done.", data={"done": ["a"]}),
        "→ Queue empty. Auto mode finished. 3/3 tasks done.",
    ),
    (
        "auto_stopped-worded-by-the-loop",
        event("auto_stopped", "Auto mode stopped for project backend; x stays claimed by y"),
        "⏹ Auto mode stopped for project backend; x stays claimed by y",
    ),
    (
        "spawned",
        event(
            "spawned",
            agent="agent-9",
            data={"goal": "fix the login bug", "manager": "agent-1", "worktree": "/w/agent-9"},
        ),
        "→ agent-9 spawned: fix the login bug\nManager: agent-1\nWorktree: /w/agent-9",
    ),
    (
        "spawned-says-its-cli",
        event("spawned", agent="agent-9", data={"goal": "port the parser", "cli": "codex"}),
        "→ agent-9 spawned: port the parser\nCLI: codex",
    ),
    (
        "waiting",
        event("waiting", "Should I also update the docs?", agent="agent-x"),
        "⏳ agent-x is waiting: Should I also update the docs?",
    ),
    (
        "state",
        event("state", agent="agent-x", data={"from_state": "running", "to_state": "waiting"}),
        "agent-x: running → waiting",
    ),
    ("killed", event("killed", agent="agent-x"), "✗ agent-x was killed"),
    ("stopped", event("stopped", agent="agent-x"), "⏹ agent-x stopped"),
    (
        "stopped-said",  # was "⏹ agent-x stopped: agent-x stopped (…)"
        event("stopped", "agent-x stopped (Claude Code exited: logout)", agent="agent-x"),
        "⏹ agent-x stopped (Claude Code exited: logout)",
    ),
    (
        "stopped-why",
        event("stopped", "its session ended", agent="agent-x"),
        "⏹ agent-x stopped: its session ended",
    ),
    ("killed-said", event("killed", "agent-x killed", agent="agent-x"), "✗ agent-x killed"),
    (
        "message-naming-its-sender",
        event("message", "agent-x is done", agent="agent-x"),
        "💬 agent-x says: agent-x is done",
    ),
    ("merged", event("merged", agent="agent-x"), "✓ agent-x merged"),
    (
        "limited",
        event("limited", agent="agent-x", data={"until": "15:00", "window": "five_hour", "note": ""}),
        "⏳ agent-x limited until 15:00 (five_hour limit)\nIt goes on by itself at the reset.",
    ),
    (
        "limited-with-a-note",
        event("limited", agent="agent-x", data={"until": "14:05", "note": "no reset time given"}),
        "⏳ agent-x limited until 14:05\nno reset time given\nIt goes on by itself at the reset.",
    ),
    (
        "limited-bare",
        event("limited", agent="agent-x"),
        "⏳ agent-x limited until its reset\nIt goes on by itself at the reset.",
    ),
    (
        "resumed",
        event("resumed", agent="agent-x", data={"window": "seven_day"}),
        "▶ agent-x resumed: its seven_day limit has reset",
    ),
    ("unknown-type", event("brand_new", "hello", agent="agent-x"), "• brand_new from agent-x: hello"),
    ("agent-from-sender", event("waiting", "?", **{"from": "agent-s"}), "⏳ agent-s is waiting: ?"),
]


@pytest.mark.parametrize(("event_", "text"), [r[1:] for r in FULL], ids=[r[0] for r in FULL])
def test_full_texts(event_: Event, text: str) -> None:
    assert render(event_, Style.FULL) == Rendered(text)


def test_a_ready_plan_gets_approve_edit_discard() -> None:
    plan = event(
        "plan_ready", data={"plan": "plan-2", "goal": "Auth", "count": 2, "tree": "a (p5) A\n└─ b (p5) B"}
    )
    assert render(plan, Style.FULL) == Rendered(
        "🗺 plan-2: 2 tasks for: Auth\na (p5) A\n└─ b (p5) B\nApprove adds them; to change the plan, "
        "reply to this message (or tap Edit); Discard drops it.",
        ((Button("✓ Approve", "p:plan-2"), Button("✎ Edit", "e:plan-2"), Button("✗ Discard", "x:plan-2")),),
    )


@pytest.mark.parametrize(
    "options",
    [
        [{"number": None, "label": "Postgres"}, {"number": None, "label": "SQLite"}],
        ["Postgres", "SQLite"],
    ],
    ids=["options", "plain-words-of-older-producers"],
)
def test_question_with_options_gets_answer_buttons(options: list[Any]) -> None:
    """`ib ask --option`: a tap sends the option's text to the agent."""
    q = event(
        "question", "Which database?", agent="agent-x", data={"question_id": "q-17", "options": options}
    )
    assert render(q, Style.FULL) == Rendered(
        "❓ agent-x asks: Which database?",
        ((Button("Postgres", "a:q-17:0"),), (Button("SQLite", "a:q-17:1"),)),
    )


def test_a_question_dialog_told_by_its_hook_answers_by_number() -> None:
    """AskUserQuestion from the PermissionRequest hook: numbered as the dialog draws them."""
    data: dict[str, object] = {
        "kind": "ask",
        "question": "Which DB?",
        "prompt_id": "p-1",
        "question_id": "q-1",
    }
    data["options"] = [{"number": 1, "label": "Postgres"}, {"number": 2, "label": "SQLite"}]
    shown = render(event("question", "m", agent="agent-x", data=data), Style.FULL)
    assert [(row[0].label, row[0].data) for row in shown.buttons] == [
        ("Postgres", "o:q-1:1"),
        ("SQLite", "o:q-1:2"),
    ]


def test_question_shows_the_bare_question_when_the_worker_gives_it() -> None:
    q = event("question", "Agent agent-x asks: Which DB?", agent="agent-x", data={"question": "Which DB?"})
    assert render(q, Style.FULL) == Rendered("❓ agent-x asks: Which DB?")


@pytest.mark.parametrize(
    "data",
    [
        {"question_id": "q-1"},
        {"options": ["a", "b"]},
        {"question_id": "q-1", "options": "a,b"},
        {"question_id": "bad id!", "options": ["a"]},
    ],
    ids=["no-options", "no-question-id", "options-not-a-list", "unencodable-id"],
)
def test_question_without_usable_options_has_no_buttons(data: dict[str, Any]) -> None:
    rendered = render(event("question", "Which one?", agent="agent-x", data=data), Style.FULL)
    assert rendered == Rendered("❓ agent-x asks: Which one?")


def test_complete_gets_diff_merge_kill_look() -> None:
    rendered = render(event("complete", "I HAVE COMPLETED THE GOAL", agent="agent-x"), Style.FULL)
    assert rendered == Rendered("✓ agent-x completed: I HAVE COMPLETED THE GOAL", (DIFF_ROW,))


@pytest.mark.parametrize(
    "agent", ["agent ü", "a" * 57, "x:y", ""], ids=["non-ascii", "too-long", "colon", "empty"]
)
def test_complete_of_an_unencodable_agent_has_no_buttons(agent: str) -> None:
    rendered = render(event("complete", "done", agent=agent or None, **{"from": agent}), Style.FULL)
    assert rendered.buttons == ()


@pytest.mark.parametrize("sender", ["unknown", "system", "agent-x"])
def test_complete_from_no_agent_has_no_buttons(sender: str) -> None:
    """`ib notify --type complete` outside an agent: the sender is a name, not an agent to act on."""
    rendered = render(event("complete", "done", agent=None, **{"from": sender}), Style.FULL)
    assert rendered == Rendered(f"✓ {sender} completed: done")


def test_long_option_labels_are_shortened() -> None:
    options = [{"number": None, "label": "o" * 100}]
    q = event("question", "Pick", agent="agent-x", data={"question_id": "q", "options": options})
    (row,) = render(q, Style.FULL).buttons
    assert row[0].label == "o" * 39 + "…"


ESCAPING = [
    (
        "question",
        event("question", "Is <b> & </b> ok?", agent="agent-x"),
        "❓ agent-x asks: Is &lt;b&gt; &amp; &lt;/b&gt; ok?",
    ),
    (
        "task-title",
        event("task_added", task="t1", data={"title": "a<b>c & d", "priority": 1}),
        "+ t1 added (priority 1)\na&lt;b&gt;c &amp; d",
    ),
    (
        "merge-files",
        event("merge_conflict", data={"branch": "x&y", "files": ["<a>.go"]}),
        "⚠ Merge conflict on x&amp;y\nConflicted files:\n  - &lt;a&gt;.go",
    ),
    ("task-id", event("task_ready", task="<script>", data={}), "→ &lt;script&gt; ready"),
    ("entities-stay-text", event("waiting", "&amp; &lt;", agent="a"), "⏳ a is waiting: &amp;amp; &amp;lt;"),
]


@pytest.mark.parametrize(("event_", "text"), [r[1:] for r in ESCAPING], ids=[r[0] for r in ESCAPING])
def test_dynamic_text_is_escaped(event_: Event, text: str) -> None:
    rendered = render(event_, Style.FULL)
    assert rendered.text == text
    visible_text(rendered.text, "HTML")  # Telegram accepts it


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [("<", "&lt;"), (">", "&gt;"), ("&", "&amp;"), ('"q"', '"q"'), ("a<b>&c", "a&lt;b&gt;&amp;c")],
)
def test_escape(raw: str, escaped: str) -> None:
    assert escape(raw) == escaped


WAITING = "⏳ a is waiting: "
SUMMARIES = [
    (
        "question-multiline",
        event("question", "Which DB?\nDetails follow", agent="agent-x"),
        "❓ agent-x asks: Which DB? …",
    ),
    ("complete", event("complete", "done", agent="agent-x"), "✓ agent-x completed: done"),
    ("long", event("waiting", "w" * 300, agent="a"), WAITING + "w" * (199 - len(WAITING)) + "…"),
    (
        "escaped-after-cut",
        event("waiting", "<" * 300, agent="a"),
        WAITING + "&lt;" * (199 - len(WAITING)) + "…",
    ),
]


@pytest.mark.parametrize(("event_", "text"), [r[1:] for r in SUMMARIES], ids=[r[0] for r in SUMMARIES])
def test_summaries_are_one_line_without_buttons(event_: Event, text: str) -> None:
    assert render(event_, Style.SUMMARY) == Rendered(text)


OUTPUTS = [
    ("plain", "Reading the files now", "Reading the files now"),
    ("escaped", "if a < b && c > d", "if a &lt; b &amp;&amp; c &gt; d"),
    (
        "fence-with-language",
        "Here:\n```python\nx = 1 < 2\n```\ndone",
        'Here:\n<pre><code class="language-python">x = 1 &lt; 2</code></pre>\ndone',
    ),
    ("fence-without-language", "```\nls -la\n```", "<pre><code>ls -la</code></pre>"),
    ("odd-language", "```py <x>\ncode\n```", "<pre><code>code</code></pre>"),
    ("unclosed-fence", "```go\nfunc main() {", '<pre><code class="language-go">func main() {</code></pre>'),
]


@pytest.mark.parametrize(("msg", "html"), [r[1:] for r in OUTPUTS], ids=[r[0] for r in OUTPUTS])
def test_agent_output(msg: str, html: str) -> None:
    assert render_output(msg) == html
    assert render(event("message", msg, agent="agent-x"), Style.OUTPUT) == Rendered(html)
    visible_text(html, "HTML")


CODE = "```python\nif a < b:\n    print('&')\n```"
PYTHON = '<pre><code class="language-python">'
FENCED = [
    ("waiting", event("waiting", f"Run this:\n{CODE}", agent="agent-x"), "⏳ agent-x is waiting: Run this:"),
    (
        "question",
        event("question", "", agent="agent-x", data={"question": f"Which?\n{CODE}", "question_id": "q-1"}),
        "❓ agent-x asks: Which?",
    ),
    ("message", event("message", f"See:\n{CODE}", agent="agent-x"), "💬 agent-x says: See:"),
]


@pytest.mark.parametrize(("event_", "head"), [r[1:] for r in FENCED], ids=[r[0] for r in FENCED])
def test_code_in_an_event_renders_as_a_code_block(event_: Event, head: str) -> None:
    text = render(event_, Style.FULL).text
    assert text == f"{head}\n{PYTHON}if a &lt; b:\n    print('&amp;')</code></pre>"
    visible_text(text, "HTML")


def test_a_code_block_longer_than_a_message_is_split_into_valid_blocks() -> None:
    code = "\n".join(f"line_{i} = {i} < {i + 1}  # &" for i in range(400))
    text = render(event("message", f"All of it:\n```python\n{code}\n```\nDone.", agent="a"), Style.FULL).text
    parts = split_message(text)
    assert len(parts) > 1 and all(telegram_length(part) <= MESSAGE_LIMIT for part in parts)
    for part in parts:
        visible_text(part, "HTML")  # every part parses: tags closed at the cut, reopened after it
    assert all(part.startswith(PYTHON) for part in parts[1:])
    assert "".join(visible_text(part, "HTML") for part in parts).count("line_") == 400


def test_output_style_of_an_empty_message_falls_back_to_full() -> None:
    assert render(event("message", "", agent="agent-x"), Style.OUTPUT) == Rendered("💬 agent-x says")


def test_output_style_of_other_events_is_full() -> None:
    done = event("complete", "done", agent="agent-x")
    assert render(done, Style.OUTPUT) == render(done, Style.FULL)


GARBAGE: list[dict[str, Any]] = [
    {},
    {
        "priority": "high",
        "attempt": None,
        "max_attempts": [],
        "will_retry": "maybe",
        "files": "a.go",
        "options": {"x": 1},
    },
    {
        "ready": "x",
        "blocked": None,
        "done": 1.5,
        "total": True,
        "sha": 12345,
        "summary": ["no"],
        "question_id": 7,
    },
]


@pytest.mark.parametrize("style", list(Style), ids=[s.value for s in Style])
@pytest.mark.parametrize("data", GARBAGE, ids=["empty", "wrong-types", "more-wrong-types"])
@pytest.mark.parametrize("type_", [*ALL_TYPES, "brand_new"])
def test_any_event_renders_valid_html(type_: str, data: dict[str, Any], style: Style) -> None:
    rendered = render(event(type_, "<msg> & more", agent="agent-x", task="t<1>", data=data), style)
    assert rendered.text.strip()
    visible_text(rendered.text, "HTML")
    for row in rendered.buttons:
        for button in row:
            assert len(button.data.encode()) <= CALLBACK_MAX_BYTES
            assert parse_callback(button.data) is not None


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [("short", 10, "short"), ("a\nb", 10, "a …"), ("abcdefghij", 5, "abcd…"), ("  padded  ", 10, "padded")],
    ids=["short", "multiline", "cut", "stripped"],
)
def test_shorten(text: str, width: int, expected: str) -> None:
    assert shorten(text, width) == expected


DIALOGS = {
    "permission": (
        {
            "kind": "permission",
            "tool": "Bash",
            "detail": "rm -rf build",
            "prompt_id": "p-0a1b2c3d",
            "options": [{"number": None, "label": w} for w in ("approve", "approve always", "deny")],
        },
        "🔐 agent-x asks to use Bash\nrm -rf build",
        ["Allow", "Always allow", "Deny"],
    ),
    "plan": (
        {"kind": "plan", "plan": "1. add the flag", "prompt_id": "p-0a1b2c3d"},
        "📋 agent-x has a plan and asks to go ahead\n1. add the flag",
        ["Approve", "Keep planning"],
    ),
    "trust": (
        {"kind": "trust", "folder": "/srv/repo", "prompt_id": "p-0a1b2c3d"},
        "🔐 agent-x asks whether Claude Code may trust the folder /srv/repo",
        ["Trust", "Refuse"],
    ),
}


@pytest.mark.parametrize(("data", "text", "labels"), DIALOGS.values(), ids=DIALOGS.keys())
def test_a_dialog_gets_its_answer_buttons(data: dict[str, Any], text: str, labels: list[str]) -> None:
    shown = render(event("permission", "m", agent="agent-x", data=data), Style.FULL)
    assert shown.text == escape(text)
    [row] = shown.buttons
    assert [b.label for b in row] == labels
    for button in row:
        tapped = parse_callback(button.data)
        assert tapped is not None and (tapped.target, tapped.prompt) == ("agent-x", "p-0a1b2c3d")


def test_a_dialog_without_its_prompt_id_gets_no_buttons() -> None:
    shown = render(event("permission", "m", agent="agent-x", data={"tool": "Bash"}), Style.FULL)
    assert shown.buttons == ()


def test_an_api_error_says_its_kind() -> None:
    shown = render(event("error", "m", agent="agent-x", data={"kind": "overloaded"}), Style.FULL)
    assert shown.text == escape("⚠ agent-x: the turn ended with an API error (overloaded)")


def drawn(*labels: str, numbered: bool = True) -> list[dict[str, Any]]:
    return [{"number": i + 1 if numbered else None, "label": label} for i, label in enumerate(labels)]


NINE = [f"Option {i}" for i in range(1, 10)]
DRAWN = [
    # (the dialog's data, the text, the button labels, the numbers the buttons send)
    (
        "auto-mode-two",
        {"kind": "permission", "title": "Do you want to proceed?", "default": 0,
         "options": drawn("No", "Yes")},
        "🔐 agent-x asks: Do you want to proceed?",
        ["No (default)", "Yes"],
        [1, 2],
    ),
    (
        "hook-permission-three",
        {"kind": "permission", "tool": "Bash", "detail": "make", "default": 0,
         "options": drawn("Yes", "Yes, and don't ask again for make commands", "No")},
        "🔐 agent-x asks to use Bash\nmake",
        ["Yes (default)", "Yes, and don't ask again for make comma…", "No"],
        [1, 2, 3],
    ),
    (
        "nine-unknown",
        {"kind": "dialog", "title": "Pick a theme", "options": drawn(*NINE), "default": 4},
        "🔐 agent-x asks: Pick a theme",
        [*NINE[:4], "Option 5 (default)", *NINE[5:]],
        list(range(1, 10)),
    ),
    (
        "labels-with-digits-and-cursor",
        {"kind": "dialog", "title": "Port?", "options": drawn("8080 ❯ 80", "❯ 2. other"), "default": 1},
        "🔐 agent-x asks: Port?",
        ["8080 ❯ 80", "❯ 2. other (default)"],
        [1, 2],
    ),
    (
        "unnumbered-by-place",
        {"kind": "dialog", "title": "Sure?", "options": drawn("Go", "Stop", numbered=False)},
        "🔐 agent-x asks: Sure?",
        ["Go", "Stop"],
        [1, 2],
    ),
    (
        "other-language",
        {"kind": "dialog", "title": "Voulez-vous continuer ?", "options": drawn("Oui", "Non"), "default": 0},
        "🔐 agent-x asks: Voulez-vous continuer ?",
        ["Oui (default)", "Non"],
        [1, 2],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "text", "labels", "numbers"), [d[1:] for d in DRAWN], ids=[d[0] for d in DRAWN]
)
def test_a_dialog_with_its_options_gets_a_button_per_option(
    data: dict[str, Any], text: str, labels: list[str], numbers: list[int]
) -> None:
    data = {**data, "prompt_id": "p-0a1b2c3d", "question_id": "q-0a1b2c3d"}
    shown = render(event("permission", "m", agent="agent-x", data=data), Style.FULL)
    assert shown.text == escape(text)
    assert [[b.label for b in row] for row in shown.buttons] == [[label] for label in labels]
    taps = [parse_callback(row[0].data) for row in shown.buttons]
    assert taps == [Callback(Action.OPTION, "q-0a1b2c3d", n) for n in numbers]


def test_a_question_dialog_from_the_pane_answers_by_number() -> None:
    data = {"kind": "ask", "question": "Which DB?", "options": drawn("Postgres", "SQLite"), "default": 0}
    shown = render(event("question", "m", agent="agent-x", data={**data, "question_id": "q-1"}), Style.FULL)
    assert shown.text == "❓ agent-x asks: Which DB?"
    assert [row[0].data for row in shown.buttons] == ["o:q-1:1", "o:q-1:2"]


ODD_OPTIONS: list[Any] = [
    [{"number": "1", "label": "Yes"}],
    [{"number": True, "label": "Yes"}],
    [{"number": 1}],
    [{"number": 100, "label": "Yes"}],
    ["Yes", {"number": 2, "label": "No"}],
    [],
]


@pytest.mark.parametrize(
    "options", ODD_OPTIONS, ids=["text-number", "bool", "no-label", "100", "mixed", "none"]
)
def test_a_permission_with_odd_options_keeps_allow_and_deny(options: list[Any]) -> None:
    data = {
        "kind": "permission",
        "tool": "Bash",
        "options": options,
        "prompt_id": "p-0a1b2c3d",
        "question_id": "q-1",
    }
    [row] = render(event("permission", "m", agent="agent-x", data=data), Style.FULL).buttons
    assert [b.label for b in row] == ["Allow", "Always allow", "Deny"]


def test_a_dialog_of_unknown_kind_without_usable_options_has_no_buttons() -> None:
    data = {
        "kind": "dialog",
        "title": "Pick",
        "options": drawn("A", "B"),
        "prompt_id": "p-0a1b2c3d",
    }  # no question
    assert render(event("permission", "m", agent="agent-x", data=data), Style.FULL).buttons == ()


RISK = {
    "two-agents": (
        {
            "agents": ["bob", "ann"],
            "other_agent": "ann",
            "files": ["calc.py", "logo.bin"],
            "conflicts": [
                {
                    "path": "calc.py",
                    "kind": "content",
                    "hunks": [{"line": 2, "ours": ["    return a - b"], "theirs": ["    return a + b + 1"]}],
                },
                {"path": "logo.bin", "kind": "binary", "hunks": []},
            ],
        },
        "⚠ Conflict risk: bob and ann change the same code (it will not merge cleanly)\n"
        "• calc.py, around line 2 (content)\n  bob: return a - b\n  ann: return a + b + 1\n"
        "• logo.bin (binary)",
    ),
    "branch": (
        {"agents": ["bob"], "branch": "main", "conflicts": [{"path": "<x>.py", "kind": "modify/delete"}]},
        "⚠ Conflict risk: bob&#x27;s change collides with branch main\n• &lt;x&gt;.py (modify/delete)",
    ),
    "garbled-data": (
        {"other_agent": "ann", "conflicts": "nope", "files": ["a.py"], "more_files": 3},
        "⚠ Conflict risk: bob and ann change the same code (it will not merge cleanly)\n• a.py\n"
        "… and 3 more files",
    ),
}


@pytest.mark.parametrize(("data", "text"), RISK.values(), ids=RISK.keys())
def test_a_conflict_risk_names_both_sides_the_files_and_the_hunks(data: dict[str, Any], text: str) -> None:
    rendered = render(event("conflict_risk", agent="bob", data=data), Style.FULL)
    assert rendered.text == text.replace("&#x27;", "'")
    visible_text(rendered.text, "HTML")
