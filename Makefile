# Every target runs through the virtual environment in .venv, created on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# distributed (Ray and RLlib) pins Gymnasium 1.2.2 for the whole venv: the suite passes on it
# and on 1.4 (README, "Running on a cluster").
EXTRAS := train,notebooks,bench,integrations,dev,distributed
STAMP := $(VENV)/.installed
# The oldest PettingZoo that pyproject.toml allows: `make test` also runs the suites of the
# PettingZoo environments with it ahead of the installed one on the path (pip install --target).
PETTINGZOO_LOWEST := 1.24.4
LOWEST := $(VENV)/pettingzoo-$(PETTINGZOO_LOWEST)
LOWEST_TESTS := tests/test_scopa_v0.py tests/test_scopone_v0.py

.PHONY: setup test test-lowest run bench clean

setup: $(STAMP)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "error: $(PYTHON) is older than 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

# Reinstall only when the dependency specification (EXTRAS included) changes.
$(STAMP): pyproject.toml constraints.txt Makefile | $(BIN)/python
	$(BIN)/python -m pip install -c constraints.txt -e ".[$(EXTRAS)]"
	touch $@

# worksteal: a worker that runs out of tests takes some of the other's, so that a long test near
# the end does not leave a core idle (pytest on a slow 2-core machine, 7 December 2026: 11 min
# 56 s under the default distribution, 11 min 6 s with worksteal).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n 2 --dist worksteal
	$(MAKE) test-lowest

$(LOWEST)/.installed: | $(STAMP)
	$(BIN)/python -m pip install --no-deps --target $(LOWEST) pettingzoo==$(PETTINGZOO_LOWEST)
	touch $@

test-lowest: $(LOWEST)/.installed
	PYTHONPATH=$(LOWEST) $(BIN)/python -c 'import pettingzoo as p; assert p.__version__ == "$(PETTINGZOO_LOWEST)", p.__version__'
	PYTHONPATH=$(LOWEST) $(BIN)/pytest -n 2 --dist worksteal -p no:cacheprovider $(LOWEST_TESTS)

run: $(STAMP)
	$(BIN)/scopa train --config configs/quick.yaml

bench: $(STAMP)
	$(BIN)/scopa bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
