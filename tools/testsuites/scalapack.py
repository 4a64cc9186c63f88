#!/usr/bin/env python3
"""Run ScaLAPACK's own test programs on FMPL: on BLACS-FMPL, or with
ScaLAPACK's own MPI BLACS on FMPL's MPI library.

    tools/testsuites/scalapack.py --build BUILD_DIR [--ranks 1 2 4]
                                  [--programs xdlu xcllt ...] [--work DIR]
                                  [--blacs fmpl|mpi] [--without-lacon-fix]

The programs are Debian's (packages scalapack-mpi-test and
scalapack-test-common: drivers built against libscalapack-mpich.so.2.2,
whose BLACS are inside it, and their input files).  Each one runs under
FMPL's fmplrun with BUILD_DIR first on LD_LIBRARY_PATH, so that
libscalapack's libmpich.so.12 is FMPL's.  With --blacs fmpl (the default)
libblacs-fmpl.so is preloaded, so that BLACS-FMPL's symbols come before the
BLACS inside libscalapack (docs/blacs.md); the programs then call only the
BLACS, never MPI, so FMPL's Fortran MPI bindings are not needed.  With
--blacs mpi nothing replaces ScaLAPACK's MPI BLACS, which call FMPL's C MPI
(derived datatypes, user-defined reductions, communicator splits).

ScaLAPACK 2.2.1's condition estimators read an uninitialized variable
(p?lacon's EST, docs/blacs.md "Known problems"), so that the LU and Cholesky
drivers hang at 4 ranks on any MPI; BUILD_DIR's scalapack_lacon_est module
(tools/testsuites/scalapack_lacon_est.c) is preloaded too and applies
ScaLAPACK 2.2.3's fix.  --without-lacon-fix leaves it out.

A driver run passes when it exits 0, reports at least one test "completed
and passed residual checks" and none "completed and failed" (the LU,
Cholesky and QR drivers), or, for the PBLAS testers, when every row of the
summary table has a positive PASSED and a zero FAILED column.  BLACS's own
testers (xCbtest, xFbtest, 4 ranks) pass when all 22 families of
point-to-point, broadcast and combine tests report no failure, every
auxiliary test passes, and the run ends in their BLACS_ABORT test (exit 255).  Without the
packages the script says so and exits 77 (ctest's skip code).
Nothing of ScaLAPACK's is kept in FMPL's repository.
"""
import argparse
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

TESTS = pathlib.Path("/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests")
INPUTS = pathlib.Path("/usr/share/scalapack")
PACKAGES = "scalapack-mpi-test scalapack-test-common"
# BLACS's own testers, C and Fortran interfaces.
BLACS_TESTERS = ["xCbtest", "xFbtest"]
# LU, Cholesky and QR drivers for every type; the PBLAS testers of level 3
# (the xdgemm-style ones) for every type, levels 1 and 2 for d and z.
DEFAULT = ([f"x{t}{d}" for d in ("lu", "llt", "qr") for t in "sdcz"] +
           [f"PBLAS/{t}pb3tst" for t in "sdcz"] +
           [f"PBLAS/{t}pb{lv}tst" for t in "dz" for lv in (1, 2)] +
           BLACS_TESTERS)
SKIP = 77
# The PBLAS testers' input files name only grids of 2 and 4 processes; the
# BLACS testers' (bt.dat and the rest) grids of up to 4.
MIN_RANKS = {"PBLAS": 2, "xCbtest": 4, "xFbtest": 4}
# The BLACS testers end with a test of BLACS_ABORT: one process aborts while
# the others spin, so a run that passes exits 255 with the launcher naming
# the aborting rank.  Their report is 22 lines "<TYPE> <FAMILY> TESTS: n
# TESTS; p PASSED, s SKIPPED, f FAILED." (point-to-point, broadcast, sum,
# max, min for each type) and the auxiliary tests' PASSED/FAILED lines.
BLACS_FAMILIES = 22
BLACS_ABORT_STATUS = 255


def blacs_verdict(out, rc):
    """(ok, summary) of a BLACS tester's run."""
    if rc != BLACS_ABORT_STATUS or "called abort" not in out:
        return False, f"exit status {rc}, not the BLACS_ABORT test's {BLACS_ABORT_STATUS}"
    families = re.findall(r"^\s*[A-Z ]+ TESTS:\s+(\d+) TESTS;\s+(\d+) PASSED,\s+(\d+) SKIPPED,"
                          r"\s+(\d+) FAILED\.", out, re.M)
    aux_failed = re.findall(r"^\s*FAILED\s+(.+)$", out, re.M)
    aux_passed = re.findall(r"^\s*PASSED\s+(.+)$", out, re.M)
    failed = sum(int(f[3]) for f in families)
    passed = sum(int(f[1]) for f in families)
    if len(families) != BLACS_FAMILIES or failed or aux_failed or not aux_passed:
        return False, (f"{len(families)} of {BLACS_FAMILIES} families reported, {failed} failed; "
                       f"auxiliary tests failed: {', '.join(aux_failed) or 'none'}")
    return True, f"{passed} passed in {len(families)} families, {len(aux_passed)} auxiliary"


