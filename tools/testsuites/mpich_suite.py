#!/usr/bin/env python3
"""Run MPICH's MPI test suite (test/mpi of Debian's mpich source package)
against FMPL, and the same tests against MPICH itself to compare.

    tools/testsuites/mpich_suite.py --prefix /opt/fmpl [--peer fmpl|mpich|both]
        [--dirs pt2pt coll ...] [--also spawn io ...] [--only REGEX]
        [--work /tmp/mpich-suite] [--max-ranks 10] [--timeout 120]
        [--timeout-multiplier 1] [--log failures.txt] [--json results.json]
    tools/testsuites/mpich_suite.py --compare FMPL.json MPICH.json

It fetches the source with `apt-get source mpich` (deb-src must be enabled:
--enable-deb-src adds an entry for bookworm), copies the suite into a tree
of the library's own under --work, configures it with that library's
compiler wrapper (FMPL: PREFIX/bin/mpicc; MPICH 4.0.2: mpicc.mpich), builds
the chosen directories and runs them one test at a time at the rank counts
their testlists name (FMPL: fmplrun; MPICH: mpiexec.hydra), printing one
line per test and a summary per directory.  A test passes as MPICH's own
runner judges it: by its testlist's resultTest (default: exit 0 and a
"No Errors" line), and never when its time limit ran out.  spawn tests get
`fmplrun --universe-size` above their size (hydra sets no universe size,
so on MPICH they always spawn).  Exit status: 0 when every FMPL failure is
in KNOWN_FAILURES (each with its reason), 1 otherwise.

--peer both runs FMPL then MPICH and prints the two side by side with the
tests that pass on one and not on the other; every run also writes
WORK/results-<peer>.json, which --compare reads again later.  Each test's
output is kept in WORK/logs/<peer>/.  Nothing of MPICH's is kept in FMPL's
repository; this script only drives it.
"""
import argparse
import collections
import datetime
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from npb import clean_env, run_command  # noqa: E402  (a sibling driver's helpers)

# Everything FMPL implements.  threads, part, mpi_t and spawn joined once
# FMPL had MPI_THREAD_MULTIPLE, partitioned communication, MPI_T and dynamic
# processes (under fmplrun, on one host): the issue asks that every test
# passing on MPICH here passes on FMPL, so they are run by default rather
# than behind an option that would be forgotten.
DEFAULT_DIRS = ["basic", "attr", "coll", "comm", "datatype", "errhan", "group", "info",
                "init", "pt2pt", "rma", "topo", "part", "mpi_t", "threads", "spawn"]
# Directories whose tests the suite only builds when its configure enables
# them, with the option that does.  FMPL cannot open files yet, so io is not
# in DEFAULT_DIRS; naming it in --dirs or --also configures a tree of its
# own with it.  Enabling it everywhere would not be neutral: HAVE_MPI_IO
# changes comm/cmsplit_type.
FEATURE_DIRS = {"io": "romio"}
# --enable-spawn also adds threads/spawn (multispawn, th_taskmanager).
CONFIGURE = ("--enable-fortran=no --disable-cxx --enable-strictmpi --enable-rma --enable-part "
             "--enable-threads=multiple --enable-spawn")
PEERS = ("fmpl", "mpich")
LABEL = {"fmpl": "FMPL", "mpich": "MPICH"}
MPICH_CC, MPICH_EXEC = "mpicc.mpich", "mpiexec.hydra"
SPAWN_UNIVERSE = 64       # MPI_UNIVERSE_SIZE of spawn tests on FMPL (above any test's size)
DEFAULT_TIME_LIMIT = 180  # seconds, MPICH's runtests default
SLOW = 30                 # seconds from which a test is listed as slow


