#!/bin/sh
# A stand-in for ssh in fmplrun's multi-host tests (--launcher-exec): called
# as `fake_ssh.sh HOST COMMAND`, it runs COMMAND (one shell command line, as
# ssh would hand it to the remote shell) on this machine.
#   FAKE_SSH_HANG_HOST=H  for host H, hang instead (a host that never answers)
#   FAKE_SSH_FAIL_HOST=H  for host H, exit 255 as ssh does when it cannot connect
host=$1
shift
if [ "${FAKE_SSH_HANG_HOST:-}" = "$host" ]; then
    exec sleep 600
fi
if [ "${FAKE_SSH_FAIL_HOST:-}" = "$host" ]; then
    echo "ssh: connect to host $host port 22: Connection refused" >&2
    exit 255
fi
exec sh -c "$*"
