"""The report of `bench/compare --npb` (issue 15, section 2): the NAS Parallel
Benchmarks' Mop/s on FMPL, MPICH and Open MPI as medians over the
interleaved repetitions, FMPL's ratio to the best peer, the issue's targets
checked, the time in MPI per function from the PMPI profiler
(bench/pmpi_profile.c, --npb-profile), a Markdown report and a plot.

Pure functions on run records (bench/compare builds and runs NPB through
tools/testsuites/npb.py; bench/compare_test.py tests what is here on
made-up figures)."""
import os
import statistics

from machine_load import busy_summary
from report_text import measured, red, tuning_bullets

LIBS = ["fmpl", "mpich", "openmpi"]
PEERS = ["mpich", "openmpi"]
LABEL = {"fmpl": "FMPL", "mpich": "MPICH", "openmpi": "Open MPI"}
KERNEL_ORDER = ["bt", "cg", "ep", "ft", "is", "lu", "mg", "sp"]

# Issue 15, section 2: FMPL at least 1.15 x the best peer on the
# communication-heavy kernels at 2 and 4 ranks, and never more than 3%
# behind on any kernel.  ratio = FMPL's median Mop/s over the best peer's.
TARGETS = [
    dict(what=">= 1.15 x the best peer (communication-heavy kernel)",
         kernels=["cg", "ft", "is", "mg"], ranks=[2, 4], min_ratio=1.15),
    dict(what=">= 0.97 x the best peer (never more than 3% behind)",
         kernels=None, ranks=None, min_ratio=0.97),
]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def row_key(run):
    return (run["kernel"], run["cls"], run["ranks"])


def row_order(key):
    kernel, cls, ranks = key
    k = KERNEL_ORDER.index(kernel) if kernel in KERNEL_ORDER else len(KERNEL_ORDER)
    return (cls, k, ranks)


def build_rows(runs):
    """Rows keyed (kernel, class, ranks) from run records {lib, kernel, cls,
    ranks, rep, mops, ok, why}: each library's Mop/s of the runs that
    verified, what went wrong with the others, the medians, the best peer
    (the highest median) and FMPL's ratio to it."""
    rows = {}
    for run in runs:
        key = row_key(run)
        row = rows.setdefault(key, dict(kernel=key[0], cls=key[1], ranks=key[2], values={},
                                        failed={}))
        lib = run["lib"]
        if run.get("ok") and run.get("mops") is not None:
            row["values"].setdefault(lib, []).append(run["mops"])
        else:
            row["failed"].setdefault(lib, []).append(run.get("why") or "failed")
    for row in rows.values():
        row["medians"] = {lib: median(v) for lib, v in row["values"].items()}
        peers = [(lib, row["medians"][lib]) for lib in PEERS
                 if row["medians"].get(lib) is not None]
        row["best_peer"], row["best_value"] = max(peers, key=lambda lv: lv[1]) if peers \
            else (None, None)
        fmpl = row["medians"].get("fmpl")
        row["ratio"] = fmpl / row["best_value"] if fmpl is not None and row["best_value"] \
            else None
    return rows


def applies(target, row):
    return (target["kernels"] is None or row["kernel"] in target["kernels"]) and \
        (target["ranks"] is None or row["ranks"] in target["ranks"])


def check_targets(rows):
    """One check per (target, row it applies to): dict(what, kernel, cls,
    ranks, ratio, ok); ok None when FMPL or every peer has no figure."""
    checks = []
    for t in TARGETS:
        for key in sorted(rows, key=row_order):
            row = rows[key]
            if not applies(t, row):
                continue
            r = row["ratio"]
            checks.append(dict(what=t["what"], kernel=row["kernel"], cls=row["cls"],
                               ranks=row["ranks"], ratio=r,
                               ok=None if r is None else r >= t["min_ratio"]))
    return checks


def row_checks(checks, row):
    return [c for c in checks if (c["kernel"], c["cls"], c["ranks"]) ==
            (row["kernel"], row["cls"], row["ranks"])]


# ---- the PMPI profile (bench/pmpi_profile.c's JSON) ----

