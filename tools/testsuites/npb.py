#!/usr/bin/env python3
"""Build and run the NAS Parallel Benchmarks (NPB 3.4, MPI) on FMPL, MPICH
and Open MPI, and check that every run verifies.

    tools/testsuites/npb.py --npb DIR [--build BUILD_DIR] [--libs fmpl,mpich,openmpi]
                            [--kernels bt,cg,ep,ft,is,lu,mg,sp] [--classes S]
                            [--ranks 1,2,4] [--work DIR] [--json FILE] [--timeout SEC]

DIR is an NPB3.4-MPI source tree (or a directory holding one); without
--npb the environment's NPB_DIR is used.  NPB is not in any package
registry (it is downloaded from NASA), and nothing of it is kept in FMPL's
repository: this script copies the tree into WORK/<library>/ (never
building in the user's tree), writes config/make.def there for that
library's compiler wrappers (FMPL: BUILD_DIR/tools/mpifort and mpicc;
MPICH: mpif90.mpich and mpicc.mpich; Open MPI: mpif90.openmpi and
mpicc.openmpi; -O3 for all, and gfortran >= 10's -fallow-argument-mismatch
and -fallow-invalid-boz, which NPB's mpif.h-style calls and X'..' constants
need), and builds one binary per kernel and
class with NPB's own makefiles.  NPB 3.4 takes the process count at run time,
so one binary serves every rank count.  BT and SP run only at square rank
counts, the others at powers of two (EP at any).

Each run: FMPL under BUILD_DIR's fmplrun, MPICH under mpiexec.hydra, Open
MPI under mpirun.openmpi --oversubscribe --allow-run-as-root, with a time
limit.  A run passes when it exits 0 and prints "Verification = SUCCESSFUL".
Output: a line per run (passed/FAILED, Mop/s, seconds) and a summary; the
output of a failed run is kept in WORK/logs.  Exit status 0 when every run
passed, 1 when any failed, 77 (ctest's skip) when no NPB tree was given or
found.  bench/compare --npb builds and runs through this module's functions.
"""
import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77
ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = ["bt", "cg", "ep", "ft", "is", "lu", "mg", "sp"]
LIBS = ["fmpl", "mpich", "openmpi"]
LABEL = {"fmpl": "FMPL", "mpich": "MPICH", "openmpi": "Open MPI"}
# The compiler wrappers and launchers of the peers (FMPL's are in its build).
PEER_TOOLS = {"mpich": ("mpif90.mpich", "mpicc.mpich", "mpiexec.hydra"),
              "openmpi": ("mpif90.openmpi", "mpicc.openmpi", "mpirun.openmpi")}
# The MPI libraries each library's binaries must load (ldd), Fortran and C
# kernels alike: a binary that found another library's would measure that.
LINKED = {"fmpl": "libmpi.so.12", "mpich": "libmpich.so.12", "openmpi": "libmpi.so.40"}
# What would change which library or compiler a program gets.
ENV_DROPPED = ("LD_LIBRARY_PATH", "LD_PRELOAD", "MPICC_CC", "MPIFORT_FC", "OMPI_CC", "OMPI_FC",
               "MPICH_CC", "MPICH_FC", "MPICH_F90")

VERIFIED = re.compile(r"^\s*Verification\s*=\s*SUCCESSFUL\s*$", re.M)
FIGURES = {"mops": re.compile(r"^\s*Mop/s total\s*=\s*([0-9.eE+-]+)", re.M),
           "seconds": re.compile(r"^\s*Time in seconds\s*=\s*([0-9.eE+-]+)", re.M),
           "procs": re.compile(r"^\s*Total processes\s*=\s*(\d+)", re.M),
           "active": re.compile(r"^\s*Active procs\s*=\s*(\d+)", re.M)}

MAKE_DEF = """# Written by FMPL's tools/testsuites/npb.py for {label}.
# Headers: {headers}
MPIFC = {fc}
FLINK = $(MPIFC)
FMPI_LIB = {fmpi_lib}
FMPI_INC =
FFLAGS = {fflags}
FLINKFLAGS = $(FFLAGS)
MPICC = {cc}
CLINK = $(MPICC)
CMPI_LIB =
CMPI_INC =
CFLAGS = {cflags}
CLINKFLAGS = $(CFLAGS)
CC = gcc -g
BINDIR = ../bin
RAND = randi8
"""


# ---- finding the tree and the tools ----

def is_npb_tree(path):
    path = pathlib.Path(path)
    return (path / "config" / "make.def.template").is_file() and (path / "CG").is_dir() and \
        (path / "sys" / "setparams.c").is_file()


