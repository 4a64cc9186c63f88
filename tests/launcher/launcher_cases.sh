#!/bin/bash
# Driver for fmplrun's behaviour tests: runs one case, checks exit status,
# messages, elapsed time, that no rank outlives the job and that the job's
# /dev/shm/fmpl-<job_id>-* files are gone.  Exit 0: pass, 77: skip.
#
# usage: launcher_cases.sh CASE FMPLRUN LT_FAIL LT_EXCHANGE PMI_SPAWN_CLIENT
set -u
case_name=$1 FMPLRUN=$2 LT_FAIL=$3 LT_EXCHANGE=$4 SPAWN_CLIENT=${5:-}
FAKE_SSH=$(dirname "$0")/fake_ssh.sh
# Two hosts, hA and hB, through the fake ssh (both on this machine).
HOSTS=(--hosts hA:2,hB:2 --launcher-exec "$FAKE_SSH")
work=$(mktemp -d "${TMPDIR:-/tmp}/fmplrun-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
ulimit -c 0

fail() { echo "FAIL [$case_name]: $*"; for f in "$work"/out "$work"/err; do [ -f "$f" ] && { echo "--- ${f##*/}:"; head -c 3000 "$f"; }; done; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run ARGS...: run fmplrun; sets status and elapsed_ms.
run() {
    local t0; t0=$(now_ms)
    "$FMPLRUN" "$@" >"$work/out" 2>"$work/err" </dev/null
    status=$?
    elapsed_ms=$(( $(now_ms) - t0 ))
}
expect_status() { [ "$status" -eq "$1" ] || fail "exit status $status, expected $1"; }
expect_err() { grep -Eq -- "$1" "$work/err" || fail "stderr lacks /$1/"; }
expect_out() { grep -Eq -- "$1" "$work/out" || fail "stdout lacks /$1/"; }
expect_fast() { [ "$elapsed_ms" -le "$1" ] || fail "took ${elapsed_ms} ms, limit $1 ms"; }
# Exactly one fmplrun line that ends the job.
expect_one_report() {
    local n; n=$(grep -c 'ending the job' "$work/err")
    [ "$n" -eq 1 ] || fail "$n 'ending the job' lines, expected 1"
}

expect_one_report_absent() {
    ! grep -q 'exited with status' "$work/err" || fail "a rank's exit reported after an exec failure"
}

# A test rank still running (a zombie waiting for init to reap it is dead);
# $2: what its command line holds (default lt_fail).
rank_alive() {
    local state; state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ] && grep -q "${2:-lt_fail}" "/proc/$1/cmdline" 2>/dev/null
}

# After a failure case: every rank started, none alive, no shm file left.
check_cleanup() {
    local nranks=$1 piddir=$work/pids pids=0 f pid
    for f in "$piddir"/pid.*; do
        [ -e "$f" ] || continue
        pids=$((pids + 1)); pid=${f##*/pid.}
        if rank_alive "$pid"; then
            fail "rank pid $pid still alive after fmplrun returned"
        fi
    done
    [ "$pids" -eq "$nranks" ] || fail "$pids ranks recorded a pid, expected $nranks"
    [ -s "$piddir/jobid" ] || fail "rank 0 did not record the job id"
    local job; job=$(cat "$piddir/jobid")
    if compgen -G "/dev/shm/fmpl-$job-*" >/dev/null; then
        fail "leftover shared-memory files: $(ls /dev/shm/fmpl-"$job"-*)"
    fi
}

# fail_case NRANKS MODE FAILRANK [fmplrun options...]
fail_case() {
    local n=$1 mode=$2 failrank=$3; shift 3
    mkdir -p "$work/pids"
    run -n "$n" "$@" "$LT_FAIL" "$mode" "$failrank" "$work/pids"
}

# start_background NRANKS MODE [fmplrun options...]: fmplrun with lt_fail in
# the background (pid in $launcher, start time in $t0); returns once every
# rank is up.
start_background() {
    local n=$1 mode=$2; shift 2
    mkdir -p "$work/pids"
    t0=$(now_ms)
    "$FMPLRUN" -n "$n" "$@" "$LT_FAIL" "$mode" 0 "$work/pids" >"$work/out" 2>"$work/err" </dev/null &
    launcher=$!
    ranks_started "$n"
}

# ranks_started N: wait (5 s at most) until N lt_fail ranks recorded their
# pids and rank 0 the job id, then let them reach their blocking call.
ranks_started() {
    for _ in $(seq 100); do
        [ "$(compgen -G "$work/pids/pid.*" | wc -l)" -eq "$1" ] && [ -s "$work/pids/jobid" ] && break
        sleep 0.05
    done
    sleep 0.2
}

# ranks_gone: wait (2 s at most) until no recorded rank is alive (sets
# alive: 0 when none is), then remove the job's /dev/shm files, which a
# launcher killed with SIGKILL could not.
ranks_gone() {
    local f
    for _ in $(seq 40); do
        alive=0
        for f in "$work"/pids/pid.*; do rank_alive "${f##*/pid.}" && alive=1; done
        [ "$alive" -eq 0 ] && break
        sleep 0.05
    done
    rm -f /dev/shm/fmpl-"$(cat "$work/pids/jobid")"-*
}

case $case_name in
exit_status)
    fail_case 4 exit3 2
    expect_status 3
    expect_err '^fmplrun: rank 2 \(pid [0-9]+\) exited with status 3; ending the job$'
    expect_one_report; expect_fast 2500; check_cleanup 4 ;;
signal)
    fail_case 3 segv 1
    expect_status 139
    expect_err '^fmplrun: rank 1 \(pid [0-9]+\) killed by signal 11 \(Segmentation fault\); ending the job$'
    expect_one_report; expect_fast 2500; check_cleanup 3 ;;
