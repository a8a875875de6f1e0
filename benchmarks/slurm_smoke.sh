#!/usr/bin/env bash
# The SLURM profile on a real one-node Slurm cluster (issue 12, item 6; issue 25 kind 6). Run by
# .ci/run (blocking).
#
# Installs Debian's slurm-wlm, slurmdbd, munge and mariadb-server when missing, then, inside a
# private network namespace (only a loopback interface: no daemon is reachable from outside) and a
# private mount namespace, starts munged, MariaDB (Unix socket only), slurmdbd, slurmctld and
# slurmd as a one-node cluster on localhost (CPUs=2, RealMemory=20000). Every file lives under one
# temporary directory; its etc/ is bind-mounted over /etc/slurm inside the mount namespace only, so
# every Slurm program (sbatch, sacct, and the `srun` that runs each job step inside a batch job,
# whose environment the jobstep plugin strips of SLURM_CONF) finds slurm.conf at the default path
# while the real /etc/slurm is never written. Then:
#   0. preflight: `sbatch --wait --wrap 'env -u SLURM_CONF srun -n1 true'` must run its job step
#      (seconds; `--preflight-only` stops here and prints `slurm smoke: preflight PASS …`),
#   1. `coopeval slurm-preflight` (the user-facing check of the profile's job-status command)
#      passes with slurmdbd; with slurmdbd stopped it fails naming slurmdbd, and passes for a copy
#      of the profile set to `slurm-status-command: squeue` (MinJobAge=3600 here); slurmdbd is
#      then restarted and the check passes again,
#   2. runs config/slurm_smoke.yaml (4 CoopEval, 2 gossip and 2 evolution cells of scripted bots:
#      every rule of the three studies) locally (--cores 2) and through
#      `snakemake --profile workflow/profiles/slurm` (snakemake-executor-plugin-slurm pinned in
#      requirements/dev.in; jobs grouped with --groups/--group-components, --cores 1), from copies
#      of the repository's tracked files, and checks that
#   3. every job the run submitted appears in `sacct` as COMPLETED, and
#   4. the store equals the local run's (benchmarks/store_checksums.py: per-table checksums
#      of the sorted rows), and
#   5. the profile's `resources: local_llm: 50` is in effect (the auto-loaded profiles/default
#      must not override it; the run prints `coopeval: local_llm = N`), and
#   6. SIGTERM stops a Slurm run: the same run is started again from a fresh copy and sent SIGTERM
#      while a Slurm job of it is RUNNING; its jobs must be CANCELLED in sacct, squeue must be
#      empty within 30 s and snakemake must exit within 200 s
#      (coopeval.pipeline.sigterm, installed by the workflow's onstart hook).
# Prints one line `slurm smoke: PASS …` or `slurm smoke: FAIL …` and exits 0 / 1.
# Idempotent (a fresh temporary directory every time), bounded (COOPEVAL_SLURM_TIMEOUT seconds,
# default 1800, for the namespace part; apt-get at most 900 s) and the daemons are stopped on every
# exit. KEEP_SLURM_STATE=1 keeps the temporary directory (logs, both stores).
# Usage: benchmarks/slurm_smoke.sh [--preflight-only]   (as root: apt-get, daemons as root in the
#        namespaces). COOPEVAL_PYTHON: the Python with snakemake (default $repo/.venv/bin/python).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
py=${COOPEVAL_PYTHON:-$repo/.venv/bin/python}
limit=${COOPEVAL_SLURM_TIMEOUT:-1800}
preflight_only=0
for arg in "$@"; do
    case $arg in
        --preflight-only) preflight_only=1 ;;
        *) echo "usage: $0 [--preflight-only]" >&2; exit 2 ;;
    esac
done

