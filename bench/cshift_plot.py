#!/usr/bin/python3
"""bench/cshift_plot.py: seed 004's cyclic shift, barrier at entry (bsp)
against the relaxed version (notes and split-phase barriers), as a table and
a plot per rank count (issue 14, section 5).

Runs build/bench/cshift (examples/cshift.c with --bench) under fmplrun
--reps times per rank count, interleaved, and takes the median per N:

    bench/cshift_plot.py [--build build] [--ranks 2,4] [--reps 3] --out DIR

Writes DIR/cshift.md (the tables) and DIR/plots/cshift-<R>ranks.png
(microseconds per shift against N, log axes; without matplotlib, the
tables only)."""
import argparse
import os
import statistics
import subprocess
import sys


def run_once(build, ranks, timeout):
    """{N: (bsp_us, relaxed_us)} of one run of bench/cshift."""
    cmd = [os.path.join(build, "tools", "fmplrun", "fmplrun"), "-n", str(ranks), "--bind", "none",
           os.path.join(build, "bench", "cshift")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        sys.exit("cshift_plot: %s failed (status %d):\n%s" % (" ".join(cmd), out.returncode,
                                                              out.stderr[-2000:]))
    rows = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and not line.startswith("#"):
            rows[int(f[0])] = (float(f[1]), float(f[2]))
    return rows


def plot(outdir, ranks, table):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    os.makedirs(os.path.join(outdir, "plots"), exist_ok=True)
    ns = sorted(table)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(ns, [table[n][0] for n in ns], "o-", color="#999999", label="barrier at entry (bsp)")
    ax.plot(ns, [table[n][1] for n in ns], "o-", color="#b2182b",
            label="relaxed (notes, split-phase barriers)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (N x N doubles, shifted by one row)")
    ax.set_ylabel("us per shift (lower is better)")
    ax.set_title("cshift, %d ranks" % ranks)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    rel = os.path.join("plots", "cshift-%dranks.png" % ranks)
    fig.savefig(os.path.join(outdir, rel), dpi=100)
    plt.close(fig)
    return rel


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    ranks = [int(r) for r in a.ranks.split(",")]
    runs = {r: [] for r in ranks}
    for rep in range(a.reps):
        for r in ranks:
            print("cshift_plot: %d ranks, repetition %d of %d" % (r, rep + 1, a.reps), flush=True)
            runs[r].append(run_once(a.build, r, a.timeout))
    os.makedirs(a.out, exist_ok=True)
    md = ["# cshift: barrier at entry against relaxed", "",
          "Command: `bench/cshift_plot.py --ranks %s --reps %d` (medians over the "
          "repetitions, interleaved; each figure the slowest rank's time per shift)." %
          (a.ranks, a.reps)]
    for r in ranks:
        table = {}
        for n in sorted({n for run in runs[r] for n in run}):
            got = [run[n] for run in runs[r] if n in run]
            table[n] = (statistics.median(g[0] for g in got), statistics.median(g[1] for g in got))
        md += ["", "## %d ranks" % r, "", "| N | bsp (us) | relaxed (us) | relaxed / bsp |",
               "|---|---|---|---|"]
        md += ["| %d | %.2f | %.2f | %.2f |" % (n, b, x, x / b) for n, (b, x) in table.items()]
        rel = plot(a.out, r, table)
        if rel:
            md += ["", "![cshift, %d ranks](%s)" % (r, rel)]
    with open(os.path.join(a.out, "cshift.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("cshift_plot: wrote %s" % os.path.join(a.out, "cshift.md"))


if __name__ == "__main__":
    main()
