#!/usr/bin/env bash
# A single-node SLURM cluster with accounting, on this machine, for parbench's scale-out
# test and for trying `snakemake --profile profiles/slurm` by hand.
#
#   tests/slurm/cluster.sh start     install what is missing, start every daemon, print the env
#   tests/slurm/cluster.sh env       the line that points SLURM's commands at this cluster
#   tests/slurm/cluster.sh status    which daemons run, the node's state, the queue
#   tests/slurm/cluster.sh stop      cancel every job, stop every daemon, remove the state
#   tests/slurm/cluster.sh install   only install the Debian packages (make test runs it)
#
# What it starts, from Debian's packages (slurm-wlm slurmdbd munge mariadb-server,
# installed with apt-get when missing): munged (authentication), a MariaDB server
# (mysqld_safe) holding the accounting database, slurmdbd (accounting: Snakemake's SLURM
# executor asks `sacct` whether a job finished), slurmctld (the controller) and slurmd
# (the one compute node: this machine, `hostname` with `nproc` CPUs). Everything it
# writes lives under one folder, $PARBENCH_SLURM_DIR (default /tmp/parbench-slurm):
# configuration, logs, spool and state, the MariaDB datadir, sockets and pid files. Ports
# are free ones picked at start (several clusters can run side by side); every daemon
# talks over 127.0.0.1. No system file is changed: SLURM's commands find the cluster
# through SLURM_CONF, which `start` and `env` print:
#
#   eval "$(tests/slurm/cluster.sh env)"     # then sinfo, sbatch, sacct, snakemake ...
#
# Needs root (slurmd runs jobs as their user; the daemons run as root, munged and
# MariaDB as their own users) and, for a missing package, apt-get. Without them it stops
# at once with exit status 3 and says why (the test suite skips on 3). `start` cleans up
# after itself when a step fails; `stop` is safe to run at any time and leaves no
# process of this cluster behind.
#
# Knobs: PARBENCH_SLURM_DIR (the state folder), PARBENCH_SLURM_MEMORY_MB (the memory the
# node offers; default a quarter of this machine's, at least 2048 and at most 8192 MiB:
# other work shares the machine), PARBENCH_SLURM_TIMEOUT (seconds each daemon may take
# to come up, default 60), PARBENCH_SLURM_KEEP_ON_FAILURE=1 (a failed start leaves the
# daemons and the folder as they are, to look at; `stop` removes them).

set -Eeuo pipefail

STATE=${PARBENCH_SLURM_DIR:-/tmp/parbench-slurm}
TIMEOUT=${PARBENCH_SLURM_TIMEOUT:-60}
PACKAGES=(slurm-wlm slurmdbd munge mariadb-server)
CLUSTER=parbench
ACCOUNT=parbench
# exit status when this machine cannot run the cluster (not root, no package): the
# test suite skips on it instead of failing
CANNOT=3

say() { echo "slurm-cluster: $*" >&2; }
cannot() {
    say "cannot run here: $*"
    # a start that got this far undoes what it did
    if [[ -n ${STARTING:-} ]]; then cmd_stop >/dev/null 2>&1 || true; fi
    exit "$CANNOT"
}
die() { say "$*"; exit 1; }

conf() { echo "$STATE/etc/slurm.conf"; }

# ------------------------------------------------------------------ prerequisites

need_root() {
    [[ $(id -u) -eq 0 ]] || cannot "needs root (slurmd runs jobs as their user, munged and MariaDB as theirs); run it with sudo"
}

missing_commands() {
    local cmd missing=()
    for cmd in munged mungekey slurmctld slurmd slurmdbd sbatch sacct sacctmgr scontrol sinfo squeue scancel srun \
               mysqld_safe mariadb mariadb-admin mariadb-install-db; do
        command -v "$cmd" >/dev/null 2>&1 || [[ -x /usr/sbin/$cmd ]] || missing+=("$cmd")
    done
    echo "${missing[*]}"
}

