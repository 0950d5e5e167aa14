# Two commands for a fresh machine: `make demo` and `make test` (`make docs` builds the documentation).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test test-slow lint typecheck bench bench-quick docs dist-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The docs extra goes into the same environment, only for `make docs` (`make test` does not need it).
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

demo: $(STAMP)
	$(BIN)/noiseaware demo

lint: $(STAMP)
	$(BIN)/ruff check noiseaware tests benchmarks examples
	$(BIN)/mypy noiseaware

test: $(STAMP) lint
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist loadfile --durations=15 noiseaware tests

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -n 2 tests

# API reference from the docstrings, the Markdown pages, and the getting-started pages executed (-E: every page
# is read again, so every example runs); warnings are errors.
docs: $(DOCS_STAMP)
	rm -rf docs/api/generated
	$(BIN)/sphinx-build -E -W --keep-going -b html docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py
	$(BIN)/python benchmarks/render_docs.py

# A quick subset (under 3 minutes on the 2-core development machine) into a scratch directory:
# the committed records in benchmarks/results are left as they are.
BENCH_QUICK_DIR ?= $(or $(TMPDIR),/tmp)/noiseaware-bench-quick
bench-quick: $(STAMP)
	$(BIN)/python benchmarks/run_all.py --quick --results $(BENCH_QUICK_DIR)

# Build the wheel and the sdist in a temporary directory, install each into its own fresh virtual
# environment without the test extras, and import the package and both front ends there. Fails on
# a setuptools deprecation warning (e.g. a license written as a TOML table).
dist-check:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) -m venv "$$tmp/build-env"; \
	"$$tmp/build-env/bin/python" -m pip install --quiet build; \
	"$$tmp/build-env/bin/python" -m build --outdir "$$tmp/dist" . > "$$tmp/build.log" 2>&1 || { cat "$$tmp/build.log"; exit 1; }; \
	if grep -iE "is deprecated|DeprecationWarning" "$$tmp/build.log"; then echo "dist-check: the build warns (above)"; exit 1; fi; \
	for dist in "$$tmp"/dist/*.whl "$$tmp"/dist/*.tar.gz; do \
		echo "dist-check: $$(basename "$$dist")"; \
		rm -rf "$$tmp/env"; $(PYTHON) -m venv "$$tmp/env"; \
		"$$tmp/env/bin/python" -m pip install --quiet "$$dist"; \
		(cd "$$tmp" && "$$tmp/env/bin/python" -c \
			"import noiseaware, noiseaware.pymc, noiseaware.numpyro; print('  imports', noiseaware.__version__, 'from', noiseaware.__file__)"); \
	done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info docs/_build docs/api/generated