def find_npb(path):
    """The NPB3.4-MPI tree at path or directly under it, or None."""
    if not path:
        return None
    path = pathlib.Path(path).expanduser().resolve()
    if is_npb_tree(path):
        return path
    if path.is_dir():
        for sub in sorted(path.glob("NPB3.4*-MPI")) + sorted(path.glob("NPB*/NPB3.4*-MPI")):
            if is_npb_tree(sub):
                return sub
    return None


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ENV_DROPPED}
    env.update(extra or {})
    return env


def tools(lib, build):
    """(Fortran wrapper, C wrapper, launcher) of a library."""
    if lib == "fmpl":
        build = pathlib.Path(build)
        return (str(build / "tools" / "mpifort"), str(build / "tools" / "mpicc"),
                str(build / "tools" / "fmplrun" / "fmplrun"))
    return PEER_TOOLS[lib]


def missing_tools(lib, build):
    """The tools of lib that are not there (a library without them is left out)."""
    return [t for t in tools(lib, build) if not shutil.which(t)]


def gfortran_major(fc):
    """gfortran's major version behind a wrapper, or None for another compiler."""
    try:
        out = subprocess.run([fc, "--version"], capture_output=True, text=True,
                             env=clean_env(), timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"GNU Fortran .*?(\d+)\.\d+", out)
    return int(m.group(1)) if m else None


def make_def(lib, build):
    """config/make.def for lib: its wrappers, the same flags for every library."""
    fc, cc, _ = tools(lib, build)
    fflags = "-O3"
    major = gfortran_major(fc)
    if major is not None and major >= 10:
        # NPB passes buffers of several types to one MPI routine through
        # mpif.h, which declares no interfaces, and writes hexadecimal
        # constants as X'...' (randi8.f); gfortran >= 10 rejects both.
        fflags += " -fallow-argument-mismatch -fallow-invalid-boz"
    return MAKE_DEF.format(label=LABEL[lib], fc=fc, cc=cc, fflags=fflags, cflags="-O3",
                           fmpi_lib=" ".join("-L" + d for d in fortran_link_dirs(lib)),
                           headers=headers_digest(lib, build))


def headers_digest(lib, build):
    """A digest of FMPL's mpif.h and mpi.h, which the binaries compile in:
    in make.def, so that binaries built against other headers are rebuilt
    (prepare_tree).  The peers' installed headers do not change under us."""
    if lib != "fmpl":
        return "installed"
    digest = hashlib.sha256()
    for header in (pathlib.Path(build) / "fortran-modules" / "mpif.h", ROOT / "include" / "mpi.h"):
        digest.update(header.read_bytes() if header.exists() else b"-")
    return digest.hexdigest()[:16]


def fortran_link_dirs(lib):
    """Directories the Fortran link must search before the system's.
    Debian's mpif90.openmpi links -lmpi without Open MPI's library directory,
    so it gets whichever MPI the mpi-x86_64-linux-gnu alternative names
    (MPICH's, where both are installed): a binary then loads libmpich.so.12
    beside libmpi.so.40.  Open MPI's C wrapper knows the directory."""
    if lib != "openmpi":
        return []
    out = subprocess.run([PEER_TOOLS[lib][1], "--showme:libdirs"], capture_output=True,
                         text=True, env=clean_env()).stdout
    return out.split()


# ---- building ----

def prepare_tree(npb, work, lib, build):
    """WORK/<lib>/NPB3.4-MPI: a copy of the user's tree with lib's make.def.
    A copy of another source tree is replaced; a changed make.def throws
    away what was built with the old one."""
    npb = pathlib.Path(npb).resolve()
    tree = pathlib.Path(work).resolve() / lib / npb.name
    stamp = tree / ".fmpl-npb-source"
    if not stamp.exists() or stamp.read_text() != str(npb):
        if tree.exists():
            shutil.rmtree(tree)
        shutil.copytree(npb, tree, symlinks=True,
                        ignore=shutil.ignore_patterns("*.o", "*.mod", "bin", "make.def"))
        (tree / "bin").mkdir(exist_ok=True)
        stamp.write_text(str(npb))
    mdef = tree / "config" / "make.def"
    text = make_def(lib, build)
    if not mdef.exists() or mdef.read_text() != text:
        mdef.write_text(text)
        # NPB's makefiles do not make objects depend on make.def (common/
        # not at all): everything built with the old one goes.
        for pattern in ("bin/*.x", "*/*.o", "*/*.mod", "*/npbparams.h"):
            for old in tree.glob(pattern):
                old.unlink()
    return tree


def binary(tree, kernel, cls):
    return pathlib.Path(tree) / "bin" / ("%s.%s.x" % (kernel, cls))


