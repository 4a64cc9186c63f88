"""The report of `bench/compare --scalapack` (issue 15, section 3): ScaLAPACK's
PDGEMM and PDGESV (bench/scalapack_bench.c) on FMPL with BLACS-FMPL, on FMPL
with ScaLAPACK's own MPI BLACS, on MPICH and on Open MPI, as medians over
the interleaved repetitions, each FMPL configuration's ratio to the best
peer, a Markdown report and the plots.

Pure functions on run records (bench/compare builds and runs the program;
bench/compare_test.py tests what is here on made-up figures)."""
import os
import statistics

from machine_load import busy_summary
from report_text import measured, red, tuning_bullets

# What bench/compare runs.  "binary": whose build of scalapack-bench (the
# one against libscalapack-mpich serves FMPL and MPICH alike: with FMPL's
# build tree first on LD_LIBRARY_PATH its libmpich.so.12 is FMPL's);
# "preload_blacs": libblacs-fmpl.so preloaded, so that BLACS-FMPL's symbols
# come before the BLACS inside libscalapack; "blacs": how the name of the
# library that defines the BLACS, as the program's header reports it,
# begins (a run whose BLACS is another did not measure its configuration).
CONFIGS = [
    dict(name="fmpl-blacs", lib="fmpl", binary="mpich", preload_blacs=True,
         blacs="libblacs-fmpl", label="FMPL, BLACS-FMPL"),
    dict(name="fmpl-mpiblacs", lib="fmpl", binary="mpich", preload_blacs=False,
         blacs="libscalapack-mpich", label="FMPL, MPI BLACS"),
    dict(name="mpich", lib="mpich", binary="mpich", preload_blacs=False,
         blacs="libscalapack-mpich", label="MPICH"),
    dict(name="openmpi", lib="openmpi", binary="openmpi", preload_blacs=False,
         blacs="libscalapack-openmpi", label="Open MPI"),
]
CONFIG_NAMES = [c["name"] for c in CONFIGS]
CONFIG = {c["name"]: c for c in CONFIGS}
LABEL = {c["name"]: c["label"] for c in CONFIGS}
FMPL_CONFIGS = ["fmpl-blacs", "fmpl-mpiblacs"]
PEER_CONFIGS = ["mpich", "openmpi"]
OPS = ["pdgemm", "pdgesv"]
OP_TEXT = {"pdgemm": "PDGEMM, C = A B (2 N^3 flops)",
           "pdgesv": "PDGESV, A x = b, one right-hand side (2/3 N^3 + 3/2 N^2 flops)"}
# Every rank and BLAS call single-threaded: OpenBLAS would otherwise start a
# thread per core in each rank, and the ranks would fight over the cores.
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def blacs_mismatch(config, header):
    """Why a run did not measure its configuration (the BLACS its calls
    reached is another than the configuration's), or None."""
    got = (header or {}).get("blacs")
    want = CONFIG[config]["blacs"]
    if not got:
        return "no header naming the BLACS"
    if not got.startswith(want):
        return "BLACS from %s, not %s" % (got, want)
    return None


def row_key(ranks, rec):
    return (rec["bench"], rec["size"], ranks)


def row_order(key):
    op, n, ranks = key
    return (OPS.index(op) if op in OPS else len(OPS), ranks, n)


def build_rows(runs):
    """Rows keyed (op, N, ranks) from run records {config, ranks, rep, ok,
    why, grid, results: [scalapack-bench result records]}: each
    configuration's GFLOP/s and seconds (the median of the program's timed
    calls) of every run whose check passed, what went wrong with the
    others, the medians over the runs, the best peer (the higher median
    GFLOP/s of MPICH and Open MPI) and each FMPL configuration's ratio to
    it.  A run that failed as a whole (no results, wrong BLACS) counts as
    failed for every row of its rank count."""
    rows = {}

    def row_for(key):
        return rows.setdefault(key, dict(op=key[0], n=key[1], ranks=key[2], grid=None,
                                         gflops={}, seconds={}, failed={}))
    for run in runs:
        cfg = run["config"]
        for rec in run.get("results", []):
            row = row_for(row_key(run["ranks"], rec))
            row["grid"] = row["grid"] or rec.get("grid")
            if rec.get("status") == "ok" and run.get("ok", True):
                row["gflops"].setdefault(cfg, []).append(rec["value"])
                row["seconds"].setdefault(cfg, []).append(rec["seconds"])
            else:
                why = rec.get("error") if rec.get("status") != "ok" else run.get("why")
                row["failed"].setdefault(cfg, []).append(why or rec.get("status") or "failed")
    for run in runs:
        if run.get("ok", True):
            continue
        for row in rows.values():
            if row["ranks"] == run["ranks"] and not any(
                    row_key(run["ranks"], rec) == (row["op"], row["n"], row["ranks"])
                    for rec in run.get("results", [])):
                row["failed"].setdefault(run["config"], []).append(run.get("why") or "failed")
    for row in rows.values():
        row["medians"] = {c: median(v) for c, v in row["gflops"].items()}
        row["median_seconds"] = {c: median(v) for c, v in row["seconds"].items()}
        peers = [(c, row["medians"][c]) for c in PEER_CONFIGS
                 if row["medians"].get(c) is not None]
        row["best_peer"], row["best_value"] = max(peers, key=lambda cv: cv[1]) if peers \
            else (None, None)
        row["ratios"] = {c: row["medians"][c] / row["best_value"]
                         for c in FMPL_CONFIGS
                         if row["medians"].get(c) is not None and row["best_value"]}
    return rows


