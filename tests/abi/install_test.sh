#!/bin/sh
# `cmake --install` of the build tree, then the installed wrappers, launcher
# names, pkg-config file and CMake package, each used to build and run a
# program (tests/abi).
#   install_test.sh BUILDDIR SRCDIR WORKDIR CMAKE
set -eu
build=$1 src=$2 work=$3 cmake=$4
unset MPICC_CC MPICXX_CXX
fail() { echo "FAIL: $*"; exit 1; }
# Run a program that loads FMPL's library; in sanitizer builds FMPL_TEST_PRELOAD
# names the sanitizer runtime, which must come first in an uninstrumented
# program.
fmpl() { LD_PRELOAD=${FMPL_TEST_PRELOAD:-} "$@"; }
rm -rf "$work"
mkdir -p "$work"
cd "$work"

prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >install.log 2>&1 || { cat install.log; fail "install"; }
libdir=$(dirname "$(find "$prefix" -name libmpi.so.12 | head -n 1)")
[ -n "$libdir" ] && [ "$libdir" != . ] || fail "libmpi.so.12 was not installed"
for f in include/mpi.h include/fmpl.h bin/mpicc bin/mpicxx bin/mpirun bin/mpiexec bin/fmplrun \
         bin/fmpl_info bin/fmpl-bench bin/mpi-suite \
         share/man/man1/fmplrun.1 share/man/man1/mpirun.1 share/man/man1/mpiexec.1 \
         share/man/man1/mpicc.1 share/man/man1/mpicxx.1 share/man/man1/fmpl_info.1 \
         share/doc/fmpl/README.md share/doc/fmpl/architecture.md share/doc/fmpl/examples/pingpong.c; do
    [ -e "$prefix/$f" ] || fail "$f was not installed"
done
# The man pages are the tools' --help texts.
grep -q '^\.SH OPTIONS' "$prefix/share/man/man1/fmplrun.1" || fail "fmplrun.1 has no OPTIONS section"
grep -q 'tag\\-output' "$prefix/share/man/man1/fmplrun.1" || fail "fmplrun.1 lacks --tag-output"
grep -q '^\.so man1/fmplrun.1' "$prefix/share/man/man1/mpirun.1" || fail "mpirun.1 is not fmplrun.1"
grep -q 'compile\\-info' "$prefix/share/man/man1/mpicc.1" || fail "mpicc.1 lacks -compile-info"
# fmpl_info runs from the installation and tells its version.
fmpl "$prefix/bin/fmpl_info" --version >version.txt 2>&1 || { cat version.txt; fail "fmpl_info --version"; }
grep -q "^FMPL Version: *$(sed -n 's/^#define FMPL_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/fmpl.h")\$" version.txt ||
    { cat version.txt; fail "fmpl_info --version does not print fmpl.h's version"; }
fmpl "$prefix/bin/fmpl_info" -t | grep -q FMPL_HEAP_SIZE || fail "fmpl_info -t lists no tunables"
if fmpl "$prefix/bin/fmpl_info" --bogus >/dev/null 2>&1; then fail "fmpl_info accepted --bogus"; fi
for f in libmpich.so.12 libmpich.so libmpi.so libfmpl.so pkgconfig/fmpl.pc \
         cmake/FMPL/FMPLConfig.cmake cmake/FMPL/FMPLConfigVersion.cmake cmake/FMPL/FMPLTargets.cmake; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f was not installed"
done
[ "$(readlink "$libdir/libmpich.so.12")" = libmpi.so.12 ] || fail "libmpich.so.12 is not a link to libmpi.so.12"
[ "$(readlink "$prefix/bin/mpirun")" = fmplrun ] || fail "mpirun is not a link to fmplrun"

# The installed wrapper points into the installation, not the build tree.
shown=$("$prefix/bin/mpicc" -show client.c)
case $shown in
    *"-I$prefix/include client.c -L$libdir -lmpi -Wl,-rpath,$libdir") ;;
    *) fail "installed mpicc -show: $shown" ;;
esac
"$prefix/bin/mpicc" -Wall -Werror "$src/mpi_version_client.c" -o client_mpicc
fmpl "$prefix/bin/mpirun" -n 1 ./client_mpicc | grep -q '^library: FMPL' || fail "installed mpicc + mpirun"

