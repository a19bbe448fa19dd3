# cuberobot: the two commands a new user runs are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint typecheck bench bench-firmware emulator-deps clean

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

# The firmware tests (tests/firmware) build the AVR firmware and run it in simavr. On a machine
# without those tools `make test` installs them when it runs as root on Debian (CI does), and
# otherwise says so; the tests then skip, naming what is missing.
AVR_PACKAGES := gcc-avr avr-libc simavr libsimavr-dev libsimavrparts1
EMULATOR_READY := $(shell command -v avr-gcc >/dev/null 2>&1 && \
	test -f /usr/lib/avr/include/avr/io.h && test -f /usr/include/simavr/sim_avr.h && echo yes)
TEST_DEPS := check
ifneq ($(EMULATOR_READY),yes)
TEST_DEPS += emulator-deps
endif

emulator-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing $(AVR_PACKAGES) for the firmware emulator tests"; \
		apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(AVR_PACKAGES) >/dev/null; \
	else \
		echo "note: the firmware emulator tests will skip; install with" \
			"\`sudo apt-get install -y $(AVR_PACKAGES)\`"; \
	fi

test: $(TEST_DEPS)
	$(BIN)/python -m pytest -q

# the reference solvers the bench compares against (optional, never runtime dependencies)
$(VENV)/.bench-installed: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,dev,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	$(BIN)/python bench/solve3x3.py

bench-firmware: $(STAMP)
	$(BIN)/python bench/firmware.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache firmware/build