def busy_by_config(runs):
    """{config: [median, max]} of the CPUs' busy fraction before its runs."""
    return busy_summary(runs, "config", CONFIG_NAMES)


# ---- Markdown ----

def fmt(v):
    if v is None:
        return "-"
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v


def cell(row, cfg):
    """A configuration's median GFLOP/s and seconds, or why there is none."""
    v = row["medians"].get(cfg)
    failed = row["failed"].get(cfg)
    if v is not None:
        return "%s (%.2f s)%s" % (fmt(v), row["median_seconds"][cfg],
                                  " (%d failed)" % len(failed) if failed else "")
    if failed:
        return red(failed[0])
    return "-"


def ratio_cell(row, cfg):
    r = row["ratios"].get(cfg)
    return "-" if r is None else "%.2f" % r


def table(rows, op, configs):
    """The Markdown table of one operation: a line per rank count and N."""
    fmpl = [c for c in FMPL_CONFIGS if c in configs]
    head = ["ranks", "grid", "N"] + [LABEL[c] for c in configs] + \
        ["%s / best peer" % LABEL[c] for c in fmpl]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted((k for k in rows if k[0] == op), key=row_order):
        row = rows[key]
        grid = "%d x %d" % tuple(row["grid"]) if row["grid"] else "-"
        md.append("| " + " | ".join([str(row["ranks"]), grid, str(row["n"])] +
                                    [cell(row, c) for c in configs] +
                                    [ratio_cell(row, c) for c in fmpl]) + " |")
    return md


def summary_lines(rows, configs):
    """One line per FMPL configuration: its ratio to the best peer, the
    geometric mean over the rows with a figure, and its range."""
    out = []
    for c in FMPL_CONFIGS:
        if c not in configs:
            continue
        ratios = [r["ratios"][c] for r in rows.values() if c in r["ratios"]]
        if not ratios:
            out.append("- **%s**: no figure beside a peer's." % LABEL[c])
            continue
        out.append("- **%s** / best peer: geometric mean %.2f over %d rows (%.2f to %.2f)." % (
            LABEL[c], statistics.geometric_mean(ratios), len(ratios), min(ratios),
            max(ratios)))
    return out


def runs_table(runs):
    """A line per run, in the order run: how loaded the machine was just
    before it, what it took, how it ended."""
    md = ["| # | configuration | ranks | rep | CPUs busy before | load avg before | wall s | "
          "result |", "|---|---|---|---|---|---|---|---|"]
    for i, run in enumerate(runs):
        busy = run.get("busy_before")
        load = run.get("loadavg_before")
        md.append("| %d | %s | %d | %d | %s | %s | %.1f | %s |" % (
            i + 1, LABEL.get(run["config"], run["config"]), run["ranks"], run["rep"] + 1,
            "-" if busy is None else "%.0f%%" % (100 * busy),
            "-" if not load else "%.2f" % load[0], run.get("seconds", 0),
            "ok" if run.get("ok", True) else red(run.get("why") or "failed")))
    return md