# Tests expected not to pass on FMPL, each with its reason: a regular
# expression matched against the whole test name ("dir/prog -n N args").
# The summary marks them, and the exit status counts only the failures of
# FMPL that are not here.  An entry whose test passes is reported as stale.
KNOWN_FAILURES = {
    r"mpi_t/qmpi_test -n 2": "not built: QMPI (QMPI_Context, QMPI_Register_tool_name) is MPICH's "
    "own tool interface, not MPI's; FMPL's mpi.h has none of it",
    r"part/nonblocking_pready -n 2": "sends and receives 0 elements of MPI_DATATYPE_NULL, which "
    "is no datatype: FMPL refuses it (MPI_ERR_TYPE), MPICH skips the check at count 0",
}


def known_reason(name):
    """The KNOWN_FAILURES reason for a test name, or None."""
    for pattern, reason in KNOWN_FAILURES.items():
        if re.fullmatch(pattern, name):
            return reason
    return None


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


def features(dirs):
    """The FEATURE_DIRS among dirs."""
    return sorted(f for f in FEATURE_DIRS
                  if any(d == f or d.startswith(f + "/") or d.endswith("/" + f) for d in dirs))


def configure_line(peer, prefix, feats):
    opts = " ".join(("--enable-" if f in feats else "--disable-") + FEATURE_DIRS[f]
                    for f in sorted(FEATURE_DIRS))
    if peer == "fmpl":
        wrapper = f"CC={prefix}/bin/mpicc --with-mpi={prefix}"
    else:
        # Not --with-mpi=/usr: /usr/bin/mpicc is whichever MPI the
        # alternatives select, maybe FMPL's or Open MPI's.
        wrapper = f"CC={MPICH_CC} MPICC={MPICH_CC} MPIEXEC={MPICH_EXEC}"
    return f"./configure {wrapper} {CONFIGURE} {opts}"


def prepare_tree(src, work, peer, prefix, feats):
    """A configured copy of the suite for peer and the features: the
    source stays pristine, and a copy configured with another line (another
    prefix, other features) is replaced."""
    tree = work / "-".join(["build", peer] + feats)
    line = configure_line(peer, prefix, feats)
    stamp = tree / ".configure-line"
    if stamp.exists() and stamp.read_text() == line and (tree / "Makefile").exists():
        return tree
    if tree.exists():
        shutil.rmtree(tree)
    if (src / "Makefile").exists():
        sys.exit(f"{src} was configured in place by an older version of this script: "
                 f"delete {work} (or use another --work)")
    shutil.copytree(src, tree, symlinks=True)
    print(f"configuring {tree} ...", flush=True)
    r = sh(line + " > configure.out 2>&1", cwd=tree, env=clean_env())
    if r.returncode:
        sys.exit(f"configure failed: see {tree}/configure.out")
    stamp.write_text(line)
    sh("nice -n 19 make -s -C util > /dev/null 2>&1; "
       "nice -n 19 make -s -C dtpools > /dev/null 2>&1", cwd=tree, env=clean_env())
    return tree


def parse_testlist(d):
    """(tests, subdirectories) of a directory's configured testlist.  tests:
    [(program, ranks, args, env, time_limit, expected)]; expected is how the
    run is judged (MPICH's resultTest): NoErrors (exit 0 and " No Errors"),
    TestStatus and TestErrFatal (the job must fail: a non-zero exit),
    TestStatusNoErrors (a non-zero exit and " No Errors").  A line naming
    a directory alone is a subdirectory (threads/ has only those)."""
    tests, subdirs = [], []
    path = d / "testlist"
    if not path.exists():
        return tests, subdirs
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) == 1 and (d / fields[0]).is_dir():
            subdirs.append(fields[0])
            continue
        if len(fields) < 2 or not fields[1].isdigit():
            continue  # a conditional line
        prog, ranks = fields[0], int(fields[1])
        args, env, limit, skip, expect = [], {}, None, False, "NoErrors"
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
    return tests, subdirs


def collect(tree, dname):
    """[(directory, test)] of dname and, recursively, the subdirectories its
    testlist names."""
    tests, subdirs = parse_testlist(tree / dname)
    out = [(dname, t) for t in tests]
    for sub in subdirs:
        out += collect(tree, f"{dname}/{sub}")
    return out


