"""What people and agents typed reaches the terminal escaped; a config file of the wrong shape is named."""

from __future__ import annotations

import json

from tests.cli import IbRunner


def test_control_characters_in_titles_are_shown_escaped(ib: IbRunner) -> None:
    assert ib.run("task", "add", "\x1b[2Jcleared \x9b31m red", "--id", "evil").returncode == 0
    for args in (["task", "list"], ["task", "show", "evil"], ["task", "tree"]):
        out = ib.run(*args).stdout
        assert "\\x1b[2Jcleared \\x9b31m red" in out, (args, out)
        assert "\x1b" not in out and "\x9b" not in out
    assert (
        json.loads(ib.run("task", "show", "evil", "--json").stdout)["title"] == "\x1b[2Jcleared \x9b31m red"
    )


def test_a_config_file_that_is_not_an_object_is_refused_by_name(agents_ib: IbRunner) -> None:
    config = agents_ib.cwd / ".ib" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[]\n")
    done = agents_ib.run("new-agent", "a goal", "--name", "cfg")
    assert done.returncode == 1
    expected = f"{config} holds a JSON array; it must be an object like "
    assert done.stderr.strip() == f'ib new-agent: error: {expected}{{"permissions": {{...}}}}'
