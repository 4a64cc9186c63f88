#!/bin/sh
# fortran.mpifort: the build tree's mpifort (and its name mpif90) builds
# Fortran programs with `use mpi` and with mpif.h, and -show prints the
# command with libmpifort.
# usage: wrapper_test.sh TOOLS_DIR TESTS_SOURCE_DIR WORK_DIR
set -eu
# In sanitizer builds FMPL_TEST_PRELOAD names the ASan runtime, which
# programs built without the sanitizer need first to load FMPL's library.
fmpl() { LD_PRELOAD=${FMPL_TEST_PRELOAD:-} "$@"; }
tools=$1 src=$2 work=$3
mkdir -p "$work"
cd "$work"
"$tools/mpifort" -show -o x x.f90 | grep -q -- '-lmpifort -lmpi' ||
    { echo "mpifort -show does not link libmpifort"; exit 1; }
"$tools/mpifort" -o p2p_mpi "$src/p2p.F90"
"$tools/mpif90" -DFMPL_TEST_MPIF_H -o p2p_mpifh "$src/p2p.F90" 2>/dev/null
for prog in p2p_mpi p2p_mpifh; do
    fmpl "$tools/fmplrun/fmplrun" -n 2 --timeout 30 "./$prog"
done
echo "mpifort: ok"
