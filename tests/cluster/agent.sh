#!/bin/bash
# tests/cluster/agent.sh: the agent (FMPL_AGENT=thread) across
# tools/testcluster's namespace hosts, under fmplrun --hosts: seed 004's
# native calls (10^4 active messages with replies, the examples of active
# messages, split-phase barriers and remote copies with notes, the cyclic
# shift), persistent collectives
# under stress and prepared broadcasts over the network backend, each
# self-checking at 2 hosts x 1 and x 2 ranks; then the failure rule with
# the agent running: fmpl-h2's ranks killed mid-run end the job within 5 s,
# naming them, with nothing of the job left.
# Uses a healthy cluster that is up (left up), else builds its own.
#   agent.sh FMPLRUN WORKDIR PROGRAM...   (PROGRAM: path, args after a comma;
#   a leading "2:" runs it at 2 x 2 only: api_am's case (d) shares a page
#   between ranks of one host, which 2 x 1 does not have)
# Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
FMPLRUN=$1 WORK=$2
shift 2
. "$(dirname "$0")/cluster_begin.sh"
trap cluster_end EXIT
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
export FMPL_AGENT=thread FMPL_ERRORS_QUIET=1 FMPL_HEAP_SIZE=256m

pass=0 fails=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; for f in out err; do [ -s "$f" ] && { echo "--- $f:"; tail -c 2000 "$f"; }; done; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

for spec in "$@"; do
    pers=(1 2)
    case $spec in 2:*) pers=(2); spec=${spec#2:} ;; esac
    prog=${spec%%,*}
    args=()
    [ "$spec" != "$prog" ] && IFS=' ' read -r -a args <<<"${spec#*,}"
    for per in "${pers[@]}"; do
        what="${prog##*/} ${args[*]:-} at 2 hosts x $per, agent on"
        timeout 240 "$FMPLRUN" --bind none --hosts "fmpl-h1:$per,fmpl-h2:$per" \
            "$prog" "${args[@]}" >out 2>err </dev/null
        st=$?
        if [ $st = 0 ]; then ok "$what"; else bad "$what: status $st"; fi
    done
done

# A rank killed while the agents run (the first program, a long run of
# it): the job ends promptly, naming a killed rank (fmplrun's line, or the
# library's when a survivor's agent notices the lost peer first), and
# leaves nothing.
long=${1%%,*}
shm_list() { "$TC" exec "$1" sh -c 'ls /dev/shm | grep "^fmpl" || true'; }
for h in fmpl-h1 fmpl-h2; do shm_list "$h" >"shm.$h"; done
timeout 60 "$FMPLRUN" --bind none --hosts fmpl-h1:2,fmpl-h2:2 "$long" 1000000 >out 2>err </dev/null &
job=$!
sleep 2
"$TC" kill fmpl-h2 KILL >/dev/null
t1=$(now_ms)
wait $job
st=$?
ms=$(( $(now_ms) - t1 ))
if [ $st != 0 ] && [ $ms -lt 5000 ] &&
    grep -Eq '^fmplrun: rank [23] \(pid [0-9]+ on fmpl-h2\) killed by signal 9|record to rank [23] was lost' err; then
    ok "fmpl-h2's ranks killed with the agent on: the job ends, status $st ($ms ms)"
else
    bad "fmpl-h2's ranks killed with the agent on (status $st, $ms ms)"
fi
left=1
for _ in $(seq 40); do
    if [ "$("$TC" pids fmpl-h1 | grep -cF -- "$long")" = 0 ] &&
        [ "$("$TC" pids fmpl-h2 | grep -cF -- "$long")" = 0 ]; then left=0; break; fi
    sleep 0.1
done
if [ $left = 0 ]; then ok "no rank of ${long##*/} left on either host"; else bad "ranks of ${long##*/} left"; fi
new_files=$(for h in fmpl-h1 fmpl-h2; do shm_list "$h" | grep -vxFf "shm.$h"; done | tr '\n' ' ')
if [ -z "${new_files// /}" ]; then ok "no /dev/shm file of the job left"; else bad "/dev/shm files left: $new_files"; fi
echo "agent across hosts: $pass passed, $fails failed"
[ $fails = 0 ]
