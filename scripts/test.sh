#!/usr/bin/env bash
# The whole test suite, as .ci/run and the README run it (after scripts/setup.sh --test).
#
# Two passes:
# 1. the tests that run real multi-worker TensorFlow jobs, network namespaces or Chromium, one at a time: they
#    time hangs and pauses on real processes and need the machine's cores to themselves;
# 2. everything else on two pytest-xdist workers, a test file per worker (a file's fixtures, e.g. test_slurm.py's
#    local Slurm cluster, start once, on one worker). It runs second because test_zz_run_diagnose_agreement.py reads
#    the run bundles the first pass wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
run_pass() {   # pytest, where "no test selected" (exit 5: arguments that name only the other pass's tests) is no failure
  local rc=0
  .venv/bin/python -m pytest "$@" || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]
}
run_pass -q -ra --durations=25 -m "tf or netns or browser" "$@"
run_pass -q -ra --durations=10 -n 2 --dist loadfile -m "not tf and not netns and not browser" "$@"
