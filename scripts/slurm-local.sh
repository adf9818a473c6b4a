#!/usr/bin/env bash
# A single-node Slurm on this machine, for the test of sharded runs as Slurm array jobs
# (tests/cli/workload_slurm.rs, docs/workloads.md "Slurm"). Needs root and Debian's packages
# (`apt-get install -y slurm-wlm munge`: slurmctld, slurmd, munged, sbatch).
#
#   scripts/slurm-local.sh start [STATE_DIR]   start munged (unless one answers), slurmctld and
#                                              slurmd; wait until the node is idle
#   scripts/slurm-local.sh stop  [STATE_DIR]   stop what `start` started, by its pid files
#
# STATE_DIR (default /tmp/tcrtl-slurm) holds Slurm's state, spool, pid and log files. The
# configuration is written to /etc/slurm/slurm.conf (where the daemons and the commands look
# for it) only when that file is absent or was written by this script; `stop` removes it
# again. Nothing is stopped by name: only the pids this script's daemons wrote.
set -euo pipefail

action=${1:-}
state=${2:-/tmp/tcrtl-slurm}
conf=/etc/slurm/slurm.conf
marker="# written by tensorcore-rtl scripts/slurm-local.sh"

die() {
  echo "slurm-local: $*" >&2
  exit 1
}

# Ends the process whose pid is in file $1 (if it runs), waiting up to 10 s.
stop_pid_file() {
  local file=$1 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -f "$file"
}

start() {
  [ "$(id -u)" = 0 ] || die "needs root (the daemons run as root here)"
  for b in munged munge unmunge slurmctld slurmd sbatch sinfo; do
    command -v "$b" >/dev/null 2>&1 || die "$b not found (apt-get install -y slurm-wlm munge)"
  done
  mkdir -p "$state/spool/ctld" "$state/spool/d"
  # munge: a key readable by munge only, its folders, and a daemon running as munge.
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
    if [ ! -s /etc/munge/munge.key ]; then
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    chown munge:munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
    chmod 400 /etc/munge/munge.key
    runuser -u munge -- munged --pid-file=/run/munge/munged.pid
    cp /run/munge/munged.pid "$state/munged.pid"
    for _ in $(seq 50); do
      munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
      sleep 0.1
    done
    munge -n | unmunge >/dev/null || die "munge does not answer"
  fi
  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  if [ -e "$conf" ] && ! grep -qF "$marker" "$conf"; then
    die "$conf exists and was not written by this script; not touching it"
  fi
  mkdir -p /etc/slurm
  cat >"$conf" <<EOF
$marker
ClusterName=tcrtl
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=$state/spool/ctld
SlurmdSpoolDir=$state/spool/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld
  slurmd
  for _ in $(seq 300); do
    if [ "$(sinfo -h -o %t 2>/dev/null | head -1)" = idle ]; then
      echo "slurm-local: node $host idle ($cpus CPUs); state in $state"
      return 0
    fi
    sleep 0.1
  done
  sinfo >&2 || true
  die "the node did not become idle within 30 s (logs in $state)"
}

stop() {
  stop_pid_file "$state/slurmd.pid"
  stop_pid_file "$state/slurmctld.pid"
  # munged only if this script started it (its pid copied into STATE_DIR).
  if [ -s "$state/munged.pid" ]; then
    stop_pid_file "$state/munged.pid"
  fi
  if [ -e "$conf" ] && grep -qF "$marker" "$conf"; then
    rm -f "$conf"
  fi
  echo "slurm-local: stopped"
}

case "$action" in
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 start|stop [STATE_DIR]" ;;
esac
