#!/usr/bin/env python3
"""ABI checks of FMPL's mpi.h and libmpi against MPICH (tests/abi).

    abi_check.py values  --ours EXE --source abi_values.c --workdir DIR
        Build abi_values.c against MPICH's mpi.h, run it and FMPL's build of
        it (EXE), and compare every line: constants, handles, special
        pointers, predefined callbacks, type sizes and layouts.
    abi_check.py protos  --include DIR --cc CC --workdir DIR
        Declare everything FMPL's mpi.h declares (functions, PMPI_ twins,
        typedefs, library objects) once more after MPICH's mpi.h: the C
        compiler rejects any declaration whose type differs.  Then list the
        functions and MPI_ macros MPICH has and FMPL lacks, beyond the parts
        FMPL leaves out on purpose (MPICH's extensions).
    abi_check.py mpich-binary --libdir DIR --source FILE --workdir DIR
        Build FILE with MPICH's header and libraries, then run it with
        LD_LIBRARY_PATH=DIR so that it loads FMPL's libmpich.so.12.

Each exits 0 on success, 1 on a difference, 77 (skipped) when MPICH's
development files are not installed (Debian: libmpich-dev).

FMPL_TEST_PRELOAD (set by tests/abi/CMakeLists.txt in sanitizer builds)
names the sanitizer runtime to LD_PRELOAD into uninstrumented programs that
load FMPL's instrumented library.
"""

import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

SKIP = 77

# MPICH names FMPL does not provide, on purpose (see the header comment of
# include/mpi.h).  Functions and macros matching these are not reported.
OMITTED = [
    r"MPI_FILE_DEFINED",            # ROMIO's include guard
    r"MPI_INCLUDED",                # MPICH's include guards
    r"MPI_PROTO_H_INCLUDED",
    r"MPI_AINT_FMT_(DEC|HEX)_SPEC",  # MPICH's printf formats (not MPI)
]

# Declarations that differ from MPICH 4.0's on purpose, with the reason.
KNOWN_DIFFERENCES = {
    "MPI_Pready_list": "MPI-4.0 makes array_of_partitions const, MPICH 4.0 does not "
                       "(same ABI; callers passing int * compile with both)",
    "PMPI_Pready_list": "as MPI_Pready_list",
}

MPICH_INCLUDE_CANDIDATES = [
    "/usr/include/x86_64-linux-gnu/mpich",
    "/usr/include/aarch64-linux-gnu/mpich",
    "/usr/include/mpich",
    "/usr/lib64/mpich/include",
]


def omitted(name):
    return any(re.fullmatch(p, name) for p in OMITTED)


def skip(why):
    print(f"SKIPPED: {why} (install MPICH's development files, Debian: libmpich-dev)")
    sys.exit(SKIP)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def fmpl_env(extra_libdir=None):
    """Environment for a program that loads FMPL's library."""
    env = dict(os.environ)
    if extra_libdir:
        env["LD_LIBRARY_PATH"] = extra_libdir + (":" + env["LD_LIBRARY_PATH"]
                                                 if env.get("LD_LIBRARY_PATH") else "")
    if env.get("FMPL_TEST_PRELOAD"):
        env["LD_PRELOAD"] = env["FMPL_TEST_PRELOAD"]
    return env


def is_mpich_header(path):
    try:
        return "MPICH_VERSION" in pathlib.Path(path).read_text(errors="replace")
    except OSError:
        return False


class Mpich:
    """How to compile against MPICH: its include directory and a link line."""

    def __init__(self, cc, include=None):
        self.include = None
        self.mpicc = shutil.which("mpicc.mpich")
        if include and is_mpich_header(os.path.join(include, "mpi.h")):
            self.include = include
        elif self.mpicc:
            shown = run([self.mpicc, "-show"]).stdout
            for tok in shlex.split(shown):
                if tok.startswith("-I") and is_mpich_header(os.path.join(tok[2:], "mpi.h")):
                    self.include = tok[2:]
                    break
        if not self.include:
            for d in MPICH_INCLUDE_CANDIDATES:
                if is_mpich_header(os.path.join(d, "mpi.h")):
                    self.include = d
                    break
        if not self.include:
            skip("MPICH's mpi.h was not found")
        self.cc = cc

    def build(self, source, exe, extra=()):
        """Compile and link a program against MPICH."""
        if self.mpicc:
            cmd = [self.mpicc, *extra, source, "-o", exe, "-ldl"]
        else:
            cmd = [self.cc, "-I" + self.include, *extra, source, "-o", exe, "-lmpich", "-ldl"]
        r = run(cmd)
        if r.returncode != 0:
            if "-lmpich" in r.stderr or "cannot find" in r.stderr:
                skip("MPICH's library could not be linked: " + r.stderr.strip().splitlines()[-1])
            print("building against MPICH failed:", " ".join(cmd))
            print(r.stdout + r.stderr)
            sys.exit(1)


