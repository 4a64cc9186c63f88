#!/bin/bash
# tests/cluster/fmplrun_hosts.sh: fmplrun --hosts across the namespace hosts
# of tools/testcluster, through real ssh: the PMI job spans the hosts, ranks
# land in blocks on the right hosts, and the failure rules hold across hosts
# (a rank failing on the second host, all its ranks killed, the whole host
# lost): the job ends promptly with one line naming rank/host, no process of
# the job is left, and no /dev/shm file of the job on any host.
# Uses a healthy cluster that is up (left up), else builds its own (2 hosts).
#   fmplrun_hosts.sh FMPLRUN LT_FAIL LT_EXCHANGE MPI_PROGRAM WORKDIR
# Exit: 0 pass, 1 fail, 77 skip (not root, or the kernel refuses namespaces).
set -uo pipefail
FMPLRUN=$1 LT_FAIL=$2 LT_EXCHANGE=$3 MPI_PROGRAM=$4 WORK=$5
. "$(dirname "$0")/cluster_begin.sh"
trap cluster_end EXIT
# The work directory must be seen by every host at the same path: the hosts
# have a /tmp of their own, so it lives in the build tree.
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
HOSTS=(--hosts fmpl-h1:2,fmpl-h2:2)

pass=0 fails=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; for f in out err; do [ -s "$f" ] && { echo "--- $f:"; head -c 2000 "$f"; }; done; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
run() {
    local t0; t0=$(now_ms)
    timeout 60 "$FMPLRUN" "$@" >out 2>err </dev/null
    status=$?
    elapsed_ms=$(( $(now_ms) - t0 ))
}
# No rank of lt_fail alive (the hosts share the machine's pid space), no
# proxy of the job, no /dev/shm file of the job on any host.
nothing_left() {
    local what=$1 job why
    job=$(cat pids/jobid 2>/dev/null)
    [ -n "$job" ] || { bad "$what: rank 0 recorded no job id"; return; }
    if why=$(cluster_job_gone "$job" lt_fail); then
        ok "$what: nothing of the job left on any host"
    else bad "$what: $why"; fi
}

# 1. A PMI job across the hosts: blocks of ranks per host, one key-value space.
run "${HOSTS[@]}" sh -c 'echo "rank $PMI_RANK of $PMI_SIZE on $(hostname)"'
if [ $status = 0 ] && grep -qx 'rank 0 of 4 on fmpl-h1' out && grep -qx 'rank 1 of 4 on fmpl-h1' out &&
   grep -qx 'rank 2 of 4 on fmpl-h2' out && grep -qx 'rank 3 of 4 on fmpl-h2' out; then
    ok "ranks 0-1 on fmpl-h1, 2-3 on fmpl-h2 (${elapsed_ms} ms)"
else bad "rank placement (status $status)"; fi
run "${HOSTS[@]}" --tag-output "$LT_EXCHANGE" --expect-size 4 --expect-launcher fmplrun --rounds 10
if [ $status = 0 ] && [ "$(grep -c 'lt_exchange: rank [0-3] of 4 ok' out)" = 4 ]; then
    ok "PMI put/fence/get across the hosts (${elapsed_ms} ms)"
else bad "PMI exchange across the hosts (status $status)"; fi

# 2. An FMPL MPI program across hosts runs and passes.
run "${HOSTS[@]}" "$MPI_PROGRAM"
if [ $status = 0 ] && grep -q '^mpi hello ok on 4 ranks' out; then
    ok "MPI program across the hosts (${elapsed_ms} ms)"
else bad "MPI program across the hosts (status $status, ${elapsed_ms} ms)"; fi

# 3. A rank on the second host fails.
rm -rf pids; mkdir pids
run "${HOSTS[@]}" "$LT_FAIL" exit3 3 "$WORK/pids"
if [ $status = 3 ] && grep -Eq '^fmplrun: rank 3 \(pid [0-9]+ on fmpl-h2\) exited with status 3; ending the job$' err &&
   [ "$elapsed_ms" -lt 5000 ]; then
    ok "rank 3 failing on fmpl-h2 ends the job (${elapsed_ms} ms)"
else bad "rank 3 failing on fmpl-h2 (status $status, ${elapsed_ms} ms)"; fi
nothing_left "after rank 3 failed"

# start_job MODE: lt_fail in the background until every rank is up.
start_job() {
    rm -rf pids; mkdir pids
    t0=$(now_ms)
    timeout 60 "$FMPLRUN" "${HOSTS[@]}" "$LT_FAIL" "$1" 0 "$WORK/pids" >out 2>err </dev/null &
    launcher=$!
    for _ in $(seq 200); do
        [ "$(ls pids | grep -c '^pid\.')" = 4 ] && [ -s pids/jobid ] && break
        sleep 0.05
    done
    sleep 0.3
}

# 4. Every rank of the second host killed at once.
start_job sleep
"$TC" kill fmpl-h2 KILL >/dev/null
t_kill=$(now_ms)
wait "$launcher"; status=$?
elapsed_ms=$(( $(now_ms) - t_kill ))
if [ $status = 137 ] && grep -Eq '^fmplrun: rank [23] \(pid [0-9]+ on fmpl-h2\) killed by signal 9' err &&
   [ "$elapsed_ms" -lt 5000 ]; then
    ok "fmpl-h2's ranks killed: the job ends (${elapsed_ms} ms)"
else bad "fmpl-h2's ranks killed (status $status, ${elapsed_ms} ms)"; fi
nothing_left "after fmpl-h2's ranks were killed"

# 5. The whole second host lost: its ranks, proxy and ssh session killed.
start_job sleep
"$TC" kill --all fmpl-h2 KILL >/dev/null
t_kill=$(now_ms)
wait "$launcher"; status=$?
elapsed_ms=$(( $(now_ms) - t_kill ))
if [ $status != 0 ] && grep -Eq '^fmplrun: (host fmpl-h2 \(ranks 2-3\) lost: |rank [23] \(pid [0-9]+ on fmpl-h2\) killed)' err &&
   [ "$elapsed_ms" -lt 5000 ]; then
    ok "fmpl-h2 lost: the job ends (${elapsed_ms} ms): $(grep 'ending the job' err | head -n 1)"
else bad "fmpl-h2 lost (status $status, ${elapsed_ms} ms)"; fi
nothing_left "after fmpl-h2 was lost"

cd / && rm -rf "$WORK"
echo "fmplrun_hosts: $pass passed, $fails failed"
[ "$fails" = 0 ]
