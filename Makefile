# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow lint typecheck bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/noiseaware demo

lint: $(STAMP)
	$(BIN)/ruff check noiseaware tests benchmarks examples
	$(BIN)/mypy noiseaware

test: $(STAMP) lint
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist loadfile noiseaware tests

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -n 2 tests

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py
	$(BIN)/python benchmarks/render_docs.py

# A quick subset (under 3 minutes on the 2-core development machine) into a scratch directory:
# the committed records in benchmarks/results are left as they are.
BENCH_QUICK_DIR ?= $(or $(TMPDIR),/tmp)/noiseaware-bench-quick
bench-quick: $(STAMP)
	$(BIN)/python benchmarks/run_all.py --quick --results $(BENCH_QUICK_DIR)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info
