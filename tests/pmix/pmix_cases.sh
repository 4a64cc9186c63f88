#!/bin/bash
# Driver for the PMIx bootstrap tests: FMPL programs started by Open MPI's
# mpirun (mpirun.openmpi, which serves them through PMIx).  Runs one case,
# checks exit status and output.  Exit 0: pass, 77: skip.
#
# usage: pmix_cases.sh CASE HAVE_PMIX SUPPRESSIONS LT_EXCHANGE LT_FAIL PINGPONG
#                      COLLECTIVES CALLER_AREAS PMIX_ABORT
#   HAVE_PMIX     ON or OFF: whether this FMPL was built with PMIx support
#   SUPPRESSIONS  LeakSanitizer suppressions for libpmix's own leaks
#   the rest      the test programs
#
# mpirun options: none are needed for FMPL programs, which never load Open
# MPI's transports; `-n 4` on this 2-CPU machine needs --oversubscribe, and
# --bind-to none keeps mpirun from binding four ranks onto two cores.  Open
# MPI refuses to run as root without the two OMPI_ALLOW_RUN_AS_ROOT*
# variables, set below (they do nothing for other users).
set -u
case_name=$1 HAVE_PMIX=$2 SUPP=$3 LT_EXCHANGE=$4 LT_FAIL=$5 PINGPONG=$6 COLLECTIVES=$7
CALLER_AREAS=$8 PMIX_ABORT=$9
MPIRUN=mpirun.openmpi

work=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-pmix-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
ulimit -c 0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$SUPP:print_suppressions=0"
unset PMI_FD PMI_RANK PMI_SIZE

fail() { echo "FAIL [$case_name]: $*"; for f in "$work"/out "$work"/err; do [ -f "$f" ] && { echo "--- ${f##*/}:"; head -c 4000 "$f"; }; done; exit 1; }
skip() { echo "SKIP [$case_name]: $*"; exit 77; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run ARGS...: mpirun with a time limit (LIMIT seconds, default 60); sets
# status and elapsed_ms.
run() {
    local t0 limit=${LIMIT:-60}; t0=$(now_ms)
    timeout -k 5 "$limit" "$MPIRUN" "$@" >"$work/out" 2>"$work/err" </dev/null
    status=$?
    elapsed_ms=$(( $(now_ms) - t0 ))
    [ "$elapsed_ms" -lt $((limit * 1000)) ] || fail "mpirun did not finish within $limit s"
}
expect_status() { [ "$status" -eq "$1" ] || fail "exit status $status, expected $1"; }
expect_err() { grep -Eq -- "$1" "$work/err" || fail "stderr lacks /$1/"; }
expect_out() { grep -Eq -- "$1" "$work/out" || fail "stdout lacks /$1/"; }
expect_fast() { [ "$elapsed_ms" -le "$1" ] || fail "took ${elapsed_ms} ms, limit $1 ms"; }
expect_count() { # PATTERN N: exactly N stdout lines match
    local n; n=$(grep -Ec -- "$1" "$work/out")
    [ "$n" -eq "$2" ] || fail "$n stdout lines match /$1/, expected $2"
}

# exchange N [mpirun options]: lt_exchange at N ranks; every rank must see
# size N, launcher pmix, a job id equal to the (file-name-safe) nspace.
exchange() {
    local n=$1; shift
    run -n "$n" "$@" sh -c 'echo "ns $PMIX_RANK $PMIX_NAMESPACE"; exec "$0" "$@"' \
        "$LT_EXCHANGE" --expect-size "$n" --expect-launcher pmix --rounds 20
    expect_status 0
    local ns; ns=$(sed -n 's/^ns 0 //p' "$work/out")
    [ -n "$ns" ] || fail "rank 0 saw no PMIX_NAMESPACE"
    [[ "$ns" =~ ^[A-Za-z0-9._-]{1,127}$ ]] || fail "nspace '$ns' is not file-name safe: extend the test"
    for ((r = 0; r < n; r++)); do
        expect_out "^lt_exchange: rank $r of $n ok \(launcher pmix, job $ns, 20 rounds\)$"
    done
    expect_count '^lt_exchange: rank ' "$n"
}

# No rank of the job still running (a zombie is dead).
expect_ranks_gone() { # PIDS...
    local pid state
    for _ in $(seq 50); do
        local alive=0
        for pid in "$@"; do
            state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
            [ -n "$state" ] && [ "$state" != Z ] && alive=$pid
        done
        [ "$alive" = 0 ] && return
        sleep 0.1
    done
    fail "rank pid $alive still alive 5 s after mpirun returned"
}

case $case_name in
no_support)
    # Built without PMIx: a PMIx environment must be refused, not run as
    # separate singletons.  (No mpirun needed: the variables are enough.)
    [ "$HAVE_PMIX" = OFF ] || skip "FMPL has PMIx support"
    PMIX_RANK=0 PMIX_NAMESPACE=fake "$LT_EXCHANGE" >"$work/out" 2>"$work/err" </dev/null
    status=$?
    [ "$status" -ne 0 ] || fail "ran although PMIx is not compiled in"
    expect_err 'built without PMIx support'
    ! grep -q 'launcher singleton' "$work/out" || fail "ran as a singleton"
    echo "PASS [$case_name]"; exit 0 ;;
