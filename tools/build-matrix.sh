#!/bin/sh
# Build FMPL in every configuration users build it in, warnings as errors:
# each CMake build type with gcc and with clang, LTO with both, and static
# libraries.  Build only (the tests run on the default and sanitizer builds,
# `make test`); the static build also links and runs one program with its
# mpicc, since that is where a static link breaks.
#   tools/build-matrix.sh [--only NAME[,NAME...]] [--except NAME[,NAME...]]
#                         [--dir DIR] [--list]
# Needs gcc and clang (tools/install-deps.sh --builds installs clang).
set -eu
cd "$(dirname "$0")/.."
dir=build-matrix
only=
except=
list=no
while [ $# -gt 0 ]; do
    case $1 in
        --only) only=$2; shift 2 ;;
        --except) except=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --list) list=yes; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-matrix: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
gen=
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
jobs=$(nproc)

# name  compiler  cmake arguments: every build type, LTO and static, per
# compiler.  The test suite (two thirds of a build) is compiled in the
# static builds of each compiler (at -O3, where gcc's warnings differ, and
# linked statically); the others build what is installed (make test
# compiles the suite again, RelWithDebInfo and Debug).
configs=$(for cc in gcc clang; do
    for type in Debug RelWithDebInfo MinSizeRel; do
        echo "$cc-$type $cc -DCMAKE_BUILD_TYPE=$type -DFMPL_TESTS=OFF"
    done
    echo "$cc-Release $cc -DCMAKE_BUILD_TYPE=Release -DFMPL_TESTS=OFF"
    echo "$cc-Release-LTO $cc -DCMAKE_BUILD_TYPE=Release -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON -DFMPL_TESTS=OFF"
    echo "$cc-Release-static $cc -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF"
done)
if [ "$list" = yes ]; then
    echo "$configs" | awk 'NF { print $1 }'
    exit 0
fi
failed=
ran=0
start=$(date +%s)
mkdir -p "$dir"
while read -r name cc args; do
    if [ -n "$only" ] && ! echo ",$only," | grep -q ",$name,"; then
        continue
    fi
    if [ -n "$except" ] && echo ",$except," | grep -q ",$name,"; then
        continue
    fi
    ran=$((ran + 1))
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "build-matrix: $name: $cc is not installed (tools/install-deps.sh --builds)" >&2
        failed="$failed $name"
        continue
    fi
    out=$dir/$name
    t0=$(date +%s)
    printf '%-22s ' "$name"
    # shellcheck disable=SC2086
    if ! cmake -S . -B "$out" $gen -DCMAKE_C_COMPILER="$cc" -DFMPL_WERROR=ON $args \
            >"$out.log" 2>&1 ||
       ! cmake --build "$out" -j "$jobs" >>"$out.log" 2>&1; then
        echo "FAILED (log: $out.log)"
        grep -E 'error|warning' "$out.log" | head -n 20 >&2 || true
        failed="$failed $name"
        continue
    fi
    case $name in
        *-static)
            # A program linked against libmpi.a with the static build's mpicc runs.
            why=
            if ! "$out/tools/mpicc" -o "$out/pingpong-static" examples/pingpong.c >>"$out.log" 2>&1; then
                why="mpicc could not link examples/pingpong.c"
            elif ldd "$out/pingpong-static" 2>&1 | grep -q 'lib\(mpi\|fmpl\)\.so'; then
                why="the program links a shared FMPL library"
            elif ! "$out/tools/fmplrun/fmplrun" -n 2 --timeout 60 "$out/pingpong-static" \
                    >"$out.run" 2>&1 || ! grep -q 'rank 1 got: hello from rank 0 of 2' "$out.run"; then
                why="the program failed at 2 ranks: $(tail -n 3 "$out.run")"
            fi
            if [ -n "$why" ]; then
                echo "FAILED: $why (log: $out.log)"
                failed="$failed $name"
                continue
            fi
            ;;
    esac
    echo "ok ($(($(date +%s) - t0)) s)"
done <<EOF
$configs
EOF
[ "$ran" -gt 0 ] || { echo "build-matrix: no configuration matches '$only' (--list)" >&2; exit 2; }
if [ -n "$failed" ]; then
    echo "build-matrix: FAILED:$failed" >&2
    exit 1
fi
echo "build-matrix: $ran configurations built in $(($(date +%s) - start)) s"
