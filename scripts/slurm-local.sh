#!/usr/bin/env bash
# A real single-node Slurm on this machine, for the tests (root only).
#
#   scripts/slurm-local.sh start    # munged, slurmctld, slurmd; idempotent; prints the SLURM_CONF line
#   scripts/slurm-local.sh status   # exit 0 when the node is up and idle/allocated
#   scripts/slurm-local.sh stop     # stops the daemons it started, by pid
#   scripts/slurm-local.sh env      # prints `export SLURM_CONF=...`
#
# Everything lives in $DD_SLURM_DIR (default /tmp/dd-slurm): slurm.conf, state, logs, pid files.
# Clients (sbatch, squeue, scontrol) find the cluster with SLURM_CONF=$DD_SLURM_DIR/slurm.conf; a real
# Slurm configured in /etc/slurm is left alone. The node declares more CPUs than the machine has
# (SlurmdParameters=config_overrides), so a 2-core machine can run several tasks at once.
# Processes are tracked by /proc (proctrack/linuxproc) and not pinned (task/none): no cgroups needed.
set -euo pipefail
DIR=${DD_SLURM_DIR:-/tmp/dd-slurm}
CONF=$DIR/slurm.conf
CPUS=${DD_SLURM_CPUS:-16}
CTLD_PORT=${DD_SLURM_CTLD_PORT:-16817}
SLURMD_PORT=${DD_SLURM_SLURMD_PORT:-16818}
NODE=$(hostname -s)
export SLURM_CONF=$CONF

die() { echo "slurm-local: $*" >&2; exit 1; }

alive() {  # alive PIDFILE: the pid in it runs
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

munge_ok() { command -v munge >/dev/null && munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

write_conf() {
  mkdir -p "$DIR/ctld" "$DIR/slurmd"
  cat > "$CONF.new" <<EOF
# written by scripts/slurm-local.sh
ClusterName=dd
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=600
InactiveLimit=0
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/slurmd
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  mv "$CONF.new" "$CONF"
}

node_state() { sinfo -h -N -n "$NODE" -o '%t' 2>/dev/null | head -n1; }

start() {
  [ "$(id -u)" = 0 ] || die "needs root (it starts munged, slurmctld and slurmd)"
  for b in munged slurmctld slurmd sinfo scontrol; do
    command -v "$b" >/dev/null || die "$b not found; install Debian's slurm-wlm and munge (scripts/setup.sh --test)"
  done
  mkdir -p "$DIR"
  if ! munge_ok; then
    install -d -o munge -g munge -m 0755 /run/munge
    [ -s /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (reinstall munge)"
    install -d -o munge -g munge -m 0755 "$DIR/munge"   # munged runs as munge and writes its pid file there
    runuser -u munge -- munged --pid-file="$DIR/munge/munged.pid" 2>>"$DIR/munged.err" \
      || die "munged did not start: $(tail -n 3 "$DIR/munged.err")"
    for _ in $(seq 50); do munge_ok && break; sleep 0.1; done
    munge_ok || die "munged started but munge -n | unmunge fails"
  fi
  [ -s "$CONF" ] || write_conf
  if ! alive "$DIR/slurmctld.pid"; then
    slurmctld -f "$CONF" -i || die "slurmctld did not start: $(tail -n 5 "$DIR/slurmctld.log")"
  fi
  if ! alive "$DIR/slurmd.pid"; then
    slurmd -f "$CONF" || die "slurmd did not start: $(tail -n 5 "$DIR/slurmd.log")"
  fi
  local state=""
  for _ in $(seq 100); do
    state=$(node_state)
    case "$state" in
      idle*|alloc*|mix*) break ;;
      down*|drain*) scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.2
  done
  case "$state" in
    idle*|alloc*|mix*) ;;
    *) die "node $NODE is '${state:-unknown}' after 20 s; see $DIR/slurmctld.log and $DIR/slurmd.log" ;;
  esac
  echo "export SLURM_CONF=$CONF"
}

stop() {
  local f pid
  for f in slurmd.pid slurmctld.pid munge/munged.pid; do
    if alive "$DIR/$f"; then
      pid=$(cat "$DIR/$f")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$DIR/$f"
  done
}

status() {
  alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid" || { echo "down"; return 1; }
  local state; state=$(node_state)
  echo "${state:-unknown}"
  case "$state" in idle*|alloc*|mix*) return 0 ;; *) return 1 ;; esac
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