if [ -z "${COOPEVAL_SLURM_NETNS:-}" ]; then
    missing=0
    for binary in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/slurmdbd /usr/sbin/munged /usr/bin/sacct \
        /usr/bin/sbatch /usr/sbin/mariadbd; do
        [ -x "$binary" ] || missing=1
    done
    if [ "$missing" = 1 ]; then
        timeout 300 apt-get update -qq
        DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq slurm-wlm slurmdbd munge mariadb-server \
            >/dev/null
    fi
    # The whole run in a new network and mount namespace; TERM on timeout reaches the script's
    # own trap.
    COOPEVAL_SLURM_NETNS=1 exec timeout --kill-after=60 "$limit" \
        unshare --net --mount --propagation private --fork --kill-child=TERM bash "$0" "$@"
fi

started=$(date +%s)
# Never touch the host's network or mounts: refuse to go on outside the private namespaces
# (e.g. with COOPEVAL_SLURM_NETNS set by hand).
for ns in net mnt; do
    if [ "$(readlink /proc/self/ns/$ns)" = "$(readlink /proc/1/ns/$ns)" ]; then
        echo "slurm smoke: FAIL: not in a private $ns namespace (do not set COOPEVAL_SLURM_NETNS)" >&2
        exit 1
    fi
done
ip link set lo up
# glibc's getaddrinfo(AI_ADDRCONFIG), which Slurm uses, finds no IPv4 address when 127.0.0.1 is
# the only one; a second loopback address (still only on lo) makes it resolve.
ip addr add 127.0.0.2/8 dev lo
node=$(hostname -s)
state=$(mktemp -d /tmp/coopeval-slurm.XXXXXX)
conf=/etc/slurm/slurm.conf
pids=()
verdict="FAIL (interrupted)"

cleanup() {
    status=$?
    if [ -S "$state/munge.sock" ] && [ -f "$conf" ]; then
        # Cancel whatever the run left on this private cluster, then stop the daemons.
        timeout 10 scancel --quiet --me 2>/dev/null || true
    fi
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "${KEEP_SLURM_STATE:-}" = 1 ]; then echo "state kept in $state"; else rm -rf "$state"; fi
    echo "slurm smoke: $verdict ($(( $(date +%s) - started )) s)"
    exit "$status"
}
trap cleanup EXIT
child=""
# On TERM/INT stop the running snakemake first (it runs in the background, see `bounded`).
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; [ -n "$child" ] && wait "$child" 2>/dev/null; exit 143' TERM INT
bounded() { "$@" & child=$!; wait "$child"; local rc=$?; child=""; return $rc; }

fail() { verdict="FAIL: $*"; exit 1; }

# Every Slurm program finds its configuration at the default path /etc/slurm/slurm.conf: the
# private mount namespace binds $state/etc over /etc/slurm (visible only to this script and the
# daemons and jobs it starts; the real /etc/slurm is never written). SLURM_CONF is not enough:
# the jobstep plugin removes it from the environment of the `srun` that runs each job step
# (snakemake-executor-plugin-slurm-jobstep keeps only SLURM_JOB_ID and a few others), and that
# srun then fails with "Could not establish a configuration source".
# (/etc/slurm comes with the Debian packages; mkdir only if a local install lacks it.)
mount --make-rprivate / || fail "mount --make-rprivate / (needs a mount namespace)"
mkdir -p "$state/etc" /etc/slurm
mount --bind "$state/etc" /etc/slurm || fail "bind mount over /etc/slurm"
unset SLURM_CONF

# --- munge: own key, own socket -----------------------------------------------------------------
dd if=/dev/urandom of="$state/munge.key" bs=1024 count=1 status=none
chmod 0600 "$state/munge.key"
/usr/sbin/munged --foreground --force --key-file="$state/munge.key" --socket="$state/munge.sock" \
    --pid-file="$state/munged.pid" --log-file="$state/munged.log" --seed-file="$state/munged.seed" >"$state/munged.out" 2>&1 &
pids+=($!)