install_packages() {
    local missing
    missing=$(missing_commands)
    [[ -z $missing ]] && return 0
    command -v apt-get >/dev/null 2>&1 ||
        cannot "missing $missing and no apt-get to install ${PACKAGES[*]}; install SLURM, munge and MariaDB by hand"
    say "installing ${PACKAGES[*]} (missing: $missing)"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >"$STATE.apt.log" 2>&1; then
        # the package lists may be missing or stale: refresh them once
        if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"; } \
                >>"$STATE.apt.log" 2>&1; then
            tail -n 5 "$STATE.apt.log" >&2
            cannot "apt-get could not install ${PACKAGES[*]} (log: $STATE.apt.log)"
        fi
    fi
    rm -f "$STATE.apt.log"
    missing=$(missing_commands)
    [[ -z $missing ]] || cannot "still missing after apt-get: $missing"
}

sbin() { if command -v "$1" >/dev/null 2>&1; then command -v "$1"; else echo "/usr/sbin/$1"; fi; }

# Free TCP ports on 127.0.0.1, asked of the kernel (bind to port 0), one per argument.
free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# Wait until "$@" succeeds, at most $TIMEOUT seconds; $what names it in the error.
wait_for() {
    local what=$1; shift
    local deadline=$((SECONDS + TIMEOUT))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            say "$what did not come up within ${TIMEOUT}s"
            return 1
        fi
        sleep 0.5
    done
}

pid_alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# ------------------------------------------------------------------ configuration

write_configs() {
    local ports host cpus mem_total_mb mem_mb password
    read -r CTLD_PORT SLURMD_PORT DBD_PORT DB_PORT <<<"$(free_ports 4)"
    host=$(hostname -s)
    cpus=$(nproc)
    mem_total_mb=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 ))
    mem_mb=${PARBENCH_SLURM_MEMORY_MB:-$(( mem_total_mb / 4 ))}
    ((mem_mb >= 2048)) || mem_mb=2048
    ((mem_mb <= 8192)) || mem_mb=8192
    ((mem_mb <= mem_total_mb)) || die "the node would offer ${mem_mb} MiB but the machine has ${mem_total_mb} MiB"
    password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')

    mkdir -p "$STATE"/{etc,log,run,spool/slurmd,state}
    cat >"$(conf)" <<EOF
# Written by tests/slurm/cluster.sh: one node (this machine), accounting through slurmdbd.
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/munge.socket.2
CredType=cred/munge
StateSaveLocation=$STATE/state
SlurmdSpoolDir=$STATE/spool/slurmd
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
# no cgroups in containers: track a job's processes by their parentage, bind no task
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
# CPUs and memory are what jobs ask for; an --exclusive job gets the whole node
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
# accounting: sacct answers from slurmdbd (what Snakemake's executor asks)
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# for slurmdbd connections the munge socket is named here (AuthInfo covers the rest)
AccountingStoragePass=$STATE/munge/munge.socket.2
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# a cancelled or timed-out job gets SIGTERM, then SIGKILL after KillWait seconds
KillWait=5
InactiveLimit=0
MinJobAge=300
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
# RealMemory: what the node offers jobs, a part of this machine (others share it)
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=$CLUSTER Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    cat >"$STATE/etc/slurmdbd.conf" <<EOF
# Written by tests/slurm/cluster.sh: accounting in the MariaDB this script started.
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/munge.socket.2
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$STATE/run/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$password
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$STATE/etc/slurmdbd.conf"
    echo "$DB_PORT" >"$STATE/run/mariadb.port"
    echo "$password" >"$STATE/run/mariadb.password"
    chmod 600 "$STATE/run/mariadb.password"
}

# ------------------------------------------------------------------ daemons

start_munge() {
    mkdir -p "$STATE/munge"
    chown munge: "$STATE/munge"
    chmod 755 "$STATE/munge"  # munged wants its socket folder open to all (x), writable by it alone
    runuser -u munge -- "$(sbin mungekey)" --create --keyfile="$STATE/munge/munge.key" --bits=1024
    runuser -u munge -- "$(sbin munged)" --socket="$STATE/munge/munge.socket.2" \
        --key-file="$STATE/munge/munge.key" --pid-file="$STATE/munge/munged.pid" \
        --log-file="$STATE/munge/munged.log" --seed-file="$STATE/munge/munged.seed"
    wait_for munged bash -c "munge -n -S '$STATE/munge/munge.socket.2' | unmunge -S '$STATE/munge/munge.socket.2'"
}

