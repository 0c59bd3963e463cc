# The two commands of the README: `make demo` and `make test`. Everything else supports them.
# `make demo` installs what running the tool needs; `make test` adds the test extras (PostgreSQL server
# binaries, the frameworks the integrations are tested against, ruff...).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.installed-runtime
TESTING := $(VENV)/.installed-test

.PHONY: install install-test demo test lint bench bench-quick clean

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

test: install-test
	$(BIN)/python -m pytest -q

lint: install-test
	$(BIN)/ruff check indexer tests bench

bench: install-test
	$(BIN)/python bench/run.py

bench-quick: install-test
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache demo.db demo.db-wal demo.db-shm demo.db.lock
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
