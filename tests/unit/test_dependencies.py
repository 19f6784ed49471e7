"""Dependencies are declared exactly as imported: every third-party import of the packages is a declared
dependency and every dependency is imported; the same for the tests, the benchmarks and the docs' picture
scripts and the dev extras. Imports are read from the source (every `import`, lazy ones included, and
`find_spec("name")`). The lock of the test environment (requirements-dev.lock) pins every one of them inside
its declared range."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement

from tests.sources import nodes

ROOT = Path(__file__).resolve().parents[2]
OWN = {"bus", "worker", "bot", "web", "tests", "bench", "docs"}  # docs: its pictures' scripts (docs.pictures)
# dev extras that are never imported, and why they are declared anyway
DEV_NOT_IMPORTED = {
    "mypy": "a tool: tests/run.sh runs it",
    "ruff": "a tool: tests/run.sh runs it",
    "vulture": "a tool: tests/run.sh and make lint run it (dead code)",
    "pytest-timeout": "a pytest plugin: the timeout setting and marker",
    "pytest-xdist": "a pytest plugin: tests/run.sh runs the tests in several processes (-n)",
    "build": "run as `python -m build` by tests/wheel.py (the installed wheel's tests)",
    "mkdocs": "a tool: tests/run.sh builds the docs site with it (docs/hooks/ run inside it)",
    "mkdocs-material": "the docs site's theme, loaded by mkdocs",
    "types-pygments": "type hints for mypy (Pygments ships none)",
    "types-pyyaml": "type hints for mypy over tests (PyYAML ships none)",
    "types-jsonschema": "type hints for mypy over tests (jsonschema ships none)",
    "pytest-cov": "a pytest plugin: tests/run.sh measures line coverage (--cov)",
    "coverage": "a tool: tests/run.sh prints its per-package totals; [tool.coverage] configures it",
    "ittybus": "ittybus[web]: the page's extra in the test environment (its own imports are checked below)",
}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(requirements: list[str]) -> set[str]:
    return {normalized(re.match(r"[A-Za-z0-9._-]+", r)[0]) for r in requirements}  # type: ignore[index]


def imported_modules(folders: tuple[str, ...]) -> dict[str, set[str]]:
    """Top-level third-party module → the files that import it."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            for node in nodes(path):
                for name in _names(node):
                    top = name.partition(".")[0]
                    if top not in sys.stdlib_module_names and top not in OWN and top != "__future__":
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def _names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in ("find_spec", "import_module") and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    return []


def distributions(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    """Distribution → the files that import it; a module no installed distribution provides fails."""
    provided = packages_distributions()
    by_dist: dict[str, set[str]] = {}
    for module, files in modules.items():
        assert module in provided, f"{module} (imported by {sorted(files)}) comes from no installed package"
        for dist in provided[module]:
            by_dist.setdefault(normalized(dist), set()).update(files)
    return by_dist


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
RUNTIME = declared(PROJECT["dependencies"])
DEV = declared(PROJECT["optional-dependencies"]["dev"])
WEB = declared(PROJECT["optional-dependencies"]["web"])
SELF = "ittybus"


def test_the_packages_import_exactly_the_declared_dependencies() -> None:
    used = distributions(imported_modules(("bus", "worker", "bot")))
    undeclared = {dist: sorted(files) for dist, files in used.items() if dist not in RUNTIME}
    assert not undeclared, f"imported but not in [project.dependencies]: {undeclared}"
    assert RUNTIME - set(used) == set(), "declared in [project.dependencies] but never imported"


def test_the_page_imports_the_dependencies_and_its_extra() -> None:
    """web/ (`ib web`) imports the core's dependencies and the `web` extra's, and the extra's are all used."""
    used = distributions(imported_modules(("web",)))
    undeclared = {dist: sorted(files) for dist, files in used.items() if dist not in RUNTIME | WEB}
    assert not undeclared, (
        f"imported by web/ but not in [project.dependencies] or the web extra: {undeclared}"
    )
    assert WEB - set(used) == set(), "declared in the web extra but never imported"


def test_tests_and_benchmarks_import_only_declared_dependencies() -> None:
    used = distributions(imported_modules(("tests", "bench", "docs/pictures")))
    undeclared = {dist: sorted(files) for dist, files in used.items() if dist not in RUNTIME | DEV}
    assert not undeclared, f"imported but declared nowhere (add it to the dev extras): {undeclared}"
    unused = DEV - set(used) - set(DEV_NOT_IMPORTED)
    assert not unused, f"dev extras that nothing imports: {sorted(unused)}"


def locked() -> dict[str, str]:
    """Distribution → the version requirements-dev.lock pins."""
    text = (ROOT / "requirements-dev.lock").read_text(encoding="utf-8")
    pins = re.findall(r"^([A-Za-z0-9._-]+)==([^\s;]+)", text, re.MULTILINE)
    return {normalized(name): version for name, version in pins}


def test_the_lock_pins_every_dependency_inside_its_declared_range() -> None:
    """A dependency added or a range moved in pyproject.toml without `make lock` fails here, not in CI's
    install (tests/run.sh installs the lock, then ittybus without its dependencies)."""
    pins = locked()
    extras = PROJECT["optional-dependencies"]
    for text in PROJECT["dependencies"] + extras["dev"] + extras["web"]:
        requirement = Requirement(text)
        name = normalized(requirement.name)
        if name == SELF:  # ittybus[web] in dev: the extra's own requirements are checked in this loop
            continue
        assert name in pins, f"{requirement.name} is not in requirements-dev.lock: run `make lock`"
        version = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"requirements-dev.lock pins {requirement.name}=={version}, outside {text!r}: run `make lock`"
        )