esac

[ "$HAVE_PMIX" = ON ] || skip "FMPL was built without PMIx (libpmix-dev missing at configure time, or -DFMPL_PMIX=OFF)"

case $case_name in
no_server)
    # PMIx variables without a server: a clear start-up error.
    PMIX_RANK=0 PMIX_NAMESPACE=fake "$LT_EXCHANGE" >"$work/out" 2>"$work/err" </dev/null
    status=$?
    [ "$status" -ne 0 ] || fail "started without a PMIx server"
    expect_err 'PMIx_Init failed: .*the PMIx server cannot be reached'
    echo "PASS [$case_name]"; exit 0 ;;
esac

command -v "$MPIRUN" >/dev/null 2>&1 || skip "$MPIRUN is not installed (apt-get install openmpi-bin)"

# For the abort cases: a rank exiting non-zero does not end the job, so
# only PMIx_Abort can (proves that it is called and works).
ONLY_ABORT_ENDS="--mca orte_abort_on_non_zero_status 0"

case $case_name in
exchange2)
    exchange 2 ;;
exchange4)
    exchange 4 --oversubscribe --bind-to none ;;
exchange_hash)
    # The server keeps collected data in its "hash" store instead of the
    # shared-memory dstore: gets must still find it (they ask the server).
    export PMIX_MCA_gds=hash
    exchange 2 ;;
pingpong)
    # The example of the README: a message from rank 0 to 1, then a sum.
    run -n 2 "$PINGPONG"
    expect_status 0
    expect_out '^rank 1 got: hello from rank 0 of 2$'
    expect_out '^sum of ranks = 1$' ;;
caller_areas)
    # Point-to-point over CMA into private areas, all pairs, checked.
    run -n 2 "$CALLER_AREAS"
    expect_status 0
    expect_out '^caller_areas: 2 ranks ok$' ;;
collectives4)
    run -n 4 --oversubscribe --bind-to none "$COLLECTIVES"
    expect_status 0
    for r in 0 1 2 3; do expect_out "^rank $r: .*: ok$"; done ;;
abort)
    # fmpl_abort on the last rank while the others wait in a barrier: mpirun
    # ends them all with the abort's code.  After fmpl_init the job's
    # shared-memory files are already unlinked: none may be left.
    LIMIT=20 run -n 3 --oversubscribe --bind-to none $ONLY_ABORT_ENDS "$PMIX_ABORT"
    expect_status 5
    expect_count '^pmix_abort: rank [0-2] of 3 pid [0-9]+ ns [^ ]+ ready$' 3
    expect_err '^fmpl\[2\] abort: pmix_abort: deliberate abort \(exit code 5\)$'
    expect_fast 15000
    ns=$(sed -n 's/^pmix_abort: rank 0 of 3 pid [0-9]* ns \([^ ]*\) ready$/\1/p' "$work/out")
    expect_ranks_gone $(sed -n 's/^pmix_abort: rank [0-9]* of 3 pid \([0-9]*\) .*/\1/p' "$work/out")
    if compgen -G "/dev/shm/fmpl-$ns-*" >/dev/null; then
        fail "shared-memory files left: $(ls /dev/shm/fmpl-"$ns"-*)"
    fi ;;
abort_bootstrap)
    # The bootstrap's own abort (lt_fail): rank 1 aborts with code 7 while
    # rank 0 waits inside a PMIx fence.
    #
    # Known Open MPI 4.1.4 bug: after a PMIx_Abort that meets another rank's
    # pending fence, mpirun.openmpi sometimes crashes (SIGSEGV) or deadlocks
    # in its own PMIx_server_finalize, after every rank is gone (about 1-2 %
    # of runs here, more under load; far more often when a third rank
    # ignores SIGTERM, so that variant is not run).  The job has ended by
    # then, so both are tolerated with a NOTE; anything else fails.
    mkdir -p "$work/pids"
    t0=$(now_ms)
    timeout -k 5 30 "$MPIRUN" -n 2 $ONLY_ABORT_ENDS "$LT_FAIL" abort 1 "$work/pids" \
        >"$work/out" 2>"$work/err" </dev/null &
    mpirun_pid=$!
    hung=0 gone_since=""
    while kill -0 "$mpirun_pid" 2>/dev/null; do
        pids=$(ls "$work/pids" | sed -n 's/^pid\.//p')
        alive=0
        for pid in $pids; do
            state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
            [ -n "$state" ] && [ "$state" != Z ] && alive=1
        done
        if [ "$(echo $pids | wc -w)" -eq 2 ] && [ "$alive" -eq 0 ]; then
            [ -n "$gone_since" ] || gone_since=$(now_ms)
            if [ $(( $(now_ms) - gone_since )) -ge 5000 ]; then
                hung=1
                pkill -KILL -P "$mpirun_pid" 2>/dev/null # the timeout's child: mpirun
                break
            fi
        fi
        sleep 0.1
    done
    wait "$mpirun_pid"
    status=$?
    elapsed_ms=$(( $(now_ms) - t0 ))
    job=$(cat "$work/pids/jobid" 2>/dev/null)
    # lt_fail's own marker files: fmplrun would remove them, mpirun does not.
    [ -n "$job" ] && rm -f /dev/shm/fmpl-"$job"-lt-*
    expect_err '^fmpl\[1\] abort: lt_fail: deliberate abort \(exit code 7\)$'
    if [ "$hung" -eq 1 ]; then
        echo "NOTE [$case_name]: every rank ended, but mpirun.openmpi hung 5 s in its own" \
             "teardown (known Open MPI 4.1 bug); killed it"
    elif [ "$status" -eq 139 ] && grep -q 'PMIx_server_finalize' "$work/err"; then
        echo "NOTE [$case_name]: mpirun.openmpi crashed in PMIx_server_finalize while ending" \
             "the job (known Open MPI 4.1 bug); exit status 139 instead of 7"
    else
        [ "$elapsed_ms" -lt 30000 ] || fail "mpirun did not finish within 30 s"
        expect_status 7
        expect_fast 15000
    fi
    expect_ranks_gone $(ls "$work/pids" | sed -n 's/^pid\.//p') ;;
