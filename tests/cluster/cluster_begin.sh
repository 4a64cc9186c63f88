# Sourced by the multi-host tests (bash): skip (77) where no cluster can be
# built; use the healthy cluster that is up (left up afterwards), else bring
# up 2 hosts and take them down on exit (cluster_end, called by the EXIT
# trap the test sets, or by hand).  Sets TC (tools/testcluster) and the
# cluster's environment (SLURM_CONF, ...).
# The Makefile's one-host runs pin libfabric to the loopback interface
# (ONE_HOST_NET); ranks on the cluster's hosts choose their own.
unset FI_TCP_IFACE FI_SOCKETS_IFACE FI_UDP_IFACE
TC=${FMPL_TESTCLUSTER:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tools" && pwd)/testcluster}
"$TC" check || exit $?
cluster_own=0
if ! "$TC" status >/dev/null 2>&1; then
    cluster_own=1
    "$TC" up 2 || { "$TC" down >/dev/null 2>&1; echo "FAIL: tools/testcluster up 2 failed"; exit 1; }
fi
cluster_end() {
    if [ "$cluster_own" = 1 ]; then "$TC" down >/dev/null 2>&1; fi
    cluster_own=0
}
eval "$("$TC" env)"

# cluster_job_gone JOB PROG: within 4 s no process running PROG whose pid
# the test recorded in pids/pid.<pid> (the hosts share this machine's pid
# space) and no fmplrun proxy of JOB is alive, and no /dev/shm/fmpl-JOB-*
# is on any host.  0, or 1 with the reason on stdout.
cluster_job_gone() {
    local job=$1 prog=$2 f p h alive=0
    for _ in $(seq 40); do
        alive=0
        for f in pids/pid.*; do
            p=${f##*/pid.}
            [ -e "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] &&
                grep -q "$prog" "/proc/$p/cmdline" 2>/dev/null && alive=1
        done
        pgrep -f -- "--proxy-job $job " >/dev/null && alive=1
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    [ "$alive" = 0 ] || { echo "a process or proxy of the job is still alive"; return 1; }
    for h in fmpl-h1 fmpl-h2; do
        if "$TC" exec "$h" sh -c "ls /dev/shm/fmpl-$job-* 2>/dev/null" | grep -q .; then
            echo "/dev/shm/fmpl-$job-* left on $h"; return 1
        fi
    done
}
