#!/bin/sh
# fortran.mpich_binary: Fortran programs built by MPICH's mpif90 (its `use
# mpi` module and its mpif.h, linked against libmpichfort.so.12 and
# libmpich.so.12) run on FMPL's libraries of those names, with lazy and with
# immediate binding (LD_BIND_NOW=1: every symbol must resolve at start).
# comm.F90 reads MPI_TAG_UB with MPI_COMM_GET_ATTR; coll.F90 passes
# MPI_IN_PLACE through MPICH's common blocks; mpich_f08.f90 and
# f08_sections.f90 (array sections in blocking, nonblocking, persistent and
# one-sided calls) are built with MPICH's mpi_f08 module, mpich_sizeof.F90
# with its `use mpi` and its `use mpi_f08` (MPI_Sizeof's specifics are
# procedures of MPICH's Fortran library).  Last, every symbol MPICH's
# libmpichfort.so.12 exports that a program can refer to must be exported
# by FMPL's libmpichfort.so.12 or the libmpi.so.12 it loads.
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
mpif90.mpich -I"$src" -o f08_sections "$src/f08_sections.f90"
mpif90.mpich -I"$src" -o sizeof_mpi "$src/mpich_sizeof.F90"
mpif90.mpich -I"$src" -DFMPL_TEST_F08 -o sizeof_f08 "$src/mpich_sizeof.F90"
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
for prog in comm_mpi coll_mpi coll_mpifh sizeof_mpi sizeof_f08; do
    fmpl "$tools/fmplrun/fmplrun" -n 2 --timeout 30 "./$prog"
    LD_BIND_NOW=1 fmpl "$tools/fmplrun/fmplrun" -n 2 --timeout 30 "./$prog"
done
for n in 1 2 4; do
    for prog in mpich_f08 f08_sections; do
        fmpl "$tools/fmplrun/fmplrun" -n $n --timeout 60 "./$prog"
        LD_BIND_NOW=1 fmpl "$tools/fmplrun/fmplrun" -n $n --timeout 60 "./$prog"
    done
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
# Every symbol of MPICH's own libmpichfort.so.12, but MPICH's internals that
# no header or module of MPICH lets a program name: MPIR_*/MPII_*, its
# Fortran start-up hooks mpirinit*, its modules mpi_c_interface* (between
# its wrappers and its C library) and the C globals MPI_F_ARGV(S)_NULL and
# MPI_F_ERRCODES_IGNORE.
mlibdir=$(mpif90.mpich -show | tr ' ' '\n' | sed -n 's/^-L//p' | head -n 1)
if [ -f "$mlibdir/libmpichfort.so.12" ]; then
    internal='^(MPIR_|MPII_|mpirinit|__mpi_c_interface[a-z_]*_MOD_)'
    internal="$internal|^(MPI_F_ARGVS?_NULL|MPI_F_ERRCODES_IGNORE)\$"
    nm -D --defined-only "$mlibdir/libmpichfort.so.12" | awk '{ print $3 }' |
        grep -Ev "$internal" | sort -u > mpich_exported
    libmpi=$(ldd "$libdir/libmpichfort.so.12" | awk '$1 == "libmpi.so.12" { print $3 }')
    nm -D --defined-only "$libdir/libmpichfort.so.12" "$libmpi" | awk 'NF == 3 { print $3 }' |
        sort -u > fmpl_exported
    [ "$(wc -l < mpich_exported)" -gt 4000 ] ||
        { echo "read too few symbols from $mlibdir/libmpichfort.so.12"; exit 1; }
    missing=$(comm -23 mpich_exported fmpl_exported)
    [ -z "$missing" ] ||
        { echo "exported by MPICH's libmpichfort.so.12, not by FMPL's:" $missing; exit 1; }
else
    echo "no $mlibdir/libmpichfort.so.12: symbol lists not compared"
fi
echo "MPICH-built Fortran programs: ok"
