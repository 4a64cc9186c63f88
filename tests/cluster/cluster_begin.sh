# Sourced by the multi-host tests (bash): skip (77) where no cluster can be
# built; use the healthy cluster that is up (left up afterwards), else bring
# up 2 hosts and take them down on exit (cluster_end, called by the EXIT
# trap the test sets, or by hand).  Sets TC (tools/testcluster) and the
# cluster's environment (SLURM_CONF, ...).
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
