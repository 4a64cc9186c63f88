#!/usr/bin/env python3
"""Build well-known MPI programs with FMPL's mpicc and run them unmodified.

    tools/testsuites/programs.py --prefix /opt/fmpl [--work /tmp/mpi-programs]
                                 [--only netpipe,hpcc] [--ranks 2 4]

The programs come from Debian's source packages (`apt-get source`, deb-src
must be enabled: --enable-deb-src adds an entry for bookworm, as
mpich_suite.py does):

  netpipe  NetPIPE 3.7's MPI module (NPmpi): ping-pong over a range of
           sizes up to 1 MiB, also with -a (nonblocking), -I (no cache
           reuse), -s (streaming) and -2 -a (both directions at once); two
           ranks only (its burst mode -B fails inside NetPIPE's MPI module
           whatever the library).  Passes when every run exits 0 and reaches the
           largest size.
  hpcc     HPC Challenge 1.5 (HPL, PTRANS, RandomAccess, FFT, STREAM,
           DGEMM, b_eff latency/bandwidth) with a small input and the
           reference BLAS (libblas-dev).  Passes when it exits 0, writes its
           summary with Success=1, and no check in hpccoutf.txt FAILED.

Nothing of these programs is kept in FMPL's repository; this script only
fetches, builds and drives them.  Output: one line per run and a summary;
the full outputs stay in the work directory.
"""
import argparse
import pathlib
import re
import subprocess
import sys
import time

from mpich_suite import enable_deb_src  # the same deb-src entry

HPCC_INPUT = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}          Ns
1            # of NBs
40           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}          Ps
{q}          Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""

HPL_MAKE = """SHELL = /bin/sh
CD = cd
CP = cp
LN_S = ln -s
MKDIR = mkdir
RM = /bin/rm -f
TOUCH = touch
ARCH = fmpl
TOPdir = ../../..
INCdir = $(TOPdir)/include
BINdir = $(TOPdir)/bin/$(ARCH)
LIBdir = $(TOPdir)/lib/$(ARCH)
HPLlib = $(LIBdir)/libhpl.a
LAlib = -lblas
F2CDEFS = -DAdd_ -DF77_INTEGER=int -DStringSunStyle
HPL_INCLUDES = -I$(INCdir) -I$(INCdir)/$(ARCH)
HPL_LIBS = $(HPLlib) $(LAlib) -lm
HPL_DEFS = $(F2CDEFS) $(HPL_INCLUDES)
CC = {mpicc}
CCNOOPT = $(HPL_DEFS)
CCFLAGS = $(HPL_DEFS) -O2
LINKER = {mpicc}
LINKFLAGS = $(CCFLAGS)
ARCHIVER = ar
ARFLAGS = r
RANLIB = echo
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, **kw)


def fetch(work, package, pattern):
    """The unpacked upstream source of a Debian source package."""
    found = sorted(work.glob(pattern))
    if found:
        return found[-1]
    work.mkdir(parents=True, exist_ok=True)
    # Only the upstream tarball is needed; a missing Debian part is no loss.
    sh(f"apt-get source --download-only {package}", cwd=work, stdout=subprocess.DEVNULL)
    tarballs = sorted(work.glob(f"{package}_*.orig.tar.*"))
    if not tarballs:
        sys.exit(f"apt-get source {package} failed: enable deb-src (--enable-deb-src)")
    sh(f"tar xf {tarballs[-1].name}", cwd=work, check=True)
    found = sorted(work.glob(pattern))
    if not found:
        sys.exit(f"{package}: no {pattern} in {tarballs[-1].name}")
    return found[-1]


def run(cmd, cwd, timeout, log):
    t0 = time.time()
    try:
        r = subprocess.run(cmd, shell=True, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        out, rc = r.stdout.decode(errors="replace"), r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") + "\n(timeout)\n", 124
    log.write_text(out)
    return rc, out, time.time() - t0


def netpipe(work, prefix, ranks, timeout):
    src = fetch(work, "netpipe", "NetPIPE-[0-9]*")
    mpicc = prefix / "bin" / "mpicc"
    if sh(f"make mpi MPICC={mpicc}", cwd=src, stdout=subprocess.DEVNULL).returncode:
        return [("netpipe build", False, 0.0, "make mpi failed")]
    results = []
    if 2 not in ranks:
        return results
    for opts in ["", "-a", "-I", "-s", "-2 -a"]:
        name = f"netpipe NPmpi {opts}".strip()
        log = work / f"netpipe{opts.replace(' ', '').replace('-', '_')}.log"
        rc, out, secs = run(f"{prefix}/bin/mpirun -n 2 --timeout {timeout} ./NPmpi -u 1048576 "
                            f"{opts}", src, timeout + 10, log)
        reached = re.search(r"^\s*\d+:\s+10485\d\d bytes", out, re.M) is not None
        results.append((name, rc == 0 and reached, secs,
                        "" if rc == 0 and reached else f"exit {rc}, see {log}"))
    return results


def hpcc(work, prefix, ranks, timeout):
    src = fetch(work, "hpcc", "hpcc-[0-9]*")
    mpicc = prefix / "bin" / "mpicc"
    (src / "hpl" / "Make.fmpl").write_text(HPL_MAKE.format(mpicc=mpicc))
    if not (src / "hpcc").exists():
        if sh("make arch=fmpl", cwd=src, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL).returncode:
            return [("hpcc build", False, 0.0, "make arch=fmpl failed (libblas-dev installed?)")]
    results = []
    for n in ranks:
        p = 2 if n % 2 == 0 and n >= 4 else 1
        rundir = work / f"hpcc-run{n}"
        rundir.mkdir(exist_ok=True)
        (rundir / "hpccinf.txt").write_text(HPCC_INPUT.format(n=800, p=p, q=n // p))
        outf = rundir / "hpccoutf.txt"
        if outf.exists():
            outf.unlink()
        rc, out, secs = run(f"{prefix}/bin/mpirun -n {n} --timeout {timeout} {src}/hpcc",
                            rundir, timeout + 10, rundir / "run.log")
        text = outf.read_text(errors="replace") if outf.exists() else ""
        failed = re.findall(r"^.*FAILED.*$", text, re.M)
        done = "End of Summary section" in text
        ok = rc == 0 and done and not failed and "Success=1" in text
        why = "" if ok else (f"exit {rc}" + ("" if done else ", no summary") +
                             (f", {failed[0].strip()}" if failed else "") + f"; see {rundir}")
        results.append((f"hpcc -n {n}", ok, secs, why))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", required=True, help="FMPL's installation prefix")
    ap.add_argument("--work", default="/tmp/mpi-programs")
    ap.add_argument("--only", default="netpipe,hpcc")
    ap.add_argument("--ranks", type=int, nargs="*", default=[2, 4])
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--enable-deb-src", action="store_true")
    a = ap.parse_args()
    if a.enable_deb_src:
        enable_deb_src()
    work, prefix = pathlib.Path(a.work), pathlib.Path(a.prefix).resolve()
    results = []
    for prog in a.only.split(","):
        fn = {"netpipe": netpipe, "hpcc": hpcc}.get(prog)
        if not fn:
            sys.exit(f"unknown program {prog!r} (netpipe, hpcc)")
        for name, ok, secs, why in fn(work, prefix, a.ranks, a.timeout):
            print(f"{'PASS' if ok else 'FAIL'} {name} ({secs:.1f}s){' ' + why if why else ''}",
                  flush=True)
            results.append(ok)
    print(f"# {sum(results)} of {len(results)} runs passed")
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
