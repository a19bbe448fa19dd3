# cuberobot: the two commands a new user runs are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint typecheck bench bench-firmware emulator-deps system-deps screenshot clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml solver/engines/twophase/_twophase.c solver/engines/nxn/_staged5.c solver/engines/nxn/_lines.c solver/engines/nxn/_bars.c solver/engines/nxn/_pairing.c | $(BIN)/python
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

# Debian packages some tests need: the AVR toolchain and simavr (tests/firmware build the motor
# firmware and run it in an emulator) and Chromium with its driver (tests/robot/web drive the
# robot's page in a real browser). On a machine without them `make test` installs them when it
# runs as root on Debian (CI does) and otherwise says so; those tests then skip, naming what is
# missing.
AVR_PACKAGES := gcc-avr avr-libc simavr libsimavr-dev libsimavrparts1
BROWSER_PACKAGES := chromium chromium-driver
EMULATOR_READY := $(shell command -v avr-gcc >/dev/null 2>&1 && \
	test -f /usr/lib/avr/include/avr/io.h && test -f /usr/include/simavr/sim_avr.h && echo yes)
BROWSER_READY := $(shell command -v chromium >/dev/null 2>&1 && \
	command -v chromedriver >/dev/null 2>&1 && echo yes)
MISSING_PACKAGES := $(if $(EMULATOR_READY),,$(AVR_PACKAGES)) $(if $(BROWSER_READY),,$(BROWSER_PACKAGES))
TEST_DEPS := check
ifneq ($(strip $(MISSING_PACKAGES)),)
TEST_DEPS += system-deps
endif

system-deps:
	@if [ -z "$(strip $(MISSING_PACKAGES))" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing $(strip $(MISSING_PACKAGES)) for the emulator and browser tests"; \
		apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(MISSING_PACKAGES) >/dev/null \
		|| echo "note: apt-get failed; the emulator/browser tests will skip and say why"; \
	else \
		echo "note: the emulator/browser tests will skip; install with" \
			"\`sudo apt-get install -y $(strip $(MISSING_PACKAGES))\`"; \
	fi

emulator-deps: system-deps

# a screenshot of the robot's page at the end of a job, for the README (docs/web-page.png)
screenshot: $(STAMP)
	CUBEROBOT_SCREENSHOT=docs/web-page.png $(BIN)/python -m pytest -q tests/robot/web/test_browser.py

# the suite in TEST_JOBS worker processes (pytest-xdist), one test file per worker at a time so a
# module's fixtures (the built wheel, the emulator's firmware) are made once; TEST_JOBS=0 runs it
# in this one process
TEST_JOBS ?= 2
test: $(TEST_DEPS)
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile

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
