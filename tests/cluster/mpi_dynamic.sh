#!/bin/bash
# tests/cluster/mpi_dynamic.sh: MPI dynamic processes across
# tools/testcluster's namespace hosts (issue 16): the worlds of one fmplrun
# --hosts job link over the network backend (src/fabric/fabric_link.c).
#  1. mpi_spawn at 1 rank on fmpl-h1 (1 slot): its children go to fmpl-h2;
#     every byte of the data both ways is checked by the program, and the
#     intercommunicator's collectives, spawn_multiple and the errors run
#     across the hosts;
#  2. mpi_connect at 2 ranks on fmpl-h1 (2 slots): its two spawned worlds
#     run on fmpl-h2 and meet through the name service and accept/connect
#     (shared memory between them, the network to their parents), then the
#     parents join over a socket.
# Both must end with status 0 and their own "ok" line.
# Uses a healthy cluster that is up (left up), else builds its own (2 hosts).
#   mpi_dynamic.sh FMPLRUN MPI_SPAWN MPI_CONNECT WORKDIR
# Exit: 0 pass, 1 fail, 77 skip (not root, or the kernel refuses namespaces).
set -uo pipefail
FMPLRUN=$1 SPAWN=$2 CONNECT=$3 WORK=$4
. "$(dirname "$0")/cluster_begin.sh"
trap cluster_end EXIT
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

pass=0 fails=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; for f in out err; do [ -s "$f" ] && { echo "--- $f:"; head -c 3000 "$f"; }; done; }

timeout 120 "$FMPLRUN" --hosts fmpl-h1:1,fmpl-h2:4 -n 1 --timeout 100 "$SPAWN" >out 2>err </dev/null
status=$?
if [ $status = 0 ] && grep -q '^spawn ok' out; then
    ok "MPI_Comm_spawn onto fmpl-h2, data and collectives across the hosts"
else bad "MPI_Comm_spawn across the hosts (status $status)"; fi

timeout 120 "$FMPLRUN" --hosts fmpl-h1:2,fmpl-h2:4 -n 2 --timeout 100 "$CONNECT" >out 2>err </dev/null
status=$?
if [ $status = 0 ] && grep -q '^connect ok on 2 ranks' out; then
    ok "two worlds on fmpl-h2 meet by accept/connect; their parents on fmpl-h1"
else bad "accept/connect with worlds across the hosts (status $status)"; fi

cd / && rm -rf "$WORK"
echo "mpi_dynamic: $pass passed, $fails failed"
[ "$fails" = 0 ]
