#!/bin/sh
# packaging/debian/test-deb.sh: install FMPL's Debian packages on this
# machine, use them, remove them (as root).
#
#   packaging/debian/test-deb.sh [--no-select] [DEBDIR]
#   packaging/debian/test-deb.sh --chroot [DEBDIR]
#
# DEBDIR (default build-deb/) holds the three packages from `make deb`.
# --chroot: the same test in a fresh Debian chroot (debootstrap --variant=
# minbase of this machine's release, from the mirror its apt uses, or
# FMPL_DEB_MIRROR), in a private mount namespace, with no other MPI: the
# "fresh machine" case (dependencies come with apt-get -f install).  Needs
# the network; takes a few minutes.  Without it the test runs on this machine.
#  1. dpkg -i libfmpl0, libfmpl-dev, fmpl-bin (apt-get -f install when a
#     dependency is missing); beside Debian's MPICH and Open MPI when those
#     are installed, which dpkg would refuse on a file conflict;
#  2. the alternatives mpi, mpi-<triplet>, mpirun list FMPL at priority 30,
#     below every other choice, and their selection has not changed;
#  3. builds examples/pingpong.c with `pkg-config --cflags --libs fmpl`,
#     examples/collectives.c and an MPI program with mpicc.fmpl, a CMake
#     project with find_package(FMPL), and runs them at 2 ranks with
#     mpirun.fmpl / fmplrun, checking their output;
#  4. (not with --no-select) selects FMPL in the three groups, builds and
#     runs the MPI program with the plain names mpicc, mpirun and
#     `pkg-config mpi`, and restores the previous selection;
#  5. dpkg --purge the three packages and checks that no file, directory or
#     alternative of FMPL is left.
# Exits non-zero on any failure; the packages are purged and the
# alternatives restored on failure too.  It refuses to run when FMPL
# packages are installed already (it would remove them).
set -eu

select=yes
chroot=no
case ${1:-} in
    --no-select) select=no; shift ;;
    --chroot) chroot=yes; shift ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
debdir=${1:-$root/build-deb}
pkgs="libfmpl0 libfmpl-dev fmpl-bin"
PRIO=30

