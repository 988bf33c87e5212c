# The two commands a newcomer needs: `make demo` and `make test`. Both create .venv when missing.
# `make test` is lint and every test tier; `make test-unit` (seconds), `make test-e2e` and
# `make test-cluster` one tier each. The cluster tier needs Go: it builds a real kube-apiserver.
# Installing: `make push IMAGE=... VERSION=...` publishes the image; `make chart` regenerates the
# Helm chart's RBAC and policies from deploy/; `make keda-rbac` writes each
# overlay's KEDA Roles from its config.yaml (the README's "Install").
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: test test-unit test-e2e test-cluster control-plane soak demo lint bench mutate plant clean \
	image push keda-rbac chart

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
# upstream CRDs, into ~/.cache/kai-chatops/cluster/, with the upstream tier's real KAI Scheduler,
# KEDA, Flux and kube-scheduler: about 20 minutes plus about 35 the first time on a machine, a
# fraction of a second after that (tests/cluster/README.md).
control-plane: $(STAMP)
	$(BIN)/python tests/cluster/cluster_build.py

# The seeded randomised soak of alert delivery (several minutes): a line per seed (its plan and
# figures), then the total: incidents, faults injected by kind, pages seen twice, lies, non-holder
# posts left standing, lost and duplicated; fails unless all are 0 and no problem is listed.
# `make test` runs three of its seeds (tests/e2e/test_alert_soak.py).
SOAK_SEEDS ?= 1-20
soak: $(STAMP)
	$(BIN)/python tests/alert_soak.py --seeds $(SOAK_SEEDS) --incidents 6 --verbose

demo: $(STAMP)
	$(BIN)/kai-chatops demo

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# Mutation testing of the security edges, the alert state and the newer features (docs/mutation.md;
# not part of `make test`: minutes, not seconds).
mutate: $(STAMP)
	$(BIN)/python tools/mutate.py --survivors

# Each known delivery bug planted once: the soak and a named test must both catch it (docs/mutation.md)
plant: $(STAMP)
	$(BIN)/python tools/plant.py

# The container image from deploy/Dockerfile, with the first of docker, podman or buildah on the
# PATH (or CONTAINER_TOOL=...): `make push IMAGE=registry.example.com/kai-chatops:0.2.0
# VERSION=0.2.0`. VERSION is what `kai-chatops --version` prints (the build has no .git): by
# default this commit's tag `vX.Y.Z`, else 0.0.0+gHASH; IMAGE's tag defaults to it.
VERSION ?= $(or $(patsubst v%,%,$(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null)),0.0.0+g$(shell git rev-parse --short HEAD 2>/dev/null))
IMAGE ?= kai-chatops:$(subst +,-,$(VERSION))
CONTAINER_TOOL ?= $(firstword $(foreach tool,docker podman buildah,$(if $(shell command -v $(tool) 2>/dev/null),$(tool))))
NO_CONTAINER_TOOL := none of docker, podman or buildah is on the PATH: install one, or name yours with CONTAINER_TOOL=

image:
	@test -n "$(CONTAINER_TOOL)" || { echo "make image: $(NO_CONTAINER_TOOL)" >&2; exit 1; }
	$(CONTAINER_TOOL) build -f deploy/Dockerfile --build-arg VERSION='$(VERSION)' -t '$(IMAGE)' .

push: image
	$(CONTAINER_TOOL) push '$(IMAGE)'

# The KEDA Role and RoleBinding of every namespace in keda.namespaces, for each overlay with a
# config.yaml (deploy/overlays/*/keda-rbac.yaml, from deploy/templates/rbac-keda.yaml).
keda-rbac: $(STAMP)
	$(BIN)/python tools/keda_rbac.py

# The Helm chart's RBAC, admission policies and the base's other fixed objects, made from deploy/
# (deploy/chart/templates/generated/, tools/chart_sync.py): run after editing deploy/base or a
# component, and commit what it writes (a test fails while they disagree).
chart: $(STAMP)
	$(BIN)/python tools/chart_sync.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
