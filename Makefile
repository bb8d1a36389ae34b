# The two commands a newcomer runs: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv toolchain clean-venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

venv: $(STAMP)

# Pinned kube-apiserver, kube-controller-manager, kubectl, etcd, kwok, kwokctl into ~/.cache/vck
# (or $VCK_CACHE_DIR): a cache hit, else the release downloads, else built from Go modules.
toolchain: venv
	$(BIN)/vck toolchain install

demo: toolchain
	$(BIN)/python -m conformance.demo

test: toolchain
	$(BIN)/pytest

clean-venv:
	rm -rf $(VENV)