def launch(peer, prefix, ranks, limit, dname):
    """(command prefix, extra environment) starting ranks processes of a
    test in directory dname."""
    if peer == "fmpl":
        cmd = [str(prefix / "bin" / "fmplrun"), "-n", str(ranks), "--timeout", str(limit)]
        if "spawn" in dname.split("/"):
            # Hydra sets no MPI_UNIVERSE_SIZE, so on MPICH these tests
            # always spawn; fmplrun's default (the CPUs) would make them
            # skip spawning at 2 ranks on a 2-core machine.
            cmd += ["--universe-size", str(max(SPAWN_UNIVERSE, ranks))]
        return cmd, {}
    return [MPICH_EXEC, "-n", str(ranks)], {"MPIEXEC_TIMEOUT": str(limit)}


def judge(expect, status, out):
    if expect == "NoErrors":
        return status == 0 and no_errors(out)
    if expect == "TestStatusNoErrors":
        return status != 0 and no_errors(out)
    return status != 0


def build_one(d, prog):
    """Builds a program the directory's make left out, as MPICH's runner
    does before each test (its Makefile may build some only on demand, as
    rma's MPIX tests under --enable-strictmpi); returns the end of make's
    output, the compiler's complaint when it failed."""
    r = sh(f"nice -n 19 make {prog}", cwd=d, capture_output=True, text=True, errors="replace",
           env=clean_env())
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    return "\n".join(lines[-12:])


def run_suite(a, peer, src, prefix):
    """Runs a.dirs on peer; returns the list of result records."""
    work = pathlib.Path(a.work)
    tree = prepare_tree(src, work, peer, prefix, features(a.dirs))
    logdir = work / "logs" / peer
    shutil.rmtree(logdir, ignore_errors=True)
    logdir.mkdir(parents=True)
    log = open(a.log + ("" if a.peer != "both" else "." + peer), "w") if a.log else None
    results, seen = [], collections.Counter()
    print(f"== {LABEL[peer]}: {tree}", flush=True)
    try:
        run_dirs(a, peer, prefix, tree, logdir, log, results, seen)
        interrupted = False
    except KeyboardInterrupt:  # a slow machine: keep what ran
        print(f"interrupted: {len(results)} test(s) ran on {LABEL[peer]}", flush=True)
        interrupted = True
    doc = dict(peer=peer, date=datetime.date.today().isoformat(), dirs=a.dirs,
               max_ranks=a.max_ranks, configure=configure_line(peer, prefix, features(a.dirs)),
               interrupted=interrupted, results=results)
    paths = [work / f"results-{peer}.json"]
    if a.json:
        path = pathlib.Path(a.json)
        paths.append(path if a.peer != "both" else path.with_suffix(f".{peer}{path.suffix}"))
    for path in paths:
        path.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def run_dirs(a, peer, prefix, tree, logdir, log, results, seen):
    """Runs a.dirs' tests on peer in tree, appending to results."""
    for top in a.dirs:
        if not (tree / top).is_dir():
            print(f"no directory {top} in the suite", flush=True)
            continue
        sh("nice -n 19 make -k -j2 > make.out 2>&1", cwd=tree / top, env=clean_env())
        for dname, (prog, ranks, args, env, limit, expect) in collect(tree, top):
            name = f"{dname}/{prog} -n {ranks} {' '.join(args)}".strip()
            if a.only and not re.search(a.only, name):
                continue
            if ranks > a.max_ranks:
                continue
            seen[name] += 1
            if seen[name] > 1:  # a testlist may name the same run twice
                name += f" (#{seen[name]})"
            limit = min(int((limit or DEFAULT_TIME_LIMIT) * a.timeout_multiplier), a.timeout)
            rec = dict(name=name, dir=dname, status="unbuilt", seconds=0.0, limit=limit)
            exe = tree / dname / prog
            logname = re.sub(r"[^\w.-]+", "_", name) + ".txt"
            why = "" if exe.exists() else build_one(tree / dname, prog)
            if not exe.exists():
                (logdir / logname).write_text(why + "\n")
                print(f"NOT BUILT {name}", flush=True)
                if log:
                    log.write(f"==== NOT BUILT {name}\n{why}\n")
                results.append(rec)
                continue
            cmd, lenv = launch(peer, prefix, ranks, limit, dname)
            # The launcher ends the job at the limit; the margin is for a
            # launcher that does not.
            status, secs, out = run_command(cmd + [str(exe)] + args, clean_env({**lenv, **env}),
                                            exe.parent, limit + 30, logdir / logname)
            timed_out = not isinstance(status, int) or secs >= limit
            # A test expected to fail may be one the launcher must end
            # (init/timeout): only judge() decides.
            ok = judge(expect, status if isinstance(status, int) else -9, out)
            rec.update(status="pass" if ok else "timeout" if timed_out else "fail",
                       seconds=round(secs, 1), exit=status if isinstance(status, int) else None)
            results.append(rec)
            print(f"{'ok  ' if ok else 'FAIL'} {name} ({secs:.1f}s{', timed out' if timed_out else ''})",
                  flush=True)
            if not ok and log:
                log.write(f"==== {name} (exit {status}, {secs:.1f}s)\n{out[-3000:]}\n")
                log.flush()


