#!/usr/bin/env bash
# Set up everything distdoctor needs on a fresh machine (idempotent).
#   scripts/setup.sh          # the tool + TensorFlow (tensorflow-cpu 2.21 + tf-keras) in .venv
#   scripts/setup.sh --test   # also test tools, the Debian packages the tests use (iproute2, iptables,
#                             # chromium, tmux, slurm-wlm, munge, openmpi-bin) and .venv-tf220 (TensorFlow 2.20, the
#                             # "other version" of the environment-parity tests)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
pip_install() {  # quiet on success, the tail of pip's output on failure
  if ! .venv/bin/python -m pip install -q "$@" > .venv/setup.log 2>&1; then
    tail -n 30 .venv/setup.log >&2
    echo "setup: pip install $* failed (full log: .venv/setup.log)" >&2
    exit 1
  fi
}
if [ "${1:-}" = "--test" ]; then
  pip_install -e ".[test]"
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    need=()
    command -v ip >/dev/null || need+=(iproute2)
    command -v iptables >/dev/null || need+=(iptables)
    command -v chromium >/dev/null || need+=(chromium)
    command -v tmux >/dev/null || need+=(tmux)
    command -v slurmctld >/dev/null || need+=(slurm-wlm)   # tests/test_slurm.py (scripts/slurm-local.sh)
    command -v munged >/dev/null || need+=(munge)
    command -v mpirun >/dev/null || need+=(openmpi-bin)  # tests/test_openmpi.py (deploy/mpirun.sh)
    command -v prometheus >/dev/null || need+=(prometheus)
    command -v prometheus-alertmanager >/dev/null || need+=(prometheus-alertmanager)
    if [ ${#need[@]} -gt 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null 2>&1 \
        || echo "setup: could not install ${need[*]}; tests that need them will be skipped" >&2
    fi
  fi
  # A second interpreter with TensorFlow 2.20 beside the main one's 2.21 (tests/test_task_env.py).
  if [ ! -x .venv-tf220/bin/python ] || ! .venv-tf220/bin/python -c "import importlib.metadata as m; m.version('tensorflow-cpu')" 2>/dev/null; then
    "$PY" -m venv .venv-tf220
    if ! .venv-tf220/bin/python -m pip install -q "tensorflow-cpu==2.20.*" > .venv/setup-tf220.log 2>&1; then
      echo "setup: could not install TensorFlow 2.20 into .venv-tf220 (.venv/setup-tf220.log); the version-skew test will be skipped" >&2
    fi
  fi
else
  pip_install -e ".[tf]"
fi
.venv/bin/python -c "import distdoctor" 
