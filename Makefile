# Two commands for a fresh machine: `make demo` and `make test` (`make docs` builds the documentation).
#
# Two stacks are supported and tested (README, "Supported versions"):
# - the primary one, in .venv: the newest supported Python >= 3.12 found (tools/find_python.sh: PATH, then pyenv's
#   versions), where pip resolves PyMC 6, PyTensor 3, ArviZ 1 (results are xarray.DataTree) and today's JAX;
# - the previous one, in .venv-compat (`make test-compat`): Python 3.11, PyMC 5, PyTensor 2, ArviZ 0.x.
PYTHON ?= $(shell sh tools/find_python.sh current)
COMPAT_PYTHON ?= $(shell sh tools/find_python.sh compat)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
COMPAT_VENV := .venv-compat
COMPAT_STAMP := $(COMPAT_VENV)/.installed

.PHONY: demo test test-full test-compat lint typecheck bench bench-quick docs dist-check clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "make: no Python found (see tools/find_python.sh)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "make: .venv runs $$($(BIN)/python --version) ($$(readlink -f $(BIN)/python))"
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The previous stack, pinned to it explicitly (on Python 3.11 pip would resolve it anyway).
$(COMPAT_STAMP): pyproject.toml
	@test -n "$(COMPAT_PYTHON)" || { echo "make: no Python 3.11 found for the compatibility suite"; exit 1; }
	test -x $(COMPAT_VENV)/bin/python || $(COMPAT_PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(COMPAT_VENV)/bin/python -m pip install --quiet -e '.[test]' 'pymc>=5.16,<6' 'pytensor<3' 'arviz<1'
	touch $(COMPAT_STAMP)

# The docs extra goes into the same environment, only for `make docs` (`make test` does not need it).
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

demo: $(STAMP)
	$(BIN)/noiseaware demo

lint: $(STAMP)
	$(BIN)/ruff check noiseaware tests benchmarks examples tools
	$(BIN)/mypy noiseaware

# The two workers (and the tests' own subprocesses) share JAX's persistent compilation cache in a fresh directory made
# for this run and removed after it: one worker loads what the other compiled, and no entry of another run, machine or
# JAX is ever read. (The package leaves the cache off by default: noiseaware.config says why.)
# XLA:CPU compiles the tier's programs with LLVM's cheapest optimization (TEST_XLA_FLAGS, put before the caller's own
# XLA_FLAGS; what JAX's `jax_disable_most_optimizations` sets for smoke tests): the same programs, compiled in about
# half the CPU time and run slower. Compilation is most of this tier's time and its programs run briefly.
# `make test TEST_XLA_FLAGS=` runs the tier with XLA's default optimization, as `.ci/run` also does.
TEST_XLA_FLAGS ?= --xla_backend_optimization_level=0
test: $(STAMP) lint
	@cache=$$(mktemp -d) && trap 'rm -rf "$$cache"' EXIT && set -x && \
	flags="$(TEST_XLA_FLAGS)$${XLA_FLAGS:+ $$XLA_FLAGS}" && if [ -n "$$flags" ]; then export XLA_FLAGS="$$flags"; fi && \
	NOISEAWARE_JAX_CACHE=$$cache $(BIN)/python -m pytest -m "not slow" -n 2 --dist loadfile --durations=15 noiseaware tests

# Every test `make test` leaves out (the `slow` marker, pyproject.toml): statistical studies, the gallery, large programs.
# One file at a time, each in a fresh pytest process (tools/test_full.py): their large compiled programs (several GiB)
# never run beside each other's, and XLA:CPU crashed a single long-lived process (segfaults in its compiler and in its
# cache reader, after a few dozen of these files' programs) where each file passes on its own. CI has the time.
test-full: $(STAMP)
	$(BIN)/python tools/test_full.py noiseaware tests

# The compatibility suite on the previous stack (Python 3.11, PyMC 5, ArviZ 0.x): the import, every law of the
# registry in both PPLs, each public fit at a tiny size through every ArviZ call, the CLI, the doctests.
COMPAT_TESTS := noiseaware tests/test_arviz.py tests/test_engine.py tests/test_copula_result.py tests/test_dirichlet_augment_result.py \
	tests/distributions tests/test_cli.py tests/test_import_side_effects.py tests/test_surface.py
test-compat: $(COMPAT_STAMP)
	$(COMPAT_VENV)/bin/python -m pytest -m "not slow" -n 2 --dist loadfile --durations=10 $(COMPAT_TESTS)

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
	rm -rf $(VENV) $(COMPAT_VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info docs/_build docs/api/generated