timeout)
    fail_case 4 hang 0 --timeout 1
    expect_status 124
    expect_err '^fmplrun: job exceeded --timeout 1 s; ranks still running: 0 1 2 3; ending the job$'
    expect_one_report; expect_fast 3000; check_cleanup 4
    [ "$elapsed_ms" -ge 1000 ] || fail "ended after ${elapsed_ms} ms, before the 1 s timeout" ;;
abort)
    fail_case 3 abort 0
    expect_status 7
    expect_err '^fmplrun: rank 0 \(pid [0-9]+\) called abort with code 7; ending the job$'
    expect_err '^fmpl\[0\] abort: lt_fail: deliberate abort \(exit code 7\)$'
    expect_one_report; expect_fast 2500; check_cleanup 3 ;;
exit0_barrier)
    fail_case 3 exit0 1
    expect_status 1
    expect_err '^fmplrun: rank 1 \(pid [0-9]+\) exited with status 0 while rank\(s\)( 0| 2)+ waited for it in a PMI barrier it never entered; ending the job$'
    expect_one_report; expect_fast 2500; check_cleanup 3 ;;
sigterm)
    start_background 3 sleep
    # Each rank leads a process group of its own (the launcher signals it)
    # in the launcher's session (one scheduling group under autogroup, so
    # that an oversubscribed wait's sched_yield reaches the other ranks),
    # without a controlling terminal.
    launcher_sid=$(awk '{print $6}' "/proc/$launcher/stat")
    for f in "$work"/pids/pid.*; do
        pid=${f##*/pid.}
        read -r pgid sid tty < <(awk '{print $5, $6, $7}' "/proc/$pid/stat")
        [ "$pgid" = "$pid" ] || fail "rank pid $pid in group $pgid, not its own"
        [ "$sid" = "$launcher_sid" ] || fail "rank pid $pid in session $sid, not the launcher's ($launcher_sid)"
        [ "$tty" = 0 ] || fail "rank pid $pid has a controlling terminal ($tty)"
    done
    kill -TERM "$launcher"
    wait "$launcher"; status=$?
    elapsed_ms=$(( $(now_ms) - t0 ))
    expect_status 143
    expect_err '^fmplrun: received signal 15 \(Terminated\); forwarding it to the ranks and ending the job$'
    expect_fast 4000; check_cleanup 3 ;;
signal_escalation)
    # Odd ranks ignore the forwarded SIGTERM: SIGKILL must follow after 1 s.
    start_background 4 hang
    t_kill=$(now_ms)
    kill -TERM "$launcher"
    wait "$launcher"; status=$?
    elapsed_ms=$(( $(now_ms) - t_kill ))
    expect_status 143
    expect_err 'received signal 15 \(Terminated\); forwarding it'
    [ "$elapsed_ms" -ge 900 ] || fail "SIGKILL came after ${elapsed_ms} ms, before 1 s"
    expect_fast 2500; check_cleanup 4 ;;
launcher_killed)
    # A SIGKILLed launcher cannot clean up, but its ranks must not survive it.
    start_background 3 sleep
    kill -KILL "$launcher"
    wait "$launcher" 2>/dev/null
    ranks_gone
    [ "$alive" -eq 0 ] || fail "ranks outlived their SIGKILLed launcher" ;;
