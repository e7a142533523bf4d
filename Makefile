# toolwire's one entry point for people and CI.
#   make test   create .venv if needed, install toolwire with its test deps, lint, type-check,
#               build the docs (--strict), run the whole suite on every core (failing when
#               the sans-I/O core's coverage drops below 95%)
#   make unit   the fast tier: the sans-I/O core's tests that do no I/O, in seconds (installs
#               toolwire with pytest and Hypothesis only)
#   make docs   build the documentation site into site/ (make docs-serve: live preview)
#   make demo   the offline demo: an agent against the local emulation server (core install only)
#   make bench  the streaming benchmark against the libraries you would otherwise use
#   make bench-agent  the agent benchmark (CPU per run) against the bare-httpx floor and the peers
#   make bench-tricks  each speed trick outside the core against its plain version (CPU per run)
#   make bench-websocket  a 20-call run over a WebSocket and over HTTP (CPU and wall per run)
#   make soak   2,000 concurrent journaled runs in one process, the server in another
#   make test-cluster  the 2,000-run batch over a local Ray cluster (ray start: a head and
#               four nodes) on one Postgres journal, through a node's kill -9 (also in make test)
#   make test-llamacpp  the agent and toolwire conform against two real llama.cpp servers
#               (not part of make test)
#   make test-browser  toolwire view in headless Chromium (installs Debian's chromium if missing;
#               not part of make test); screenshots in build/view-screenshots/ and, for
#               the chat example (examples/chat.html), build/ui-screenshots/
#   make test-ui  the chat adapters (toolwire.ui) driven by the official JavaScript clients,
#               @ag-ui/client and ai, installed from npm into .tiers/ui (not part of make test)
#   make test-bridge  the real Claude Code and Codex CLIs through toolwire bridge to the
#               emulation server, installed from npm into .tiers/bridge (not part of make test)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
CORE_STAMP := $(VENV)/.installed-core
UNIT_STAMP := $(VENV)/.installed-unit
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: test lint typecheck unit suite docs docs-serve demo bench bench-agent bench-tricks bench-websocket soak clean test-llamacpp test-browser test-cluster test-mcp-inspector test-ui test-bridge

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The demo needs toolwire alone: no dev tools, extras or provider SDKs.
$(CORE_STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e .
	touch $(CORE_STAMP)

# The fast tier needs its test runner and nothing else.
$(UNIT_STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[unit]'
	touch $(UNIT_STAMP)

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,docs,mcp,otel,ray,cost,postgres]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy

# The fast tier: the sans-I/O core and the other tests that do no I/O, with
# Hypothesis's quick profile (tests/conftest.py); make test runs them again,
# with the thorough one, among everything else (and the tests that import the
# provider SDKs or read the whole source tree, which take seconds to start).
UNIT_TESTS := $(filter-out tests/stream/test_inspect_cli.py tests/stream/test_streamed_equals_whole.py \
	tests/stream/test_nothing_dropped.py tests/stream/test_anthropic_blocks.py tests/stream/test_registry.py \
	tests/stream/test_interactions_sdk.py tests/stream/test_finish_outcomes.py \
	tests/stream/test_responses_notices.py tests/stream/test_sdk_unions_wire.py \
	tests/stream/test_responses_socket_steer.py, \
	$(wildcard tests/stream/test_*.py)) tests/test_jsonstream.py tests/test_framing_corpus.py \
	tests/test_framing_readers.py tests/test_framing_sniff.py tests/test_repair.py tests/test_sse.py

# Bytecode is cached (in the gitignored __pycache__/) even where the
# environment says not to: compiling the core and rewriting the tests' asserts
# again on every run is a second of the tier's few.
unit: $(UNIT_STAMP)
	env -u PYTHONDONTWRITEBYTECODE TOOLWIRE_HYPOTHESIS=quick \
		$(BIN)/python -m pytest -q -m "not slow" $(UNIT_TESTS)

# The whole suite under coverage, with Hypothesis's thorough profile, spread
# over WORKERS processes (pytest-xdist; the tests that start Ray share one, see
# tests/conftest.py). Many tests wait on servers and subprocesses rather than
# compute, so twice the cores keeps them busy. Coverage follows each worker
# (pyproject.toml: patch = subprocess), each writing a file combined after.
WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))

suite: $(STAMP)
	$(BIN)/coverage erase
	TOOLWIRE_HYPOTHESIS=thorough $(BIN)/coverage run -m pytest -q -n $(WORKERS) --dist loadgroup
	$(BIN)/coverage combine -q
	$(BIN)/coverage report

