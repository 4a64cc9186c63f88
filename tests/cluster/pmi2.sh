#!/bin/bash
# tests/cluster/pmi2.sh: FMPL programs started by Slurm's srun --mpi=pmi2
# (the PMI-2 bootstrap, src/bootstrap/pmi2.c) on tools/testcluster's hosts:
#   - mpi_basic and mpi_collectives on one host (1 x 2) and across the two
#     hosts (2 x 2), each checking itself and printing its "ok" line;
#   - a rank that aborts ends the whole job promptly with a non-zero status
#     and its message on stderr: lt_fail abort (bootstrap abort with code 7,
#     while the other ranks block, some ignoring SIGTERM) and pmix_abort
#     (fmpl_abort, the runtime's path that MPI_Abort takes too, after the
#     ranks have exchanged messages; the others wait in a barrier).
# Uses a healthy cluster that is up (left up), else builds its own.
#   pmi2.sh MPI_BASIC MPI_COLLECTIVES LT_FAIL ABORT_PROGRAM WORKDIR
# WORKDIR must be visible to the hosts (the build tree is; /tmp is not).
# Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
BASIC=$1 COLL=$2 FAIL=$3 ABORT=$4 WORK=$5
. "$(dirname "$0")/cluster_begin.sh"
command -v srun >/dev/null 2>&1 || { echo "SKIP: srun not installed"; cluster_end; exit 77; }
srun --mpi=list 2>&1 | grep -qw pmi2 || { echo "SKIP: Slurm has no pmi2 plugin"; cluster_end; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK"
trap 'cluster_end' EXIT

pass=0 fails=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; head -c 1500 "$WORK/log"; }

# run SECONDS SRUN_ARGS...: sets st (exit status) and ms (elapsed).
run() {
    local limit=$1 t0
    shift
    t0=$(date +%s%N)
    timeout "$limit" srun -Q --mpi=pmi2 "$@" >"$WORK/log" 2>&1 </dev/null; st=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}

# expect_ok NAME LAYOUT N_RANKS OK_PATTERN SRUN_ARGS...
expect_ok() {
    local name=$1 layout=$2 n=$3 pattern=$4
    shift 4
    run 120 "$@"
    if [ $st = 0 ] && grep -q "$pattern" "$WORK/log"; then
        ok "$name: $layout, $n ranks ($ms ms)"
    else bad "$name: $layout, $n ranks (status $st, $ms ms)"; fi
}

# The bootstrap is PMI-2, not PMI-1 (Slurm's plugin serves both): the
# runtime's info line names the launcher.
run 60 -N1 -n2 env FMPL_VERBOSE=1 "$BASIC"
if [ $st = 0 ] && grep -q 'launcher pmi2' "$WORK/log"; then ok "srun --mpi=pmi2 picks the PMI-2 client"
else bad "srun --mpi=pmi2 picks the PMI-2 client (status $st)"; fi

expect_ok mpi_basic "1 x 2 on fmpl-h1" 2 '^mpi hello ok on 2 ranks' -N1 -n2 "$BASIC"
expect_ok mpi_basic "2 x 2 across fmpl-h1 and fmpl-h2" 4 '^mpi hello ok on 4 ranks' -N2 -n4 "$BASIC"
expect_ok mpi_collectives "1 x 2 on fmpl-h1" 2 '^mpi collectives ok on 2 ranks' -N1 -n2 "$COLL"
expect_ok mpi_collectives "2 x 2 across fmpl-h1 and fmpl-h2" 4 '^mpi collectives ok on 4 ranks' -N2 -n4 "$COLL"

# Rank 1 aborts; the others wait in a PMI fence or in pause() ignoring
# SIGTERM, so only the server's kill of the whole step ends them.
for layout in "-N1 -n2" "-N2 -n4"; do
    run 60 $layout "$FAIL" abort 1 "$WORK"
    if [ $st != 0 ] && [ $st != 124 ] && [ $ms -lt 30000 ] &&
       grep -q 'fmpl\[1\] abort: lt_fail: deliberate abort' "$WORK/log"; then
        ok "abort ($layout): job ended with status $st in $ms ms, message shown"
    else bad "abort ($layout): status $st after $ms ms (124: still running at the timeout)"; fi
    rm -f "$WORK"/pid.* "$WORK"/jobid
done

run 60 -N2 -n4 "$ABORT"
if [ $st != 0 ] && [ $st != 124 ] && [ $ms -lt 30000 ] &&
   [ "$(grep -c '^pmix_abort: rank [0-3] of 4 .* ready$' "$WORK/log")" = 4 ] &&
   grep -q 'fmpl\[3\] abort: pmix_abort: deliberate abort' "$WORK/log"; then
    ok "fmpl_abort after start-up (-N2 -n4): job ended with status $st in $ms ms, message shown"
else bad "fmpl_abort after start-up (-N2 -n4): status $st after $ms ms"; fi

echo "pmi2: $pass passed, $fails failed"
[ "$fails" = 0 ]
