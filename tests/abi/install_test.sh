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
for f in include/mpi.h include/fmpl.h bin/mpicc bin/mpicxx bin/mpirun bin/mpiexec bin/fmplrun; do
    [ -e "$prefix/$f" ] || fail "$f was not installed"
done
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
cp "$src/mpi_version_client.c" cmake_consumer/client.c
gen=
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
# shellcheck disable=SC2086
"$cmake" -S cmake_consumer -B cmake_consumer/build $gen -DCMAKE_PREFIX_PATH="$prefix" \
    >cmake_consumer.log 2>&1 || { cat cmake_consumer.log; fail "find_package(FMPL)"; }
"$cmake" --build cmake_consumer/build >>cmake_consumer.log 2>&1 || { cat cmake_consumer.log; fail "FMPL::mpi build"; }
fmpl cmake_consumer/build/client_cmake | grep -q '^library: FMPL' || fail "FMPL::mpi program"

# DESTDIR staging: files under DESTDIR, paths inside them without it.
DESTDIR=$work/stage "$cmake" --install "$build" --prefix /opt/fmpl-test >stage.log 2>&1 ||
    { cat stage.log; fail "DESTDIR install"; }
grep -q "^libdir='/opt/fmpl-test/" "$work/stage/opt/fmpl-test/bin/mpicc" ||
    fail "DESTDIR leaked into the staged mpicc"
[ -L "$work/stage/opt/fmpl-test/bin/mpiexec" ] || fail "staged mpiexec link missing"
echo "PASS: install to $prefix"
