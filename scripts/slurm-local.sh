#!/usr/bin/env bash
# A one-node Slurm on localhost, for CI and for trying examples/slurm/ on a laptop
# (docs/scale.md): writes a single-node slurm.conf and starts munged, slurmctld and slurmd
# as root without systemd. Needs Debian's slurm-wlm and munge
# (apt-get install -y --no-install-recommends slurm-wlm munge). Idempotent: run again, it
# restarts the daemons. `scripts/slurm-local.sh stop` stops them.
#
# Environment: SLURM_CONF [/etc/slurm/slurm.conf], SLURM_STATE [/var/tmp/slurm-local].
set -euo pipefail

conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
state=${SLURM_STATE:-/var/tmp/slurm-local}

stop() {
    for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid" "$state/munged.pid"; do
        if [ -f "$pidfile" ]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
            rm -f "$pidfile"
        fi
    done
    sleep 1
}

if [ "${1:-start}" = stop ]; then
    stop
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "slurm-local.sh: run as root (it starts munged, slurmctld and slurmd)" >&2
    exit 1
fi
stop

# munge: a key, its directories, and the daemon (as the munge user where there is one).
mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge "$state"
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
if id munge >/dev/null 2>&1; then
    chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
    chmod 0700 /etc/munge
    chmod 0400 /etc/munge/munge.key
    runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
else
    /usr/sbin/munged --force --pid-file=/run/munge/munged.pid
fi
cp /run/munge/munged.pid "$state/munged.pid"

# Slurm 23.11 dropped select/cons_res; use cons_tres where it is gone.
plugins=$(dirname "$(find /usr/lib* -name 'select_cons_*.so' -print -quit 2>/dev/null || true)")
select=select/cons_res
if [ ! -e "$plugins/select_cons_res.so" ]; then select=select/cons_tres; fi

mkdir -p "$(dirname "$conf")" "$state/ctld" "$state/d"
cat >"$conf" <<CONF
# Written by scripts/slurm-local.sh: one node, localhost, everything as root.
ClusterName=local
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=$select
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

export SLURM_CONF="$conf"
/usr/sbin/slurmctld
/usr/sbin/slurmd -N localhost

# Wait until the node takes jobs.
for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
        echo "slurm-local: node localhost up ($(nproc) CPUs, $select); config $conf"
        exit 0
    fi
    sleep 1
done
echo "slurm-local: the node did not come up; logs:" >&2
tail -n 30 "$state/slurmctld.log" "$state/slurmd.log" >&2 || true
exit 1
