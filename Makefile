# memtui: `make demo` and `make test` each do all set-up on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test setup bench clean train-scorer

$(STAMP): pyproject.toml constraints.txt
	@command -v git >/dev/null || { echo "git is required"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# Sets up, loads the sample data into .demo/memtui.db, runs maintenance and opens the TUI.
demo: $(STAMP)
	mkdir -p .demo
	$(BIN)/memtui demo --db .demo/memtui.db --workdir .demo

# Sets up and runs the whole suite (PostgreSQL at 127.0.0.1:5432; CI=true makes its absence a failure).
test: $(STAMP)
	$(BIN)/python -m pytest -q

# Retrains the pair scorer on the non-blind labelled pairs; writes src/memtui/similarity/scorer_model.json.
train-scorer: $(STAMP)
	$(BIN)/python -m memtui.similarity.train

bench: $(STAMP)
	@for b in bench/*.py; do [ -f "$$b" ] && $(BIN)/python "$$b"; done; true

clean:
	rm -rf $(VENV) .demo .pytest_cache
