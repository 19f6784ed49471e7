#!/usr/bin/env bash
# The test command: installs what it needs, starts what it needs, then lint, types and tests.
# Usage: bash tests/run.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)  # Redis 7 (with TLS) besides the embedded 6.2
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)            # certificates for the TLS tests
# the monospace font of pane screenshots (worker/screenshot.py)
[[ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ]] || need_apt+=(fonts-dejavu-core)
if ((${#need_apt[@]})); then
    echo "== installing ${need_apt[*]}"
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [[ ! -x .venv/bin/python ]]; then
    echo "== creating .venv"
    python3 -m venv .venv
fi
echo "== installing ittybus with its dev extras"
.venv/bin/pip install -q -e '.[dev]' --config-settings editable_mode=compat 2>&1 | grep -vE 'is ignored|^$' || true

# The real Claude Code CLI the `claude` tests run: the binary bundled in the pinned claude-agent-sdk wheel.
find_claude='from tests.fake_anthropic.client import claude_binary; print(claude_binary())'
if ! claude_bin=$(.venv/bin/python -c "$find_claude" 2>/dev/null); then
    echo "== installing the pinned Claude Code CLI (claude-agent-sdk)"
    .venv/bin/pip install -q --force-reinstall --no-deps 'claude-agent-sdk==0.2.189'
    claude_bin=$(.venv/bin/python -c "$find_claude")
fi
echo "== Claude Code $("$claude_bin" --version 2>/dev/null || echo '(version unknown)') at $claude_bin"

export IB_TEST_REDIS_URL="${IB_TEST_REDIS_URL:-redis://127.0.0.1:6379/0}"
started_redis=""
if ! .venv/bin/python -c "import redis, sys; redis.Redis.from_url(sys.argv[1], socket_connect_timeout=1).ping()" \
    "$IB_TEST_REDIS_URL" 2>/dev/null; then
    echo "== no Redis answers at $IB_TEST_REDIS_URL: starting one for the tests"
    redis_dir=$(mktemp -d)
    server=$(command -v redis-server || echo .venv/bin/redis-server)
    "$server" --port 6379 --bind 127.0.0.1 --save "" --appendonly no --dir "$redis_dir" --daemonize yes \
        --pidfile "$redis_dir/redis.pid" --logfile "$redis_dir/redis.log"
    started_redis="$redis_dir"
    for _ in $(seq 50); do
        .venv/bin/python -c "import redis; redis.Redis(port=6379).ping()" 2>/dev/null && break
        sleep 0.1
    done
    export IB_TEST_REDIS_URL="redis://127.0.0.1:6379/0"
fi
cleanup() {
    if [[ -n "$started_redis" && -f "$started_redis/redis.pid" ]]; then
        kill "$(cat "$started_redis/redis.pid")" 2>/dev/null || true
    fi
}
trap cleanup EXIT

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
.venv/bin/pytest -q -p no:cacheprovider "$@"