early_exit)
    # A rank finishing first is normal: the others carry on.
    run -n 3 sh -c '[ "$PMI_RANK" = 0 ] && exit 0; sleep 0.3; echo "done $PMI_RANK"'
    expect_status 0; expect_out '^done 1$'; expect_out '^done 2$'
    [ ! -s "$work/err" ] || fail "unexpected messages" ;;
tag_output)
    run -n 2 --tag-output sh -c 'echo "out $PMI_RANK"; echo "err $PMI_RANK" >&2; printf "tail $PMI_RANK"'
    expect_status 0
    for r in 0 1; do
        expect_out "^\[$r\] out $r$"; expect_out "^\[$r\] tail $r$"; expect_err "^\[$r\] err $r$"
    done
    # Many long lines written in chunks that split lines: every relayed line
    # must be whole and tagged with the right rank.
    run -n 2 --tag-output awk -v r=0 'BEGIN { r = ENVIRON["PMI_RANK"];
        for (i = 0; i < 3000; i++) printf "rank %d line %d %0100d\n", r, i, i }'
    expect_status 0
    [ "$(wc -l <"$work/out")" -eq 6000 ] || fail "expected 6000 lines"
    bad=$(grep -Evc '^\[([01])\] rank \1 line [0-9]+ [0-9]{100}$' "$work/out")
    [ "$bad" -eq 0 ] || fail "$bad lines broken or mis-tagged"
    # Without the flag, output is not touched.
    run -n 2 sh -c 'echo "plain $PMI_RANK"'
    expect_status 0; expect_out '^plain 0$'; expect_out '^plain 1$' ;;
usage)
    run; [ "$status" -ne 0 ] || fail "no arguments: exit 0"; expect_err 'missing -n'
    run -n 0 true; [ "$status" -ne 0 ] || fail "-n 0: exit 0"; expect_err "invalid number of ranks '0'"
    run -n abc true; [ "$status" -ne 0 ] || fail "-n abc: exit 0"; expect_err "invalid number of ranks 'abc'"
    run -n; [ "$status" -ne 0 ] || fail "-n without value: exit 0"; expect_err "needs a number"
    run -n 2; [ "$status" -ne 0 ] || fail "no program: exit 0"; expect_err 'missing the program'
    run --frobnicate -n 2 true; [ "$status" -ne 0 ] || fail "unknown option: exit 0"
    expect_err "unknown option '--frobnicate'"
    run -n 2 --bind sockets true; [ "$status" -ne 0 ] || fail "bad --bind: exit 0"; expect_err "invalid --bind"
    run -n 2 --timeout soon true; [ "$status" -ne 0 ] || fail "bad --timeout: exit 0"; expect_err "invalid --timeout"
    run -n 2 no-such-program-xyz; expect_status 127
    expect_err "^fmplrun: cannot execute 'no-such-program-xyz': No such file or directory$"
    run -n 2 /etc/passwd; expect_status 126; expect_err "cannot execute '/etc/passwd': Permission denied"
    printf 'not a program\n' >"$work/noexec"; chmod +x "$work/noexec"
    run -n 2 "$work/noexec"; expect_status 126; expect_err "cannot execute '.*noexec': Exec format error$"
    expect_one_report_absent
    run --help; expect_status 0; expect_out '^usage: fmplrun \[-n N\]'; expect_out '124 +--timeout expired'
    run --version; expect_status 0; expect_out '^fmplrun \(FMPL\) [0-9]+\.[0-9]+'
    run -np 2 true; expect_status 0 ;;