def markdown(meta, rows, plots, runs):
    """The report: the configurations and their commands, the method, how
    busy the machine was, the ratios, a table and a plot per operation, the
    errors, then every run."""
    configs = [c for c in CONFIG_NAMES if c in meta["configs"]]
    md = ["# ScaLAPACK: PDGEMM and PDGESV on FMPL (BLACS-FMPL and MPI BLACS), MPICH and "
          "Open MPI", ""]
    md.append("%s: N = %s, block size %d, %d timed calls per run, ranks %s, %d interleaved "
              "repetitions; took %s." % (
                  measured(meta), ",".join(map(str, meta["sizes"])), meta["nb"], meta["iters"],
                  ",".join(map(str, meta["ranks"])), meta["reps"], meta["duration"]))
    md += ["", "Command: `%s`" % meta["command"], ""]
    for c in configs:
        info = meta["configs"][c]
        md.append("- **%s**: %s; BLACS from `%s`, ScaLAPACK from `%s`, BLAS from `%s`; run as "
                  "`%s`" % (LABEL[c], info.get("version", "?"), info.get("blacs", "?"),
                            info.get("scalapack", "?"), info.get("blas", "?"),
                            info.get("command", "?")))
    md += tuning_bullets(meta.get("tuning"), "run")
    if meta.get("compile"):
        md += ["", "Built from `bench/scalapack_bench.c`: " + "; ".join(
            "`%s`" % cmd for cmd in meta["compile"]) + "."]
    md += ["", "Each figure is GFLOP/s, the median over the repetitions of each run's median "
           "of its timed calls, with the median seconds of a call in parentheses (higher "
           "GFLOP/s is better). A call's time is the slowest rank's, from a BLACS barrier to "
           "its return; the matrices are N x N doubles in %d x %d blocks on a process grid as "
           "square as the rank count allows, from (0,0); every run checks its results (PDGEMM: "
           "C v against A (B v) and sampled elements against direct dot products; PDGESV: the "
           "scaled residual), and a run whose check failed has no figure. Runs interleaved: "
           "for each rank count and repetition, each configuration in turn. The FMPL "
           "configurations and MPICH run the same binary (Debian's libscalapack-mpich; for "
           "FMPL its libmpich.so.12 is FMPL's, from the build tree on `LD_LIBRARY_PATH`), Open "
           "MPI one built from the same source against libscalapack-openmpi; every rank "
           "single-threaded (`OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1`). **/ best peer**: the "
           "FMPL configuration's median over the higher of MPICH's and Open MPI's (above 1: "
           "FMPL faster). Method: bench/README.md, \"scalapack-bench\"." % (
               meta["nb"], meta["nb"]), ""]
    busy = meta.get("busy_before") or {}
    if busy:
        md.append("Other work on the machine: how busy the CPUs were in the half second before "
                  "each run (median and maximum over the runs of each configuration): %s; load "
                  "average %s before the runs, %s after (every run: the last table)." % (
                      "; ".join("%s %.0f%% and %.0f%%" % (LABEL[c], 100 * b[0], 100 * b[1])
                                for c, b in busy.items()),
                      "/".join("%.2f" % x for x in meta.get("load_before") or []) or "?",
                      "/".join("%.2f" % x for x in meta.get("load_after") or []) or "?"))
        if max(b[1] for b in busy.values()) > meta.get("idle", 0.1):
            md.append(red("Some runs started on a busy machine: their figures include the "
                          "others' work (rerun with --wait-idle)."))
        md.append("")
    md += ["## FMPL against the best peer", ""] + summary_lines(rows, configs) + [""]
    if meta.get("failures"):
        md += ["## Errors", ""] + ["- " + red(f) for f in meta["failures"]] + [""]
    for op in OPS:
        if not any(k[0] == op for k in rows):
            continue
        md += ["## %s" % OP_TEXT[op], "", "GFLOP/s (median seconds per call).", ""]
        md += table(rows, op, configs)
        if plots.get(op):
            md += ["", "![%s](%s)" % (op, plots[op])]
        md.append("")
    md += ["## Runs", ""] + runs_table(runs) + [""]
    return "\n".join(md)


# ---- the plot ----

COLORS = {"fmpl-blacs": "#b2182b", "fmpl-mpiblacs": "#f4a582", "mpich": "#1b7837",
          "openmpi": "#2166ac"}


def plot(rows, outdir, configs):
    """plots/scalapack-OP.png: GFLOP/s against N, a panel per rank count, a
    line per configuration; returns {op: path}, or None without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    plots = {}
    for op in OPS:
        ranks_list = sorted({k[2] for k in rows if k[0] == op})
        if not ranks_list:
            continue
        os.makedirs(os.path.join(outdir, "plots"), exist_ok=True)
        fig, axes = plt.subplots(1, len(ranks_list), figsize=(4.5 * len(ranks_list) + 1, 4),
                                 squeeze=False)
        for ax, ranks in zip(axes[0], ranks_list):
            keys = sorted((k for k in rows if k[0] == op and k[2] == ranks), key=row_order)
            for c in configs:
                pts = [(rows[k]["n"], rows[k]["medians"][c]) for k in keys
                       if rows[k]["medians"].get(c) is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            color=COLORS.get(c), label=LABEL[c])
            ax.set_title("%s, %d ranks" % (op.upper(), ranks))
            ax.set_xlabel("N")
            ax.set_ylabel("GFLOP/s (higher is better)")
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        rel = os.path.join("plots", "scalapack-%s.png" % op)
        fig.savefig(os.path.join(outdir, rel), dpi=100)
        plt.close(fig)
        plots[op] = rel
    return plots


def save_rows(rows):
    return [rows[k] for k in sorted(rows, key=row_order)]


def load_rows(saved):
    return {(r["op"], r["n"], r["ranks"]): r for r in saved}
