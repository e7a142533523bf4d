# toolwire's one entry point for people and CI.
#   make test   create .venv if needed, install toolwire with its test deps, lint, type-check,
#               test (failing when the sans-I/O core's coverage drops below 95%)
#   make demo   the offline demo: an agent against the local emulation server (core install only)
#   make bench  the streaming benchmark against the libraries you would otherwise use
#   make bench-agent  the agent benchmark (CPU per run) against the bare-httpx floor and the peers
#   make soak   2,000 concurrent journaled runs in one process, the server in another
#   make test-llamacpp  the agent against two real llama.cpp servers (not part of make test)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
CORE_STAMP := $(VENV)/.installed-core
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: test lint typecheck unit demo bench bench-agent soak clean test-llamacpp

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The demo needs toolwire alone: no dev tools, extras or provider SDKs.
$(CORE_STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e .
	touch $(CORE_STAMP)

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,mcp,otel,ray,cost]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/coverage run -m pytest -q
	$(BIN)/coverage report

test: lint typecheck unit

demo: $(CORE_STAMP)
	$(BIN)/toolwire demo

# The peers (openai, anthropic, langchain-core, litellm, jiter, openai-agents,
# pydantic-ai) are dev-only:
# `make bench` installs the bench extra, `make test` never needs it.
$(BENCH_STAMP): $(STAMP) pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python bench/bench_stream.py $(BENCH_ARGS)

bench-agent: $(BENCH_STAMP)
	$(BIN)/python bench/bench_agent.py $(BENCH_ARGS)

soak: $(STAMP)
	$(BIN)/python bench/soak.py $(BENCH_ARGS)

# Real servers: llama-cpp-python's server and llama.cpp's llama-server, built
# from the llama-cpp-python source package on PyPI and cached in
# $TOOLWIRE_LLAMACPP_CACHE (default .cache/llamacpp), then a test session
# that starts both on 127.0.0.1. The first run compiles llama.cpp twice.
test-llamacpp: $(STAMP)
	$(BIN)/python -m tests.realservers.build
	$(BIN)/python -m pytest -q --realservers tests/realservers

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage
