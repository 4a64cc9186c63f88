#!/bin/sh
# hotpath_syscalls.sh FMPLRUN PROGRAM p2p|coll|rcopy [N1 N2]
#
# Runs `PROGRAM syscalls MODE N` at 2 ranks under `strace -f -c`, once with
# N = N1 (100) and once with N = N2 (1000) iterations, and compares the total
# number of system calls of the two runs (all ranks).  The message path makes
# no system call, so the totals must be equal up to a small constant slack
# (FMPL_SYSCALL_SLACK, default 20) -- never proportional to N.
# With HOTPATH_MAIN_THREAD=1 (the agent runs: FMPL_AGENT=thread) only the
# ranks' main threads are counted: the agent thread may sleep and wake, the
# application's thread must still make no system call per message.
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
MAIN_ONLY=${HOTPATH_MAIN_THREAD:-0}
run() {
    mkdir -p "$tmp/$1"
    if [ "$MAIN_ONLY" = 1 ]; then
        # one trace per thread, rank.<pid>.<tid>; the main thread's tid is the pid
        script='dir=$1; shift; exec strace -f -ff -o "$dir/trace.$$" "$@"'
    else
        script='dir=$1; shift; exec strace -f -c -o "$dir/rank.$$" "$@"'
    fi
    if ! "$FMPLRUN" -n 2 --timeout 240 /bin/sh -c "$script" \
            sh "$tmp/$1" "$PROG" syscalls "$MODE" "$1" >"$tmp/$1.log" 2>&1; then
        echo "FAIL: the run with N=$1 failed:"
        cat "$tmp/$1.log"
        exit 1
    fi
    if [ "$MAIN_ONLY" = 1 ]; then
        # keep each rank's main thread, as "count name" summaries: the one
        # whose trace starts with the program's execve (not the lowest
        # thread id: after the kernel's pid numbers wrap, a later thread
        # can have a lower one)
        for prefix in $(ls "$tmp/$1" | sed -n 's/^trace\.\([0-9]*\)\..*/\1/p' | sort -u); do
            main=$(cd "$tmp/$1" && grep -l '^execve(' trace."$prefix".* | head -1 |
                   sed -n "s/^trace\.$prefix\.\([0-9]*\)$/\1/p")
            if [ -z "$main" ]; then
                echo "FAIL: no thread of rank trace $prefix (N=$1) made the execve"
                exit 1
            fi
            sed -n 's/^\([a-z_0-9]*\)(.*/\1/p' "$tmp/$1/trace.$prefix.$main" | sort | uniq -c |
                awk '{ n += $1; printf "%6.2f %11d %11d %9d %9s %s\n", 0, 0, 0, $1, "", $2 }
                     END { printf "%6.2f %11d %11d %9d %9s total\n", 0, 0, 0, n, "" }' \
                >"$tmp/$1/rank.$prefix"
        done
        rm -f "$tmp/$1"/trace.*
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
