#!/bin/sh
# fortran.mpich_binary: Fortran programs built by MPICH's mpif90 (its `use
# mpi` module and its mpif.h, linked against libmpichfort.so.12 and
# libmpich.so.12) run on FMPL's libraries of those names, with lazy and with
# immediate binding (LD_BIND_NOW=1: every symbol must resolve at start).
# comm.F90 reads MPI_TAG_UB with MPI_COMM_GET_ATTR; coll.F90 passes
# MPI_IN_PLACE through MPICH's common blocks; mpich_f08.f90 is built with
# MPICH's mpi_f08 module.
# usage: mpich_binary_test.sh TOOLS_DIR FMPL_LIB_DIR TESTS_SOURCE_DIR WORK_DIR
set -eu
# In sanitizer builds FMPL_TEST_PRELOAD names the ASan runtime, which
# programs built without the sanitizer need first to load FMPL's library.
fmpl() { LD_PRELOAD=${FMPL_TEST_PRELOAD:-} "$@"; }
tools=$1 libdir=$2 src=$3 work=$4
command -v mpif90.mpich >/dev/null 2>&1 || { echo "no mpif90.mpich: skipped"; exit 77; }
mkdir -p "$work"
cd "$work"
mpif90.mpich -o comm_mpi "$src/comm.F90" 2>/dev/null
mpif90.mpich -o coll_mpi "$src/coll.F90" 2>/dev/null
mpif90.mpich -DFMPL_TEST_MPIF_H -fallow-argument-mismatch -o coll_mpifh "$src/coll.F90" 2>/dev/null
# MPICH's `use mpi_f08`: choice buffers reach mpi_<name>_f08ts_ as array
# descriptors, MPI_IN_PLACE and the other sentinels are MPICH's module data.
mpif90.mpich -I"$src" -o mpich_f08 "$src/mpich_f08.f90"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# MPICH's libraries must not be loaded at all (FMPL's libmpifort brings
# FMPL's libmpi.so.12; the program may not need libmpich.so.12 itself).
where=$(ldd ./comm_mpi | awk '$1 == "libmpichfort.so.12" { print $3 }')
[ "$(readlink -f "$where")" = "$(readlink -f "$libdir/libmpichfort.so.12")" ] ||
    { echo "libmpichfort.so.12 resolves to '$where', not FMPL's"; exit 1; }
for lib in $(ldd ./comm_mpi | awk '$1 ~ /^libmpi/ { print $3 }'); do
    [ "$(dirname "$(readlink -f "$lib")")" = "$(readlink -f "$libdir")" ] ||
        { echo "$lib is not FMPL's"; ldd ./comm_mpi; exit 1; }
done
for prog in comm_mpi coll_mpi coll_mpifh; do
    fmpl "$tools/fmplrun/fmplrun" -n 2 --timeout 30 "./$prog"
    LD_BIND_NOW=1 fmpl "$tools/fmplrun/fmplrun" -n 2 --timeout 30 "./$prog"
done
for n in 1 2 4; do
    fmpl "$tools/fmplrun/fmplrun" -n $n --timeout 60 ./mpich_f08
    LD_BIND_NOW=1 fmpl "$tools/fmplrun/fmplrun" -n $n --timeout 60 ./mpich_f08
done
# Every external procedure MPICH's mpi_f08 module (and pmpi_f08 within it)
# declares is exported by FMPL's libmpichfort.so.12 under gfortran's name.
incdir=$(mpif90.mpich -show | tr ' ' '\n' | sed -n 's/^-I//p' | head -n 1)
zcat "$incdir/mpi_f08.mod" | tr '\n' ' ' |
    grep -oE "[0-9]+ '[a-z0-9_]+' 'p?mpi_f08' '' [0-9]+ \(\(PROCEDURE [^)]*EXTERNAL[^)]*\)" |
    cut -d"'" -f2 | sed 's/$/_/' | sort -u > module_entries
nm -D --defined-only "$libdir/libmpichfort.so.12" | awk '{ print $3 }' | sort -u > exported
[ "$(wc -l < module_entries)" -gt 500 ] || { echo "read no entries from $incdir/mpi_f08.mod"; exit 1; }
missing=$(comm -23 module_entries exported)
[ -z "$missing" ] || { echo "not exported:" $missing; exit 1; }
echo "MPICH-built Fortran programs: ok"