mpirun_killed)
    # mpirun killed (SIGKILL) under a running job: no process and no file
    # may be left, and each rank says why it ended.  Each rank's stderr
    # goes to a file: mpirun, which forwards it, is dead.
    # 1. During start-up: ranks 0 and 1 wait for rank 2 (which calls
    #    fmpl_init only once mpirun is gone) in the start-up fence, their
    #    segment files still named.
    #    Their fence fails (the server is unreachable) or the lost-connection
    #    handler ends them; either way the files go.  Rank 2 then fails to
    #    reach the server.
    # 2. After start-up: ranks 0 and 1 spin in a barrier, rank 2 sleeps in
    #    pause(): the PMIx client's lost-connection handler (bootstrap/pmix.c)
    #    ends all three with its message.
    killed_job() { # MODE MESSAGE-PATTERN-OF-RANKS-0-AND-1 MESSAGE-PATTERN-OF-RANK-2
        rm -rf "$work/ranks"; mkdir -p "$work/ranks"
        "$MPIRUN" -n 3 --oversubscribe --bind-to none sh -c \
            'echo "$$ $PMIX_NAMESPACE" >"$1/pid.$PMIX_RANK"; exec "$0" "$2" 2 2>"$1/err.$PMIX_RANK"' \
            "$PMIX_ABORT" "$work/ranks" "$1" >"$work/out" 2>"$work/err" </dev/null &
        local mpirun_pid=$! ns="" ready=0 r
        for _ in $(seq 200); do # until the job has reached the moment to kill
            [ -z "$ns" ] && [ -f "$work/ranks/pid.0" ] && ns=$(awk '{print $2}' "$work/ranks/pid.0")
            if [ "$1" = late ]; then
                [ -n "$ns" ] && ready=$(compgen -G "/dev/shm/fmpl-$ns-*" | wc -l)
            else
                ready=$(grep -c ' ready$' "$work/out")
            fi
            [ "$ready" -ge 2 ] && break
            sleep 0.05
        done
        [ "$1" = late ] || sleep 0.5 # into the barrier and pause()
        kill -9 "$mpirun_pid"
        wait "$mpirun_pid" 2>/dev/null
        [ "$ready" -ge 2 ] || fail "$1: the job did not get there in 10 s (ns '$ns')"
        expect_ranks_gone $(cat "$work"/ranks/pid.* | awk '{print $1}')
        for r in 0 1 2; do
            local want=$2; [ "$r" = 2 ] && want=$3
            grep -Eq "$want" "$work/ranks/err.$r" ||
                fail "$1: rank $r's stderr lacks /$want/: $(cat "$work/ranks/err.$r")"
        done
        if compgen -G "/dev/shm/fmpl-$ns-*" >/dev/null; then
            local left; left=$(ls /dev/shm/fmpl-"$ns"-*); rm -f /dev/shm/fmpl-"$ns"-*
            fail "$1: shared-memory files left: $left"
        fi
    }
    lost='lost its connection to the process manager'
    killed_job late "$lost|PMIx_Fence.*failed: UNREACHABLE" "PMIx_Init failed"
    killed_job stall "^fmpl: rank [01] of .* $lost" "^fmpl: rank 2 of .* $lost"
    elapsed_ms=0 ;;
rank_exit)
    # A rank exiting with status 3 while the others wait: the job ends.
    mkdir -p "$work/pids"
    LIMIT=20 run -n 2 "$LT_FAIL" exit3 1 "$work/pids"
    job=$(cat "$work/pids/jobid" 2>/dev/null)
    [ -n "$job" ] && rm -f /dev/shm/fmpl-"$job"-lt-*
    [ "$status" -ne 0 ] || fail "exit status 0 although rank 1 exited with 3"
    expect_fast 15000
    expect_ranks_gone $(ls "$work/pids" | sed -n 's/^pid\.//p') ;;
*)
    fail "unknown case" ;;
esac
echo "PASS [$case_name] (${elapsed_ms} ms)"
