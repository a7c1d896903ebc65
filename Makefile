# srcgrad developer tasks.  Everything runs inside a private virtualenv (.venv)
# that is created, and refreshed whenever pyproject.toml changes, on demand.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed

.PHONY: all demo test slow fuzz bench clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test]'
	touch $@

# Train a small MLP on the bundled digits data with generated gradient code.
demo: $(STAMP)
	$(PY) examples/quickstart.py

# Unit tests plus doctests in srcgrad/ (configured in pyproject.toml), on two
# processes (pytest-xdist; each has its own code cache, see tests/conftest.py).
# TEST_JOBS=0 runs them in this process, as plain `python -m pytest` does.
TEST_JOBS ?= 2
test: $(STAMP)
	$(PY) -m pytest -n $(TEST_JOBS)

# The long part of the matrices `make test` samples, marked `slow` (every corpus
# function under every policy, the full counts of the quick fuzzers, ...; see
# tests/README.md), on two processes like `make test`.  Exit status 5 means "no
# tests collected", which is not a failure here.
slow: $(STAMP)
	$(PY) -m pytest -n $(TEST_JOBS) -m slow; \
	rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make slow: no slow tests selected"; exit 0; fi; \
	exit $$rc

# Long property-based runs of the tests marked `fuzz`.  Exit status 5 means
# "no tests collected", which is not a failure here.
fuzz: $(STAMP)
	SRCGRAD_FUZZ_EXAMPLES=10000 $(PY) -m pytest tests -m fuzz; \
	rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make fuzz: no fuzz tests selected"; exit 0; fi; \
	exit $$rc

# Benchmark suite (issue 7): generated gradients against hand-written NumPy on
# one thread, compile time and call overhead; prints the table and writes
# benchmarks/results.md.  autograd, jax and torch are compared when installed.
bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