# ------------------------------------------------------------------ values

def cmd_values(args):
    mpich = Mpich(args.cc, args.mpich_include)
    work = pathlib.Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    exe = str(work / "abi_values_mpich")
    mpich.build(args.source, exe, ["-Wall"])
    outputs = {}
    for label, prog, env in (("FMPL", args.ours, fmpl_env()), ("MPICH", exe, None)):
        r = run([prog], env=env)
        if r.returncode != 0:
            print(f"{prog} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
            return 1
        outputs[label] = r.stdout.splitlines()
        (work / f"abi_values.{label.lower()}.txt").write_text(r.stdout)
    ours, theirs = outputs["FMPL"], outputs["MPICH"]
    # Constants newer than this MPICH (gen_abi_values.py's NEWER) print
    # "NAME absent" there: nothing to compare.
    newer = [b.split()[0] for a, b in zip(ours, theirs)
             if b.endswith(" absent") and a.split()[0] == b.split()[0]]
    if newer:
        print(f"not in this MPICH's header, not compared: {' '.join(newer)}")
    diffs = [(a, b) for a, b in zip(ours, theirs) if a != b and not b.endswith(" absent")]
    if len(ours) != len(theirs):
        print(f"different number of lines: FMPL {len(ours)}, MPICH {len(theirs)}")
        return 1
    for a, b in diffs:
        print(f"DIFFERENT  FMPL:  {a}\n           MPICH: {b}")
    print(f"{len(ours) - len(diffs)} of {len(ours)} values identical to MPICH's "
          f"(MPICH header: {mpich.include})")
    return 1 if diffs else 0


# ------------------------------------------------------------------ protos

def preprocess(cc, include, macros=False):
    cmd = [cc, "-E", "-P", "-I" + include, "-x", "c", "-"]
    if macros:
        cmd.insert(1, "-dM")
    r = run(cmd, input="#include <mpi.h>\n")
    if r.returncode != 0:
        print("preprocessing failed:", " ".join(cmd), "\n", r.stderr)
        sys.exit(1)
    return r.stdout


def statements(text):
    """Top-level declarations of preprocessed C text (those with a brace are
    dropped: structure and enum definitions)."""
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    out, cur, depth = [], [], 0
    for ch in text:
        cur.append(ch)
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth -= 1
        elif ch == ";" and depth == 0:
            st = " ".join("".join(cur).split())
            cur = []
            if "{" not in st and st != ";":
                out.append(st)
    return out


def declared_name(st):
    if st.startswith("typedef") and "(" not in st:
        return re.findall(r"\w+", st)[-1]
    if "(" in st:
        m = re.search(r"(\w+)\s*\(", st)
        return m.group(1) if m else None
    return re.findall(r"\w+", st)[-1]


def is_function(st):
    return "(" in st and not st.startswith("typedef")


def cmd_protos(args):
    mpich = Mpich(args.cc, args.mpich_include)
    work = pathlib.Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    failed = False

    ours = statements(preprocess(args.cc, args.include))
    theirs = statements(preprocess(args.cc, mpich.include))
    our_names = {declared_name(s) for s in ours}

    # 1. every declaration of ours, repeated after MPICH's header
    lines = ["#include <mpi.h>"]
    count = 0
    for st in ours:
        name = declared_name(st)
        if name in KNOWN_DIFFERENCES:
            print(f"known difference: {name}: {KNOWN_DIFFERENCES[name]}")
            continue
        lines += [f"#ifdef {name}", f"#undef {name}", "#endif", st]
        count += 1
    redecl = work / "redeclare.c"
    redecl.write_text("\n".join(lines) + "\n")
    r = run([args.cc, "-c", "-I" + mpich.include, str(redecl), "-o", os.devnull])
    if r.returncode != 0:
        failed = True
        print("declarations whose types differ from MPICH's:")
        print(r.stderr)
    else:
        print(f"{count} declarations (functions, PMPI_ twins, typedefs, objects) "
              "compatible with MPICH's")

    # 2. functions MPICH declares that we do not
    their_funcs = {declared_name(s) for s in theirs if is_function(s)}
    their_funcs = {n for n in their_funcs if n and re.match(r"P?MPI_|MPIR_", n)}
    wanted = {n for n in their_funcs if not omitted(n)}
    missing = sorted(wanted - our_names)
    if missing:
        failed = True
        print("functions MPICH declares and FMPL's mpi.h does not:", " ".join(missing))
    else:
        print(f"all {len(wanted)} of MPICH's functions are declared (the other "
              f"{len(their_funcs) - len(wanted)}, MPICH's own, are left out)")

    # 3. MPI_ macros MPICH defines that we do not
    def macro_names(include):
        text = preprocess(args.cc, include, macros=True)
        return set(re.findall(r"^#define\s+(P?MPI_\w+)", text, flags=re.M))
    our_macros, their_macros = macro_names(args.include), macro_names(mpich.include)
    wanted = {n for n in their_macros if not omitted(n)}
    missing = sorted(wanted - our_macros)
    if missing:
        failed = True
        print("macros MPICH defines and FMPL's mpi.h does not:", " ".join(missing))
    else:
        print(f"all {len(wanted)} of MPICH's MPI_ macros are defined (the other "
              f"{len(their_macros) - len(wanted)}, MPICH's own, are left out)")
    extra = sorted(our_macros - their_macros)
    if extra:
        print("macros here that MPICH has as enumerators (values compared by abi_values):",
              " ".join(extra))
    return 1 if failed else 0


# ------------------------------------------------------------ mpich-binary

def cmd_mpich_binary(args):
    mpich = Mpich(args.cc, args.mpich_include)
    work = pathlib.Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    exe = str(work / "mpich_built_client")
    mpich.build(args.source, exe, ["-Wall"])
    for bind_now in (False, True):
        env = fmpl_env(args.libdir)
        if bind_now:  # every symbol the program names resolved at load
            env["LD_BIND_NOW"] = "1"
        r = run([exe], env=env)
        print(r.stdout + r.stderr, end="")
        how = " with LD_BIND_NOW=1" if bind_now else ""
        if r.returncode != 0:
            print(f"the MPICH-built program failed on FMPL's library{how} "
                  f"(exit {r.returncode})")
            return 1
        if "FMPL" not in r.stdout:
            print(f"the MPICH-built program did not load FMPL's library{how}")
            return 1
    return check_exports(exe, args.libdir)


def dynamic_functions(lib):
    r = run(["nm", "-D", "--defined-only", lib])
    if r.returncode != 0:
        skip(f"nm cannot read {lib}: {r.stderr.strip()}")
    return {f[2] for f in (ln.split() for ln in r.stdout.splitlines())
            if len(f) == 3 and f[1] in "TW" and re.match(r"P?MPIX?_", f[2])}


def check_exports(exe, libdir):
    """Every MPI_/PMPI_/MPIX_ function MPICH's library exports, FMPL's exports
    too: a binary built against MPICH may name any of them."""
    if not shutil.which("nm"):
        print("nm not found: the export check is left out")
        return 0
    m = re.search(r"libmpich\.so\.12 => (\S+)", run(["ldd", exe]).stdout)
    if not m:
        print("MPICH's libmpich.so.12 not found through ldd: the export check is left out")
        return 0
    theirs = dynamic_functions(m.group(1))
    ours = dynamic_functions(os.path.join(libdir, "libmpi.so.12"))
    missing = sorted(theirs - ours)
    if missing:
        print(f"{len(missing)} functions MPICH's library exports and FMPL's does not:",
              " ".join(missing))
        return 1
    print(f"all {len(theirs)} MPI, PMPI and MPIX functions MPICH's library exports are "
          "exported by FMPL's")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("values", "protos", "mpich-binary"):
        p = sub.add_parser(name)
        p.add_argument("--cc", default=os.environ.get("CC", "cc"))
        p.add_argument("--mpich-include", default=None,
                       help="MPICH's include directory (default: found)")
        p.add_argument("--workdir", required=True)
        if name == "values":
            p.add_argument("--ours", required=True)
            p.add_argument("--source", required=True)
        elif name == "protos":
            p.add_argument("--include", required=True)
        else:
            p.add_argument("--libdir", required=True)
            p.add_argument("--source", required=True)
    args = ap.parse_args()
    return {"values": cmd_values, "protos": cmd_protos,
            "mpich-binary": cmd_mpich_binary}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