# Every example, as a user builds it from the installed docs: the installed
# mpicc, then the installed mpirun at 2 ranks (each example checks its results).
for ex in "$prefix"/share/doc/fmpl/examples/*.c; do
    name=$(basename "$ex" .c)
    "$prefix/bin/mpicc" -Wall -o "example_$name" "$ex" -lm || fail "installed mpicc: $ex"
    fmpl "$prefix/bin/mpirun" -n 2 --timeout 60 "./example_$name" >"example_$name.out" 2>&1 ||
        { cat "example_$name.out"; fail "example $name at 2 ranks"; }
done
[ -x example_pingpong ] || fail "no example was installed"

# pkg-config
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs fmpl)
    # shellcheck disable=SC2086
    ${CC:-cc} -o client_pc "$src/mpi_version_client.c" $flags -Wl,-rpath,"$libdir"
    fmpl ./client_pc | grep -q '^library: FMPL' || fail "pkg-config build"
else
    echo "(pkg-config not installed: its check is skipped)"
fi

# find_package(FMPL) and FMPL::mpi
mkdir cmake_consumer
cat >cmake_consumer/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(FMPL 0.1 REQUIRED)
add_executable(client_cmake client.c)
target_link_libraries(client_cmake PRIVATE FMPL::mpi)
CMAKE
# The native API, statically (its PMIx dependency comes along); not in
# sanitizer builds, whose archive needs the sanitizer runtime at link time.
if [ -z "${FMPL_TEST_PRELOAD:-}" ]; then
    cat >>cmake_consumer/CMakeLists.txt <<'CMAKE'
add_executable(native_static native.c)
target_link_libraries(native_static PRIVATE FMPL::fmpl_static)
CMAKE
fi
cp "$src/../../examples/pingpong.c" cmake_consumer/native.c
cp "$src/mpi_version_client.c" cmake_consumer/client.c
gen=
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
# shellcheck disable=SC2086
"$cmake" -S cmake_consumer -B cmake_consumer/build $gen -DCMAKE_PREFIX_PATH="$prefix" \
    >cmake_consumer.log 2>&1 || { cat cmake_consumer.log; fail "find_package(FMPL)"; }
"$cmake" --build cmake_consumer/build >>cmake_consumer.log 2>&1 || { cat cmake_consumer.log; fail "FMPL::mpi build"; }
fmpl cmake_consumer/build/client_cmake | grep -q '^library: FMPL' || fail "FMPL::mpi program"
if [ -z "${FMPL_TEST_PRELOAD:-}" ]; then
    ! ldd cmake_consumer/build/native_static | grep -q 'libfmpl\.so' || fail "FMPL::fmpl_static linked libfmpl.so"
    fmpl "$prefix/bin/mpirun" -n 2 cmake_consumer/build/native_static | grep -q '^rank 1 got: hello' ||
        fail "FMPL::fmpl_static program"
fi

# Relocation: the whole tree moved (and reached through a symbolic link to
# the wrapper) still builds and runs programs; mpicc points into the new place.
moved=$work/moved/fmpl
mkdir -p "$work/moved"
cp -a "$prefix" "$moved"
rm -rf "$prefix"
ln -s "$moved/bin/mpicc" "$work/mpicc-link"
mlibdir=$moved/${libdir#"$prefix"/}
shown=$("$work/mpicc-link" -show client.c)
case $shown in
    *"-I$moved/include client.c -L$mlibdir -lmpi -Wl,-rpath,$mlibdir") ;;
    *) fail "moved mpicc (through a link) -show: $shown" ;;
esac
"$work/mpicc-link" -o client_moved "$src/mpi_version_client.c"
fmpl "$moved/bin/mpirun" -n 2 ./client_moved | grep -q '^library: FMPL' || fail "moved installation"
if command -v pkg-config >/dev/null 2>&1; then
    incdir=$(PKG_CONFIG_PATH=$mlibdir/pkgconfig pkg-config --cflags-only-I fmpl | sed 's/^-I//; s/ *$//')
    [ "$(cd "$incdir" 2>/dev/null && pwd -P)" = "$(cd "$moved/include" && pwd -P)" ] ||
        fail "moved fmpl.pc names $incdir"
fi

# DESTDIR staging: files under DESTDIR, paths inside them without it (the
# link targets are relative, the pkg-config file relative to itself).
DESTDIR=$work/stage "$cmake" --install "$build" --prefix /opt/fmpl-test >stage.log 2>&1 ||
    { cat stage.log; fail "DESTDIR install"; }
[ -x "$work/stage/opt/fmpl-test/bin/mpicc" ] || fail "staged mpicc missing"
[ -L "$work/stage/opt/fmpl-test/bin/mpiexec" ] || fail "staged mpiexec link missing"
! grep -rq "$work/stage" "$work/stage/opt/fmpl-test/bin/mpicc" "$work/stage/opt/fmpl-test/lib" 2>/dev/null ||
    fail "DESTDIR leaked into the staged files"
[ ! -e /opt/fmpl-test ] || fail "a DESTDIR install wrote to /opt/fmpl-test"
echo "PASS: install to $prefix, moved to $moved, staged in $work/stage"
