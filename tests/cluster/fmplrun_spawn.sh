#!/bin/bash
# tests/cluster/fmplrun_spawn.sh: PMI spawns in an fmplrun --hosts job on
# tools/testcluster's namespace hosts, through real ssh.  -n 2 fills
# fmpl-h1's 2 slots, so the spawned groups go to fmpl-h2 (its proxy started
# for them), or where info host/hosts says; pmi_spawn_client checks every
# reply, its hostname and its environment itself.  Then the failure rules:
# a spawned process killed on fmpl-h2, and fmpl-h2 lost while only spawned
# processes run there, end the job promptly with one line naming them and
# the host; no process or proxy of the job is left, nor a /dev/shm file of
# the job on any host.
# Uses a healthy cluster that is up (left up), else builds its own (2 hosts).
#   fmplrun_spawn.sh FMPLRUN PMI_SPAWN_CLIENT WORKDIR
# Exit: 0 pass, 1 fail, 77 skip (not root, or the kernel refuses namespaces).
set -uo pipefail
FMPLRUN=$1 CLIENT=$2 WORK=$3
. "$(dirname "$0")/cluster_begin.sh"
trap cluster_end EXIT
# Seen by every host at the same path (their /tmp is their own).
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
HOSTS=(--hosts fmpl-h1:2,fmpl-h2:2)

pass=0 fails=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; for f in out err; do [ -s "$f" ] && { echo "--- $f:"; head -c 3000 "$f"; }; done; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# 1. Spawns placed across the hosts; data through the key-value space.
t0=$(now_ms)
timeout 60 "$FMPLRUN" "${HOSTS[@]}" -n 2 --timeout 40 --tag-output -v \
    "$CLIENT" hosts fmpl-h1 fmpl-h2 fmpl-h1 fmpl-h2 >out 2>err </dev/null
status=$?
elapsed_ms=$(( $(now_ms) - t0 ))
children=0
for g in 1 2 3; do for w in 0 1; do
    host=fmpl-h1; { [ $g = 1 ] || [ "$g$w" = 20 ]; } && host=fmpl-h2
    grep -qx "\[$g:$w\] hosts-child $((2 * g + w)) ok on $host" out && children=$((children + 1))
done; done
if [ $status = 0 ] && [ $children = 6 ] && grep -qx '\[0\] hosts rank 0 ok' out &&
   grep -qx '\[1\] hosts rank 1 ok' out &&
   grep -q '^fmplrun: host fmpl-h2: proxy for spawned processes' err; then
    ok "spawns onto fmpl-h2 and by info host/hosts, keys/names/queues across (${elapsed_ms} ms)"
else bad "spawns across the hosts (status $status, $children of 6 children ok)"; fi

# 2. Checked where the processes run: a wdir that only fmpl-h1 has (/tmp is
# each host's own).  A spawn over both hosts is refused by fmpl-h2 (the
# process fmpl-h1 started is killed, the job goes on), one on fmpl-h1 runs.
wdir=/tmp/fmpl-spawn-wdir.$$
rm -rf pids; mkdir pids
"$TC" exec fmpl-h1 mkdir -p "$wdir"
timeout 60 "$FMPLRUN" --hosts fmpl-h1:1,fmpl-h2:1 -n 1 --timeout 40 --tag-output \
    "$CLIENT" hosts-wdir fmpl-h1 fmpl-h2 fmpl-h1 "$wdir" "$WORK/pids" >out 2>err </dev/null
status=$?
"$TC" exec fmpl-h1 rm -rf "$wdir"
if [ $status = 0 ] && grep -qx '\[0\] hosts-wdir ok' out && grep -qx '\[2:0\] hosts-child 3 ok on fmpl-h1' out &&
   grep -qx '\[2:1\] hosts-child 4 ok on fmpl-h1' out; then
    ok "wdir and program checked on the host that runs them; a refusal there kills the rest"
else bad "wdir checked where the processes run (status $status)"; fi

# start_sleeper: hosts-fail-parent in the background until its spawned
# process is up (on fmpl-h2: fmpl-h1's one slot is the parent's).
start_sleeper() {
    rm -rf pids; mkdir pids
    timeout 60 "$FMPLRUN" --hosts fmpl-h1:1,fmpl-h2:1 -n 1 --timeout 40 \
        "$CLIENT" hosts-fail-parent "$WORK/pids" >out 2>err </dev/null &
    launcher=$!
    for _ in $(seq 200); do [ -s pids/sleeper ] && break; sleep 0.05; done
    read -r pid host job <pids/sleeper
    if [ -z "${pid:-}" ] || [ "$host" != fmpl-h2 ]; then
        bad "the spawned process did not start on fmpl-h2 (${host:-nowhere})"; return 1
    fi
    if ! "$TC" exec fmpl-h2 sh -c "ls /dev/shm/fmpl-$job-sleeper" >/dev/null 2>&1; then
        bad "the spawned process left no /dev/shm file on fmpl-h2"; return 1
    fi
}
# No pmi_spawn_client of the job alive (the hosts share the machine's pid
# space), no proxy, no /dev/shm file of the job on any host.
nothing_left() {
    local what=$1 why
    if why=$(cluster_job_gone "$job" pmi_spawn_client); then
        ok "$what: nothing of the job left on any host"
    else bad "$what: $why"; fi
}

# 3. The spawned process on fmpl-h2 is killed.
if start_sleeper; then
    kill -KILL "$pid"
    t_kill=$(now_ms)
    wait "$launcher"; status=$?
    elapsed_ms=$(( $(now_ms) - t_kill ))
    if [ $status = 137 ] && [ "$(grep -c 'ending the job' err)" = 1 ] &&
       grep -Eq "^fmplrun: group 1 rank 0 \(universe index 1, pid $pid on fmpl-h2\) killed by signal 9 \(Killed\); ending the job$" err &&
       [ "$elapsed_ms" -lt 5000 ]; then
        ok "spawned process killed on fmpl-h2: the job ends naming it (${elapsed_ms} ms)"
    else bad "spawned process killed on fmpl-h2 (status $status, ${elapsed_ms} ms)"; fi
    nothing_left "after the spawned process was killed"
else wait "$launcher"; fi

# 4. fmpl-h2 lost (its proxy and ssh session too) while only the spawned
# process runs there.
if start_sleeper; then
    "$TC" kill --all fmpl-h2 KILL >/dev/null
    t_kill=$(now_ms)
    wait "$launcher"; status=$?
    elapsed_ms=$(( $(now_ms) - t_kill ))
    if [ $status != 0 ] && [ "$(grep -c 'ending the job' err)" = 1 ] &&
       grep -Eq '^fmplrun: (host fmpl-h2 \(group 1 rank 0\) lost: |group 1 rank 0 \(universe index 1, pid [0-9]+ on fmpl-h2\) killed)' err &&
       [ "$elapsed_ms" -lt 5000 ]; then
        ok "fmpl-h2 lost under a spawned process: the job ends (${elapsed_ms} ms): $(grep 'ending the job' err)"
    else bad "fmpl-h2 lost under a spawned process (status $status, ${elapsed_ms} ms)"; fi
    nothing_left "after fmpl-h2 was lost"
else wait "$launcher"; fi

cd / && rm -rf "$WORK"
echo "fmplrun_spawn: $pass passed, $fails failed"
[ "$fails" = 0 ]
