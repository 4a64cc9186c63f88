#!/bin/sh
# The build-tree compiler wrappers and launcher names (tests/abi).
#   wrappers_test.sh mpicc|mpicxx|mpirun TOOLSDIR SRCDIR WORKDIR INCLUDEDIR LIBDIR
# TOOLSDIR holds mpicc, mpicxx, mpirun and mpiexec; SRCDIR is tests/abi.
# Exits 77 (skipped) for mpicxx when there is no C++ compiler.
set -eu
mode=$1 tools=$2 src=$3 work=$4 includedir=$5 libdir=$6
unset MPICC_CC MPICXX_CXX
fail() { echo "FAIL: $*"; exit 1; }
# Run a program that loads FMPL's library; in sanitizer builds FMPL_TEST_PRELOAD
# names the sanitizer runtime, which must come first in an uninstrumented
# program.
fmpl() { LD_PRELOAD=${FMPL_TEST_PRELOAD:-} "$@"; }
expect() {  # expect WHAT TEXT PATTERN: TEXT must match the shell pattern
    case $2 in $3) ;; *) fail "$1: got '$2', expected '$3'" ;; esac
}
refuse() {  # refuse WHAT TEXT PATTERN: TEXT must not match
    case $2 in $3) fail "$1: got '$2', which should not match '$3'" ;; esac
}
rm -rf "$work"
mkdir -p "$work"
cd "$work"
link_flags="-L$libdir -lmpi -Wl,-rpath,$libdir"

case $mode in
mpicc)
    w=$tools/mpicc
    expect "-show" "$("$w" -show -O2 prog.c -o prog)" "* -I$includedir -O2 prog.c -o prog $link_flags"
    for opt in -c -E -S -M -MM; do
        out=$("$w" -show $opt prog.c)
        expect "-show $opt" "$out" "* -I$includedir $opt prog.c"
        refuse "-show $opt (must not link)" "$out" "*-lmpi*"
    done
    expect "-compile-info" "$("$w" -compile-info)" "* -I$includedir"
    refuse "-compile-info" "$("$w" -compile-info)" "*-lmpi*"
    expect "-link-info" "$("$w" -link-info)" "* -I$includedir $link_flags"
    # MPICC_CC replaces the compiler, split into words.
    expect "MPICC_CC" "$(MPICC_CC='echo fake-cc --opt' "$w" -c a.c)" "fake-cc --opt -I$includedir -c a.c"
    # A real program: compile and link in one step, then separately; runs
    # without LD_LIBRARY_PATH (rpath), warnings are errors.
    "$w" -Wall -Wextra -Werror "$src/mpi_version_client.c" -o client
    fmpl ./client
    "$w" -Wall -Wextra -Werror -c "$src/mpi_version_client.c" -o client.o
    "$w" client.o -o client2
    fmpl ./client2
    # Arguments with spaces pass through intact.
    mkdir "dir with space"
    cp "$src/mpi_version_client.c" "dir with space/client program.c"
    "$w" "dir with space/client program.c" -o "dir with space/client program"
    fmpl "./dir with space/client program" >/dev/null
    # The binary uses FMPL's library.
    fmpl ./client | grep -q '^library: FMPL' || fail "client does not report FMPL's library"
    ;;
mpicxx)
    w=$tools/mpicxx
    compiler=$("$w" -compile-info | sed 's/ -I.*//')
    if ! $compiler --version >/dev/null 2>&1; then
        echo "SKIPPED: no C++ compiler ($compiler)"
        exit 77
    fi
    expect "-show" "$("$w" -show prog.cpp)" "* -I$includedir prog.cpp $link_flags"
    expect "MPICXX_CXX" "$(MPICXX_CXX='echo fake-cxx' "$w" -c a.cpp)" "fake-cxx -I$includedir -c a.cpp"
    "$w" -std=c++11 -Wall -Wextra -Werror -pedantic "$src/mpi_version_client.cpp" -o client_cxx
    fmpl ./client_cxx
    fmpl ./client_cxx | grep -q 'FMPL' || fail "C++ client does not report FMPL's library"
    # mpi.h in a C++17 translation unit too.
    "$w" -std=c++17 -Wall -Wextra -Werror -c "$src/mpi_version_client.cpp" -o client17.o
    ;;
mpirun)
    "$tools/mpicc" "$src/mpi_version_client.c" -o client
    for launcher in mpirun mpiexec; do
        [ -x "$tools/$launcher" ] || fail "$tools/$launcher is missing"
        out=$(fmpl "$tools/$launcher" -n 2 ./client)
        n=$(printf '%s\n' "$out" | grep -c '^library: FMPL' || true)
        [ "$n" = 2 ] || fail "$launcher -n 2: expected 2 ranks reporting, got: $out"
    done
    ;;
*)
    fail "unknown mode $mode"
    ;;
esac
echo "PASS: $mode"