say() { echo "test-deb: $*"; }
fail() { echo "test-deb: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (it installs packages)"
debs=
for p in $pkgs; do
    set -- "$debdir"/${p}_*.deb
    [ $# = 1 ] && [ -f "$1" ] || fail "want exactly one $debdir/${p}_*.deb (make deb)"
    debs="$debs $1"
done

if [ $chroot = yes ]; then
    # debootstrap a chroot, copy this script, examples/ and the packages in,
    # run the test there.  The mounts (proc, dev, a fresh /dev/shm) are made
    # in a private mount namespace: they go when it ends, whatever happens.
    if ! command -v debootstrap > /dev/null; then
        say "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 debootstrap > /dev/null ||
            fail "debootstrap does not install"
    fi
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    mirror=${FMPL_DEB_MIRROR:-$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}')}
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
    dir=$(mktemp -d /var/tmp/fmpl-deb-chroot.XXXXXX)
    trap 'rm -rf --one-file-system "$dir"' EXIT
    trap 'exit 130' INT TERM HUP
    say "debootstrap --variant=minbase $suite $dir $mirror"
    unshare --mount --propagation private \
        debootstrap --variant=minbase "$suite" "$dir" "$mirror" > "$dir.log" 2>&1 ||
        { tail -20 "$dir.log" >&2; rm -f "$dir.log"; fail "debootstrap failed"; }
    rm -f "$dir.log"
    mkdir -p "$dir/tmp/fmpl/packaging/debian" "$dir/tmp/fmpl/examples" "$dir/tmp/fmpl/debs"
    cp "$here/test-deb.sh" "$dir/tmp/fmpl/packaging/debian/"
    cp "$root"/examples/*.c "$dir/tmp/fmpl/examples/"
    # shellcheck disable=SC2086
    cp $debs "$dir/tmp/fmpl/debs/"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    say "running the test in the chroot"
    unshare --mount --propagation private sh -ec '
        d=$1
        mount -t proc proc "$d/proc"
        mount --rbind /dev "$d/dev"
        mount -t tmpfs -o mode=1777,nosuid,nodev shm "$d/dev/shm"
        chroot "$d" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
            DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
            sh -ec "apt-get update -qq && /tmp/fmpl/packaging/debian/test-deb.sh /tmp/fmpl/debs"
    ' sh "$dir"
    exit $?
fi
for p in $pkgs; do
    if dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$'; then
        fail "$p is installed already; remove it first (dpkg --purge $pkgs)"
    fi
done

# The multiarch triplet the packages were built for: their private directory
MA=$(dpkg-deb -c "$(echo $debs | cut -d' ' -f1)" | sed -n 's|.* \./usr/lib/\([^/]*\)/fmpl/$|\1|p' | head -1)
[ -n "$MA" ] || fail "no /usr/lib/<triplet>/fmpl/ in libfmpl0"
PREFIX=/usr/lib/$MA/fmpl
groups="mpi mpi-$MA mpirun"
# FMPL's choice in each group
choice() {
    case $1 in
        mpi) echo /usr/bin/mpicc.fmpl ;;
        mpirun) echo /usr/bin/mpirun.fmpl ;;
        *) echo "$PREFIX/include" ;;
    esac
}
work=$(mktemp -d /tmp/fmpl-test-deb.XXXXXX)
installed=no

# dpkg and apt-get, waiting while another dpkg holds the lock (shared machine)
dpkg_wait() {
    i=0
    while :; do
        if "$@" > "$work/dpkg.out" 2>&1; then cat "$work/dpkg.out"; return 0; fi
        if grep -qi 'frontend lock\|database is locked\|could not get lock' "$work/dpkg.out" && [ $i -lt 120 ]; then
            i=$((i + 1)); sleep 5; continue
        fi
        cat "$work/dpkg.out"; return 1
    done
}

# Selection of a group: "auto VALUE" / "manual VALUE" / "none"
selection() {
    update-alternatives --query "$1" > "$work/q" 2>/dev/null || { echo none; return; }
    printf '%s %s\n' "$(sed -n 's/^Status: //p' "$work/q")" "$(sed -n 's/^Value: //p' "$work/q")"
}
restore() {   # restore GROUP SAVED-SELECTION
    case $2 in
        none) ;;
        auto*) update-alternatives --quiet --auto "$1" ;;
        manual*) update-alternatives --quiet --set "$1" "${2#manual }" ;;
    esac
}
for g in $groups; do
    selection "$g" > "$work/before.$g"
done

cleanup() {
    rc=$?
    set +e
    for g in $groups; do
        if [ "$(selection "$g")" != "$(cat "$work/before.$g")" ] && [ $installed = yes ]; then
            restore "$g" "$(cat "$work/before.$g")"
        fi
    done
    if [ $installed = yes ]; then
        say "cleanup: purging $pkgs"
        dpkg_wait dpkg --purge $pkgs > /dev/null || echo "test-deb: cleanup: dpkg --purge failed" >&2
    fi
    rm -rf "$work"
    if [ $rc = 0 ]; then say PASS; else echo "test-deb: FAILED (exit $rc)" >&2; fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

say "MPI packages present: $(dpkg-query -W -f='${Package} ${Status}\n' mpich libmpich-dev openmpi-bin libopenmpi-dev 2>/dev/null |
    sed -n 's/ install ok installed$//p' | tr '\n' ' ')"
for g in $groups; do say "before: $g: $(cat "$work/before.$g")"; done

# --- 1. install
say "dpkg -i$debs"
installed=yes
if ! dpkg_wait dpkg -i $debs; then
    say "dpkg -i failed; trying apt-get -f install for missing dependencies"
    dpkg_wait env DEBIAN_FRONTEND=noninteractive apt-get -f install -y -o DPkg::Lock::Timeout=600 ||
        fail "the packages do not install"
fi
for p in $pkgs; do
    dpkg-query -W -f='${Status}\n' "$p" | grep -q '^install ok installed$' || fail "$p is not installed"
done
say "installed: $(dpkg-query -W -f='${Package} ${Version}, ' $pkgs)"
for g in $groups; do
    selection "$g" > "$work/installed.$g"
done

# --- 2. alternatives
for g in $groups; do
    update-alternatives --query "$g" > "$work/q.$g" || fail "no alternative group $g"
    c=$(choice "$g")
    prio=$(awk -v c="$c" '/^Alternative: /{a=$2} /^Priority: /{if (a==c) print $2}' "$work/q.$g")
    [ "$prio" = $PRIO ] || fail "$g: FMPL's $c has priority '$prio', want $PRIO"
    others=$(awk -v c="$c" '/^Alternative: /{a=$2} /^Priority: /{if (a!=c) print $2}' "$work/q.$g" | tr '\n' ' ')
    for p in $others; do
        [ "$p" -gt $PRIO ] || fail "$g: another choice has priority $p, not above FMPL's $PRIO"
    done
    now=$(selection "$g")
    if [ "$(cat "$work/before.$g")" = none ]; then
        say "$g: FMPL $c at $PRIO, the only choice: $now"
    else
        [ "$now" = "$(cat "$work/before.$g")" ] || fail "$g: selection changed to '$now'"
        say "$g: FMPL $c at $PRIO (others: $others); selection unchanged: $now"
    fi
done

# Manual pages (when the build installed them) are slaves of the groups.
man=/usr/share/man/man1
for spec in mpi:mpicc.1.gz:mpicc.fmpl.1.gz mpi:mpicxx.1.gz:mpicxx.fmpl.1.gz \
            mpirun:mpirun.1.gz:mpirun.fmpl.1.gz mpirun:mpirun.1.gz:fmplrun.1.gz; do
    g=${spec%%:*} rest=${spec#*:}
    slave=${rest%%:*} page=${rest#*:}
    [ -e "$man/$page" ] || continue
    awk -v c="$(choice "$g")" '/^Alternative: /{a=$2} a==c' "$work/q.$g" | grep -q "^ $slave $man/" ||
        fail "$g: FMPL's $slave is not a slave though $man/$page is installed"
    say "$g: man page $slave -> $(awk -v c="$(choice "$g")" -v s="$slave" '/^Alternative: /{a=$2} a==c && $1==s {print $2}' "$work/q.$g")"
done

# --- 3. build and run with the installed files
cd "$work"
for f in /usr/bin/mpicc.fmpl /usr/bin/mpicxx.fmpl /usr/bin/mpirun.fmpl /usr/bin/mpiexec.fmpl \
         /usr/bin/fmplrun /usr/lib/$MA/pkgconfig/fmpl.pc "$PREFIX/include/mpi.h" "$PREFIX/include/fmpl.h"; do
    [ -e "$f" ] || fail "$f is missing"
done
if ! command -v pkg-config > /dev/null; then    # libfmpl-dev recommends it
    say "installing pkgconf"
    dpkg_wait env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 pkgconf ||
        fail "pkg-config is not installed and pkgconf does not install"
fi
v=$(pkg-config --modversion fmpl) || fail "pkg-config does not find fmpl"
say "pkg-config fmpl: $v: $(pkg-config --cflags --libs fmpl)"

cat > hello_mpi.c <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, sum = 0, len;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Get_library_version(version, &len);
    printf("hello from rank %d of %d, sum %d\n", rank, size, sum);
    if (rank == 0)
        printf("library: %.40s\n", version);
    MPI_Finalize();
    return sum != size * (size - 1) / 2;
}
EOF
# expect_run NAME PATTERN COUNT COMMAND...: run, want exit 0 and COUNT lines
# matching PATTERN in the output
expect_run() {
    name=$1 pattern=$2 count=$3; shift 3
    if ! timeout 120 "$@" > "$name.out" 2>&1; then
        cat "$name.out" >&2; fail "$name: '$*' failed"
    fi
    n=$(grep -c -- "$pattern" "$name.out" || true)
    if [ "$n" != "$count" ]; then
        cat "$name.out" >&2; fail "$name: want $count lines matching '$pattern', got $n"
    fi
    case $name in
        hello*) grep -q '^library: FMPL' "$name.out" || { cat "$name.out" >&2; fail "$name: not FMPL's MPI library"; } ;;
    esac
    sed "s/^/    /" "$name.out"
    say "$name: ok ($*)"
}
uses_fmpl_libmpi() {
    ldd "$1" | grep -q "libmpi.so.12 => $PREFIX/lib/libmpi.so.12" ||
        { ldd "$1" >&2; fail "$1 does not use $PREFIX/lib/libmpi.so.12"; }
}

# shellcheck disable=SC2046
cc -o pingpong "$root/examples/pingpong.c" $(pkg-config --cflags --libs fmpl) ||
    fail "pingpong.c does not build with pkg-config fmpl"
uses_fmpl_libmpi pingpong
expect_run pingpong '^rank 1 got: hello from rank 0 of 2$' 1 mpirun.fmpl -n 2 ./pingpong
grep -q '^sum of ranks = ' pingpong.out || fail "pingpong: no sum line"

mpicc.fmpl -o collectives "$root/examples/collectives.c" || fail "collectives.c does not build with mpicc.fmpl"
uses_fmpl_libmpi collectives
expect_run collectives ': ok$' 2 mpiexec.fmpl -n 2 ./collectives
if grep -q WRONG collectives.out; then fail "collectives: WRONG"; fi

mpicc.fmpl -o hello_mpi hello_mpi.c || fail "hello_mpi.c does not build with mpicc.fmpl"
uses_fmpl_libmpi hello_mpi
expect_run hello_mpi '^hello from rank [01] of 2, sum 1$' 2 fmplrun -n 2 ./hello_mpi

# A program that fails must make the launcher fail (the checks can fail).
cat > fails.c <<'EOF'
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    return rank == 1 ? 3 : 0;
}
EOF
mpicc.fmpl -o fails fails.c || fail "fails.c does not build"
if timeout 120 mpirun.fmpl -n 2 ./fails > fails.out 2>&1; then
    fail "mpirun.fmpl reported success for a rank exiting 3"
fi
say "a failing rank fails mpirun.fmpl: ok"

if command -v fmpl_info > /dev/null; then
    fmpl_info > fmpl_info.out 2>&1 || { cat fmpl_info.out >&2; fail "fmpl_info failed"; }
    say "fmpl_info: ok ($(head -1 fmpl_info.out))"
fi

if ! command -v cmake > /dev/null; then
    say "cmake is not installed: find_package(FMPL) not tried"
else
    mkdir -p cmk
    cat > cmk/CMakeLists.txt <<EOF
cmake_minimum_required(VERSION 3.16)
project(uses_fmpl C)
find_package(FMPL $v REQUIRED)
add_executable(pingpong_cmake "$root/examples/pingpong.c")
target_link_libraries(pingpong_cmake FMPL::fmpl)
add_executable(hello_cmake "$work/hello_mpi.c")
target_link_libraries(hello_cmake FMPL::mpi)
EOF
    { cmake -S cmk -B cmk/build && cmake --build cmk/build; } > cmake.out 2>&1 ||
        { cat cmake.out >&2; fail "find_package(FMPL) project does not build"; }
    expect_run pingpong_cmake '^rank 1 got: hello from rank 0 of 2$' 1 fmplrun -n 2 cmk/build/pingpong_cmake
    expect_run hello_cmake '^hello from rank [01] of 2, sum 1$' 2 fmplrun -n 2 cmk/build/hello_cmake
fi

# --- 4. select FMPL, use the plain names, restore
if [ $select = yes ]; then
    for g in $groups; do
        update-alternatives --quiet --set "$g" "$(choice "$g")"
    done
    [ "$(readlink -f /usr/bin/mpicc)" = "$PREFIX/bin/mpicc" ] || fail "mpicc is not FMPL's after --set"
    [ "$(readlink -f /usr/bin/mpirun)" = "$PREFIX/bin/fmplrun" ] || fail "mpirun is not FMPL's after --set"
    [ -e "/usr/include/$MA/mpi/mpi.h" ] && cmp -s "/usr/include/$MA/mpi/mpi.h" "$PREFIX/include/mpi.h" ||
        fail "/usr/include/$MA/mpi is not FMPL's include directory after --set"
    pkg-config --cflags mpi | grep -q -- "-I$PREFIX/include" || fail "pkg-config mpi is not FMPL's after --set"
    mpicc -o hello_plain hello_mpi.c || fail "mpicc (FMPL selected) does not build hello_mpi.c"
    uses_fmpl_libmpi hello_plain
    expect_run hello_plain '^hello from rank [01] of 2, sum 1$' 2 mpirun -n 2 ./hello_plain
    expect_run hello_mpiexec '^hello from rank [01] of 2, sum 1$' 2 mpiexec -n 2 ./hello_plain
    # shellcheck disable=SC2046
    cc -o hello_pc hello_mpi.c $(pkg-config --cflags --libs mpi) || fail "hello_mpi.c does not build with pkg-config mpi"
    expect_run hello_pc '^hello from rank [01] of 2, sum 1$' 2 mpirun -n 2 ./hello_pc
    # back to the selection right after installing (which, with another
    # MPI installed, step 2 found to be the one from before)
    for g in $groups; do
        restore "$g" "$(cat "$work/installed.$g")"
        now=$(selection "$g")
        [ "$now" = "$(cat "$work/installed.$g")" ] || fail "$g: not restored: '$now'"
        say "$g: restored: $now"
    done
fi

# --- 5. reinstall (the upgrade path of the maintainer scripts), remove,
# purge, check that nothing is left
cd /
say "dpkg -i again (reinstall over itself)"
dpkg_wait dpkg -i $debs > /dev/null || fail "reinstalling fails"
for g in $groups; do
    update-alternatives --query "$g" | grep -q "^Alternative: $(choice "$g")$" ||
        fail "$g: FMPL not registered after reinstalling"
    [ "$(selection "$g")" = "$(cat "$work/before.$g")" ] || [ "$(cat "$work/before.$g")" = none ] ||
        fail "$g: selection changed by reinstalling: $(selection "$g")"
done
listed=$(dpkg -L $pkgs | sort -u)
say "dpkg -r $pkgs"
dpkg_wait dpkg -r $pkgs || fail "dpkg -r failed"
for g in $groups; do
    if update-alternatives --query "$g" 2>/dev/null | grep -q "^Alternative: $(choice "$g")$"; then
        fail "$g still lists FMPL after dpkg -r"
    fi
done
say "dpkg --purge $pkgs"
dpkg_wait dpkg --purge $pkgs || fail "dpkg --purge failed"
installed=no
for p in $pkgs; do
    if dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$'; then
        fail "$p still installed"
    fi
done
left=
for f in $listed; do
    # what still exists must belong to another package (/usr/bin, ...)
    [ "$f" != /. ] || continue
    if [ -e "$f" ] || [ -L "$f" ]; then
        dpkg-query -S "$f" > /dev/null 2>&1 || left="$left $f"
    fi
done
[ -z "$left" ] || fail "left after purge:$left"
[ ! -e "$PREFIX" ] || fail "$PREFIX is left after purge"
for g in $groups; do
    if update-alternatives --query "$g" 2>/dev/null | grep -q "^Alternative: $(choice "$g")$"; then
        fail "$g still lists FMPL after purge"
    fi
    now=$(selection "$g")
    if [ "$(cat "$work/before.$g")" != none ]; then
        [ "$now" = "$(cat "$work/before.$g")" ] || fail "$g: selection after purge '$now', before '$(cat "$work/before.$g")'"
    else
        [ "$now" = none ] || fail "$g: left behind after purge: $now"
    fi
    say "after purge: $g: $now"
done
for l in /usr/bin/mpicc /usr/bin/mpirun; do
    if [ -e "$l" ] || [ -L "$l" ]; then
        case $(readlink -f "$l") in "$PREFIX"*|*fmpl*) fail "$l still leads to FMPL" ;; esac
    fi
done
say "nothing of FMPL is left"
