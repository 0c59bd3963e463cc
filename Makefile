# The two commands of the README: `make demo` and `make test`. Everything else supports them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench bench-quick clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("indexer needs Python 3.10 or newer, found " + sys.version.split()[0]) if sys.version_info < (3, 10) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

demo: install
	rm -f demo.db demo.db-wal demo.db-shm
	$(BIN)/index build sample_corpus --db demo.db
	@echo
	$(BIN)/index query "how do I fix a flat tyre" --db demo.db -k 3
	@echo
	$(BIN)/index query "what should I do if someone is choking" --db demo.db -k 3
	@echo
	$(BIN)/index query "when should I prune an apple tree" --db demo.db -k 3

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check indexer tests bench

bench: install
	$(BIN)/python bench/run.py

bench-quick: install
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache demo.db demo.db-wal demo.db-shm demo.db.lock
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
