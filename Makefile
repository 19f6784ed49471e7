# The everyday commands. `make test` is exactly what CI runs.
.PHONY: install lock test coverage lint bench docs clean

install:  ## the .venv: the locked test environment (requirements-dev.lock), then ittybus itself, editable
	bash tests/install.sh

# After changing a dependency in pyproject.toml: the lock moves only what it must (LOCK_FLAGS=--upgrade
# moves everything to the newest versions the ranges allow). Needs the package index.
lock:  ## requirements-dev.lock again from pyproject.toml, and requirements-uv.lock for the uv that installs it
	test -x .venv/bin/uv || .venv/bin/pip install -q 'uv>=0.13,<0.14'
	.venv/bin/uv pip compile -q pyproject.toml --extra dev --universal --python-version 3.11 \
		--generate-hashes $(LOCK_FLAGS) -o requirements-dev.lock
	echo "uv==$$(.venv/bin/uv --version | cut -d' ' -f2)" | .venv/bin/uv pip compile -q - --universal \
		--python-version 3.11 --generate-hashes --no-header -o requirements-uv.body
	{ echo "# uv, which installs requirements-dev.lock for tests/install.sh (pip does when uv cannot be had)."; \
		echo "# Written by: make lock"; cat requirements-uv.body; } >requirements-uv.lock && rm requirements-uv.body

test:  ## lint, types and the whole suite, on the embedded engine then the system's Redis (installs what it needs)
	bash tests/run.sh

coverage:  ## `make test` with line coverage measured in the services the tests start too (the full figure)
	IB_TEST_COVERAGE=full bash tests/run.sh

lint: install  ## ruff, mypy and vulture (dead code) only
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	.venv/bin/vulture

bench: install  ## the bus and the hooks (a minute each); README "Benchmarks" names every other one
	.venv/bin/python -m bench.bus_bench
	.venv/bin/python -m bench.hook_latency_bench

docs:  ## the documentation site into site/ (strict: a broken link fails); `.venv/bin/mkdocs serve` to edit
	@test -x .venv/bin/mkdocs || { echo "make docs: mkdocs comes with the test environment (.venv, about 800 MB): installing it first (make install)"; $(MAKE) install; }
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir site

clean:  ## what builds and test runs leave behind (not .venv)
	rm -rf build dist site *.egg-info .mypy_cache .ruff_cache
