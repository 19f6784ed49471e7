"""What one everyday `ib` command costs to start and run, beside bare Python, `git status` and the same
command on another checkout (the baseline).

    .venv/bin/python -m bench.cli_startup_bench [--baseline /path/to/other/checkout] [--runs 7] [WORD ...]

Each command runs `--runs` times against a scratch namespace on the shared Redis (IB_BENCH_REDIS_URL) in a
scratch git repository, served by the warm server (worker.cli.warm) and then alone (`IB_WARM=0`, each in
its own interpreter, as before the server); the table shows the median wall and CPU (user + system) time
of each. A served command's CPU is its `ib` process's plus its share of the server's (the processes it
forked included, read from /proc before and after the runs): all it costs the machine. Commands that
name an agent name one that does not exist: they run up to their one-line refusal, which reads the
settings, the bus and the store, as the real command does before it acts. The baseline runs the same
`ib` entry point, alone, with the other checkout's packages first on PYTHONPATH (this venv's third-party
packages).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import IB, ib_env, process_times, scratch_namespace
from worker.cli.warm import wire

ENTRY = "from worker.cli.entry import main; main()"
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("list",),
    ("info", "ghost"),
    ("look", "ghost"),
    ("send", "ghost", "hello"),
    ("status", "ghost"),
    ("approve", "ghost"),
    ("deny", "ghost"),
    ("answer", "q-ghost", "yes"),
    ("notify", "done"),
    ("task", "list"),
    ("task", "show", "{task}"),
    ("task", "claim", "--project", "bench", "--agent", "ghost"),
    ("task", "done", "{task}", "--agent", "ghost"),
    ("cost",),
    ("events", "--dead"),
    ("listen", "--timeout", "0.01"),
)


def _ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1000


def _row(label: str, cmd: list[str], env: dict[str, str], runs: int, cwd: Path) -> tuple[float, float]:
    os.chdir(cwd)
    walls, cpus = process_times(cmd, env, runs=runs)
    return _ms(walls), _ms(cpus)


def _served_row(
    cmd: list[str], env: dict[str, str], runs: int, cwd: Path, server: int
) -> tuple[float, float]:
    """Wall and CPU of a served command: its own process's and its share of the server's."""
    before = _server_cpu(server)
    wall, cpu = _row("", cmd, env, runs, cwd)
    return wall, cpu + (_server_cpu(server) - before) / runs * 1000


def _server_cpu(pid: int) -> float:
    """CPU seconds of the server and of the command processes it reaped (/proc/PID/stat fields 14-17)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _start_server(env: dict[str, str], cwd: Path) -> int:
    """The warm server of this installation, started by a first command if none runs."""
    subprocess.run([IB, "--version"], env=env, cwd=cwd, capture_output=True, check=True)
    address = wire.address()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                words = (entry / "cmdline").read_bytes().split(b"\0")
                if address.encode() in words and os.path.exists(address):
                    time.sleep(0.5)  # bound, not yet serving: its first answer
                    return int(entry.name)
        time.sleep(0.2)
    raise SystemExit("the warm server did not start (see warm.log beside its socket)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="another checkout of ittybus to run the same commands from")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("only", nargs="*", help="only the commands whose first word is one of these")
    args = parser.parse_args()
    with scratch_namespace() as namespace, tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        env = ib_env(namespace, str(Path(tmp) / "spool"), IB_WORKER_ID="bench")
        added = subprocess.run(
            [IB, "task", "add", "bench task", "--project", "bench"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        task = added.stdout.split()[0]
        base_env = {**env, "PYTHONPATH": args.baseline, "IB_WARM": "0"} if args.baseline else None
        cold_env = {**env, "IB_WARM": "0"}
        server = _start_server(env, repo)
        bare_wall, bare_cpu = _row("python", [sys.executable, "-c", "pass"], env, args.runs, repo)
        git_wall, git_cpu = _row("git status", ["git", "status"], env, args.runs, repo)
        print(f"python3 -c pass: wall {bare_wall:6.1f} ms  cpu {bare_cpu:6.1f} ms")
        print(f"git status:      wall {git_wall:6.1f} ms  cpu {git_cpu:6.1f} ms")
        head = f"{'command':40} {'served: wall ms':>15} {'cpu ms':>7} {'× py':>5}"
        head += f" {'alone: wall ms':>15} {'cpu ms':>7} {'× py':>5}"
        print(head + (f" {'base wall':>9} {'base cpu':>9} {'× py':>5}" if base_env else ""))
        for words in [c for c in COMMANDS if not args.only or c[0] in args.only]:
            argv = [w.format(task=task) for w in words]
            wall, cpu = _served_row([IB, *argv], env, args.runs, repo, server)
            c_wall, c_cpu = _row("", [IB, *argv], cold_env, args.runs, repo)
            line = f"ib {' '.join(argv):37} {wall:15.1f} {cpu:7.1f} {cpu / bare_cpu:5.1f}"
            line += f" {c_wall:15.1f} {c_cpu:7.1f} {c_cpu / bare_cpu:5.1f}"
            if base_env is not None:
                b_wall, b_cpu = _row("base", [sys.executable, "-c", ENTRY, *argv], base_env, args.runs, repo)
                line += f" {b_wall:9.1f} {b_cpu:9.1f} {b_cpu / bare_cpu:5.1f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
