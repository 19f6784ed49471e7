"""The documentation: the generated reference names every command and setting, every page is in the nav,
and the README stays short, keeps the test command CI runs, and links only to files that exist.

`mkdocs build --strict` (tests/run.sh) checks the links inside the site; these run without building it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer.main
import yaml

from bus.settings.settings import Settings
from worker.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README_MAX_LINES = 250


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def _command_paths(group: Any, ctx: Any, prefix: str = "") -> list[str]:
    """Every visible leaf command of the typer app, walked here on its own (not with the generator's walk)."""
    paths: list[str] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = f"{prefix} {name}".strip()
        if hasattr(command, "list_commands"):
            sub_ctx = command.make_context(name, [], parent=ctx, resilient_parsing=True)
            paths += _command_paths(command, sub_ctx, path)
        else:
            paths.append(path)
    return paths


def _nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def test_every_command_has_a_section_in_the_generated_reference() -> None:
    root = typer.main.get_command(app)
    paths = _command_paths(root, root.make_context("ib", [], resilient_parsing=True))
    markdown = _reference().commands_markdown()
    missing = [path for path in paths if f"### `ib {path}`" not in markdown]
    assert len(paths) > 40
    assert missing == []


def test_every_option_of_a_command_is_in_its_section() -> None:
    markdown = _reference().commands_markdown()
    section = markdown.split("### `ib new-agent`", 1)[1].split("### ", 1)[0]
    for option in ("--name", "--manager", "--permission-mode", "--on", "GOAL"):
        assert option in section


def _options(group: Any, ctx: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(command path, option) for every visible option of every command and of every group that runs by
    itself (`ib auto --project P`), walked here on its own."""
    found: list[tuple[str, str]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = f"{prefix} {name}".strip()
        found += [(path, opt) for param in command.params if not param.hidden for opt in param.opts]
        if hasattr(command, "list_commands"):
            found += _options(
                command, command.make_context(name, [], parent=ctx, resilient_parsing=True), path
            )
    return found


def test_every_option_of_every_command_and_group_is_in_its_section() -> None:
    root = typer.main.get_command(app)
    markdown = _reference().commands_markdown()
    sections = {part.split("`", 1)[0]: part for part in markdown.split("### `ib ")[1:]}
    options = _options(root, root.make_context("ib", [], resilient_parsing=True))
    missing = [(path, opt) for path, opt in options if opt not in sections.get(path, "")]
    assert len(options) > 100
    assert missing == []
    assert "--worktrees" in sections["auto"]  # the group's own options had no section


def test_text_that_looks_like_html_is_shown_as_written() -> None:
    markdown = _reference().commands_markdown()
    assert "agent-&lt;random&gt;" in markdown and "<random>" not in markdown
    assert "&lt;ittybus-status&gt;" in markdown
    assert (
        _reference().render_help("Keep the `<x>` block <y> & more.")[0][0]
        == "Keep the `<x>` block &lt;y&gt; &amp; more."
    )


def test_every_setting_is_in_the_generated_table() -> None:
    table = _reference().settings_markdown()
    missing = [name for name in Settings.model_fields if f"`IB_{name.upper()}`" not in table]
    assert missing == []
    assert "the host name" in table  # a default computed at run time is said in words, not the build's value


def test_the_hook_puts_the_reference_where_the_markers_are() -> None:
    reference = _reference()
    page = f"# Commands\n\n{reference.COMMANDS_MARKER}\n\n{reference.SETTINGS_MARKER}\n"
    out = reference.on_page_markdown(page, page=None, config=None, files=None)
    assert reference.COMMANDS_MARKER not in out and reference.SETTINGS_MARKER not in out
    assert "### `ib up`" in out and "`IB_REDIS_URL`" in out


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = set(_nav_pages(config["nav"]))
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert sorted(on_disk - listed) == [], "add these pages to the nav in mkdocs.yml"
    assert sorted(listed - on_disk) == []


def test_the_readme_is_short_and_keeps_the_test_command() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "bash tests/run.sh" in text  # .ci/run runs "the README's test command"


@pytest.mark.parametrize("image", ["docs/img/watch.png", "docs/img/telegram-topic.png"])
def test_the_readmes_pictures_exist_and_stay_small(image: str) -> None:
    path = ROOT / image
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size < 200_000
    assert image in (ROOT / "README.md").read_text()


def test_every_relative_link_in_the_readme_leads_to_a_file() -> None:
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#\s]+)", text)
    relative = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert relative, "the README links into docs/"
    assert [t for t in relative if not (ROOT / t).exists()] == []


@pytest.mark.parametrize(
    ("help_text", "prose", "example"),
    [
        ("Show it.", ["Show it.", ""], []),
        (
            "Show it.\n\nExample: ib look a",
            ["Show it.", ""],
            ["Example:", "", "```sh", "ib look a", "```", ""],
        ),
        (
            "Needs a token. Example: ib bot",
            ["Needs a token.", ""],
            ["Example:", "", "```sh", "ib bot", "```", ""],
        ),
        ("Example: IB_X=1 ib up", ["Example: IB_X=1 ib up", ""], []),
        ("", [], []),
    ],
    ids=["no-example", "example-paragraph", "example-after-prose", "not-an-ib-line", "empty"],
)
def test_a_docstrings_example_becomes_a_shell_block(
    help_text: str, prose: list[str], example: list[str]
) -> None:
    assert _reference().render_help(help_text) == (prose, example)
