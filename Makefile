# The two commands of the README: `make demo` and `make test`. Everything else supports them.
# `make demo` installs what running the tool needs; `make test` adds the test extras (PostgreSQL server
# binaries, the frameworks the integrations are tested against, ruff...).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.installed-runtime
TESTING := $(VENV)/.installed-test
DOCS_TOOLS := $(VENV)/.installed-docs

.PHONY: install install-test browser emulator demo test test-fast lint docs cli-docs bench bench-quick screenshot clean

install: $(RUNTIME)

install-test: $(TESTING)

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit("indexer needs Python 3.10 or newer, found " + sys.version.split()[0]) if sys.version_info < (3, 10) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUNTIME): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $(RUNTIME)

$(TESTING): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(RUNTIME) $(TESTING)

demo: install
	rm -f demo.db demo.db-wal demo.db-shm
	$(BIN)/index build sample_corpus --db demo.db
	@echo
	$(BIN)/index query "how do I fix a flat tyre" --db demo.db -k 3
	@echo
	$(BIN)/index query "what should I do if someone is choking" --db demo.db -k 3
	@echo
	$(BIN)/index query "when should I prune an apple tree" --db demo.db -k 3

# The search page's tests drive Debian's Chromium; as root (CI) it is installed when missing, else
# they skip and say how to install it. `.ci/run` calls this first and fails if it cannot.
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "note: Chromium is not installed (apt-get install chromium): the browser tests will skip"

# int8 on CPUs without int8 dot products is tested on an emulated AVX2 CPU (qemu-user): as root it is
# installed when missing, else that test skips and says how to install it. `.ci/run` requires it.
emulator:
	@command -v qemu-x86_64 >/dev/null || [ "$$(uname -m)" != x86_64 ] || { [ "$$(id -u)" = 0 ] && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null; } || \
		echo "note: qemu-user is not installed (apt-get install qemu-user): the emulated-CPU test will skip"

# Two workers, each taking whole test files (module fixtures, a served index, a browser, stay one per
# file): the suite waits on servers, workers and PostgreSQL as much as it computes.
test: install-test browser emulator
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

# the edit-test loop: every test that loads no model and starts no server, browser, emulator, worker
# or PostgreSQL (those are marked heavy; one that is not fails here, naming what it did), less the
# few that take seconds alone (marked slow); `make test` runs them all
test-fast: install-test
	INDEX_FAST_TESTS=1 $(BIN)/python -m pytest -q -m "not heavy and not slow" -p no:cacheprovider

# the README's picture of the search page, from the test that drives it
screenshot: install-test browser
	INDEX_SCREENSHOT=docs/search-page.png $(BIN)/python -m pytest -q tests/test_web_page.py -k readme

lint: install-test
	$(BIN)/ruff check indexer tests bench docs/cli_reference.py
	$(BIN)/ruff format --check indexer tests bench docs/cli_reference.py
	$(BIN)/mypy

# the manual (docs/) as a site in site/; the command-line page is regenerated from `--help` first
$(DOCS_TOOLS): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	@touch $(DOCS_TOOLS)

cli-docs: install
	$(BIN)/python docs/cli_reference.py docs/cli.md

docs: cli-docs $(DOCS_TOOLS)
	$(BIN)/mkdocs build --strict --quiet

bench: install-test
	$(BIN)/python bench/run.py

bench-quick: install-test
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) site build dist *.egg-info .pytest_cache .ruff_cache demo.db demo.db-wal demo.db-shm demo.db.lock
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
