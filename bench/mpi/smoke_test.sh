#!/bin/sh
# The MPI suite built by FMPL's mpicc (as bench/compare builds it) runs every
# benchmark once at 2 ranks on tiny sizes; every result must be verified
# ("ok") or, for the functions FMPL does not implement yet, "unsupported" --
# never "error", and the program must exit 0.  No timings are checked.
#   smoke_test.sh TOOLSDIR FMPLRUN SRCDIR WORKDIR
set -eu
tools=$1 fmplrun=$2 src=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$tools/mpicc" -O2 -Wall -Wextra -Werror "$src"/*.c -o mpi-suite
# In sanitizer builds FMPL_TEST_PRELOAD names the sanitizer runtime, which
# must come first in the (uninstrumented) program.
LD_PRELOAD=${FMPL_TEST_PRELOAD:-} "$fmplrun" -n 2 --timeout 200 ./mpi-suite \
    --sizes 0,1,8,4K,64K --iters 5 --budget 0.001 --json results.json > out.txt 2>&1 ||
    { cat out.txt; fail "mpi-suite exited with status $?"; }
cat out.txt
grep -q '"type":"end","errors":0' results.json || fail "no clean end record in results.json"
if grep '"status":"error"' results.json; then fail "a benchmark failed"; fi
# Every benchmark of --list reported: rows that passed verification, or unsupported.
for b in $(LD_PRELOAD=${FMPL_TEST_PRELOAD:-} "$fmplrun" -n 1 ./mpi-suite --list | cut -d' ' -f1); do
    grep -q "\"bench\":\"$b\",.*\"status\":\"\(ok\|unsupported\)\"" results.json ||
        fail "benchmark $b has no verified or unsupported result"
done
# The point-to-point and blocking collectives are implemented: they must be verified.
for b in latency bw bibw msgrate barrier bcast reduce allreduce allgather alltoall gather scatter; do
    grep -q "\"bench\":\"$b\",.*\"status\":\"ok\"" results.json || fail "$b not verified"
done
echo "PASS"