pmi_wire)
    # A shell rank speaking PMI-1 by hand: environment, maxes, universe
    # size (default: the online CPUs, at least N), a missing key and an
    # unknown command (rc=-1 with a message).
    run -n 1 bash -c '
        echo "env $PMI_RANK $PMI_SIZE $FMPL_LAUNCHER fd=${PMI_FD:+set}"
        ask() { echo "$1" >&$PMI_FD; IFS= read -r line <&$PMI_FD; echo "$line"; }
        ask "cmd=init pmi_version=1 pmi_subversion=1"
        ask "cmd=get_maxes"
        ask "cmd=get_universe_size"
        kvs=$(ask "cmd=get_my_kvsname"); echo "$kvs"; kvs=${kvs#*kvsname=}
        ask "cmd=get kvsname=$kvs key=0.missing"
        ask "cmd=put kvsname=$kvs key=0.k value=a\$b#c"
        ask "cmd=get kvsname=$kvs key=0.k"
        ask "cmd=frobnicate x=1"
        ask "cmd=init pmi_version=2 pmi_subversion=0"
        ask "cmd=finalize"'
    expect_status 0
    expect_out '^env 0 1 fmplrun fd=set$'
    expect_out '^cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0$'
    expect_out '^cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024$'
    expect_out "^cmd=universe_size size=$(getconf _NPROCESSORS_ONLN)\$"
    expect_out '^cmd=my_kvsname kvsname=fmplrun-[0-9]+-[0-9a-f]{8}$'
    expect_out '^cmd=get_result rc=-1 msg=key_0.missing_not_found$'
    expect_out '^cmd=put_result rc=0 msg=success$'
    expect_out '^cmd=get_result rc=0 msg=success value=a\$b#c$'
    expect_out '^cmd=error rc=-1 msg=unknown_command_frobnicate$'
    expect_out '^cmd=response_to_init .*rc=-1'
    expect_out '^cmd=finalize_ack$'
    expect_err "rank 0 sent an unknown PMI command 'frobnicate'" ;;
binding)
    ncpus=$(nproc)
    run -n 2 --bind none -v true; expect_status 0; expect_err '^fmplrun: binding: none \(--bind none'
    n=$((ncpus + 1))
    run -n "$n" -v true; expect_status 0; expect_err "^fmplrun: binding: none \(oversubscribed; $n ranks, $ncpus CPUs"
    if [ "$ncpus" -ge 2 ]; then
        run -n 2 -v --tag-output sh -c 'grep Cpus_allowed_list /proc/self/status'
        expect_status 0; expect_err '^fmplrun: binding: core \(rank->CPU\): 0->[0-9]+ 1->[0-9]+$'
        c0=$(sed -n 's/^\[0\] Cpus_allowed_list:\s*//p' "$work/out")
        c1=$(sed -n 's/^\[1\] Cpus_allowed_list:\s*//p' "$work/out")
        [[ "$c0" =~ ^[0-9]+$ && "$c1" =~ ^[0-9]+$ && "$c0" != "$c1" ]] ||
            fail "ranks not bound to distinct single CPUs: '$c0' '$c1'"
        expect_err "^fmplrun: binding: core \(rank->CPU\): 0->$c0 1->$c1$"
    fi ;;
hydra)
    if ! command -v mpiexec.hydra >/dev/null; then
        echo "SKIP: mpiexec.hydra is not installed (apt-get install mpich)"; exit 77
    fi
    t0=$(now_ms)
    timeout 30 mpiexec.hydra -n 2 "$LT_EXCHANGE" --expect-size 2 --expect-launcher pmi1 --rounds 5 \
        >"$work/out" 2>"$work/err" </dev/null
    status=$?
    expect_status 0
    expect_out '^lt_exchange: rank 0 of 2 ok \(launcher pmi1, job kvs_'
    expect_out '^lt_exchange: rank 1 of 2 ok \(launcher pmi1, job kvs_' ;;
hydra_proxy_killed)
    # Under mpiexec.hydra the ranks are children of hydra_pmi_proxy; when it
    # is SIGKILLed they must not outlive it (src/bootstrap/pmi1.c,
    # end_with_hydra_proxy), and mpiexec must end (its ranks' output closes).
    if ! command -v mpiexec.hydra >/dev/null; then
        echo "SKIP: mpiexec.hydra is not installed (apt-get install mpich)"; exit 77
    fi
    mkdir -p "$work/pids"
    mpiexec.hydra -n 2 "$LT_FAIL" sleep 0 "$work/pids" >"$work/out" 2>"$work/err" </dev/null &
    mpiexec=$!
    ranks_started 2
    proxy=$(pgrep -P "$mpiexec" hydra_pmi_prox)
    [ -n "$proxy" ] || { kill -KILL "$mpiexec"; fail "no hydra_pmi_proxy under mpiexec $mpiexec"; }
    kill -KILL "$proxy"
    ranks_gone
    if [ "$alive" -ne 0 ]; then
        for f in "$work"/pids/pid.*; do kill -KILL "${f##*/pid.}" 2>/dev/null; done
        kill -KILL "$mpiexec" 2>/dev/null
        fail "ranks outlived their SIGKILLed hydra_pmi_proxy by 2 s"
    fi
    for _ in $(seq 100); do kill -0 "$mpiexec" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$mpiexec" 2>/dev/null; then
        kill -KILL "$mpiexec"; fail "mpiexec still running 5 s after its proxy and ranks ended"
    fi
    wait "$mpiexec" 2>/dev/null ;;
