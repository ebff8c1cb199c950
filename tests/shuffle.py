"""Run the suite in a random order, to find tests that depend on the ones before them.

    python -m pytest -p tests.shuffle                       # a fresh seed, printed at the end
    python -m pytest -p tests.shuffle --shuffle-seed 1234   # the same order again

Modules are shuffled, then the tests inside each module (a module's tests stay together, so
its module-scoped fixtures are still set up once). Not on by default: `make test` keeps the
written order, and a failure seen here is reproduced with the seed it printed.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

_SEED_KEY = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--shuffle-seed", type=int, default=None,
                     help="seed of the random test order (tests/shuffle.py); a fresh one when omitted")


def pytest_configure(config: pytest.Config) -> None:
    seed = config.getoption("--shuffle-seed")
    config.stash[_SEED_KEY] = seed if seed is not None else random.SystemRandom().randrange(1 << 31)


def pytest_report_header(config: pytest.Config) -> str:
    return f"shuffled order: --shuffle-seed {config.stash[_SEED_KEY]}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rng = random.Random(config.stash[_SEED_KEY])
    by_module: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        by_module[item.nodeid.split("::", 1)[0]].append(item)
    modules = list(by_module.values())
    rng.shuffle(modules)
    for module_items in modules:
        rng.shuffle(module_items)
    items[:] = [item for module_items in modules for item in module_items]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    # (the header is hidden by -q; this line is not)
    terminalreporter.write_line(f"shuffled order: -p tests.shuffle --shuffle-seed {config.stash[_SEED_KEY]}")
