#!/bin/sh
# Install what building and testing FMPL needs, on Debian or Ubuntu.
# As root it runs apt-get; otherwise it prints the one command to run.
# Optional: libpmix-dev (PMIx, so that jobs started by Open MPI's mpirun
# work; without it FMPL builds without PMIx support) and libfabric-dev (the
# network backend; without it all ranks must share a host).  As root they
# are installed with the rest; other users are only told about them.
# --builds: also clang, for `make builds` (tools/build-matrix.sh).
set -e
need=""
if [ "${1:-}" = --builds ]; then
    command -v clang >/dev/null 2>&1 || need="$need clang"
fi
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v ninja >/dev/null 2>&1 || need="$need ninja-build"
command -v make >/dev/null 2>&1 || need="$need make"
command -v strace >/dev/null 2>&1 || need="$need strace"
command -v python3 >/dev/null 2>&1 || need="$need python3"   # tests/abi
command -v gfortran >/dev/null 2>&1 || need="$need gfortran"  # the Fortran binding
optional=""
command -v pkg-config >/dev/null 2>&1 || optional="$optional pkg-config"
if ! pkg-config --exists pmix 2>/dev/null && ! dpkg -s libpmix-dev >/dev/null 2>&1; then
    optional="$optional libpmix-dev"
fi
# The network backend (libfabric; fi_info for checking providers by hand).
if ! pkg-config --exists libfabric 2>/dev/null && ! dpkg -s libfabric-dev >/dev/null 2>&1; then
    optional="$optional libfabric-dev libfabric-bin"
fi
[ -z "$need$optional" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "install-deps: installing$need$optional"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq $need $optional >/dev/null
elif [ -n "$need" ]; then
    echo "install-deps: missing$need (optional:${optional:- none}); run:"
    echo "  sudo apt-get install -y$need$optional"
    exit 1
else
    echo "install-deps: optional$optional missing (PMIx for Open MPI's mpirun and Slurm, libfabric for the network backend); to add it:"
    echo "  sudo apt-get install -y$optional"
fi
