"""The hooks' `.env` reader against python-dotenv, which the worker and the bot read through
pydantic-settings: the same file gives the same values, over lines chosen to tell readers apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from dotenv import dotenv_values

from bus.settings import dotenv_file

TRICKY = {
    "plain": "IB_A=1\n",
    "export": "export IB_A=1\nexport  IB_B = two\n",
    "export-alone": "export\nexport=1\n",
    "quoted-with-comment": 'IB_REDIS_URL="redis://h:1/0" # prod\n',
    "single-quoted-with-comment": "IB_A='a # b' # c\n",
    "unquoted-comment": "IB_A=x # trailing\nIB_B=x#not-a-comment\nIB_C= # empty\nIB_D=#value\n",
    "tab-comment": "IB_A=x\t# tab\n",
    "escapes-double": 'IB_A="line\\nbreak \\t tab \\" quote \\\\ slash \\x41"\n',
    "escapes-single": "IB_A='it\\'s \\\\ \\n kept'\n",
    "multi-line-double": 'IB_A="first\nsecond"\nIB_B=after\n',
    "multi-line-single": "IB_A='first\nsecond'\n",
    "unclosed-quote": 'IB_A="never closed\nIB_B=fine\n',
    "empty-values": "IB_A=\nIB_B=''\nIB_C=\"\"\nIB_D\n",
    "spaces": "  IB_A  =  spaced value  \n\n\n   IB_B=b   \n",
    "quoted-key": "'IB_A'=1\n'IB B'=2\n",
    "comments": "# a comment\n  # indented\nIB_A=1 # one\n#IB_B=2\n",
    "variables": "IB_A=one\nIB_B=${IB_A}-two\nIB_C=${HOME_OF_TEST}\nIB_D=${MISSING}x\n",
    "defaults": "IB_A=${MISSING:-fallback}\nIB_B=${MISSING:-}\nIB_C=${IB_A:-unused}\nIB_D=${X:y}\n",
    "variables-odd": "IB_A=$IB_B ${ ${} ${:-d} ${A:-${B}} $${HOME_OF_TEST} ${UNCLOSED\n",
    "variables-quoted": "IB_A='${HOME_OF_TEST}'\nIB_B=\"${HOME_OF_TEST}/x\"\n",
    "later-wins": "IB_A=1\nIB_A=2\nIB_B=${IB_A}\n",
    "garbage": '=no key\nnot a binding at all\nIB_A=1 trailing\nIB_B="q" junk\nIB_C=ok\n',
    "crlf": "IB_A=1\r\nIB_B=\"x\"\r\nIB_C='y' # c\r\n",
    "cr-only": "IB_A=1\rIB_B=2\r",
    "bom": "\ufeffIB_A=1\n",
    "unicode": 'IB_A=héllo wörld\nIB_B="日本" # コメント\nIB_C=a\u00a0#b\n',
    "no-final-newline": "IB_A=last",
    "backslash-at-end": 'IB_A="x\\',
    "hash-in-key": "IB#A=1\nIB_B#=2\n",
    "equals-in-value": "IB_A=a=b=c\nIB_B='a=b'\n",
}


@pytest.mark.parametrize("text", TRICKY.values(), ids=TRICKY.keys())
def test_reads_what_python_dotenv_reads(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME_OF_TEST", "/home/test")
    for name in ("MISSING", "X", "A", "B", "UNCLOSED"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / ".env"
    path.write_bytes(text.encode("utf-8"))
    expected = dict(dotenv_values(path, encoding="utf-8"))
    with open(path, encoding="utf-8") as f:  # as both read it: universal newlines
        assert dotenv_file.read(f.read(), {"HOME_OF_TEST": "/home/test"}) == expected