def summary(doc):
    res = doc["results"]
    by_dir = collections.OrderedDict()
    for r in res:
        by_dir.setdefault(r["dir"], collections.Counter())[r["status"]] += 1
    print(f"\n{LABEL.get(doc['peer'], doc['peer'])}: per directory (passed of run; failed, "
          "timed out, not built)" + ("; interrupted, partial" if doc.get("interrupted") else ""))
    for d, c in by_dir.items():
        print(f"  {d:16} {c['pass']:4} of {sum(c.values()) - c['unbuilt']:4}; {c['fail']} failed, "
              f"{c['timeout']} timed out, {c['unbuilt']} not built")
    total = collections.Counter(r["status"] for r in res)
    print(f"  {'total':16} {total['pass']:4} of {len(res) - total['unbuilt']:4}; {total['fail']} "
          f"failed, {total['timeout']} timed out, {total['unbuilt']} not built")
    known = doc["peer"] == "fmpl"
    for r in res:
        if r["status"] != "pass":
            reason = known_reason(r["name"]) if known else None
            print(f"  {r['status'].upper():8} {r['name']}" + (f"  (known: {reason})" if reason
                                                                else ""))
    if known:
        for r in res:
            if r["status"] == "pass" and known_reason(r["name"]):
                print(f"  passes now, listed in KNOWN_FAILURES: {r['name']}")
    slow = sorted((r for r in res if r["seconds"] >= SLOW), key=lambda r: -r["seconds"])
    if slow:
        print(f"  slow (>= {SLOW} s):")
        for r in slow:
            print(f"    {r['seconds']:6.0f} s {r['name']}")


def compare(docs):
    """Side by side per directory, then the tests whose verdicts differ."""
    a, b = docs
    la, lb = (LABEL.get(d["peer"], d["peer"]) for d in docs)
    ra = {r["name"]: r for r in a["results"]}
    rb = {r["name"]: r for r in b["results"]}
    dirs = list(dict.fromkeys([r["dir"] for r in a["results"] + b["results"]]))
    print(f"\n{'directory':16} {la:>16} {lb:>16}   (passed/run, +N not built)")

    def cell(rs, d=None):
        sel = [r for r in rs.values() if d is None or r["dir"] == d]
        unbuilt = sum(r["status"] == "unbuilt" for r in sel)
        txt = f"{sum(r['status'] == 'pass' for r in sel)}/{len(sel) - unbuilt}"
        return txt + (f" +{unbuilt}" if unbuilt else "")
    for d in dirs:
        print(f"{d:16} {cell(ra, d):>16} {cell(rb, d):>16}")
    print(f"{'total':16} {cell(ra):>16} {cell(rb):>16}")
    for dx, lx, ly, rx, ry in ((a, la, lb, ra, rb), (b, lb, la, rb, ra)):
        worse = [n for n, r in rx.items() if r["status"] != "pass" and ry.get(n, {}).get("status")
                 == "pass"]
        print(f"\nnot passing on {lx}, passing on {ly}: {len(worse)}")
        for n in worse:
            reason = known_reason(n) if dx["peer"] == "fmpl" else None
            print(f"  {rx[n]['status']:8} {n}" + (f"  (known: {reason})" if reason else ""))
    only = sorted(set(ra) ^ set(rb))
    if only:
        print(f"\nrun on one side only: {', '.join(only)}")


