# parbench: the two commands a new user needs.
#
#   make paper   set up, measure on this machine (conf/local.yaml) and render the paper
#   make test    set up and run the whole test suite (what .ci/run runs)
#
# Both create the Python environment in .venv from requirements.lock first; run again,
# they redo only what changed (pip only when the lock file changed, Snakemake only the
# cells, builds and figures whose inputs changed).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake
# Snakemake cores: cells always run one at a time (each claims every core), builds
# and figures use what is left.
CORES ?= all
PROFILE ?= local

.PHONY: paper test env deps slurm-deps cross-deps rerun native-test clean-env help

help:
	@sed -n '3,5p' Makefile

paper: env deps
	$(PY) -m parbench resume-check
	$(SNAKEMAKE) --cores $(CORES) report --configfile conf/$(PROFILE).yaml

# The tests in two runs: first every test but the pipeline's on every logical core at
# once (pytest-xdist, a worker a core, each test file on one worker so that its builds are
# made once; PYTEST_WORKERS=1 for one at a time), then the pipeline tests (marker
# `integration`) one at a time, as each claims every core the way a cell does. Both
# always run; make fails when either does.
PYTEST_WORKERS ?= logical

test: env deps slurm-deps cross-deps
	@rc=0; \
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile -m "not integration" || rc=1; \
	$(PY) -m pytest -m integration || rc=1; \
	exit $$rc

# The packages of the SLURM test (tests/test_slurm.py: slurm-wlm, slurmdbd, munge,
# mariadb-server for a single-node cluster with accounting), installed with apt-get when
# running as root on Debian. Elsewhere cluster.sh exits 3 and says why, make goes on and
# that test skips with the same reason.
slurm-deps:
	@bash tests/slurm/cluster.sh install || [ $$? -eq 3 ]

# The packages of the arm64 Linux tests (tests/test_cross_arm64.py: gcc-aarch64-linux-gnu,
# qemu-user-static, libssl-dev:arm64, Debian's rustc-web with an arm64 std), installed
# with apt-get when running as root on Debian, like slurm-deps; elsewhere install.sh
# exits 3 and says why, make goes on and those tests skip with the same reason.
cross-deps:
	@bash tests/cross/install.sh || [ $$? -eq 3 ]

# The system packages the studies need (Study.system_packages): installed with apt-get
# when running as root on Debian, otherwise the command to run is printed; a missing
# required one stops here, before any long work.
deps: env
	$(PY) -m parbench system-deps --install

# Rerun one algorithm's cells and re-aggregate, leaving every other cell untouched:
#   make rerun ALG=Ed25519 [PROFILE=local]
rerun: env
	@test -n "$(ALG)" || { echo "make rerun: name the algorithm, e.g. make rerun ALG=Ed25519" >&2; exit 2; }
	$(PY) -m parbench rerun --profile $(PROFILE) --cores $(CORES) "$(ALG)"

env: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { \
	  echo "parbench needs Python >= 3.11; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)." >&2; \
	  echo "Install one (Debian 12: apt-get install python3) or run: make PYTHON=/path/to/python3.11" >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  echo "'$(PYTHON)' cannot create virtual environments: install the venv module (Debian: apt-get install python3-venv)." >&2; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

clean-env:
	rm -rf $(VENV)