def build_kernel(tree, kernel, cls, lib, build, logdir):
    """Builds kernel in class cls in tree (make KERNEL CLASS=CLS); returns the
    binary.  Raises RuntimeError, naming the log, when the build fails or the
    binary loads another MPI library than lib's."""
    tree = pathlib.Path(tree)
    exe = binary(tree, kernel, cls)
    if exe.exists():
        return exe
    kdir = tree / kernel.upper()
    # Objects of another class were compiled with its npbparams.h: start
    # afresh (NPB's makefiles track most, not all, of that dependency).
    for pattern in ("*.o", "*.mod", "npbparams.h"):
        for f in kdir.glob(pattern):
            f.unlink()
    logdir = pathlib.Path(logdir)
    logdir.mkdir(parents=True, exist_ok=True)
    log = logdir / ("build-%s-%s.%s.txt" % (lib, kernel, cls))
    with open(log, "w") as f:
        r = subprocess.run(["make", kernel, "CLASS=" + cls], cwd=tree, stdout=f,
                           stderr=subprocess.STDOUT, env=clean_env())
    if r.returncode != 0 or not exe.exists():
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise RuntimeError("%s: building %s.%s failed (%s); last lines:\n%s" % (
            LABEL[lib], kernel, cls, log, "\n".join("    " + l for l in tail)))
    check_linked(exe, lib, build)
    return exe


def check_linked(exe, lib, build):
    """ldd: exe loads lib's MPI library (FMPL's from its build tree) and no
    other library's."""
    out = subprocess.run(["ldd", str(exe)], capture_output=True, text=True,
                         env=clean_env()).stdout
    paths = {name: os.path.realpath(path) for name, path in
             re.findall(r"^\s*(lib\S+)\s+=>\s+(\S+)", out, re.M)}
    want = LINKED[lib]
    if want not in paths:
        raise RuntimeError("%s: %s does not load %s:\n%s" % (LABEL[lib], exe, want, out))
    fmpl_dir = os.path.realpath(build)
    from_fmpl = paths[want].startswith(fmpl_dir + os.sep)
    if from_fmpl != (lib == "fmpl"):
        raise RuntimeError("%s: %s loads %s from %s" % (LABEL[lib], exe, want, paths[want]))
    others = [LINKED[o] for o in LIBS if o != lib and LINKED[o] != want and LINKED[o] in paths]
    if others:
        raise RuntimeError("%s: %s also loads %s" % (LABEL[lib], exe, ", ".join(others)))


# ---- running ----

def ranks_for(kernel, ranks):
    """The rank counts of ranks at which NPB runs kernel: BT and SP at
    squares, EP at any, the others at powers of two."""
    def square(n):
        return int(n ** 0.5 + 0.5) ** 2 == n

    def power_of_two(n):
        return n > 0 and n & (n - 1) == 0
    ok = {"bt": square, "sp": square, "ep": lambda n: n > 0}.get(kernel, power_of_two)
    return [n for n in ranks if ok(n)]


def launch_command(lib, ranks, build, timeout):
    """(command prefix, environment) starting ranks processes of lib."""
    _, _, launcher = tools(lib, build)
    if lib == "fmpl":
        return [launcher, "-n", str(ranks), "--timeout", str(timeout)], {}
    if lib == "openmpi":
        return [launcher, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks)], {}
    return [launcher, "-n", str(ranks)], {}


def parse_output(text):
    """NPB's result block: {mops, seconds, procs, active, verified}; a
    figure it does not print is None."""
    out = {}
    for key, rx in FIGURES.items():
        m = rx.search(text)
        out[key] = (float(m.group(1)) if key in ("mops", "seconds") else int(m.group(1))) \
            if m else None
    out["verified"] = VERIFIED.search(text) is not None
    return out


def run_command(cmd, env, cwd, timeout, log):
    """Runs cmd in its own process group (a launcher's ranks die with it on
    timeout), output to log; returns (exit status or "timeout", seconds,
    output)."""
    t0 = time.time()
    with open(log, "w") as f:
        f.write("$ %s\n" % " ".join(str(c) for c in cmd))
        f.flush()
        p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=f,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            status = "timeout after %d s" % timeout
        except KeyboardInterrupt:  # the job is in a session of its own: end it too
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise
    return status, time.time() - t0, pathlib.Path(log).read_text(errors="replace")