hosts_run)
    # Ranks in blocks per host, one job (PMI across the proxies), output relayed.
    run "${HOSTS[@]}" --tag-output "$LT_EXCHANGE" --expect-size 4 --expect-launcher fmplrun --rounds 5
    expect_status 0
    for r in 0 1 2 3; do expect_out "^\[$r\] lt_exchange: rank $r of 4 ok"; done
    run "${HOSTS[@]}" sh -c 'echo "rank $PMI_RANK local $MPI_LOCALRANKID of $MPI_LOCALNRANKS in $PWD x=$FMPL_TEST_X"'
    expect_status 0
    expect_out "^rank 0 local 0 of 2 in $PWD x=$"
    expect_out "^rank 3 local 1 of 2 in $PWD x=$"
    FMPL_TEST_X=forwarded run "${HOSTS[@]}" -n 3 sh -c 'echo "rank $PMI_RANK of $PMI_SIZE x=$FMPL_TEST_X"'
    expect_status 0
    expect_out '^rank 2 of 3 x=forwarded$'
    # More ranks than slots: spread over the hosts in turn, still in blocks.
    run -n 6 "${HOSTS[@]}" -v sh -c 'true'
    expect_status 0; expect_err 'host hA: ranks 0-2'; expect_err 'host hB: ranks 3-5'
    # A hostfile.
    printf '# test hosts\nhA slots=1\nhB:2\n\nhA\n' >"$work/hostfile"
    run --hostfile "$work/hostfile" --launcher-exec "$FAKE_SSH" -v sh -c 'true'
    expect_status 0; expect_err 'host hA: ranks 0-1'; expect_err 'host hB: ranks 2-3' ;;
hosts_exit_status)
    fail_case 4 exit3 3 "${HOSTS[@]}"
    expect_status 3
    expect_err '^fmplrun: rank 3 \(pid [0-9]+ on hB\) exited with status 3; ending the job$'
    expect_one_report; expect_fast 3000; check_cleanup 4 ;;
hosts_abort)
    fail_case 4 abort 2 "${HOSTS[@]}"
    expect_status 7
    expect_err '^fmplrun: rank 2 \(pid [0-9]+ on hB\) called abort with code 7; ending the job$'
    expect_one_report; expect_fast 3000; check_cleanup 4 ;;
hosts_ranks_killed)
    # Every rank of the second host killed at once.
    start_background 4 sleep "${HOSTS[@]}"
    for f in "$work"/pids/pid.*; do
        r=$(cat "$f"); [ "$r" -ge 2 ] && kill -KILL "${f##*/pid.}"
    done
    t_kill=$(now_ms)
    wait "$launcher"; status=$?
    elapsed_ms=$(( $(now_ms) - t_kill ))
    expect_status 137
    expect_err '^fmplrun: rank [23] \(pid [0-9]+ on hB\) killed by signal 9 \(Killed\)'
    expect_one_report; expect_fast 3000; check_cleanup 4 ;;
hosts_proxy_killed)
    # The second host's proxy dies (as when a host goes down): its ranks die
    # with it, the job ends naming the host.
    start_background 4 sleep "${HOSTS[@]}"
    proxy=$(pgrep -f -- "--proxy-job $(cat "$work/pids/jobid") --proxy-host 1 " | head -n 1)
    [ -n "$proxy" ] || fail "no proxy process for host hB"
    kill -KILL "$proxy"
    t_kill=$(now_ms)
    wait "$launcher"; status=$?
    elapsed_ms=$(( $(now_ms) - t_kill ))
    [ "$status" -ne 0 ] || fail "exit status 0 after a host was lost"
    expect_err '^fmplrun: host hB \(ranks 2-3\) lost: '
    expect_one_report; expect_fast 3000; check_cleanup 4 ;;
hosts_head_killed)
    # The head is SIGKILLed: every proxy loses it and kills its ranks.
    start_background 4 sleep "${HOSTS[@]}"
    kill -KILL "$launcher"
    wait "$launcher" 2>/dev/null
    for _ in $(seq 60); do
        alive=0
        for f in "$work"/pids/pid.*; do rank_alive "${f##*/pid.}" && alive=1; done
        pgrep -f -- "--proxy-job $(cat "$work/pids/jobid") " >/dev/null && alive=1
        [ "$alive" -eq 0 ] && break
        sleep 0.05
    done
    [ "$alive" -eq 0 ] || fail "ranks or proxies outlived their SIGKILLed head"
    job=$(cat "$work/pids/jobid")
    if compgen -G "/dev/shm/fmpl-$job-*" >/dev/null; then
        fail "the proxies left shared-memory files: $(ls /dev/shm/fmpl-"$job"-*)"
    fi ;;