mariadb_sql() { mariadb --no-defaults --socket="$STATE/mariadb/mysqld.sock" -u root "$@"; }

start_mariadb() {
    local db=$STATE/mariadb
    mkdir -p "$db/data"
    chown -R mysql: "$db"
    mariadb-install-db --no-defaults --user=mysql --datadir="$db/data" --auth-root-authentication-method=socket \
        --skip-test-db >"$STATE/log/mariadb-install.log" 2>&1 ||
        { tail -n 5 "$STATE/log/mariadb-install.log" >&2; die "mariadb-install-db failed"; }
    # its own session, detached from the caller's terminal; it runs as mysql, so its log
    # is in its own folder
    setsid "$(command -v mysqld_safe)" --no-defaults --user=mysql --datadir="$db/data" \
        --socket="$db/mysqld.sock" --port="$(cat "$STATE/run/mariadb.port")" --bind-address=127.0.0.1 \
        --pid-file="$db/mysqld.pid" --log-error="$db/mariadb.log" --skip-log-bin --innodb-buffer-pool-size=64M \
        </dev/null >/dev/null 2>&1 &
    echo $! >"$STATE/run/mysqld_safe.pid"
    wait_for MariaDB mariadb-admin --no-defaults --socket="$db/mysqld.sock" -u root ping
    local password
    password=$(cat "$STATE/run/mariadb.password")
    mariadb_sql <<EOF
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$password';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$password';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOF
}

start_slurm() {
    export SLURM_CONF
    SLURM_CONF=$(conf)
    "$(sbin slurmdbd)"
    wait_for slurmdbd sacctmgr -n show cluster
    # the cluster must be known to the database before slurmctld registers with it
    sacctmgr -i add cluster "$CLUSTER" >/dev/null 2>&1 || true
    "$(sbin slurmctld)" -f "$SLURM_CONF"
    wait_for slurmctld scontrol ping
    # Job steps (`srun` in a job: Snakemake's executor runs every job so) read the default
    # /etc/slurm/slurm.conf, as the executor takes SLURM_CONF out of their environment.
    # slurmd, and so every job, runs in a mount namespace of its own in which /etc/slurm
    # is this cluster's etc/ folder; the rest of the machine sees no change.
    [[ -d /etc/slurm ]] || mkdir -p /etc/slurm
    unshare --mount --propagation private -- bash -c 'mount --bind "$1" /etc/slurm && exec "$2" -f "$3"' \
        slurmd-namespace "$STATE/etc" "$(sbin slurmd)" "$SLURM_CONF" ||
        cannot "slurmd needs a mount namespace of its own (unshare --mount, mount --bind) and could not get one"
    wait_for "slurmd (the node idle)" bash -c "sinfo -h -N -o %T | grep -qx idle"
    sacctmgr -i add account "$ACCOUNT" Cluster="$CLUSTER" Description=parbench Organization=parbench >/dev/null
    sacctmgr -i add user "$(id -un)" Account="$ACCOUNT" DefaultAccount="$ACCOUNT" Cluster="$CLUSTER" >/dev/null
}

