# Each target bootstraps .venv from nothing (pip only), then runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench demo lint typecheck check clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# Bytecode for our own modules even where PYTHONDONTWRITEBYTECODE is set: compiling them at
# every start costs ~50 ms of the first frame (bench/RESULTS.md). Up-to-date files are skipped.
run: $(STAMP)
	@$(BIN)/python -m compileall -q pi_tui >/dev/null
	$(BIN)/pi-tui $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

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

clean:
	rm -rf $(VENV) build dist *.egg-info