# --- accounting: MariaDB on a Unix socket only (no TCP) and slurmdbd, so that sacct works -------
# (with AccountingStorageType=accounting_storage/none, Slurm 22.05's sacct only answers
# "Slurm accounting storage is disabled").
mkdir -p "$state/ctld" "$state/spool" "$state/mysql"
export MYSQL_UNIX_PORT=$state/mysql.sock  # the MariaDB client library of slurmdbd reads this
mariadb-install-db --no-defaults --user=root --datadir="$state/mysql" --auth-root-authentication-method=socket \
    >"$state/mariadb-install.log" 2>&1 || fail "mariadb-install-db: $(tail -3 "$state/mariadb-install.log")"
/usr/sbin/mariadbd --no-defaults --user=root --datadir="$state/mysql" --socket="$MYSQL_UNIX_PORT" --skip-networking \
    --pid-file="$state/mariadb.pid" --log-error="$state/mariadb.log" >"$state/mariadb.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do [ -S "$MYSQL_UNIX_PORT" ] && break; sleep 0.5; done
[ -S "$MYSQL_UNIX_PORT" ] || fail "mariadbd did not start: $(tail -3 "$state/mariadb.log")"
# slurmdbd reads slurmdbd.conf next to slurm.conf.
cat >/etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
AuthInfo=socket=$state/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=$state/slurmdbd.pid
LogFile=$state/slurmdbd.log
EOF
chmod 0600 /etc/slurm/slurmdbd.conf
cat >"$conf" <<EOF
ClusterName=coopeval
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge.sock
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePass=$state/munge.sock
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 RealMemory=20000 State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
for _ in $(seq 50); do [ -S "$state/munge.sock" ] && break; sleep 0.2; done
[ -S "$state/munge.sock" ] || fail "munged did not start: $(tail -3 "$state/munged.log" 2>/dev/null)"

start_slurmdbd() {
    /usr/sbin/slurmdbd -D >>"$state/slurmdbd.out" 2>&1 &
    dbd_pid=$!
    pids+=("$dbd_pid")
    for _ in $(seq 60); do timeout 5 sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 1; done
}
start_slurmdbd
timeout 10 sacctmgr -i add cluster coopeval >"$state/sacctmgr.log" 2>&1 \
    || fail "sacctmgr add cluster: $(tail -3 "$state/sacctmgr.log") $(tail -3 "$state/slurmdbd.log" 2>/dev/null)"
/usr/sbin/slurmctld -D -i >"$state/slurmctld.out" 2>&1 &
pids+=($!)
/usr/sbin/slurmd -D >"$state/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
    timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle && break
    sleep 1
done
timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle \
    || fail "node not idle: $(timeout 5 sinfo -N 2>&1 | tail -2); $(tail -3 "$state/slurmctld.log" "$state/slurmd.log" 2>/dev/null)"
echo "cluster up: $(timeout 5 sinfo -h -N -o '%N %T cpus=%c mem=%m')"

# --- preflight: a batch job whose job step runs, as the jobstep plugin starts it ---------------
# (srun without any SLURM_CONF in its environment), so that a broken job step shows in seconds.
preflight_started=$(date +%s)
timeout 60 sbatch --wait --parsable -o "$state/preflight.out" -t 2 \
    --wrap 'env -u SLURM_CONF srun -n1 true && echo "job step ran"' >"$state/preflight.id" 2>"$state/preflight.err" \
    || fail "preflight batch job (srun inside sbatch): $(cat "$state/preflight.err" "$state/preflight.out" 2>/dev/null | tail -5)"
grep -qx "job step ran" "$state/preflight.out" \
    || fail "preflight batch job printed no 'job step ran': $(tail -5 "$state/preflight.out")"
echo "preflight: batch job $(cut -d';' -f1 "$state/preflight.id") ran its job step ($(( $(date +%s) - preflight_started )) s)"
if [ "$preflight_only" = 1 ]; then
    verdict="preflight PASS (cluster up, job step inside a batch job ran; --preflight-only: no smoke runs)"
    exit 0
fi