def verdict(program, out, rc):
    """(ok, summary) of one run."""
    if program in BLACS_TESTERS:
        return blacs_verdict(out, rc)
    if rc != 0:
        return False, f"exit status {rc}"
    if program.startswith("PBLAS/"):
        rows = re.findall(r"^\s*\|\s+(P\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", out, re.M)
        if not rows:
            return False, "no summary table"
        passed = sum(int(r[2]) for r in rows)
        failed = [r[0] for r in rows if int(r[3]) != 0]
        if failed or passed == 0:
            return False, f"{passed} passed, failed in {' '.join(failed) or '-'}"
        return True, f"{passed} passed in {len(rows)} routines"
    passed = [int(n) for n in re.findall(r"(\d+) tests completed and passed", out)]
    failed = [int(n) for n in re.findall(r"(\d+) tests completed and failed", out)]
    if not passed or sum(passed) == 0:
        return False, "no test passed"
    if sum(failed):
        return False, f"{sum(failed)} failed residual checks"
    return True, f"{sum(passed)} passed"


def sanitizer_preload(lib):
    """An ASan build's library needs the sanitizer runtimes first."""
    out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True).stdout
    return [m for m in re.findall(r"=>\s+(\S+lib(?:asan|ubsan)\.so\S*)", out)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="FMPL build directory")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--programs", nargs="+", default=DEFAULT)
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--blacs", choices=("fmpl", "mpi"), default="fmpl",
                    help="BLACS-FMPL (preloaded) or ScaLAPACK's own MPI BLACS")
    ap.add_argument("--without-lacon-fix", action="store_true",
                    help="do not preload the fix of p?lacon's uninitialized EST")
    args = ap.parse_args()

    missing = [str(TESTS / p) for p in args.programs if not (TESTS / p).exists()]
    if missing or not (INPUTS / "LU.dat").exists():
        print(f"SKIP: ScaLAPACK's test programs are not installed "
              f"(apt-get install {PACKAGES}); missing {missing[:3] or INPUTS / 'LU.dat'}")
        return SKIP
    build = pathlib.Path(args.build).resolve()
    fmplrun = build / "tools" / "fmplrun" / "fmplrun"
    blacs = build / "libblacs-fmpl.so"
    lacon_fix = build / "tools" / "testsuites" / "libscalapack_lacon_est.so"
    needs = [fmplrun, build / "libmpich.so.12"]
    preload = []
    if not args.without_lacon_fix:
        preload.append(lacon_fix)
    if args.blacs == "fmpl":
        preload.append(blacs)
    for need in needs + preload:
        if not need.exists():
            print(f"FAIL: {need} is not built")
            return 1

    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="fmpl-scalapack-"))
    work.mkdir(parents=True, exist_ok=True)
    for dat in (glob.glob(str(INPUTS / "*.dat")) + glob.glob(str(INPUTS / "PBLAS" / "*.dat")) +
                glob.glob(str(INPUTS / "BLACS" / "*.dat"))):
        shutil.copy(dat, work)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = f"{build}:{env.get('LD_LIBRARY_PATH', '')}".rstrip(":")
    env["LD_PRELOAD"] = " ".join(sanitizer_preload(build / "libmpich.so.12") +
                                 [str(p) for p in preload])
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")  # ScaLAPACK's own leaks are not ours
    # The BLACS testers' report is in rank 0's Fortran output, which the
    # BLACS_ABORT test ends by killing: unbuffered, it is all there.
    env["GFORTRAN_UNBUFFERED_PRECONNECTED"] = "y"

    failures = total = 0
    for program in args.programs:
        for n in args.ranks:
            if n < MIN_RANKS.get(program.split("/")[0], 1):
                continue
            total += 1
            cmd = [str(fmplrun), "-n", str(n), "--timeout", str(args.timeout),
                   str(TESTS / program)]
            run = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
            out = run.stdout + run.stderr
            ok, summary = verdict(program, out, run.returncode)
            print(f"{'passed' if ok else 'FAILED'}  {program:16s} {n} ranks: {summary}",
                  flush=True)
            if not ok:
                failures += 1
                log = work / f"{program.replace('/', '_')}-{n}.log"
                log.write_text(out)
                print(f"        output in {log}; last lines:")
                print("\n".join("        " + l for l in out.splitlines()[-15:]))
    print(f"scalapack ({args.blacs} BLACS): {total - failures} of {total} runs passed, "
          f"{failures} failed")
    if not args.work and failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