def run_kernel(lib, exe, kernel, cls, ranks, build, timeout, logdir, launch=None, env=None,
               name=None):
    """One run of a built kernel; returns its record.  launch: (command
    prefix, environment) instead of launch_command's (bench/compare's
    launchers bind ranks to cores); env: added to the environment."""
    cmd, lenv = launch or launch_command(lib, ranks, build, timeout)
    logdir = pathlib.Path(logdir)
    logdir.mkdir(parents=True, exist_ok=True)
    log = logdir / ((name or "%s-%s.%s-%d" % (lib, kernel, cls, ranks)) + ".txt")
    status, wall, text = run_command(cmd + [str(exe)], clean_env(dict(lenv, **(env or {}))),
                                     pathlib.Path(exe).parent, timeout + 30, log)
    rec = dict(lib=lib, kernel=kernel, cls=cls, ranks=ranks, exit=status, wall=wall, log=str(log))
    rec.update(parse_output(text))
    rec["ok"] = status == 0 and rec["verified"]
    if not rec["ok"]:
        rec["why"] = ("exit %s" % status if status != 0 else "verification not SUCCESSFUL"
                      if rec["mops"] is not None else "no result printed")
    return rec


def run_line(rec):
    what = "%-7s %s.%s %d rank%s" % (LABEL[rec["lib"]], rec["kernel"], rec["cls"], rec["ranks"],
                                    "" if rec["ranks"] == 1 else "s")
    if rec["ok"]:
        return "passed  %-26s %12.2f Mop/s %9.2f s" % (what, rec["mops"], rec["seconds"])
    return "FAILED  %-26s %s (%s)" % (what, rec.get("why", ""), rec.get("log", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--npb", default=os.environ.get("NPB_DIR"),
                    help="the NPB3.4-MPI tree or its parent (default: $NPB_DIR)")
    ap.add_argument("--build", default=str(ROOT / "build"), help="FMPL's build directory")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--classes", default="S")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--work", help="where the trees are copied and built "
                                   "(default BUILD_DIR/npb-work)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--json", help="write every run's record here")
    a = ap.parse_args()

    npb = find_npb(a.npb)
    if npb is None:
        print("SKIP: no NPB 3.4 MPI source tree (%s); download NPB3.4 from NASA and pass "
              "--npb DIR or set NPB_DIR" % ("none given" if not a.npb else "none in " + a.npb))
        return SKIP
    libs = [lib for lib in a.libs.split(",") if lib]
    kernels = [k for k in a.kernels.split(",") if k]
    classes = [c.upper() for c in a.classes.split(",") if c]
    ranks = [int(n) for n in a.ranks.split(",") if n]
    for bad in [lib for lib in libs if lib not in LIBS] + [k for k in kernels if k not in KERNELS]:
        ap.error("unknown library or kernel %r" % bad)
    build = pathlib.Path(a.build).resolve()
    work = pathlib.Path(a.work or build / "npb-work").resolve()
    logdir = work / "logs"
    records, unbuilt = [], []
    for lib in libs:
        missing = missing_tools(lib, build)
        if missing:
            print("FAILED  %s: %s not found" % (LABEL[lib], ", ".join(missing)), flush=True)
            unbuilt.append(LABEL[lib])
            continue
        tree = prepare_tree(npb, work, lib, build)
        for kernel in kernels:
            counts = ranks_for(kernel, ranks)
            if not counts:
                continue
            for cls in classes:
                try:
                    exe = build_kernel(tree, kernel, cls, lib, build, logdir)
                except RuntimeError as e:
                    print("FAILED  %s" % e, flush=True)
                    unbuilt.append("%s %s.%s" % (LABEL[lib], kernel, cls))
                    continue
                for n in counts:
                    rec = run_kernel(lib, exe, kernel, cls, n, build, a.timeout, logdir)
                    print(run_line(rec), flush=True)
                    if rec["ok"]:
                        os.unlink(rec["log"])
                        rec["log"] = None
                    records.append(rec)
    passed = sum(1 for r in records if r["ok"])
    print("npb: %d of %d runs passed, %d failed, %d not built (%s; kernels %s, classes %s, "
          "ranks %s)" % (passed, len(records), len(records) - passed, len(unbuilt),
                         ", ".join(LABEL[l] for l in libs), ",".join(kernels),
                         ",".join(classes), ",".join(map(str, ranks))))
    for what in unbuilt:
        print("  not built: " + what)
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"lib": r["lib"], "kernel": r["kernel"], "class": r["cls"],
                        "ranks": r["ranks"], "mops": r["mops"], "seconds": r["seconds"],
                        "verified": r["verified"], "exit": r["exit"], "log": r["log"]}
                       for r in records], f, indent=1)
    return 1 if unbuilt or passed < len(records) else 0


if __name__ == "__main__":
    sys.exit(main())
