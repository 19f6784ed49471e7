# The everyday commands. `make test` is exactly what CI runs.
.PHONY: install test lint bench docs clean

install:  ## the .venv with ittybus and its dev extras
	test -x .venv/bin/python || python3 -m venv .venv
	.venv/bin/pip install -q -e '.[dev]' --config-settings editable_mode=compat

test:  ## lint, types and the whole suite, on the embedded engine then the system's Redis (installs what it needs)
	bash tests/run.sh

lint: install  ## ruff and mypy only
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy

bench: install  ## the bus and the hooks (a minute each); README "Benchmarks" names every other one
	.venv/bin/python -m bench.bus_bench
	.venv/bin/python -m bench.hook_latency_bench

docs: install  ## the documentation site into site/ (strict: a broken link fails); `.venv/bin/mkdocs serve` to edit
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir site

clean:  ## what builds and test runs leave behind (not .venv)
	rm -rf build dist site *.egg-info .mypy_cache .ruff_cache
