#!/usr/bin/env bash
# A MultiWorkerMirroredStrategy job under Slurm, supervised by distdoctor.
#
#   sbatch deploy/sbatch.sh                                 # python train.py --batch-size 64 ...
#   sbatch deploy/sbatch.sh python my_train.py --epochs 3   # any training command
#
# One task per node. Every task builds the cluster from the SLURM_* variables exactly as
# TensorFlow's SlurmClusterResolver does (nodes sorted by name, ports 8888 upward), and
# `run --node` hands the task the matching TF_CONFIG, so MultiWorkerMirroredStrategy() needs no
# resolver argument. Each task's supervisor runs the mesh check first (the task is not started
# when it finds errors), then supervises the training; worker 0's supervisor writes the
# cluster-wide diagnosis and every task prints it at the end (docs/node.md).
#
# Extra `run --node` options go in DISTDOCTOR_ARGS (e.g. "--failure-grace 5 --port-base 9000").
# "--restarts 2" restarts every task inside this allocation after a transient failure (eviction, a
# killed task), resuming from the job's checkpoint; "--exit-code-policy" then exits 143 (transient)
# or 1 (deterministic) when the job stops for good: `distdoctor policy slurm` prints the requeue part.
# This very script is what tests/test_slurm.py submits to a real Slurm (scripts/slurm-local.sh).
#SBATCH --job-name=mnist-mwms
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --output=%x-%j.out
set -euo pipefail

# The job's shared secret: reaches every srun task through the environment.
export DISTDOCTOR_TOKEN="${DISTDOCTOR_TOKEN:-$(python3 -c 'import secrets; print(secrets.token_hex(16))')}"
export TF_USE_LEGACY_KERAS=1          # tf-keras under MultiWorkerMirroredStrategy (rule DD401)
export CKPT="${CKPT:-$HOME/ckpt/$SLURM_JOB_ID}"
mkdir -p "$CKPT/distdoctor"
export DISTDOCTOR_ARGS="${DISTDOCTOR_ARGS:-}"
if [ $# -eq 0 ]; then
  set -- python train.py --batch-size 64 --checkpoint-dir "$CKPT"
fi

# Optional: test the cluster alone first (config, hosts, environment, the mesh, throughput).
# srun --kill-on-bad-exit=1 distdoctor check --mesh --bandwidth --timeout 120 --checkpoint-dir "$CKPT"

# Training, one supervisor per task; each task's bundle goes to $CKPT/distdoctor/<rank>.
# No --kill-on-bad-exit: when a task fails, worker 0's supervisor stops the others itself, after
# they had --failure-grace seconds to report what they saw, and sends them the verdict first.
# shellcheck disable=SC2086  # DISTDOCTOR_ARGS is a list of options
srun bash -c 'exec distdoctor run --node --mesh-timeout 120 $DISTDOCTOR_ARGS \
    --out "$CKPT/distdoctor/$SLURM_PROCID" -- "$@"' distdoctor "$@"
