#!/usr/bin/env bash
# A MultiWorkerMirroredStrategy job under Slurm, checked before it trains.
#
#   sbatch deploy/sbatch.sh
#
# One task per node. Every task builds the cluster from the SLURM_* variables exactly as
# TensorFlow's SlurmClusterResolver does (nodes sorted by name, ports 8888 upward), so no TF_CONFIG
# is needed. Step 1 is the distdoctor mesh check on all tasks at once; step 2 runs training under
# `distdoctor run --node` (the supervisor for one task of a multi-host job; see docs/check.md).
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
CKPT="${CKPT:-$HOME/ckpt/$SLURM_JOB_ID}"
mkdir -p "$CKPT"

# 1. Preflight on every task at once: config, host, environment, and the mesh between the nodes.
#    Any task exiting 1 fails the step, and `set -e` stops the job here, before training.
srun --kill-on-bad-exit=1 distdoctor check --mesh --timeout 120 --checkpoint-dir "$CKPT"

# 2. Training, one supervisor per task.
srun --kill-on-bad-exit=1 distdoctor run --node -- \
    python train.py --batch-size 64 --checkpoint-dir "$CKPT"
