"""``distdoctor policy tfjob|jobset|slurm|openmpi``: the scheduler's side of ``--exit-code-policy``.

Each snippet keys the scheduler's own restart policy on the codes of :mod:`.exitcodes`:
143 (retryable: a transient verdict) and 1 or 2 (permanent: a deterministic verdict, a usage
error). Text only; ``tests/test_exit_codes.py`` parses the YAML and checks the codes.
"""
from __future__ import annotations

import argparse

from .exitcodes import PERMANENT, RETRYABLE, USAGE

__all__ = ["register_cli", "snippet", "SCHEDULERS"]

_TFJOB = f"""\
# Kubeflow TFJob: restartPolicy ExitCode restarts a pod whose exit code is retryable
# ({RETRYABLE} = a transient verdict: preemption, eviction, a lost peer) and fails the job on a
# permanent one ({PERMANENT} = a deterministic verdict; {USAGE} = a usage error).
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: mnist-mwms
spec:
  runPolicy:
    backoffLimit: 3
  tfReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: ExitCode
      template:
        spec:
          containers:
            - name: tensorflow
              image: your-registry/mnist-mwms:latest
              command: ["sh", "-c"]
              args:
                - exec distdoctor run --node --exit-code-policy --restarts 2 --out "/ckpt/distdoctor/$HOSTNAME"
                  -- python /app/train.py
              env:
                - name: DISTDOCTOR_TOKEN
                  valueFrom: {{secretKeyRef: {{name: mnist-mwms-distdoctor, key: token}}}}
"""

_JOBSET = f"""\
# JobSet (or a plain batch/v1 Job: copy the template's spec): a podFailurePolicy keyed on
# distdoctor's exit codes. {PERMANENT} and {USAGE} (deterministic) fail the job at once; {RETRYABLE}
# (transient) counts against backoffLimit and the pod is retried; an eviction (DisruptionTarget)
# is ignored. The JobSet restarts only for failures the podFailurePolicy did not end.
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: mnist-mwms
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
      - action: FailJobSet
        onJobFailureReasons: [PodFailurePolicy]
  replicatedJobs:
    - name: workers
      replicas: 1
      template:
        spec:
          parallelism: 2
          completions: 2
          completionMode: Indexed
          backoffLimit: 3
          podFailurePolicy:
            rules:
              - action: FailJob
                onExitCodes:
                  containerName: tensorflow
                  operator: In
                  values: [{PERMANENT}, {USAGE}]
              - action: Count
                onExitCodes:
                  containerName: tensorflow
                  operator: In
                  values: [{RETRYABLE}]
              - action: Ignore
                onPodConditions:
                  - type: DisruptionTarget
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: tensorflow
                  image: your-registry/mnist-mwms:latest
                  command: ["sh", "-c"]
                  args:
                    - exec distdoctor run --node --exit-code-policy --restarts 2 --out "/ckpt/distdoctor/$HOSTNAME"
                      -- python /app/train.py
"""

_SLURM = f"""\
# Slurm: restarts inside the allocation come from --restarts; when the job stops for good,
# every task exits {RETRYABLE} after a transient verdict (requeue: the allocation is gone or the
# budget is spent) and {PERMANENT} after a deterministic one (do not requeue).
#SBATCH --requeue
#SBATCH --open-mode=append
export DISTDOCTOR_ARGS="--exit-code-policy --restarts 2"
set +e
srun bash -c 'exec distdoctor run --node --mesh-timeout 120 $DISTDOCTOR_ARGS \\
    --out "$CKPT/distdoctor/$SLURM_PROCID" -- "$@"' distdoctor "$@"
rc=$?
set -e
if [ "$rc" -eq {RETRYABLE} ] && [ "${{SLURM_RESTART_COUNT:-0}}" -lt 3 ]; then
  scontrol requeue "$SLURM_JOB_ID"   # back to the queue; the bundle (same --out) continues the ledger
fi
exit "$rc"
# Or cluster-wide, by the administrator, in slurm.conf: RequeueExit={RETRYABLE}
"""

_OPENMPI = f"""\
#!/usr/bin/env bash
# Open MPI: mpirun has no restart policy of its own. It ends the job when a rank exits non-zero and
# exits with that rank's status; with --exit-code-policy every rank exits {RETRYABLE} after a transient
# verdict and {PERMANENT} after a deterministic one ({USAGE}: a usage error). Run mpirun again on {RETRYABLE}
# only. Same CKPT every try: each rank's bundle (same --out) continues its ledger.
#   distdoctor policy openmpi > retry.sh && NP=4 bash retry.sh python train.py
export DISTDOCTOR_ARGS="${{DISTDOCTOR_ARGS:---exit-code-policy --restarts 2}}"
export CKPT="${{CKPT:-$HOME/ckpt/mpirun-$(date +%Y%m%d-%H%M%S)}}"
MPIRUN="${{MPIRUN:-deploy/mpirun.sh}}"   # the repository's mpirun line (or your own script taking the command)
tries=0
while :; do
  set +e; "$MPIRUN" "$@"; rc=$?; set -e
  tries=$((tries + 1))
  if [ "$rc" -ne {RETRYABLE} ] || [ "$tries" -ge "${{MPIRUN_TRIES:-3}}" ]; then exit "$rc"; fi
  echo "distdoctor: a transient verdict (exit {RETRYABLE}): mpirun again (try $((tries + 1)))" >&2
done
"""

SCHEDULERS = {"tfjob": _TFJOB, "jobset": _JOBSET, "slurm": _SLURM, "openmpi": _OPENMPI}


def snippet(scheduler: str) -> str:
    return SCHEDULERS[scheduler]


def register_cli(sub) -> None:
    p = sub.add_parser("policy", help="print the scheduler policy that acts on --exit-code-policy's exit codes",
                       description="Print the snippet that makes the scheduler act on distdoctor's verdict: "
                                   f"exit {RETRYABLE} (transient: retry), {PERMANENT} (deterministic: fail).")
    p.add_argument("scheduler", choices=sorted(SCHEDULERS), help="tfjob, jobset (podFailurePolicy), slurm or openmpi (a retry loop around mpirun)")
    p.set_defaults(func=_policy)


def _policy(args: argparse.Namespace) -> int:
    print(snippet(args.scheduler), end="")
    return 0
