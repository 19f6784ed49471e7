#!/usr/bin/env bash
# The .venv: the locked test environment (requirements-dev.lock), then ittybus itself, editable; its bytecode
# written. Run by `make install` and by the test command (tests/run.sh), from the checkout's root.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x .venv/bin/python ]]; then
    echo "== creating .venv"
    command -v python3 >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq python3 >/dev/null; }
    # Debian and Ubuntu keep venv's pip bootstrap in a package of its own
    python3 -m venv .venv 2>/dev/null || {
        rm -rf .venv
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv .venv
    }
fi

pip_quiet() {  # pip without the "Location ... is ignored" noise of absent find-links; its failure stops the run
    local output status=0
    output=$(.venv/bin/pip "$@" 2>&1) || status=$?
    grep -vE 'is ignored|^$' <<<"$output" || true
    return "$status"
}

# The test environment is the lock's (`make lock` writes it from pyproject.toml), every file checked against
# its hash; ittybus itself goes on top without dependencies. Only the package index is needed. uv (itself
# pinned by hash in requirements-uv.lock) installs it in about 20 s where pip took 74 s on 2 cores; pip
# installs it where uv cannot be had or fails.
echo "== installing the locked test environment (requirements-dev.lock) and ittybus"
if ! { pip_quiet install -q -r requirements-uv.lock &&
    .venv/bin/uv pip install -q --python .venv/bin/python --require-hashes --compile-bytecode \
        -r requirements-dev.lock; }; then
    echo "== uv could not install the lock: pip does"
    pip_quiet install -q -r requirements-dev.lock
fi
pip_quiet install -q -e . --no-deps --config-settings editable_mode=compat

# Python's bytecode cache, whatever this shell says: with PYTHONDONTWRITEBYTECODE set (some images set it),
# every `ib` service, hook and test process compiled ittybus's modules from source again (0.5 s of CPU per
# start of `ib worker`). The lock's packages were compiled as they went in; this writes the checkout's, once,
# before anything runs (an agent's sandbox cannot write them later).
.venv/bin/python -m compileall -q -j 0 bus worker bot web tests bench >/dev/null