def summarize_profile(report):
    """{wall, calls: {function: {calls, seconds, max_rank_seconds, bytes}}}
    over all ranks of one profiled run (functions never called left out);
    wall: the slowest rank's seconds from MPI_Init to MPI_Finalize."""
    out = {}
    ranks = report["per_rank"]
    for i, name in enumerate(report["calls_named"]):
        n = sum(r["calls"][i] for r in ranks)
        if n:
            out[name] = dict(calls=n, seconds=sum(r["seconds"][i] for r in ranks),
                             max_rank_seconds=max(r["seconds"][i] for r in ranks),
                             bytes=sum(r["bytes"][i] for r in ranks))
    return dict(ranks=len(ranks), wall=max(r["wall_seconds"] for r in ranks), calls=out)


def profile_table(profiles, libs, top=8):
    """Markdown for one (kernel, class, ranks): profiles {lib: summary};
    the functions that take most of FMPL's time (or the first library's),
    each library's seconds summed over ranks and calls."""
    have = [lib for lib in libs if lib in profiles]
    if not have:
        return []
    lead = profiles["fmpl"] if "fmpl" in profiles else profiles[have[0]]
    names = sorted(lead["calls"], key=lambda n: -lead["calls"][n]["seconds"])
    for lib in have:   # a peer's heavy function FMPL does not call still shows
        calls = profiles[lib]["calls"]
        names += [n for n in sorted(calls, key=lambda n: -calls[n]["seconds"]) if n not in names]
    names = names[:top]
    md = ["| function | " + " | ".join("%s s (calls)" % LABEL[lib] for lib in have) +
          " | bytes/call |", "|---|" + "---|" * len(have) + "---|"]
    for n in names:
        cells = []
        per_call = None
        for lib in have:
            c = profiles[lib]["calls"].get(n)
            cells.append("%.4f (%d)" % (c["seconds"], c["calls"]) if c else "-")
            if c and per_call is None:
                per_call = c["bytes"] / c["calls"]
        md.append("| %s | %s | %s |" % (n, " | ".join(cells),
                                         "%.0f" % per_call if per_call is not None else "-"))
    md.append("| **in MPI / wall** | " + " | ".join(
        "%.3f / %.3f s (%.0f%%)" % (mpi_seconds(profiles[lib]) / profiles[lib]["ranks"],
                                    profiles[lib]["wall"],
                                    100 * mpi_seconds(profiles[lib]) / profiles[lib]["ranks"] /
                                    profiles[lib]["wall"] if profiles[lib]["wall"] else 0)
        for lib in have) + " | |")
    return md


def mpi_seconds(summary):
    """Seconds in the profiled functions, summed over calls and ranks."""
    return sum(c["seconds"] for c in summary["calls"].values())


def mpi_fraction(summary):
    """The mean rank's share of the wall time spent inside MPI."""
    if not summary["wall"] or not summary["ranks"]:
        return None
    return mpi_seconds(summary) / summary["ranks"] / summary["wall"]


def ceiling(row, row_profiles):
    """How far ahead of the best peer any MPI library could be on this run:
    with no time at all in MPI, a rank would still spend the time the best
    peer's run spends outside MPI, so FMPL / best peer is at most
    1 / (1 - f), f the best peer's fraction of wall time in MPI (same
    program, same compiler flags, same machine).  (value, f, peer), or None
    without a profile of the best peer."""
    peer = row.get("best_peer")
    summary = (row_profiles or {}).get(peer)
    if summary is None:
        return None
    f = mpi_fraction(summary)
    if f is None or f >= 1:
        return None
    return (1 / (1 - f), f, peer)


def ceiling_text(c):
    value, f, peer = c
    return "at most %.2f x with no time in MPI (%s spends %.0f%% of its wall time in MPI)" % (
        value, LABEL[peer], 100 * f)


# ---- Markdown ----

def fmt_mops(v):
    return "-" if v is None else "%.1f" % v if v < 1000 else "%.0f" % v


def cell(row, lib):
    """A library's median, or why there is none."""
    v = row["medians"].get(lib)
    if v is not None:
        return fmt_mops(v) + ("" if lib not in row["failed"] else
                              " (%d failed)" % len(row["failed"][lib]))
    if lib in row["failed"]:
        return red(row["failed"][lib][0])
    return "-"


