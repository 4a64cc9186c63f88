#!/bin/sh
# hotpath_syscalls.sh FMPLRUN PROGRAM p2p|coll|rcopy [N1 N2]
#
# Runs `PROGRAM syscalls MODE N` at 2 ranks under `strace -f -c`, once with
# N = N1 (100) and once with N = N2 (1000) iterations, and compares the total
# number of system calls of the two runs (all ranks).  The message path makes
# no system call, so the totals must be equal up to a small constant slack
# (FMPL_SYSCALL_SLACK, default 20) -- never proportional to N.
# Waits must not yield: FMPL_SPIN_COUNT is set very high (sched_yield is a
# system call).  Exits 77 (skipped) when strace is missing or cannot trace.
set -u
if [ $# -lt 3 ]; then
    echo "usage: $0 FMPLRUN PROGRAM p2p|coll|rcopy [N1 N2]" >&2
    exit 2
fi
FMPLRUN=$1
PROG=$2
MODE=$3
N1=${4:-100}
N2=${5:-1000}
SLACK=${FMPL_SYSCALL_SLACK:-20}
SKIP=77

if ! command -v strace >/dev/null 2>&1; then
    echo "SKIP: strace is not installed (apt-get install strace)"
    exit $SKIP
fi
if ! strace -f -o /dev/null true >/dev/null 2>&1; then
    echo "SKIP: strace cannot trace here (ptrace not permitted)"
    exit $SKIP
fi

export FMPL_SPIN_COUNT="${FMPL_SPIN_COUNT:-1000000000}"
# LeakSanitizer cannot run under ptrace: in sanitizer builds, no leak check here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-syscalls.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# run N: strace every rank (not the launcher) into $tmp/N/rank.<pid>
run() {
    mkdir -p "$tmp/$1"
    if ! "$FMPLRUN" -n 2 --timeout 240 /bin/sh -c 'dir=$1; shift; exec strace -f -c -o "$dir/rank.$$" "$@"' \
            sh "$tmp/$1" "$PROG" syscalls "$MODE" "$1" >"$tmp/$1.log" 2>&1; then
        echo "FAIL: the run with N=$1 failed:"
        cat "$tmp/$1.log"
        exit 1
    fi
    nfiles=$(ls "$tmp/$1" | wc -l)
    if [ "$nfiles" -ne 2 ]; then
        echo "FAIL: expected 2 strace summaries for N=$1, found $nfiles"
        cat "$tmp/$1.log"
        exit 1
    fi
}

# per-syscall counts of a run, "name calls" lines, summed over the ranks
table() {
    cat "$tmp/$1"/rank.* | awk '$1 ~ /^[0-9.]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" { c[$NF] += $4 }
                               END { for (k in c) print k, c[k] }' | sort
}

total() {
    cat "$tmp/$1"/rank.* | awk '$NF == "total" && $4 ~ /^[0-9]+$/ { s += $4 } END { print s + 0 }'
}

run "$N1"
run "$N2"
t1=$(total "$N1")
t2=$(total "$N2")
d=$((t2 - t1))
[ $d -lt 0 ] && d=$((-d))
echo "hotpath syscalls ($MODE): $t1 system calls with N=$N1, $t2 with N=$N2 (difference $d, slack $SLACK)"
if [ $d -gt "$SLACK" ]; then
    echo "FAIL: the number of system calls grows with the number of iterations:"
    table "$N1" >"$tmp/t1"
    table "$N2" >"$tmp/t2"
    echo "syscall  N=$N1  N=$N2"
    join -a1 -a2 -e0 -o 0,1.2,2.2 "$tmp/t1" "$tmp/t2" | awk '$2 != $3 { print "  " $1, $2, $3 }'
    exit 1
fi
echo "PASS hotpath syscalls ($MODE)"
exit 0