hosts_bad_secret)
    # A connection that does not know the job's secret is refused; the job goes on.
    start_background 2 sleep --hosts hA:1,hB:1 --launcher-exec "$FAKE_SSH" -v
    port=$(sed -n 's/.*proxies connect to port \([0-9]*\)$/\1/p' "$work/err" | head -n 1)
    [ -n "$port" ] || fail "no port in the verbose output"
    exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect to the head's port"
    echo "HELLO 0123456789abcdef0123456789abcdef 1 intruder" >&3
    sleep 0.3
    exec 3>&-
    expect_err '^fmplrun: refused a connection from intruder: wrong job secret$'
    exec 3<>"/dev/tcp/127.0.0.1/$port"; echo "GET / HTTP/1.0" >&3; sleep 0.2; exec 3>&-
    expect_err '^fmplrun: refused a connection: not an FMPL proxy of this job$'
    alive=0; for f in "$work"/pids/pid.*; do rank_alive "${f##*/pid.}" && alive=$((alive + 1)); done
    [ "$alive" -eq 2 ] || fail "the job did not survive the refused connections"
    kill -TERM "$launcher"; wait "$launcher"; status=$?
    expect_status 143; check_cleanup 2 ;;
hosts_launcher_fails)
    FAKE_SSH_FAIL_HOST=hB run "${HOSTS[@]}" "$LT_EXCHANGE" --expect-size 4 --rounds 2
    [ "$status" -ne 0 ] || fail "exit status 0 with a host unreachable"
    expect_err 'ssh: connect to host hB port 22: Connection refused'
    expect_err '^fmplrun: host hB \(ranks 2-3\) lost: its launcher \(pid [0-9]+\) exited with status 255 \(ssh could not connect, or the host went away\); ending the job$'
    expect_one_report; expect_fast 3000 ;;
hosts_connect_timeout)
    FAKE_SSH_HANG_HOST=hB run "${HOSTS[@]}" --connect-timeout 1 "$LT_EXCHANGE" --expect-size 4 --rounds 2
    [ "$status" -ne 0 ] || fail "exit status 0 with a host that never answered"
    expect_err '^fmplrun: host hB \(ranks 2-3\) lost: its proxy did not connect within 1 s; ending the job$'
    expect_one_report; expect_fast 4000
    ! pgrep -f 'sleep 600' >/dev/null || fail "the hanging launcher outlived the job" ;;
hosts_usage)
    run --hosts '' true; [ "$status" -eq 125 ] || fail "empty --hosts: status $status"
    run --hosts hA:0 true; expect_status 125; expect_err "host 'hA' has 0 slots"
    run --hosts hA:x true; expect_status 125; expect_err "invalid slot count in 'hA:x'"
    run --hosts hA --hostfile /dev/null true; expect_status 125; expect_err 'exclude each other'
    run --hostfile "$work/none" true; expect_status 125; expect_err 'cannot open the hostfile'
    printf 'hA slots=two\n' >"$work/hostfile"
    run --hostfile "$work/hostfile" true; expect_status 125; expect_err 'hostfile:1: invalid .slots='
    printf 'hA extra words\n' >"$work/hostfile"
    run --hostfile "$work/hostfile" true; expect_status 125; expect_err "hostfile:1: unexpected 'extra words'"
    run --hosts hA:1 --launcher-exec "$FAKE_SSH" no-such-program-xyz; expect_status 127
    expect_err "cannot execute 'no-such-program-xyz'" ;;
spawn)
    # pmi_spawn_client checks every reply itself; here: all its processes
    # ran their checks to the end, and the job ended well.
    printf 'not a program\n' >"$work/noexec"; chmod +x "$work/noexec"
    run -n 2 --universe-size 8 --timeout 15 "$SPAWN_CLIENT" parent "$work" 8
    expect_status 0
    for who in "parent rank 0" "parent rank 1" "child rank 0" "child rank 1" \
               "appnum rank 0" "appnum rank 1"; do
        expect_out "^$who ok$"
    done
    [ ! -s "$work/err" ] || fail "unexpected messages" ;;
