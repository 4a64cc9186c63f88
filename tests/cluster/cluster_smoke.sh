#!/bin/bash
# tests/cluster/cluster_smoke.sh: the test cluster of tools/testcluster works.
# Builds 2 hosts (or, with FMPL_TESTCLUSTER_REUSE=1 or when a healthy cluster
# is already up, uses that one and leaves it up), checks hostnames, name
# resolution, ssh both ways, private /dev/shm and /tmp, munge, isolation,
# srun (plain and --mpi=pmix) and 'kill'; then takes its own cluster down
# and checks that nothing is left.
# Exit: 0 pass, 1 fail, 77 skip (not root, or the kernel refuses namespaces).
set -uo pipefail

# As in cluster_begin.sh: the one-host runs' loopback pin is not for here.
unset FI_TCP_IFACE FI_SOCKETS_IFACE FI_UDP_IFACE
here=$(cd "$(dirname "$0")" && pwd)
TC=${FMPL_TESTCLUSTER:-$here/../../tools/testcluster}
STATE=${FMPL_TESTCLUSTER_STATE:-/run/fmpl-testcluster}

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: cluster tests need root (namespaces, a bridge, daemons)"; exit 77
fi
if ! err=$(unshare --net --uts --mount true 2>&1); then
    echo "SKIP: the kernel refuses namespaces here (unshare --net --uts --mount: $err)"; exit 77
fi

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
# check DESCRIPTION EXPECTED CMD...: CMD's output must be EXPECTED
check() {
    local what=$1 want=$2 got; shift 2
    got=$(timeout 60 "$@" 2>&1)
    if [ "$got" = "$want" ]; then ok "$what"; else
        bad "$what: expected [$want], got [$got] from: $*"; fi
}

t0=$SECONDS
own=0
if [ "${FMPL_TESTCLUSTER_REUSE:-0}" = 1 ] || "$TC" status >/dev/null 2>&1; then
    if ! "$TC" status >/dev/null 2>&1; then
        echo "FAIL: FMPL_TESTCLUSTER_REUSE=1 but no healthy cluster is up:"; "$TC" status; exit 1
    fi
    [ "$(cat "$STATE/nhosts")" -ge 2 ] || { echo "FAIL: the cluster that is up has fewer than 2 hosts"; exit 1; }
    echo "# using the cluster that is up (left up afterwards)"
else
    own=1
    trap '"$TC" down >/dev/null 2>&1 || true' EXIT
    t=$SECONDS
    if ! "$TC" up 2; then echo "FAIL: tools/testcluster up 2 failed"; exit 1; fi
    echo "# up 2: $((SECONDS - t)) s"
fi
eval "$("$TC" env)"

# hostnames, inside (exec) and through ssh
for h in fmpl-h1 fmpl-h2; do
    check "$h: hostname inside (exec)" "$h" "$TC" exec "$h" hostname
    check "$h: hostname through ssh from the machine" "$h" ssh "$h" hostname
done
# name resolution from within a host
ip2=$(getent hosts fmpl-h2 | awk '{print $1}')
check "fmpl-h1 resolves fmpl-h2 ($ip2)" "$ip2" "$TC" exec fmpl-h1 sh -c "getent hosts fmpl-h2 | awk '{print \$1}'"
# ssh both ways between the hosts (plain ssh, as launchers call it)
check "ssh fmpl-h1 -> fmpl-h2" fmpl-h2 ssh fmpl-h1 ssh fmpl-h2 hostname
check "ssh fmpl-h2 -> fmpl-h1" fmpl-h1 ssh fmpl-h2 ssh fmpl-h1 hostname
check "ssh fmpl-h1 -> itself" fmpl-h1 ssh fmpl-h1 ssh fmpl-h1 hostname
# the build tree is shared, at the same path
check "fmpl-h2 sees this directory at the same path" yes ssh fmpl-h2 "test -f '$here/cluster_smoke.sh' && echo yes"
# private /dev/shm and /tmp per host
f=fmpl-smoke-$$
for d in /dev/shm /tmp; do
    "$TC" exec fmpl-h1 touch "$d/$f"
    check "$d/$f made on fmpl-h1 is there on fmpl-h1" yes "$TC" exec fmpl-h1 sh -c "test -e $d/$f && echo yes"
    check "$d is private: not on fmpl-h2" no "$TC" exec fmpl-h2 sh -c "test -e $d/$f && echo yes || echo no"
    check "$d is private: not on the machine" no sh -c "test -e $d/$f && echo yes || echo no"
    "$TC" exec fmpl-h1 rm -f "$d/$f"
