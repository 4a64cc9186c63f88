#!/usr/bin/env python3
"""Every function include/mpi.h declares, MPI_ and PMPI_ names alike, is
defined by the library: a program that calls any of them links with FMPL's
mpicc, and a binary built against MPICH's header loads.  (What FMPL does not
implement yet is defined by src/api/mpi/unsupported.c and reports
MPI_ERR_UNSUPPORTED_OPERATION.)

    functions_complete.py include/mpi.h path/to/libmpi.so.12
"""
import re
import subprocess
import sys


def declared(header):
    text = re.sub(r"/\*.*?\*/", "", open(header).read(), flags=re.S)
    names = set()
    for decl in re.findall(r"[^;{}#]+;", text):
        m = re.search(r"\b(P?MPI_\w+)\s*\([^()]*\)\s*;$", " ".join(decl.split()))
        if m and "typedef" not in decl:
            names.add(m.group(1))
    return names


def defined(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split()}


def main():
    header, library = sys.argv[1:3]
    want = declared(header)
    have = defined(library)
    missing = sorted(want - have)
    print(f"{len(want)} functions declared, {len(want) - len(missing)} defined")
    if missing:
        print("not defined by the library:", " ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
