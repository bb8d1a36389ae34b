# The two commands a newcomer runs: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint venv toolchain browser docker clean-venv

# The kit's ranges (pyproject.toml) at the exact versions of constraints.txt: reproducible runs.
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Pinned kube-apiserver, kube-controller-manager, kubectl, etcd, kwok, kwokctl into ~/.cache/vck
# (or $VCK_CACHE_DIR): a cache hit, else the release downloads, else built from Go modules.
toolchain: venv
	$(BIN)/vck toolchain install

# Headless Chromium renders the HTML report in one test (Debian's package; needs root to install).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: install chromium for the report rendering test (it is skipped without it)"; fi; }

# What the kind backend needs from Debian (root): Docker, and mmdebstrap and gcc for building its
# node image offline (`vck kind image`). Not part of `make test`: its kind check runs where an
# engine answers and the image is present, and is skipped, saying why, elsewhere.
docker: toolchain
	@command -v dockerd >/dev/null 2>&1 && command -v mmdebstrap >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io mmdebstrap gcc libc6-dev >/dev/null; \
	  else echo "make docker: install docker.io, mmdebstrap and gcc (as root, or with your package manager)"; exit 1; fi; }
	$(BIN)/vck kind image

# The main job: every suite against the reference implementation on the embedded cluster.
demo: toolchain
	$(BIN)/vck run

# Every test: each worker takes the next test when it is free (one at a time, longest first, see
# tests/conftest.py), so no worker idles while tests wait; the 15 slowest are listed, and the wall
# time is printed last.
TEST_WORKERS ?= 3
test: toolchain browser
	@started=$$(date +%s); status=0; \
	$(MAKE) --no-print-directory lint || status=$$?; \
	$(BIN)/pytest -n $(TEST_WORKERS) --dist load --maxschedchunk 1 --durations 15 || status=$$?; \
	echo "make test: wall time $$(( $$(date +%s) - started ))s (exit $$status)"; exit $$status

# The style rules (pyproject.toml): ruff's lint and import order, the import contracts (the black
# box and the kit's layers), mypy where the code passes it. Seconds.
lint: venv
	$(BIN)/ruff check conformance reference_scheduler fake_devices tests
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

# The style rules, then the tests that need no cluster (VCK_NO_CLUSTERS turns a test that starts
# one anyway into a failure): a minute or two, no toolchain needed.
check: venv
	@started=$$(date +%s); status=0; \
	$(MAKE) --no-print-directory lint || status=$$?; \
	VCK_NO_CLUSTERS=1 $(BIN)/pytest -n 2 --dist worksteal -m "not cluster" --durations 10 || status=$$?; \
	echo "make check: wall time $$(( $$(date +%s) - started ))s (exit $$status)"; exit $$status

clean-venv:
	rm -rf $(VENV)