done
# own IPC namespace (SysV IPC, POSIX message queues) per host
i1=$("$TC" exec fmpl-h1 readlink /proc/self/ns/ipc); i2=$(ssh fmpl-h2 readlink /proc/self/ns/ipc)
if [ -n "$i1" ] && [ "$i1" != "$i2" ] && [ "$i1" != "$(readlink /proc/self/ns/ipc)" ]; then ok "IPC namespace per host"
else bad "IPC namespaces: fmpl-h1 $i1, fmpl-h2 $i2, machine $(readlink /proc/self/ns/ipc)"; fi
# isolation: only the test range, no default route
check "fmpl-h1 has no default route" "" "$TC" exec fmpl-h1 sh -c "ip route | grep '^default' || true"
check "fmpl-h1's interfaces are lo and eth0" "eth0 lo" "$TC" exec fmpl-h1 sh -c "ip -o link | awk -F': ' '{sub(/@.*/, \"\", \$2); print \$2}' | sort | tr '\n' ' ' | sed 's/ \$//'"
# munge: a credential made on the machine decodes on fmpl-h2
check "munge -n | ssh fmpl-h2 unmunge" "STATUS: Success (0)" sh -c \
    "munge -S '$STATE/munge/munge.socket' -n | ssh fmpl-h2 unmunge -S '$STATE/munge/munge.socket' | grep '^STATUS' | tr -s ' '"
# slurm
check "srun -N2 -n4 hostname: 2 tasks on each host" "2 fmpl-h1 2 fmpl-h2" sh -c \
    "srun -Q -N2 -n4 hostname | sort | uniq -c | awk '{printf \"%s%s %s\", s, \$1, \$2; s=\" \"}'"
check "srun --mpi=pmix -N2 -n2: PMIx ranks 0 and 1" "0 1" sh -c \
    "srun -Q --mpi=pmix -N2 -n2 printenv PMIX_RANK | sort -n | tr '\n' ' ' | sed 's/ \$//'"
# kill: the ranks on a host die, the host stays up
ssh fmpl-h2 sleep 60 & sp=$!
# (wait for sleep itself: killing the login shell while it still runs
# ~/.bashrc could leave that file's own locks behind, as pyenv's)
for i in $(seq 100); do "$TC" pids fmpl-h2 | grep -qE '^ *[0-9]+ +[0-9]+ (/usr/bin/)?sleep 60' && break; sleep 0.1; done
"$TC" kill fmpl-h2 >/dev/null
if timeout 10 tail --pid=$sp -f /dev/null; then ok "kill fmpl-h2 ends a job started there by ssh"
else bad "kill fmpl-h2 did not end 'ssh fmpl-h2 sleep 60'"; kill $sp 2>/dev/null; fi
check "fmpl-h2 still answers after kill" fmpl-h2 ssh fmpl-h2 hostname

if [ $own = 1 ]; then
    t=$SECONDS
    if "$TC" down; then ok "tools/testcluster down"; else bad "tools/testcluster down"; fi
    echo "# down: $((SECONDS - t)) s"
    trap - EXIT
    check "no network namespace left" "" sh -c "ip netns list | grep -E '^fmpl-' || true"
    check "no interface left" "" sh -c "ip -o link | grep -E ': fmpl' || true"
    check "no /etc/hosts entry left" "" sh -c "grep -E 'fmpl-(h[0-9]|ctl|head)|fmpl-testcluster' /etc/hosts || true"
    check "no ssh client config left" "" sh -c "ls /etc/ssh/ssh_config.d/fmpl-testcluster.conf 2>/dev/null || true"
    check "no state left" "" sh -c "ls -d '$STATE' '$STATE.lock' 2>/dev/null || true"
    check "no daemon left" "" sh -c "ps -eo args | grep -F '$STATE' | grep -v grep || true"
    check "nothing mounted left" "" sh -c "findmnt -rn -o TARGET | grep -F '$STATE' || true"
fi
echo "# cluster_smoke: $((SECONDS - t0)) s"
echo "cluster_smoke: $pass passed, $fail failed"
[ $fail = 0 ]
