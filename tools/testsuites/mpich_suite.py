#!/usr/bin/env python3
"""Run MPICH's MPI test suite (test/mpi of Debian's mpich source package)
against FMPL: every program is compiled with FMPL's mpicc and started with
fmplrun at the rank counts its testlist names.

    tools/testsuites/mpich_suite.py --prefix /opt/fmpl [--dirs pt2pt coll ...]
                                    [--work /tmp/mpich-suite] [--max-ranks 10]

It fetches the source with `apt-get source mpich` (deb-src must be enabled:
--enable-deb-src adds an entry for bookworm), configures the suite with
FMPL's compiler wrapper, builds the chosen directories and runs them one
test at a time, printing one line per test and a summary.  A test passes
when it exits 0 and prints "No Errors", as MPICH's own runner requires.
Nothing of MPICH's is kept in FMPL's repository; this script only drives it.
"""
import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

DEFAULT_DIRS = ["basic", "attr", "coll", "comm", "datatype", "errhan", "group", "info",
                "init", "pt2pt", "rma"]


def no_errors(out):
    """MPICH's runner accepts " No Errors" and " No errors" on a line alone."""
    return re.search(r"^\s*No [Ee]rrors\s*$", out, re.M) is not None


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, **kw)


def fetch(work):
    srcs = sorted(work.glob("mpich-*/test/mpi"))
    if srcs:
        return srcs[-1]
    work.mkdir(parents=True, exist_ok=True)
    r = sh("apt-get source --download-only mpich", cwd=work)
    if r.returncode:
        sys.exit("apt-get source mpich failed: enable deb-src (--enable-deb-src)")
    tarball = sorted(work.glob("mpich_*.orig.tar.*"))[-1]
    sh(f"tar xf {tarball.name}", cwd=work, check=True)
    return sorted(work.glob("mpich-*/test/mpi"))[-1]


def enable_deb_src():
    path = pathlib.Path("/etc/apt/sources.list.d/fmpl-deb-src.sources")
    if not path.exists():
        path.write_text("Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
                        "Components: main\n"
                        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    sh("apt-get update -qq", check=True)


def configure(suite, prefix):
    if (suite / "Makefile").exists():
        return
    cmd = (f"./configure CC={prefix}/bin/mpicc --with-mpi={prefix} --enable-fortran=no "
           "--disable-cxx --disable-romio --disable-spawn --disable-part "
           "--enable-strictmpi")
    r = sh(cmd + " > configure.out 2>&1", cwd=suite)
    if r.returncode:
        sys.exit(f"configure failed: see {suite}/configure.out")


def parse_testlist(d):
    """[(program, ranks, args, env, time_limit, expected)] of a directory's
    testlist; expected is how the run is judged (MPICH's resultTest):
    NoErrors (exit 0 and " No Errors"), TestStatus and TestErrFatal (the job
    must fail: a non-zero exit), TestStatusNoErrors (a non-zero exit and
    " No Errors")."""
    tests = []
    path = d / "testlist"
    if not path.exists():
        return tests
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) < 2 or not fields[1].isdigit():
            continue  # a subdirectory or a conditional line
        prog, ranks = fields[0], int(fields[1])
        args, env, limit, skip, expect = [], {}, 180, False, "NoErrors"
        for opt in fields[2:]:
            key, _, val = opt.partition("=")
            if key == "arg":
                args.append(val)
            elif key == "env":
                k, _, v = val.partition("=")
                env[k] = v
            elif key == "resultTest":
                expect = val
            elif key == "timeLimit":
                limit = int(val)
            elif key == "xfail" or (key == "strict" and val == "false"):
                skip = True
            elif key == "mpiversion" and float(val) > 4.0:
                skip = True
        if not skip:
            tests.append((prog, ranks, args, env, limit, expect))
    return tests


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", required=True, help="FMPL's installation prefix")
    ap.add_argument("--work", default="/tmp/mpich-suite")
    ap.add_argument("--dirs", nargs="*", default=DEFAULT_DIRS)
    ap.add_argument("--only", help="regular expression on test names")
    ap.add_argument("--max-ranks", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds a test may take at most (its testlist may allow less)")
    ap.add_argument("--enable-deb-src", action="store_true")
    ap.add_argument("--log", default=None, help="write failing outputs here")
    a = ap.parse_args()
    if a.enable_deb_src:
        enable_deb_src()
    prefix = pathlib.Path(a.prefix).resolve()
    suite = fetch(pathlib.Path(a.work))
    configure(suite, prefix)
    sh("make -s -C util > /dev/null 2>&1; make -s -C dtpools > /dev/null 2>&1", cwd=suite)
    fmplrun = prefix / "bin" / "fmplrun"
    passed, failed, unbuilt = [], [], []
    log = open(a.log, "w") if a.log else None
    for dname in a.dirs:
        d = suite / dname
        sh("make -k -j2 > make.out 2>&1", cwd=d)
        for prog, ranks, args, env, limit, expect in parse_testlist(d):
            name = f"{dname}/{prog} -n {ranks} {' '.join(args)}".strip()
            if a.only and not re.search(a.only, name):
                continue
            if ranks > a.max_ranks:
                continue
            exe = d / prog
            if not exe.exists():
                unbuilt.append(name)
                print(f"NOT BUILT {name}", flush=True)
                continue
            cmd = [str(fmplrun), "-n", str(ranks), "--timeout", str(min(limit, a.timeout)), str(exe)] + args
            t0 = time.time()
            r = subprocess.run(cmd, cwd=d, env={**os.environ, **env}, capture_output=True,
                               text=True, errors="replace")
            out = r.stdout + r.stderr
            if expect == "NoErrors":
                ok = r.returncode == 0 and no_errors(out)
            elif expect == "TestStatusNoErrors":
                ok = r.returncode != 0 and no_errors(out)
            else:
                ok = r.returncode != 0
            (passed if ok else failed).append(name)
            print(f"{'ok  ' if ok else 'FAIL'} {name} ({time.time() - t0:.1f}s)", flush=True)
            if not ok and log:
                log.write(f"==== {name} (exit {r.returncode})\n{out[-3000:]}\n")
                log.flush()
    total = len(passed) + len(failed)
    print(f"\n{len(passed)} of {total} passed, {len(failed)} failed, {len(unbuilt)} not built")
    for n in failed:
        print("  FAIL", n)
    for n in unbuilt:
        print("  NOT BUILT", n)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