spawn_fail)
    # A spawned process fails: the whole job ends, the message names it,
    # nothing is left running.  The same when one leaves its group waiting
    # in a barrier, and with hanging children ended by --timeout.
    for kind in fail-child nobarrier-child hang-child; do
        rm -rf "$work/pids"; mkdir -p "$work/pids"
        case $kind in
        fail-child)
            run -n 1 --timeout 15 "$SPAWN_CLIENT" fail-parent "$work/pids" $kind
            expect_status 5
            expect_err '^fmplrun: group 1 rank 1 \(universe index 2, pid [0-9]+\) exited with status 5; ending the job$'
            expect_one_report; expect_fast 3000 ;;
        nobarrier-child)
            run -n 1 --timeout 15 "$SPAWN_CLIENT" fail-parent "$work/pids" $kind
            expect_status 1
            expect_err '^fmplrun: group 1 rank 1 \(universe index 2, pid [0-9]+\) exited with status 0 while rank\(s\) 0 of its group waited for it in a PMI barrier it never entered; ending the job$'
            expect_one_report; expect_fast 3000 ;;
        hang-child)
            run -n 1 --timeout 1 "$SPAWN_CLIENT" fail-parent "$work/pids" $kind
            expect_status 124
            expect_err '^fmplrun: job exceeded --timeout 1 s; ranks still running: 0 1:0 1:1; ending the job$' ;;
        esac
        pids=0
        for f in "$work"/pids/pid.*; do
            [ -e "$f" ] || continue
            pids=$((pids + 1))
            ! rank_alive "${f##*/pid.}" pmi_spawn_client ||
                fail "pid ${f##*/pid.} ($(cat "$f")) outlived the job"
        done
        [ "$pids" -eq 3 ] || fail "$pids processes recorded a pid, expected 3"
    done ;;
spawn_tag_output)
    run -n 1 --tag-output -v --timeout 15 "$SPAWN_CLIENT" tag-parent
    expect_status 0
    expect_out '^\[0\] parent done$'
    expect_out '^\[1:0\] hello from child 0$'; expect_out '^\[1:1\] hello from child 1$'
    expect_err '^\[1:0\] stderr of child 0$'; expect_err '^\[1:1\] stderr of child 1$'
    expect_err '^fmplrun: rank 0 spawned group 1: 2 process\(es\) of /.*pmi_spawn_client, universe indices 1-2$'
    expect_err '^fmplrun: group 1 rank 1: universe index 2, pid [0-9]+'
    expect_err '^fmplrun: group 1 rank 0 \(universe index 1, pid [0-9]+\) exited with status 0$' ;;
spawn_usage)
    run -n 4 --universe-size 2 true; expect_status 125
    expect_err '^fmplrun: --universe-size 2 is smaller than the job.s 4 ranks$'
    run -n 1 --universe-size 0 true; expect_status 125; expect_err "invalid --universe-size '0'"
    run -n 1 --universe-size 5000 true; expect_status 125; expect_err "invalid --universe-size '5000'"
    run -n 1 --universe-size=6 bash -c 'echo "cmd=get_universe_size" >&$PMI_FD; read -r l <&$PMI_FD; echo "$l"'
    expect_status 0; expect_out '^cmd=universe_size size=6$'
    run "${HOSTS[@]}" -n 1 bash -c 'echo "cmd=get_universe_size" >&$PMI_FD; read -r l <&$PMI_FD; echo "$l"'
    expect_status 0; expect_out '^cmd=universe_size size=4$'
    # A request of several lines not ended, then a new one; an unknown one.
    run -n 1 bash -c 'printf "mcmd=spawn\nnprocs=1\nmcmd=frob\nendcmd\n" >&$PMI_FD; read -r l <&$PMI_FD; echo "$l"
                      printf "mcmd=spawn\nnprocs=1\nexecname=true\ntotspawns=1\nspawnssofar=2\nendcmd\n" >&$PMI_FD
                      read -r l <&$PMI_FD; echo "$l"'
    expect_status 0
    expect_out '^cmd=error rc=-1 msg=unknown_command_frob$'
    expect_err "rank 0 began a request before ending the last one \(no 'endcmd'\)"
    expect_out '^cmd=spawn_result rc=-1 msg=spawn_block_2/1_out_of_order_\(expected_1\)$'
    expect_err "rank 0 sent an unknown PMI command 'mcmd=frob'" ;;
