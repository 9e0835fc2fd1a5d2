#!/usr/bin/env bash
# A MultiWorkerMirroredStrategy job started by Open MPI's mpirun, supervised by distdoctor.
#
#   NP=2 deploy/mpirun.sh                                          # python train.py --batch-size 64 ...
#   NP=4 HOSTS=node1:2,node2:2 deploy/mpirun.sh python my_train.py --epochs 3
#
# mpirun starts NP ranks; each runs `distdoctor run --node`, which takes its identity from
# OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK and hands the training the matching TF_CONFIG: every rank
# is worker:RANK on port PORT_BASE + its local rank on its host (8888 upward; --port-base in
# DISTDOCTOR_ARGS). mpirun does not tell a rank where the others run: with HOSTS (mpirun --host's
# syntax, HOST:SLOTS,...) the same list goes to mpirun and, as DISTDOCTOR_MPI_HOSTS, to every rank;
# without it every rank runs on this host. Ranks are placed by slot (mpirun's default mapping).
# Each rank's supervisor runs the mesh check first, then supervises the training; rank 0's
# (worker:0's) writes the cluster-wide diagnosis, every rank prints it, and rank 0 prints the
# one-line verdict last (docs/node.md).
#
# Extra `run --node` options go in DISTDOCTOR_ARGS (e.g. "--failure-grace 5 --port-base 9000"),
# extra mpirun options in MPIRUN_ARGS (as root: "--allow-run-as-root"; more ranks than cores:
# "--oversubscribe"; rank-tagged output: "--tag-output").
# This very script is what tests/test_openmpi.py runs under a real mpirun.
set -euo pipefail

NP=${NP:-2}
# The job's shared secret: -x hands it to every rank.
export DISTDOCTOR_TOKEN="${DISTDOCTOR_TOKEN:-$(python3 -c 'import secrets; print(secrets.token_hex(16))')}"
export TF_USE_LEGACY_KERAS=1          # tf-keras under MultiWorkerMirroredStrategy (rule DD401)
export CKPT="${CKPT:-$HOME/ckpt/mpirun-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$CKPT/distdoctor"
export DISTDOCTOR_ARGS="${DISTDOCTOR_ARGS:-}"
if [ $# -eq 0 ]; then
  set -- python train.py --batch-size 64 --checkpoint-dir "$CKPT"
fi
hosts=()
if [ -n "${HOSTS:-}" ]; then
  hosts=(--host "$HOSTS" -x "DISTDOCTOR_MPI_HOSTS=$HOSTS")
fi

# One supervisor per rank; each rank's bundle goes to $CKPT/distdoctor/<rank>. mpirun ends the job
# when one rank exits non-zero; every node supervisor stays until the collector has its verdict out.
# shellcheck disable=SC2086  # DISTDOCTOR_ARGS and MPIRUN_ARGS are lists of options
exec mpirun -np "$NP" ${hosts[@]+"${hosts[@]}"} -x DISTDOCTOR_TOKEN -x TF_USE_LEGACY_KERAS -x CKPT \
  -x DISTDOCTOR_ARGS -x PATH ${MPIRUN_ARGS:-} \
  bash -c 'exec distdoctor run --node --mesh-timeout 120 $DISTDOCTOR_ARGS \
    --out "$CKPT/distdoctor/$OMPI_COMM_WORLD_RANK" -- "$@"' distdoctor "$@"
