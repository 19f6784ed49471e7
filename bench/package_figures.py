"""The shape of the code at a git revision: modules and median size per package, the largest module, and
the import cycles (strongly connected components of the module import graph, lazy imports included).

    .venv/bin/python -m bench.package_figures [REV ...]      (default: fa5589f HEAD, side by side)
    .venv/bin/python -m bench.package_figures --write        (ARCHITECTURE.md's figures, from the files)

Lines are physical lines of each `.py` file; a package's `__init__.py` counts as one of its modules.
ARCHITECTURE.md keeps the figures that change only when a module comes, goes or grows past the largest
(modules per room, the largest module); tests/unit/test_architecture_doc.py fails when they drift.
"""

from __future__ import annotations

import ast
import statistics
import subprocess
import sys
from pathlib import Path

from tests.unit.test_import_cycles import _cycles

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bus", "worker", "bot", "web")
BASELINE = "fa5589f"  # the last commit before issue 13: worker/ as one flat folder
DOC = ROOT / "ARCHITECTURE.md"
FIGURES_START = "<!-- figures: python -m bench.package_figures --write -->"
FIGURES_END = "<!-- end of figures -->"


def sources(rev: str) -> dict[str, str]:
    """Path → text of every Python file of the packages at `rev`."""
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "--", *PACKAGES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {
        path: subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        for path in listed
        if path.endswith(".py")
    }


def module_name(path: str) -> str:
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(files: dict[str, str]) -> dict[str, set[str]]:
    modules = {module_name(path) for path in files}
    graph: dict[str, set[str]] = {}
    for path, text in files.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
        name = module_name(path)
        graph[name] = {t for t in targets if t in modules} - {name}
    return graph


def package_of(path: str) -> str:
    """`bus`, `bot`, `worker` for its top-level modules, `worker/agents` for a subpackage's."""
    parts = Path(path).parts
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def report(rev: str) -> list[str]:
    files = sources(rev)
    lines = {path: text.count("\n") for path, text in files.items()}
    by_package: dict[str, list[str]] = {}
    for path in files:
        by_package.setdefault(package_of(path), []).append(path)
    out = [f"== {rev}: {len(files)} modules, {sum(lines.values())} lines"]
    for package in sorted(by_package):
        paths = by_package[package]
        sizes = [lines[p] for p in paths]
        largest = max(paths, key=lambda p: lines[p])
        out.append(
            f"  {package:<18} {len(paths):>3} modules  median {statistics.median(sizes):>5.0f} lines  "
            f"largest {largest} ({lines[largest]})"
        )
    largest = max(files, key=lambda p: lines[p])
    cycles = _cycles(import_graph(files))
    out.append(f"  largest module: {largest} ({lines[largest]} lines)")
    out.append(f"  import cycles: {len(cycles)}" + "".join(f"\n    {' <-> '.join(c)}" for c in cycles))
    return out


def working_tree() -> dict[str, str]:
    """Path → text of every Python file of the packages as they are on disk."""
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def current_figures() -> str:
    """The figures ARCHITECTURE.md shows: modules per room (a package's top level, or a subpackage) and the
    largest module, as a markdown table (tests/unit/test_import_cycles.py keeps the cycles at none)."""
    files = working_tree()
    rooms: dict[str, int] = {}
    for path in files:
        rooms[package_of(path)] = rooms.get(package_of(path), 0) + 1
    largest = max(files, key=lambda p: files[p].count("\n"))
    rows = [f"| `{room}/` | {count} |" for room, count in sorted(rooms.items())]
    return "\n".join(
        [
            "| room | modules |",
            "|---|---|",
            *rows,
            f"| **all** | {len(files)} |",
            "",
            f"Largest module: `{largest}`.",
        ]
    )


def write_figures() -> None:
    head, rest = DOC.read_text(encoding="utf-8").split(FIGURES_START, 1)
    tail = rest.split(FIGURES_END, 1)[1]
    DOC.write_text(f"{head}{FIGURES_START}\n{current_figures()}\n{FIGURES_END}{tail}", encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        write_figures()
        return 0
    if any(arg.startswith("-") for arg in argv):
        print(__doc__)
        return 0 if argv in (["-h"], ["--help"]) else 2
    for rev in argv or [BASELINE, "HEAD"]:
        try:
            print("\n".join(report(rev)))
        except subprocess.CalledProcessError:
            print(f"package_figures: error: {rev!r} is not a revision of this repository", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
