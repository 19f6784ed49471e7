"""Line coverage inside the long-running `ib` services the tests start (`ib worker`, `ib bot`, `ib up`, the
consumers), for the test command's full coverage figure (`IB_TEST_COVERAGE=full bash tests/run.sh`).

tests/run.sh puts a one-line .pth into the test venv that runs this file in every Python process of that
venv whose environment names the checkout in COVERAGE_IB_SERVICES (run.sh sets it with `full`). It measures
only the processes that run for a while: the short `ib` commands (thousands in a run, mostly the CLI's
parsing and a Redis call) are left out, since measuring every one cost about 1 s of start-up each and
doubled the suite's CPU time (docs/development/maintenance.md). A service takes the variable out of its
environment, so what it starts (an agent's hooks, a merge's test command) is not measured either; `ib up`
keeps it for the worker and bot it supervises.

Each service writes its own data file (`.coverage.services.<host>.<pid>.<random>`) into the checkout when it
exits normally (SIGTERM included: the services stop cleanly on it); run.sh combines them with the test
processes' figures. A service killed with SIGKILL by a fault test leaves no data.
"""

import os
import sys

SERVICES = frozenset({"worker", "bot", "up", "listen", "events", "watch"})


def _service() -> bool:
    return len(sys.argv) > 1 and os.path.basename(sys.argv[0]) == "ib" and sys.argv[1] in SERVICES


def _start(root: str) -> None:
    import coverage

    if coverage.Coverage.current() is not None:  # the venv's site-packages is read twice (lib and lib64)
        return
    measure = coverage.Coverage(
        data_file=os.path.join(root, ".coverage.services"),
        data_suffix=True,
        config_file=os.path.join(root, "pyproject.toml"),
        auto_data=True,
    )
    # a service imports only part of the sources, and what it prints is read by the tests
    measure.set_option("run:disable_warnings", ["module-not-imported", "no-data-collected"])
    measure.start()


if _service():
    _start(
        os.environ["COVERAGE_IB_SERVICES"] if sys.argv[1] == "up" else os.environ.pop("COVERAGE_IB_SERVICES")
    )