copy() {
    mkdir -p "$1"
    git -C "$repo" ls-files -z Snakefile workflow config resources src profiles | (cd "$repo" && xargs -0 cp --parents -t "$1")
}
PATH="$(dirname "$py"):$PATH"
export PATH
for side in local slurm sigterm; do
    copy "$state/$side"
done
smoke_config=config/slurm_smoke.yaml

# --- `coopeval slurm-preflight` with and without job accounting (issue 25 kind 6) --------------
# shellcheck disable=SC2016  # $1 and $@ belong to the inner bash
coopeval_cli() { bash -c 'cd "$1" && shift && exec env PYTHONPATH="$PWD/src" "$@"' _ "$state/slurm" \
    "$py" -c 'import sys; from coopeval.cli import main; sys.exit(main())' "$@"; }
coopeval_cli slurm-preflight >"$state/preflight-dbd.log" 2>&1 \
    || fail "coopeval slurm-preflight with slurmdbd: $(tail -3 "$state/preflight-dbd.log")"
echo "coopeval slurm-preflight with slurmdbd: $(tail -1 "$state/preflight-dbd.log")"
kill "$dbd_pid"
for _ in $(seq 50); do kill -0 "$dbd_pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$dbd_pid" 2>/dev/null && fail "slurmdbd did not stop"
if coopeval_cli slurm-preflight >"$state/preflight-nodbd.log" 2>&1; then
    fail "coopeval slurm-preflight passed with slurmdbd stopped: $(tail -2 "$state/preflight-nodbd.log")"
fi
grep -q "FAIL: sacct does not report the finished test job .*slurmdbd" "$state/preflight-nodbd.log" \
    || fail "coopeval slurm-preflight without slurmdbd did not name slurmdbd: $(tail -3 "$state/preflight-nodbd.log")"
echo "coopeval slurm-preflight without slurmdbd: $(tail -1 "$state/preflight-nodbd.log")"
sed 's/^slurm-status-command: sacct$/slurm-status-command: squeue/' "$state/slurm/workflow/profiles/slurm/config.yaml" \
    >"$state/squeue-profile.yaml"
grep -qx "slurm-status-command: squeue" "$state/squeue-profile.yaml" || fail "no slurm-status-command line in the profile"
coopeval_cli slurm-preflight --profile "$state/squeue-profile.yaml" >"$state/preflight-squeue.log" 2>&1 \
    || fail "coopeval slurm-preflight (squeue profile) without slurmdbd: $(tail -3 "$state/preflight-squeue.log")"
echo "coopeval slurm-preflight without slurmdbd, squeue profile: $(tail -1 "$state/preflight-squeue.log")"
start_slurmdbd
# slurmctld sends the records it queued while slurmdbd was down once it has reconnected.
nodbd_job=$(grep -oE 'test job [0-9]+' "$state/preflight-nodbd.log" | head -1 | grep -oE '[0-9]+$')
for _ in $(seq 90); do
    timeout 5 sacct -X -n -P -o State -j "$nodbd_job" 2>/dev/null | grep -qx COMPLETED && break
    sleep 1
done
coopeval_cli slurm-preflight >"$state/preflight-dbd2.log" 2>&1 \
    || fail "coopeval slurm-preflight after restarting slurmdbd: $(tail -3 "$state/preflight-dbd2.log")"
echo "coopeval slurm-preflight after restarting slurmdbd: $(tail -1 "$state/preflight-dbd2.log")"

# --- the same run, locally and through Slurm ----------------------------------------------------
# shellcheck disable=SC2016
bounded bash -c 'cd "$1" && shift && exec "$@"' _ "$state/local" env PYTHONPATH="$state/local/src" "$py" -m snakemake --cores 2 all --configfile "$smoke_config" -q \
    >"$state/local.log" 2>&1 || fail "local run failed: $(tail -5 "$state/local.log")"
echo "local run done ($(( $(date +%s) - started )) s)"

