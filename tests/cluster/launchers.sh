#!/bin/bash
# tests/cluster/launchers.sh: FMPL programs, MPI and native, run unmodified
# on tools/testcluster's namespace hosts under the engines clusters run:
# srun --mpi=pmix (PMIx), mpiexec.hydra over ssh (PMI-1), Open MPI's mpirun
# over ssh (PMIx) and fmplrun --hosts (PMI-1 through its proxies).
#   - on one host (2 ranks on fmpl-h1): the first program runs;
#   - across the two hosts (2 x 2 ranks): every program runs and passes
#     under fmplrun, a core of them (CORE below) under the other three.
#     The programs are the suite's self-checking tests
#     (data checked byte for byte, non-zero exit on any error); each must
#     also print its "ok on 4 ranks" / "PASS ... (4 ranks)" line, so four
#     singletons (a launcher FMPL did not recognise) do not pass.
# Placement differs: srun, mpirun and fmplrun put ranks 0-1 on fmpl-h1 and
# 2-3 on fmpl-h2; Hydra's -hosts h1,h2 goes round robin (0,2 / 1,3), so
# neighbour pairs talk across the hosts.
# Uses a healthy cluster that is up (left up), else builds its own.
#   launchers.sh FMPLRUN PROGRAM...     (the first PROGRAM is mpi_basic)
# Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
FMPLRUN=$1; shift
PROGS=("$@")
. "$(dirname "$0")/cluster_begin.sh"
out=$(mktemp -d)   # this machine's /tmp: only the launchers' output goes there
trap 'rm -rf "$out"; cluster_end' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# What the programs' ctest entries set: quiet provoked errors (MPI tests),
# a heap for the native tests' 16 MiB buffers (tests/api/CMakeLists.txt).
export FMPL_ERRORS_QUIET=1 FMPL_HEAP_SIZE=256m
# Sanitizer builds: libpmix's own leaks are not FMPL's (tests/pmix/lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../pmix" && pwd)/lsan.supp:print_suppressions=0"

pass=0 fails=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; tail -c 1500 "$out/log"; }
have() { command -v "$1" >/dev/null 2>&1; }

# run_one NAME WHERE NRANKS CMD PROGRAM: one line, ok or not ok, with the time
run_one() {
    local name=$1 where=$2 n=$3 cmd=$4 prog=$5 t0 st ms
    t0=$(date +%s%N)
    timeout 90 $cmd "$prog" >"$out/log" 2>&1 </dev/null; st=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ $st = 0 ] && grep -Eq "ok on $n ranks|^PASS [a-z0-9_]+ \($n ranks\)" "$out/log"; then
        ok "$name: ${prog##*/} $where ($ms ms)"
    else bad "$name: ${prog##*/} $where (status $st$([ $st = 124 ] && echo ": timed out"), $ms ms)"; fi
}
# What a launcher changes is start-up only (the key exchange, host
# identities, placement); after it every program talks the same way.  So
# the other engines run a core of the programs (start-up, eager and
# rendezvous across the hosts, any-source, blocking and nonblocking
# collectives, the native API), and fmplrun, FMPL's own, runs them all:
# all of them under all four took 6 of CI's minutes.
CORE='/(mpi_basic|mpi_p2p_rndv|mpi_collectives|mpi_nbc|api_p2p_sizes|api_any_source)$'
# launch NAME ONE_HOST_CMD TWO_HOST_CMD [all]
launch() {
    local p
    run_one "$1" "on fmpl-h1 (2 ranks)" 2 "$2" "${PROGS[0]}"
    for p in "${PROGS[@]}"; do
        [ "${4:-core}" = all ] || [[ "$p" =~ $CORE ]] || continue
        run_one "$1" "across fmpl-h1 and fmpl-h2 (2 x 2 ranks)" 4 "$3" "$p"
    done
}

t_all=$SECONDS
if have srun; then
    launch "srun --mpi=pmix" "srun -Q --mpi=pmix -N1 -n2" "srun -Q --mpi=pmix -N2 -n4"
else skipped=$((skipped + 1)); echo "# srun not installed"; fi
if have mpiexec.hydra; then
    # From the machine, Hydra must be told which interface reaches the hosts
    # (this machine's name resolves to loopback).
    launch "mpiexec.hydra" "mpiexec.hydra -iface fmpl-br0 -hosts fmpl-h1 -n 2" \
           "mpiexec.hydra -iface fmpl-br0 -hosts fmpl-h1,fmpl-h2 -n 4"
else skipped=$((skipped + 1)); echo "# mpiexec.hydra not installed"; fi
if have mpirun.openmpi; then
    # mpirun forwards only what -x names.
    fwd="-x FMPL_ERRORS_QUIET -x FMPL_HEAP_SIZE -x LSAN_OPTIONS -x ASAN_OPTIONS -x UBSAN_OPTIONS"
    launch "Open MPI mpirun" "mpirun.openmpi $fwd -H fmpl-h1:2 -n 2" \
           "mpirun.openmpi $fwd -H fmpl-h1:2,fmpl-h2:2 -n 4"
else skipped=$((skipped + 1)); echo "# mpirun.openmpi not installed"; fi
launch "fmplrun --hosts" "$FMPLRUN --hosts fmpl-h1:2" "$FMPLRUN --hosts fmpl-h1:2,fmpl-h2:2" all

echo "launchers: $pass passed, $fails failed, $skipped launcher(s) not installed ($((SECONDS - t_all)) s)"
[ "$fails" = 0 ]