def stop(signum, frame):
    """SIGINT or SIGTERM: end the running test and keep what ran."""
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", help="FMPL's installation prefix (peers fmpl and both)")
    ap.add_argument("--peer", choices=PEERS + ("both",), default="fmpl",
                    help="the library to test: FMPL, MPICH 4.0.2 (mpicc.mpich, "
                    "mpiexec.hydra), or both one after the other, compared")
    ap.add_argument("--work", default="/tmp/mpich-suite")
    ap.add_argument("--dirs", nargs="*", default=DEFAULT_DIRS,
                    help="directories of test/mpi (a subdirectory as threads/pt2pt); "
                    f"default: {' '.join(DEFAULT_DIRS)}")
    ap.add_argument("--also", nargs="*", default=[],
                    help="directories added to --dirs, e.g. spawn io")
    ap.add_argument("--only", help="regular expression on test names")
    ap.add_argument("--max-ranks", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds a test may take at most (its testlist may allow less)")
    ap.add_argument("--timeout-multiplier", type=float, default=1.0,
                    help="scales the testlists' limits (180 s unless named), as "
                    "MPICH's MPITEST_TIMEOUT_MULTIPLIER; --timeout still caps them")
    ap.add_argument("--enable-deb-src", action="store_true")
    ap.add_argument("--log", default=None, help="write failing outputs here")
    ap.add_argument("--json", default=None, help="write the results here too")
    ap.add_argument("--compare", nargs=2, metavar="JSON",
                    help="compare two earlier runs' results, run nothing")
    a = ap.parse_args()
    if a.compare:
        docs = [json.loads(pathlib.Path(p).read_text()) for p in a.compare]
        for doc in docs:
            summary(doc)
        compare(docs)
        return 0
    a.dirs = list(dict.fromkeys(a.dirs + a.also))
    signal.signal(signal.SIGINT, stop)  # also when started in the background
    signal.signal(signal.SIGTERM, stop)
    peers = PEERS if a.peer == "both" else (a.peer,)
    if "fmpl" in peers and not a.prefix:
        ap.error("--prefix (FMPL's installation) is required unless --peer mpich")
    if "mpich" in peers and not (shutil.which(MPICH_CC) and shutil.which(MPICH_EXEC)):
        sys.exit(f"{MPICH_CC} or {MPICH_EXEC} missing: apt-get install mpich libmpich-dev")
    if a.enable_deb_src:
        enable_deb_src()
    prefix = pathlib.Path(a.prefix).resolve() if a.prefix else None
    src = fetch(pathlib.Path(a.work))
    docs = []
    for peer in peers:
        docs.append(run_suite(a, peer, src, prefix))
        if docs[-1]["interrupted"]:
            break
    for doc in docs:
        summary(doc)
    if len(docs) == 2:
        compare(docs)
    unexpected = [r["name"] for doc in docs if doc["peer"] == "fmpl" for r in doc["results"]
                  if r["status"] != "pass" and not known_reason(r["name"])]
    if unexpected:
        print(f"\nFMPL: {len(unexpected)} failure(s) not in KNOWN_FAILURES")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
