"""The reference pages written at build time: every `ib` command from the typer app, every setting.

An mkdocs hook (mkdocs.yml `hooks:`): a page holding a marker line gets the generated Markdown in its place,
so the site's reference is the code's own and cannot drift from it. The walk is pure over the command tree;
`commands_markdown()` and `settings_markdown()` are what tests call.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

COMMANDS_MARKER = "<!-- ib:commands -->"
SETTINGS_MARKER = "<!-- ib:settings -->"
PROGRAM = "ib"
NO_PANEL = "More"
# Defaults computed at run time, in words (the build machine's values would mislead).
COMPUTED_DEFAULTS = {
    "spool_dir": "`$XDG_STATE_HOME/ittybus` or `~/.local/state/ittybus`",
    "worker_id": "the host name",
}


@dataclass(frozen=True)
class CommandDoc:
    """One runnable command: its full name (`task add`), usage line, help, panel and parameters."""

    path: str
    usage: str
    help: str
    panel: str
    params: tuple[tuple[str, str, str], ...]  # (flags or argument, default, help)


def _text(text: str) -> str:
    """Markdown prose with `<`, `>` and `&` written as entities outside code spans: a help text's
    `agent-<random>` or `<ittybus-status>` would otherwise be read as HTML, and vanish."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # the even parts lie outside backticks
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return _text(" ".join(text.split())).replace("|", "\\|")


def _default(param: Any) -> str:
    if getattr(param, "required", False):
        return "required"
    default = getattr(param, "default", None)
    if getattr(param, "is_flag", False) and default is False:
        return ""
    if default is None or default == "" or callable(default):
        return ""
    if isinstance(default, list | tuple):
        return ", ".join(str(item) for item in default)
    return str(default)


def _param_row(param: Any) -> tuple[str, str, str] | None:
    if getattr(param, "hidden", False) or not getattr(param, "expose_value", True):
        return None
    opts = [*param.opts, *param.secondary_opts]
    is_argument = not any(opt.startswith("-") for opt in opts)
    name = param.name.upper() if is_argument else ", ".join(opts)
    return (name, _default(param), getattr(param, "help", None) or "")


def walk(group: Any, ctx: Any, prefix: str = "", panel: str = "") -> Iterator[CommandDoc]:
    """Every visible leaf command below `group`, in the order `ib --help` lists them."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = f"{prefix} {name}".strip()
        own_panel = getattr(command, "rich_help_panel", None) or panel or NO_PANEL
        sub_ctx = command.make_context(name, [], parent=ctx, resilient_parsing=True)
        rows = tuple(row for row in map(_param_row, command.params) if row is not None)
        usage = command.get_usage(sub_ctx).removeprefix("Usage:").strip()
        if hasattr(command, "list_commands"):
            if rows:  # a group that runs by itself too (`ib auto --project P`): its own options first
                yield CommandDoc(path, usage, (command.help or "").strip(), own_panel, rows)
            yield from walk(command, sub_ctx, path, own_panel)
            continue
        yield CommandDoc(path, usage, (command.help or "").strip(), own_panel, rows)


def render_help(text: str) -> tuple[list[str], list[str]]:
    """The docstring's paragraphs, and its `Example: ib ...` lines as a shell block (empty when none)."""
    prose: list[str] = []
    examples: list[str] = []
    for paragraph in text.split("\n\n"):
        before, marker, example = paragraph.partition("Example: ")
        if marker and example.startswith(PROGRAM + " "):
            prose += [_text(before.strip()), ""] if before.strip() else []
            examples.append(" ".join(example.split()))
        elif paragraph.strip():
            prose += [_text(paragraph.strip()), ""]
    block = ["Example:", "", "```sh", *examples, "```", ""] if examples else []
    return prose, block


def render_command(doc: CommandDoc) -> str:
    """One command as a Markdown section: heading, help, usage, a table of its parameters, the example."""
    prose, example = render_help(doc.help)
    lines = [f"### `{PROGRAM} {doc.path}`", "", *prose, "```", doc.usage, "```", ""]
    if doc.params:
        lines += ["| argument or option | default | meaning |", "|---|---|---|"]
        lines += [f"| `{flags}` | {_cell(default)} | {_cell(text)} |" for flags, default, text in doc.params]
        lines.append("")
    return "\n".join(lines + example)


def render_commands(docs: list[CommandDoc]) -> str:
    """Commands grouped under the panels of `ib --help`, in its order."""
    panels: dict[str, list[CommandDoc]] = {}
    for doc in docs:
        panels.setdefault(doc.panel, []).append(doc)
    out: list[str] = []
    for panel, members in panels.items():
        out += [f"## {panel}", ""]
        out += [render_command(doc) for doc in members]
    return "\n".join(out)


def command_docs() -> list[CommandDoc]:
    """The live command tree of `ib`."""
    import typer.main

    from worker.cli.app import app

    root = typer.main.get_command(app)
    ctx = root.make_context(PROGRAM, [], resilient_parsing=True)
    return list(walk(root, ctx))


def commands_markdown() -> str:
    """The generated command reference."""
    return render_commands(command_docs())


def settings_markdown() -> str:
    """A table of every setting: its variable, default and meaning, read from the Settings class."""
    from bus.settings.settings import Settings

    prefix = str(Settings.model_config.get("env_prefix", "IB_"))
    lines = ["| setting | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        if field.default_factory in (list, tuple, dict):
            default = "(none)"
        elif field.default_factory is not None:
            default = COMPUTED_DEFAULTS.get(name, "(computed)")
        elif field.default is None:
            default = "(unset)"
        else:
            default = f"`{field.default}`"
        variable = f"`{prefix}{name.upper()}`"
        lines.append(f"| {variable} | {_cell(default)} | {_cell(field.description or '')} |")
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The mkdocs hook: put the generated reference where a page asks for it."""
    if COMMANDS_MARKER in markdown:
        markdown = markdown.replace(COMMANDS_MARKER, commands_markdown())
    if SETTINGS_MARKER in markdown:
        markdown = markdown.replace(SETTINGS_MARKER, settings_markdown())
    return markdown
