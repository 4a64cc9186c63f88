#!/bin/bash
# Dynamic processes under a PMIx server that does not serve them: Slurm's
# srun --mpi=pmix answers PMIx_Publish/Lookup/Spawn with NOT-SUPPORTED, so
# the MPI calls must fail at once with MPI_ERR_UNSUPPORTED_OPERATION
# (src/bootstrap/pmix_dynamic.c), not wait.  Under mpirun they work
# (tests/pmix: pmix.mpi_*).
#   pmix_dynamic.sh MPI_NAME_SERVICE
# Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
PROG=$1
. "$(dirname "$0")/cluster_begin.sh"
trap 'cluster_end' EXIT
command -v srun >/dev/null 2>&1 || { echo "SKIP: srun not installed"; exit 77; }
export FMPL_ERRORS_QUIET=1
# Sanitizer builds: libpmix's own leaks are not FMPL's (tests/pmix/lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../pmix" && pwd)/lsan.supp:print_suppressions=0"
out=$(timeout 60 srun -Q --mpi=pmix -N1 -n2 "$PROG" --unsupported 2>&1 </dev/null)
st=$?
echo "$out"
[ "$st" = 0 ] || { echo "FAIL: srun exited with $st"; exit 1; }
grep -qx "name service refused as expected" <<<"$out" || { echo "FAIL: no refusal line"; exit 1; }
echo "PASS"
