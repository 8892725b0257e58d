#!/usr/bin/env bash
# A throw-away single-node Slurm cluster on 127.0.0.1, for the `memskill launch slurm` tests
# (and for trying it by hand):
#   scripts/cluster/slurm.sh start DIR [CTLD_PORT SLURMD_PORT]   # everything lives in DIR
#   scripts/cluster/slurm.sh stop DIR
# `start` writes DIR/slurm.conf (one node: this machine, reached as 127.0.0.1; no cgroups,
# no accounting; job requeue on), generates a munge key in DIR and runs munged on a socket
# of its own (DIR/munge/munge.socket, never the system's), then slurmctld and slurmd (each
# `-D` in the background, pid in DIR), waits until the node is idle and prints the config's
# path on its last line: `export SLURM_CONF=<that path>` before sbatch, squeue, scontrol.
# Free ports are chosen when none are given. Slurm and munge come from Debian's packages
# (`apt-get install slurm-wlm munge`). The daemons run as the calling user (root: jobs run
# as root too): a test cluster, never a real one. Exit 3 when Slurm or munge is not
# installed (the tests then skip).
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
usage() { echo "usage: $0 start DIR [CTLD_PORT SLURMD_PORT] | stop DIR" >&2; exit 2; }
[ -n "$cmd" ] && [ -n "$dir" ] || usage

stop_pidfile() {  # the daemon whose pid the file holds, if it is still that program
  local f="$1" prog="$2" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f" 2>/dev/null || true)"
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$prog" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

case "$cmd" in
  start)
    for b in slurmctld slurmd munged mungekey sinfo; do
      command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || {
        echo "$b is not installed (apt-get install slurm-wlm munge)" >&2; exit 3; }
    done
    export PATH="$PATH:/usr/sbin"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    ctld_port="${3:-$(free_port)}"; slurmd_port="${4:-$(free_port)}"
    [ "$ctld_port" != "$slurmd_port" ] || slurmd_port="$(free_port)"
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
    chmod 700 "$dir/munge"
    mungekey --create --force --keyfile="$dir/munge/munge.key"
    munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
      --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
      --seed-file="$dir/munge/munged.seed" \
      || { cat "$dir/munge/munged.log" >&2 2>/dev/null; exit 1; }
    node="$(hostname -s)"
    cpus="$(nproc)"
    cat >"$dir/slurm.conf" <<CONF
# written by scripts/cluster/slurm.sh: a one-node test cluster on 127.0.0.1
ClusterName=memskilltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobRequeue=1
KillWait=30
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -D -i -f "$dir/slurm.conf" >"$dir/slurmctld.out" 2>&1 &
    echo $! >"$dir/slurmctld.pid"
    slurmd -D -f "$dir/slurm.conf" -N "$node" >"$dir/slurmd.out" 2>&1 &
    echo $! >"$dir/slurmd.pid"
    for _ in $(seq 120); do
      state="$(sinfo -h -n "$node" -o %T 2>/dev/null || true)"
      case "$state" in idle|mixed|allocated) echo "$dir/slurm.conf"; exit 0 ;; esac
      sleep 0.5
    done
    echo "the node did not become idle within 60 s (state: ${state:-no answer})" >&2
    tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" "$dir/slurmctld.out" "$dir/slurmd.out" >&2 2>/dev/null || true
    "$0" stop "$dir" || true
    exit 1
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    stop_pidfile "$dir/slurmd.pid" slurmd
    stop_pidfile "$dir/slurmctld.pid" slurmctld
    stop_pidfile "$dir/munge/munged.pid" munged
    ;;
  *) usage ;;
esac
