# The two commands a newcomer needs: `make demo` and `make test`. Both create .venv when missing.
# `make test` is lint and every test tier; `make test-unit` (seconds), `make test-e2e` and
# `make test-cluster` one tier each. The cluster tier needs Go: it builds a real kube-apiserver.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: test test-unit test-e2e test-cluster control-plane soak demo lint bench mutate plant clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict bot handlers testbed
	$(BIN)/lint-imports

test: lint control-plane
	$(BIN)/pytest

test-unit: $(STAMP)
	$(BIN)/pytest tests/unit

test-e2e: $(STAMP)
	$(BIN)/pytest tests/e2e

test-cluster: control-plane
	$(BIN)/pytest tests/cluster

# etcd, kube-apiserver, kube-controller-manager and kustomize built from Go modules, and the
# upstream CRDs, into ~/.cache/kai-chatops/cluster/: about 20 minutes the first time on a
# machine, a fraction of a second after that (tests/cluster/README.md).
control-plane: $(STAMP)
	$(BIN)/python tests/cluster/cluster_build.py

# The seeded randomised soak of alert delivery (about 3 minutes): a line per seed (its plan and
# figures), then the total: incidents, faults injected by kind, pages seen twice, lies, non-holder
# posts left standing, lost and duplicated; fails unless all are 0 and no problem is listed.
# `make test` runs three of its seeds (tests/e2e/test_alert_soak.py).
soak: $(STAMP)
	$(BIN)/python tests/alert_soak.py --seeds 1-20 --incidents 6 --verbose

demo: $(STAMP)
	$(BIN)/kai-chatops demo

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# Mutation testing of the security edges (not part of `make test`: minutes, not seconds).
mutate: $(STAMP)
	$(BIN)/python tools/mutate.py --survivors

# Each known delivery bug planted once: the soak and a named test must both catch it (docs/mutation.md)
plant: $(STAMP)
	$(BIN)/python tools/plant.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
