# cuberobot: the two commands a new user runs are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml solver/engines/twophase/_twophase.c | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/cuberobot demo

lint: $(STAMP)
	$(BIN)/ruff check solver vision robot firmware_protocol tests bench
	$(BIN)/ruff format --check solver vision robot firmware_protocol tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck

test: check
	$(BIN)/python -m pytest -q

# the reference solvers the bench compares against (optional, never runtime dependencies)
$(VENV)/.bench-installed: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,dev,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	$(BIN)/python bench/solve3x3.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
