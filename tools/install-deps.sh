#!/bin/sh
# Install what building and testing FMPL needs, on Debian or Ubuntu.
# As root it runs apt-get; otherwise it prints the one command to run.
set -e
need=""
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v ninja >/dev/null 2>&1 || need="$need ninja-build"
command -v make >/dev/null 2>&1 || need="$need make"
command -v strace >/dev/null 2>&1 || need="$need strace"
command -v python3 >/dev/null 2>&1 || need="$need python3"   # tests/abi
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "install-deps: installing$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq $need >/dev/null
else
    echo "install-deps: missing$need; run:"
    echo "  sudo apt-get install -y$need"
    exit 1
fi