def mark(checks):
    misses = [c for c in checks if c["ok"] is False]
    if misses:
        return red("miss: " + "; ".join(c["what"].split(" (")[0] for c in misses))
    if any(c["ok"] is None for c in checks):
        return "no figure"
    return "pass" if checks else ""


# Measured on this machine (2 cores, two busy loops of another session),
# FMPL's binary: EP.A at 2 ranks 150 Mop/s under fmplrun (ranks in its
# session) and 180-200 under mpiexec.hydra (a session per rank).
AUTOGROUP_NOTE = (
    "The kernel's autogroup scheduling is on (`kernel.sched_autogroup_enabled=1`): each "
    "session gets a fair share of the CPUs. `mpiexec.hydra` starts every rank in a session "
    "of its own, while `fmplrun` and Open MPI's `mpirun` keep the ranks in the launcher's, "
    "so on a busy machine MPICH's ranks get more CPU time than the others' (EP, which "
    "hardly communicates, was 20-30% faster under `mpiexec.hydra` than under `fmplrun`, "
    "with the same FMPL binary, beside two busy loops): only figures from an idle "
    "machine compare the libraries.")


def busy_by_lib(runs):
    """{lib: [median, max]} of the CPUs' busy fraction before its runs."""
    return busy_summary(runs, "lib", LIBS)


def busy_text(meta, libs):
    busy = meta.get("busy_before") or {}
    if not busy:
        return []
    md = ["Other work on the machine: how busy the CPUs were in the half second before each "
          "run (median and maximum over the runs of each library): %s." % "; ".join(
              "%s %.0f%% and %.0f%%" % (LABEL[lib], 100 * busy[lib][0], 100 * busy[lib][1])
              for lib in libs if lib in busy)]
    if max(b[1] for b in busy.values()) > meta.get("idle", 0.1):
        md.append(red("Some runs started on a busy machine: their figures include the others' "
                      "work (rerun with --wait-idle)."))
        if meta.get("autogroup"):
            md.append(AUTOGROUP_NOTE)
    return md + [""]


def markdown(meta, rows, checks, plots, profiles=None):
    """The report: the libraries, the method, the targets, the Mop/s table,
    the plot, the PMPI profiles and the errors."""
    libs = [lib for lib in LIBS if lib in meta["libraries"]]
    md = ["# NAS Parallel Benchmarks: FMPL, MPICH and Open MPI side by side", ""]
    md.append("%s: NPB 3.4 MPI, class %s, kernels %s, ranks %s, %d interleaved repetitions; "
              "took %s." % (measured(meta), ",".join(meta["classes"]),
                            ",".join(meta["kernels"]), ",".join(map(str, meta["ranks"])),
                            meta["reps"], meta["duration"]))
    md += [""] + ["- **%s**: %s; `%s`; compiled with `%s`" % (
        LABEL[lib], i["version"], i["launcher"], i["compile"])
        for lib, i in ((lib, meta["libraries"][lib]) for lib in libs)]
    md += tuning_bullets(meta.get("tuning"), "library")
    md += ["", "Each figure is NPB's own \"Mop/s total\", the median over the repetitions whose "
           "run verified (\"Verification = SUCCESSFUL\"); runs interleaved: for each rank count "
           "and repetition, each kernel on each library in turn, the libraries' order rotated "
           "by one place each repetition. The same NPB source and flags "
           "for all three (tools/testsuites/npb.py); BT and SP run at square rank counts only. "
           "**FMPL / best peer**: FMPL's median over the higher of MPICH's and Open MPI's (above "
           "1: FMPL faster).", ""]
    md += busy_text(meta, libs)
    met = [c for c in checks if c["ok"]]
    missed = [c for c in checks if c["ok"] is False]
    missing = [c for c in checks if c["ok"] is None]
    md += ["## Targets (issue 15, section 2)", "",
           "%d met, %d missed, %d without a figure." % (len(met), len(missed), len(missing)), ""]
    if profiles:
        md += ["Where the profile shows it, a miss gives the ceiling: the best peer's run spends "
               "a fraction f of its wall time inside MPI, and no library can take less than the "
               "rest, so FMPL / best peer cannot exceed 1 / (1 - f) on that run. A 1.15 x target "
               "whose ceiling is below 1.15 is out of reach for any MPI library here.", ""]
    for group, word in ((missed, "missed"), (missing, "no figure"), (met, "met")):
        for c in group:
            line = "%s: %s.%s, %d ranks: FMPL / best peer %s" % (
                c["what"], c["kernel"], c["cls"], c["ranks"],
                "%.2f" % c["ratio"] if c["ratio"] is not None else "-")
            key = (c["kernel"], c["cls"], c["ranks"])
            limit = ceiling(rows[key], (profiles or {}).get(key)) if key in rows else None
            if word == "missed" and limit is not None:
                line += "; " + ceiling_text(limit)
            md.append("- " + (red(word + ": " + line) if word == "missed" else word + ": " + line))
    md += ["", "## Mop/s (higher is better)", "",
           "| kernel | class | ranks | " + " | ".join(LABEL[lib] for lib in libs) +
           " | FMPL / best peer | target |", "|---|---|---|" + "---|" * len(libs) + "---|---|"]
    for key in sorted(rows, key=row_order):
        row = rows[key]
        md.append("| %s | %s | %d | %s | %s | %s |" % (
            row["kernel"].upper(), row["cls"], row["ranks"],
            " | ".join(cell(row, lib) for lib in libs),
            "%.2f" % row["ratio"] if row["ratio"] is not None else "-",
            mark(row_checks(checks, row))))
    if plots.get("ratios"):
        md += ["", "![FMPL / best peer](%s)" % plots["ratios"]]
    md.append("")
    if profiles:
        md += ["## Time in MPI per function (PMPI profile)", "",
               "One more run of each kernel per library with bench/pmpi_profile.c preloaded "
               "(not among the timed runs): seconds in each MPI function summed over the ranks, "
               "with the number of calls; the last line is the mean rank's seconds in these "
               "functions against the wall time from MPI_Init to MPI_Finalize.%s" % (
                   " " + meta["profile_note"] if meta.get("profile_note") else ""), ""]
        for key in sorted(profiles, key=row_order):
            md += ["### %s.%s, %d ranks" % (key[0].upper(), key[1], key[2]), ""]
            md += profile_table(profiles[key], libs) + [""]
    if meta.get("failures"):
        md += ["## Errors", ""] + ["- " + red(f) for f in meta["failures"]] + [""]
    return "\n".join(md)