# Grouping (Snakemake --groups/--group-components): one Slurm job per Snakemake job would spend
# the run starting Python (config/smoke.yaml has ~310 jobs of a second or two), so the cells of
# each study are packed into one group job (slurm_smoke.yaml: 4 CoopEval cells x play, parse,
# evaluate; 2 gossip; 2 evolution); the judge and the figure and table jobs run as single jobs;
# every job still runs on the cluster through the profile.
# --cores 1 caps what a group job asks for to 1 CPU (without a cap Snakemake sums its members'
# resources, e.g. 60 CPUs for 60 gossip cells, and Slurm never starts it). Inside a group job the
# members run one at a time anyway: the jobstep plugin starts each with `srun` without --mem, so
# each step takes the job's whole memory and the next waits ("step creation temporarily
# disabled"; two `srun -c1 sleep 5` in a 2-CPU job took 10 s; snakemake issue 2060). With 1 CPU
# each, Slurm runs two group jobs side by side on the 2-CPU node.
slurm_run() {  # slurm_run <work dir>: the profile run of the smoke config in that copy
    # exec: run in the background, its process id is snakemake's (the signals below reach it)
    # shellcheck disable=SC2016
    exec bash -c 'cd "$1" && shift && exec "$@"' _ "$1" env PYTHONPATH="$1/src" "$py" -m snakemake --profile workflow/profiles/slurm \
        --cores 1 --slurm-init-seconds-before-status-checks 5 \
        --groups play_gossip=gossip play_evolution=evolution play_coopeval=cell parse=cell evaluate=cell \
        --group-components gossip=2 evolution=2 cell=4 \
        --configfile "$smoke_config" -- all
}
slurm_started=$(date +%s)
bounded slurm_run "$state/slurm" >"$state/slurm.log" 2>&1 \
    || fail "slurm run failed: $(grep -m3 -i error "$state/slurm.log" || tail -5 "$state/slurm.log")"
echo "slurm run done ($(( $(date +%s) - slurm_started )) s)"

# --- checks -------------------------------------------------------------------------------------
# The profile's resources won over the auto-loaded workflow profile (issue 13, kind 10a).
grep -q "coopeval: local_llm = 50 " "$state/slurm.log" \
    || fail "the slurm profile's local_llm: 50 is not in effect: $(grep -m1 'coopeval: local_llm' "$state/slurm.log")"
# (Only the plugin's "Job N has been submitted with SLURM jobid M" lines: its "SLURM run ID: <uuid>"
# line is no job id.)
submitted=$(grep -oE 'has been submitted with SLURM jobid [0-9]+' "$state/slurm.log" | grep -oE '[0-9]+$' | sort -u)
n_submitted=$(echo "$submitted" | grep -c . || true)
[ "$n_submitted" -gt 0 ] || fail "no Slurm job id in the snakemake log"
sacct -X -n -P -o JobID,State --starttime "$(date -d "@$slurm_started" +%Y-%m-%dT%H:%M:%S)" >"$state/sacct.tsv" 2>&1 \
    || fail "sacct: $(cat "$state/sacct.tsv")"
completed=$(awk -F'|' '$2 == "COMPLETED" {print $1}' "$state/sacct.tsv" | sort -u)
not_completed=$(comm -23 <(echo "$submitted") <(echo "$completed") | tr '\n' ' ')
[ -z "$not_completed" ] || fail "jobs not COMPLETED in sacct: $not_completed ($(head -5 "$state/sacct.tsv"))"
echo "sacct: all $n_submitted submitted jobs COMPLETED"

"$py" "$repo/benchmarks/store_checksums.py" "$state/local/results/coopeval.duckdb" >"$state/local.tsv"
"$py" "$repo/benchmarks/store_checksums.py" "$state/slurm/results/coopeval.duckdb" >"$state/slurm.tsv"
diff "$state/local.tsv" "$state/slurm.tsv" >"$state/store.diff" || fail "store differs from the local run: $(head -6 "$state/store.diff")"
echo "store identical to the local run ($(wc -l <"$state/local.tsv") tables)"