hosts_spawn)
    # Across hosts (the fake ssh: both on this machine): rank 0 spawns onto
    # hB (its proxy started then), by info host/hosts, and is refused an
    # unknown host (by the head), a missing wdir and program (by hB's
    # proxy); keys, names and queues across hosts and groups.  Every
    # process checks its replies; here: they all reached their end.
    me=$(hostname)
    run "${HOSTS[@]}" -n 2 --timeout 15 --tag-output -v "$SPAWN_CLIENT" hosts hA hB "$me" "$me"
    expect_status 0
    for r in 0 1; do expect_out "^\[$r\] hosts rank $r ok$"; done
    for g in 1 2 3; do for w in 0 1; do
        expect_out "^\[$g:$w\] hosts-child $((2 * g + w)) ok on $me$"
    done; done
    expect_err '^fmplrun: rank 0 spawns group 1: 2 process\(es\) of /.*pmi_spawn_client, universe indices 2-3, on hB \(2\)$'
    expect_err '^fmplrun: host hB: proxy for spawned processes, launcher pid [0-9]+$'
    expect_err '^fmplrun: rank 0 spawns group 2: .*, universe indices 4-5, on hA \(1\), hB \(1\)$'
    expect_err '^fmplrun: rank 0 spawns group 3: .*, universe indices 6-7, on hA \(2\)$'
    expect_err "^fmplrun: rank 0: spawn refused: unknown host 'no-such-host.invalid' in info host: not one of the job's hosts \(hA,hB\)$"
    expect_err "^fmplrun: rank 0: spawn refused: on hB: cannot enter wdir '/no/such/dir': No such file or directory$"
    ! grep -q 'ending the job' "$work/err" || fail "a refused spawn ended the job" ;;
hosts_spawn_unreachable)
    # The host a spawn goes to cannot be reached (its ssh fails): that
    # spawn is refused, not the job; the host is refused from then on and
    # the default placement passes it over.
    me=$(hostname)
    FAKE_SSH_FAIL_HOST=hB run --hosts hA:1,hB:1 --launcher-exec "$FAKE_SSH" -n 1 --timeout 15 \
        --tag-output "$SPAWN_CLIENT" hosts-unreachable hB "$me"
    expect_status 0
    expect_out '^\[0\] hosts-unreachable ok$'
    expect_out "^\[2:0\] hosts-child 2 ok on $me$"; expect_out "^\[2:1\] hosts-child 3 ok on $me$"
    expect_err '^fmplrun: host hB lost before it started group 1.s processes: its launcher \(pid [0-9]+\) exited with status 255 \(ssh could not connect, or the host went away\); the spawn fails$'
    ! grep -q 'ending the job' "$work/err" || fail "the unreachable host ended the job" ;;
hosts_spawn_fail)
    # A spawned process on the other host is killed: the job ends at once,
    # the message names it and its host; no process, proxy or /dev/shm file
    # of the job is left.
    mkdir -p "$work/pids"
    "$FMPLRUN" --hosts hA:1,hB:1 --launcher-exec "$FAKE_SSH" -n 1 --timeout 15 \
        "$SPAWN_CLIENT" hosts-fail-parent "$work/pids" >"$work/out" 2>"$work/err" </dev/null &
    launcher=$!
    for _ in $(seq 100); do [ -s "$work/pids/sleeper" ] && break; sleep 0.05; done
    read -r pid host job <"$work/pids/sleeper" || fail "the spawned process did not start"
    [ -e "/dev/shm/fmpl-$job-sleeper" ] || fail "the spawned process left no /dev/shm file"
    kill -KILL "$pid"
    t_kill=$(now_ms)
    wait "$launcher"; status=$?
    elapsed_ms=$(( $(now_ms) - t_kill ))
    expect_status 137
    expect_err "^fmplrun: group 1 rank 0 \(universe index 1, pid $pid on hB\) killed by signal 9 \(Killed\); ending the job$"
    expect_one_report; expect_fast 3000
    for f in "$work"/pids/pid.*; do
        ! rank_alive "${f##*/pid.}" pmi_spawn_client || fail "pid ${f##*/pid.} ($(cat "$f")) outlived the job"
    done
    [ "$(compgen -G "$work/pids/pid.*" | wc -l)" -eq 2 ] || fail "expected 2 processes to record a pid"
    ! pgrep -f -- "--proxy-job $job " >/dev/null || fail "a proxy outlived the job"
    ! compgen -G "/dev/shm/fmpl-$job-*" >/dev/null || fail "leftover /dev/shm files: $(ls /dev/shm/fmpl-"$job"-*)" ;;
*)
    fail "unknown case" ;;
esac
echo "PASS [$case_name]"
