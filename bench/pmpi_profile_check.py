#!/usr/bin/env python3
"""The test bench_pmpi_profile: run bench/pmpi_profile_test.c (or its
Fortran twin) at 2 ranks with bench/pmpi_profile.c preloaded, and check that
the profiler's report names exactly the calls the program made, rank by
rank (the JSON report) and summed (the printed table): the count and the
bytes of every wrapped function (zero for the ones the program does not
call).  No time is checked.

    pmpi_profile_check.py --fmplrun FMPLRUN --profiler LIB --program PROG
                          --kind c|fortran [--preload-first LIB]

--preload-first: a library that must come before the profiler in
LD_PRELOAD (the sanitizer build's runtime)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# {function: ((calls, bytes) of rank 0, (calls, bytes) of rank 1)}, from the
# test programs (their comments count the calls).  Bytes: what the call names
# on that rank (bench/pmpi_profile.c's header).
EXPECTED_C = {
    "MPI_Send": ((5, 4 * (1 + 2 + 3 + 4 + 5)), (0, 0)),
    "MPI_Ssend": ((1, 4), (0, 0)),
    "MPI_Recv": ((0, 0), (6, 4 * (1 + 2 + 3 + 4 + 5) + 4)),
    "MPI_Isend": ((5, 3 * 32 + 32 + 4),) * 2,
    "MPI_Irecv": ((5, 3 * 32 + 32 + 4),) * 2,
    "MPI_Sendrecv": ((2, 2 * (12 + 12)),) * 2,
    "MPI_Wait": ((3, 0),) * 2,
    "MPI_Waitall": ((1, 0),) * 2,
    "MPI_Waitany": ((1, 0),) * 2,
    "MPI_Test": ((2, 0),) * 2,
    "MPI_Barrier": ((4, 0),) * 2,
    "MPI_Bcast": ((3, 3 * 80),) * 2,
    "MPI_Reduce": ((2, 2 * 28),) * 2,
    "MPI_Allreduce": ((6, 6 * 8),) * 2,
    "MPI_Alltoall": ((1, 2 * 4 * 2),) * 2,
    "MPI_Alltoallv": ((1, (1 + 2) * 4),) * 2,
    "MPI_Allgather": ((1, 5 * 4),) * 2,
    "MPI_Gather": ((1, 3 * 8),) * 2,
    "MPI_Scatter": ((1, 2 * 8),) * 2,
}
EXPECTED_FORTRAN = {
    "MPI_Send": ((3, 3 * 16), (0, 0)),
    "MPI_Recv": ((0, 0), (3, 3 * 16)),
    "MPI_Isend": ((2, 2 * 64),) * 2,
    "MPI_Irecv": ((2, 2 * 64),) * 2,
    "MPI_Waitall": ((1, 0),) * 2,
    "MPI_Sendrecv": ((1, 8 + 8),) * 2,
    "MPI_Barrier": ((3, 0),) * 2,
    "MPI_Bcast": ((2, 2 * 40),) * 2,
    "MPI_Allreduce": ((4, 4 * 16),) * 2,
    "MPI_Reduce": ((1, 12),) * 2,
    "MPI_Alltoall": ((1, 2 * 4 * 2),) * 2,
    "MPI_Alltoallv": ((1, 2 * 4),) * 2,
}


def mismatches(report, expected):
    """Lines naming every figure of the report that differs from expected."""
    names = report["calls_named"]
    out = []
    if report["ranks"] != 2 or len(report["per_rank"]) != 2:
        return ["the report has %d ranks, not 2" % report["ranks"]]
    for unknown in sorted(set(expected) - set(names)):
        out.append("%s: not among the profiled functions" % unknown)
    for r, rank in enumerate(report["per_rank"]):
        for i, name in enumerate(names):
            want = expected.get(name, ((0, 0), (0, 0)))[r]
            got = (rank["calls"][i], rank["bytes"][i])
            if got != want:
                out.append("rank %d, %s: %d calls and %d bytes, expected %d and %d" % (
                    r, name, got[0], got[1], want[0], want[1]))
    return out


def printed_table(text, title):
    """{function: (calls, bytes)} of the table headed "pmpi_profile: TITLE:"."""
    rows, inside = {}, False
    for line in text.splitlines():
        if line.startswith("pmpi_profile: "):
            inside = line.startswith("pmpi_profile: %s:" % title)
            continue
        fields = line.split()
        if inside and len(fields) == 7 and fields[0].startswith("MPI_"):
            rows[fields[0]] = (int(fields[1]), int(fields[5]))
    return rows


def table_mismatches(text, expected):
    """The printed aggregate table against the sums over both ranks."""
    want = {name: tuple(a + b for a, b in zip(*per_rank)) for name, per_rank in expected.items()}
    want = {name: v for name, v in want.items() if v[0]}
    got = printed_table(text, "all 2 ranks")
    return ["printed table, %s: %s (calls, bytes), expected %s" % (name, got.get(name),
                                                                    want.get(name))
            for name in sorted(set(want) | set(got)) if got.get(name) != want.get(name)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fmplrun", required=True)
    ap.add_argument("--profiler", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--kind", choices=("c", "fortran"), required=True)
    ap.add_argument("--preload-first")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pmpi-profile-") as tmp:
        json_path = os.path.join(tmp, "profile.json")
        env = dict(os.environ, PMPI_PROFILE_JSON=json_path, PMPI_PROFILE_PER_RANK="1")
        env.pop("PMPI_PROFILE_OUT", None)
        env["LD_PRELOAD"] = " ".join(p for p in (a.preload_first, a.profiler) if p)
        run = subprocess.run([a.fmplrun, "-n", "2", "--timeout", "60", a.program], env=env,
                             capture_output=True, text=True, timeout=120)
        sys.stdout.write(run.stdout)
        sys.stdout.write(run.stderr)
        if run.returncode != 0:
            print("FAIL: the program exited with %d" % run.returncode)
            return 1
        if "pmpi_profile: all 2 ranks:" not in run.stderr or \
                "pmpi_profile: rank 1:" not in run.stderr:
            print("FAIL: no profile table on stderr")
            return 1
        try:
            with open(json_path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print("FAIL: no JSON report: %s" % e)
            return 1
    expected = EXPECTED_C if a.kind == "c" else EXPECTED_FORTRAN
    wrong = mismatches(report, expected) + table_mismatches(run.stderr, expected)
    for line in wrong:
        print("FAIL: " + line)
    if wrong:
        return 1
    print("PASS: every count and byte figure of both ranks, and of the printed table, as "
          "the %s program made them"
          % ("C" if a.kind == "c" else "Fortran"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
