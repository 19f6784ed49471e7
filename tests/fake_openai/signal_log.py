"""Codex's notify program and hook command while capturing: appends what Codex passed (notify: its last
argument; a hook: its stdin) to a JSON-lines file, one `{"via": ..., "payload": ...}` a line.

    python tests/fake_openai/signal_log.py FILE notify JSON     (notify)
    python tests/fake_openai/signal_log.py FILE hook < JSON     (a hooks.json command)
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    out, via = argv[0], argv[1]
    raw = argv[-1] if via == "notify" else sys.stdin.read()
    with open(out, "a", encoding="utf-8") as log:
        log.write(json.dumps({"via": via, "payload": json.loads(raw)}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