# A step of `start` failed: show the daemons' last log lines, then undo everything.
start_failed() {
    trap - ERR
    local log
    for log in "$STATE"/log/*.log "$STATE"/munge/munged.log "$STATE"/mariadb/mariadb.log; do
        [[ -s $log ]] || continue
        say "last lines of $log:"
        tail -n 8 "$log" | sed 's/^/    | /' >&2
    done
    if [[ -n ${PARBENCH_SLURM_KEEP_ON_FAILURE:-} ]]; then
        say "start failed; the daemons and $STATE are left as they are (PARBENCH_SLURM_KEEP_ON_FAILURE): $0 stop"
        exit 1
    fi
    say "start failed; stopping what was started"
    cmd_stop >/dev/null 2>&1 || true
    exit 1
}

cmd_start() {
    need_root
    if [[ -f $STATE/run/started ]]; then
        say "a cluster is already set up in $STATE (stop it first: $0 stop)"
        exit 1
    fi
    mkdir -p "$(dirname "$STATE")"
    install_packages
    # anything this start leaves half done is undone
    trap 'start_failed' ERR
    STARTING=1
    mkdir -p "$STATE"
    chmod 755 "$STATE"
    write_configs
    start_munge
    start_mariadb
    start_slurm
    trap - ERR
    touch "$STATE/run/started"
    say "single-node cluster '$CLUSTER' up: node $(hostname -s), $(nproc) CPUs; state in $STATE"
    cmd_env
}

cmd_env() {
    [[ -f $(conf) ]] || die "no cluster in $STATE (start one: $0 start)"
    echo "export SLURM_CONF=$(conf)"
}

# ------------------------------------------------------------------ stop

# SIGTERM the process in pid file $2, wait up to $3 seconds, then SIGKILL it.
stop_pid() {
    local name=$1 pidfile=$2 wait=${3:-20} pid
    [[ -f $pidfile ]] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        local deadline=$((SECONDS + wait))
        while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            say "$name ($pid) did not stop; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$pidfile"
}

# The job step daemons (slurmstepd) of this cluster's node: they outlive slurmd.
our_stepds() {
    local pid
    for pid in $(pgrep -x slurmstepd 2>/dev/null || true); do
        # a step daemon's working files are in this cluster's spool folder
        if ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$STATE/spool/slurmd"; then
            echo "$pid"
        fi
    done
}

cmd_stop() {
    need_root
    [[ -d $STATE ]] || { say "nothing to stop in $STATE"; return 0; }
    export SLURM_CONF
    SLURM_CONF=$(conf)
    if [[ -f $SLURM_CONF ]] && pid_alive "$STATE/run/slurmctld.pid"; then
        # every job of this cluster, running or queued
        scancel --full "--cluster=$CLUSTER" --user="$(id -un)" >/dev/null 2>&1 || true
        local deadline=$((SECONDS + 30))
        while [[ -n $(squeue -h -o %i 2>/dev/null) ]] && ((SECONDS < deadline)); do sleep 0.5; done
    fi
    stop_pid slurmd "$STATE/run/slurmd.pid"
    local pid
    for pid in $(our_stepds); do
        say "ending a leftover job step daemon ($pid)"
        kill -KILL "$pid" 2>/dev/null || true
    done
    stop_pid slurmctld "$STATE/run/slurmctld.pid"
    stop_pid slurmdbd "$STATE/run/slurmdbd.pid"
    if pid_alive "$STATE/mariadb/mysqld.pid"; then
        mariadb-admin --no-defaults --socket="$STATE/mariadb/mysqld.sock" -u root shutdown >/dev/null 2>&1 || true
    fi
    stop_pid mysqld_safe "$STATE/run/mysqld_safe.pid" 5
    stop_pid mysqld "$STATE/mariadb/mysqld.pid"
    stop_pid munged "$STATE/munge/munged.pid"
    rm -rf "$STATE"
    say "stopped; removed $STATE"
}

# ------------------------------------------------------------------ status

cmd_status() {
    [[ -d $STATE ]] || { echo "no cluster in $STATE"; return 1; }
    local name file up=0 down=0
    for name in munged:munge/munged.pid mysqld:mariadb/mysqld.pid slurmdbd:run/slurmdbd.pid \
                slurmctld:run/slurmctld.pid slurmd:run/slurmd.pid; do
        file=$STATE/${name#*:}
        if pid_alive "$file"; then
            echo "${name%%:*}: running (pid $(cat "$file"))"; up=$((up + 1))
        else
            echo "${name%%:*}: not running"; down=$((down + 1))
        fi
    done
    if pid_alive "$STATE/run/slurmctld.pid"; then
        SLURM_CONF=$(conf) sinfo -h -N -o "node %N: %T, %c CPUs, %m MiB" || true
        SLURM_CONF=$(conf) squeue || true
    fi
    echo "state: $STATE"
    ((down == 0))
}

cmd_install() {
    need_root
    install_packages
    say "SLURM, munge and MariaDB are installed"
}

case ${1:-} in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) cmd_env ;;
    *) sed -n '5,10p' "$0" >&2; exit 2 ;;
esac