# --- SIGTERM stops a Slurm run and cancels its jobs (issue 25 kind 6) --------------------------
# The same run from a fresh copy; SIGTERM once one of its Slurm jobs is RUNNING. Snakemake's own
# SIGTERM handling would wait for the running jobs to end (for ever without job accounting);
# the workflow's onstart hook makes SIGTERM cancel them (coopeval.pipeline.sigterm). Cancelling
# must be prompt; the exit waits for the plugin's current status-check pause (at most 180 s).
cancel_bound=30
exit_bound=200
[ -z "$(timeout 5 squeue -h -o %i)" ] || fail "jobs left in squeue before the SIGTERM run: $(timeout 5 squeue -h)"
slurm_run "$state/sigterm" >"$state/sigterm.log" 2>&1 &
child=$!
running=""
for _ in $(seq 300); do
    running=$(timeout 5 squeue -h -t RUNNING -o %i 2>/dev/null | head -1 || true)
    [ -n "$running" ] && break
    kill -0 "$child" 2>/dev/null || break
    sleep 1
done
[ -n "$running" ] || fail "no Slurm job of the SIGTERM run reached RUNNING: $(tail -5 "$state/sigterm.log")"
kill -TERM "$child" 2>/dev/null || true
term_sent=$(date +%s)
cancelled_after=""
exited_after=""
while [ $(( $(date +%s) - term_sent )) -le "$exit_bound" ]; do
    if [ -z "$cancelled_after" ] && [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]; then
        cancelled_after=$(( $(date +%s) - term_sent ))
    fi
    if ! kill -0 "$child" 2>/dev/null; then exited_after=$(( $(date +%s) - term_sent )); break; fi
    sleep 1
done
if [ -z "$exited_after" ]; then
    kill -KILL "$child" 2>/dev/null || true
    fail "snakemake still running ${exit_bound} s after SIGTERM (squeue: $(timeout 5 squeue -h | head -3))"
fi
sigterm_rc=0
wait "$child" || sigterm_rc=$?
child=""
[ "$sigterm_rc" -ne 0 ] || fail "the SIGTERM run exited 0 (it finished before the signal?)"
for _ in $(seq "$cancel_bound"); do
    [ -n "$cancelled_after" ] && break
    [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && cancelled_after=$(( $(date +%s) - term_sent ))
    sleep 1
done
[ -n "$cancelled_after" ] && [ "$cancelled_after" -le "$cancel_bound" ] \
    || fail "Slurm jobs left ${cancel_bound} s after SIGTERM: $(timeout 5 squeue -h | head -3)"
term_jobs=$(grep -oE 'has been submitted with SLURM jobid [0-9]+' "$state/sigterm.log" | grep -oE '[0-9]+$' | sort -u | paste -sd, -)
[ -n "$term_jobs" ] || fail "no Slurm job id in the SIGTERM run's log"
for _ in $(seq 15); do  # (the accounting record of a cancel may come a moment later)
    timeout 10 sacct -X -n -P -o JobID,State -j "$term_jobs" >"$state/sigterm-sacct.tsv" 2>&1 || fail "sacct: $(cat "$state/sigterm-sacct.tsv")"
    grep -q '|CANCELLED' "$state/sigterm-sacct.tsv" && break
    sleep 1
done
grep -q '|CANCELLED' "$state/sigterm-sacct.tsv" \
    || fail "no job of the SIGTERM run was CANCELLED: $(tr '\n' ' ' <"$state/sigterm-sacct.tsv")"
echo "SIGTERM: squeue empty after ${cancelled_after} s, snakemake exited after ${exited_after} s (rc $sigterm_rc); sacct: $(tr '\n' ' ' <"$state/sigterm-sacct.tsv")"
verdict="PASS: slurm-preflight passes with slurmdbd and fails naming it without; $n_submitted Slurm jobs COMPLETED in sacct; store identical to the local run ($(wc -l <"$state/local.tsv") tables); SIGTERM cancelled the run's jobs (squeue empty after ${cancelled_after} s, exit after ${exited_after} s)"
