#!/bin/sh
# ABI test: a program compiled by Debian's mpicc.mpich, linked against
# libmpich.so.12, runs on FMPL's library (LD_LIBRARY_PATH) under fmplrun or
# mpiexec.hydra.  Usage: abi_run.sh SOURCE FMPL_LIBDIR FMPLRUN LAUNCHER RANKS
src=$1 libdir=$2 fmplrun=$3 launcher=$4 n=$5
command -v mpicc.mpich >/dev/null 2>&1 || { echo "mpicc.mpich not installed: skipped"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mpicc.mpich -O2 "$src" -o "$tmp/prog" || exit 1
# The loader must pick FMPL's libmpich.so.12, not MPICH's.
LD_LIBRARY_PATH=$libdir ldd "$tmp/prog" | grep -q "$libdir/libmpich.so.12" || {
    echo "the program does not resolve libmpich.so.12 to FMPL's"; exit 1; }
case $launcher in
fmplrun) LD_LIBRARY_PATH=$libdir "$fmplrun" -n "$n" --timeout 60 "$tmp/prog" ;;
hydra)
    command -v mpiexec.hydra >/dev/null 2>&1 || { echo "mpiexec.hydra missing: skipped"; exit 77; }
    LD_LIBRARY_PATH=$libdir timeout 60 mpiexec.hydra -n "$n" "$tmp/prog" ;;
esac