# The documentation site (mkdocs-material): offline, no fonts or plugins that
# fetch anything; --strict turns every warning (a broken link, a docstring
# mkdocstrings cannot read) into a failure.
export NO_MKDOCS_2_WARNING := 1

docs: $(STAMP)
	$(BIN)/mkdocs build --strict

docs-serve: $(STAMP)
	$(BIN)/mkdocs serve

test: lint typecheck docs suite

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

bench-tricks: $(STAMP)
	$(BIN)/python bench/bench_tricks.py $(BENCH_ARGS)

bench-websocket: $(STAMP)
	$(BIN)/python bench/bench_websocket.py $(BENCH_ARGS)

soak: $(STAMP)
	$(BIN)/python bench/soak.py $(BENCH_ARGS)

# The cluster test at its full size (make test runs it on 500 prompts);
# TOOLWIRE_CLUSTER_RUNS=N for another.
test-cluster: $(STAMP)
	TOOLWIRE_CLUSTER_RUNS=$${TOOLWIRE_CLUSTER_RUNS:-2000} $(BIN)/python -m pytest -q tests/cluster

# Real servers: llama-cpp-python's server and llama.cpp's llama-server, built
# from the llama-cpp-python source package on PyPI and cached in
# $TOOLWIRE_LLAMACPP_CACHE (default .cache/llamacpp), then a test session
# that starts both on 127.0.0.1. The first run compiles llama.cpp twice.
test-llamacpp: $(STAMP)
	$(BIN)/python -m tests.realservers.build
	$(BIN)/python -m pytest -q --realservers tests/realservers

# Debian's chromium, driven over the DevTools protocol (tests/browser/_cdp.py).
CHROMIUM := $(firstword $(wildcard /usr/lib/chromium/chromium /usr/bin/chromium))

test-browser: $(STAMP)
	@if [ -z "$(CHROMIUM)" ]; then apt-get update && apt-get install -y chromium; fi
	TOOLWIRE_BROWSER=1 $(BIN)/python -m pytest -q tests/browser

# The MCP Inspector's CLI mode, from npm, installed under .tiers/inspector
# (gitignored), against `toolwire mcp serve` over stdio.
INSPECTOR := .tiers/inspector/node_modules/.bin/mcp-inspector

test-mcp-inspector: $(STAMP)
	@if [ ! -x "$(INSPECTOR)" ]; then mkdir -p .tiers/inspector && \
		npm install --prefix .tiers/inspector --no-audit --no-fund @modelcontextprotocol/inspector; fi
	TOOLWIRE_INSPECTOR=$(abspath $(INSPECTOR)) $(BIN)/python -m pytest -q tests/inspector

# The JavaScript clients at the versions tests/uitier/package-lock.json pins,
# installed into the gitignored .tiers/ui (never globally), then node scripts
# (tests/uitier/*.mjs) against the apps served by uvicorn on 127.0.0.1.
UI_TIER := .tiers/ui
UI_STAMP := $(UI_TIER)/.installed

$(UI_STAMP): tests/uitier/package.json tests/uitier/package-lock.json
	mkdir -p $(UI_TIER)
	cp tests/uitier/package.json tests/uitier/package-lock.json $(UI_TIER)/
	cd $(UI_TIER) && npm ci --no-audit --no-fund --silent
	touch $(UI_STAMP)

test-ui: $(STAMP) $(UI_STAMP)
	TOOLWIRE_UI_TIER=1 TOOLWIRE_UI_MODULES=$(abspath $(UI_TIER))/node_modules \
		$(BIN)/python -m pytest -q tests/uitier

# The coding agents at the versions tests/bridgetier/package-lock.json pins
# (native binaries inside the npm packages), installed into the gitignored
# .tiers/bridge, each run with a temporary HOME through `toolwire bridge`.
BRIDGE_TIER := .tiers/bridge
BRIDGE_STAMP := $(BRIDGE_TIER)/.installed

$(BRIDGE_STAMP): tests/bridgetier/package.json tests/bridgetier/package-lock.json
	mkdir -p $(BRIDGE_TIER)
	cp tests/bridgetier/package.json tests/bridgetier/package-lock.json $(BRIDGE_TIER)/
	cd $(BRIDGE_TIER) && npm ci --no-audit --no-fund --silent
	touch $(BRIDGE_STAMP)

test-bridge: $(STAMP) $(BRIDGE_STAMP)
	TOOLWIRE_BRIDGE_TIER=1 TOOLWIRE_BRIDGE_MODULES=$(abspath $(BRIDGE_TIER))/node_modules \
		$(BIN)/python -m pytest -q tests/bridgetier

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage .tiers