# ---- the plot ----

def plot(rows, outdir):
    """plots/npb-ratios.png: FMPL / best peer per kernel, class and rank
    count, the two targets as lines; returns {"ratios": path}, or None
    without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    keys = [k for k in sorted(rows, key=row_order) if rows[k]["ratio"] is not None]
    if not keys:
        return {}
    os.makedirs(os.path.join(outdir, "plots"), exist_ok=True)
    fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(keys) + 2), 4.5))
    ratios = [rows[k]["ratio"] for k in keys]
    colors = ["#b2182b" if k[0] in TARGETS[0]["kernels"] else "#777777" for k in keys]
    ax.bar(range(len(keys)), ratios, color=colors)
    for i, r in enumerate(ratios):
        ax.text(i, r + 0.01, "%.2f" % r, ha="center", va="bottom", fontsize=7)
    for t, style in zip(TARGETS, ("--", ":")):
        ax.axhline(t["min_ratio"], color="black", linestyle=style, linewidth=1,
                   label="%.2f: %s" % (t["min_ratio"], t["what"]))
    ax.axhline(1.0, color="#999999", linewidth=0.5)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(["%s.%s\n%d ranks" % (k[0].upper(), k[1], k[2]) for k in keys],
                       fontsize=7)
    ax.set_ylabel("FMPL Mop/s / best peer's (higher is better)")
    ax.set_title("NPB: FMPL / best of MPICH and Open MPI\n(red: CG, FT, IS, MG; grey: the others)",
                 fontsize=10)
    ax.set_ylim(0, max(1.3, max(ratios) * 1.1))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    rel = os.path.join("plots", "npb-ratios.png")
    fig.savefig(os.path.join(outdir, rel), dpi=100)
    plt.close(fig)
    return {"ratios": rel}


def save_rows(rows):
    return [rows[k] for k in sorted(rows, key=row_order)]


def load_rows(saved):
    return {(r["kernel"], r["cls"], r["ranks"]): r for r in saved}
