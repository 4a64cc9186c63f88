"""The report of `bench/compare --overlap --jacobi` (issue 14, section 5): the
overlap and host-CPU figures of mpi-overlap and the time per iteration of
jacobi, for each configuration (FMPL with its progress agent off and on, Open
MPI, MPICH, MPICH with its progress thread), as medians over the interleaved
repetitions, the issue's targets checked, a Markdown section and the plots.

Pure functions on the programs' JSON records (bench/compare runs the
programs; bench/compare_test.py tests what is here on made-up figures)."""
import os
import statistics

from machine_load import busy_summary
from report_text import measured, red, tuning_bullets

# What bench/compare runs: (name, library, environment, label).  An
# environment value None removes the variable (a figure without MPICH's
# progress thread must not inherit MPIR_CVAR_ASYNC_PROGRESS from the shell).
CONFIGS = [
    dict(name="fmpl-off", lib="fmpl", env={"FMPL_AGENT": "off"}, label="FMPL, agent off"),
    dict(name="fmpl-thread", lib="fmpl", env={"FMPL_AGENT": "thread"},
         label="FMPL, agent thread"),
    dict(name="openmpi", lib="openmpi", env={}, label="Open MPI"),
    dict(name="mpich", lib="mpich", env={"MPIR_CVAR_ASYNC_PROGRESS": None}, label="MPICH"),
    dict(name="mpich-async", lib="mpich", env={"MPIR_CVAR_ASYNC_PROGRESS": "1"},
         label="MPICH, progress thread"),
]
CONFIG_NAMES = [c["name"] for c in CONFIGS]
LABEL = {c["name"]: c["label"] for c in CONFIGS}
AGENT_ON = "fmpl-thread"
PEER_CONFIGS = ["openmpi", "mpich", "mpich-async"]

# mpi-overlap's cases (bench/mpi_overlap.c) and its two kinds of compute.
CASES = ["iallreduce", "ibcast", "allreduce_init", "bcast_init", "isend_irecv"]
MIB_CASES = ["iallreduce", "ibcast", "allreduce_init", "bcast_init"]
LATENCY_CASE = "bcast_init_8b"
SYNC_CASE = "sync_8b"
SYNC_METRICS = ["pingpong_usec", "bcast_usec", "allreduce_usec"]
SYNC_LABEL = {"pingpong_usec": "MPI_Send/MPI_Recv one way", "bcast_usec": "MPI_Bcast",
              "allreduce_usec": "MPI_Allreduce"}
COMPUTE = ["sleep", "busy"]
JACOBI_MODES = ["overlap", "plain"]

# The figures kept from each record, per table.
METRICS = {
    "overlap": ["overlap_pct", "pure_usec", "overall_usec", "compute_usec", "host_cpu_usec",
                "host_cpu_pct"],
    "latency": ["value", "bcast_usec", "ratio"],
    "sync": SYNC_METRICS,
    "jacobi": ["value", "usec_min", "wait_usec"],
}

# Issue 14, sections 5 and 3.  "configs": whose figure is checked;
# "min"/"max": the bound; "ahead": above every peer configuration's median;
# "over": the figure is the ratio of the configuration's median to that
# configuration's (same run, interleaved).
TARGETS = [
    dict(what="overlap >= 90% while the rank sleeps", table="overlap", compute="sleep",
         cases=CASES, configs=[AGENT_ON], metric="overlap_pct", min=90.0),
    dict(what="overlap ahead of every peer configuration while the rank sleeps", table="overlap",
         compute="sleep", cases=CASES, configs=[AGENT_ON], metric="overlap_pct", ahead=True),
    dict(what="host CPU in MPI calls <= 10% of the pure time (1 MiB, rank asleep)",
         table="overlap", compute="sleep", cases=MIB_CASES, configs=[AGENT_ON],
         metric="host_cpu_pct", max=10.0),
    dict(what="persistent 8 B MPI_Bcast_init (MPI_Start to MPI_Wait) <= 0.8 x MPI_Bcast",
         table="latency", compute=None, cases=[LATENCY_CASE], configs=["fmpl-off", AGENT_ON],
         metric="ratio", max=0.8),
] + [
    dict(what="synchronous 8 B %s with the agent on <= 1.05 x agent off" % SYNC_LABEL[m],
         table="sync", compute=None, cases=[SYNC_CASE], configs=[AGENT_ON], metric=m,
         max=1.05, over="fmpl-off")
    for m in SYNC_METRICS
]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def record_key(kind, rec):
    """(table, name, compute) of one JSON result record of a run of kind
    "overlap" (mpi-overlap) or "jacobi"."""
    if kind == "jacobi":
        return "jacobi", rec.get("mode"), None
    if rec.get("bench") == LATENCY_CASE:
        return "latency", LATENCY_CASE, None
    if rec.get("bench") == SYNC_CASE:
        return "sync", SYNC_CASE, None
    return "overlap", rec.get("bench"), rec.get("compute")


def build_rows(runs):
    """Rows keyed (ranks, table, name, compute) from run records
    {config, kind, ranks, rep, results: [JSON result records]}: per
    configuration every repetition's figures ("values"), their medians, the
    statuses of what did not run ("n/a: needs MPI 4 ..."), and for jacobi the
    checksums seen."""
    rows = {}

    def row_for(ranks, table, name, compute):
        key = (ranks, table, name, compute)
        return rows.setdefault(key, dict(ranks=ranks, table=table, name=name, compute=compute,
                                         size=None, values={}, status={}, checksums={}))

    for run in runs:
        cfg = run["config"]
        for rec in run["results"]:
            table, name, compute = record_key(run["kind"], rec)
            status = rec.get("status", "ok")
            if status != "ok":
                # A case that did not run has no compute kind: both lack it.
                for c in ([compute] if compute or table != "overlap" else COMPUTE):
                    row = row_for(run["ranks"], table, name, c)
                    row["status"][cfg] = "%s: %s" % (status, rec.get("error", ""))
                continue
            row = row_for(run["ranks"], table, name, compute)
            row["size"] = rec.get("size", rec.get("n"))
            vals = row["values"].setdefault(cfg, {})
            for m in METRICS[table]:
                if rec.get(m) is not None:
                    vals.setdefault(m, []).append(rec[m])
            if "checksum" in rec:
                row["checksums"].setdefault(cfg, []).append(rec["checksum"])
    for row in rows.values():
        row["medians"] = {cfg: {m: median(v) for m, v in vals.items()}
                          for cfg, vals in row["values"].items()}
    return rows


def figure(row, cfg, metric):
    return row["medians"].get(cfg, {}).get(metric) if row else None


def check_targets(rows):
    """One check per (target, ranks, case, configuration): dict(what, ranks,
    case, config, value, ok, detail); ok None when a figure is missing."""
    checks = []
    for t in TARGETS:
        for ranks in sorted({k[0] for k in rows}):
            for case in t["cases"]:
                row = rows.get((ranks, t["table"], case, t["compute"]))
                for cfg in t["configs"]:
                    v = figure(row, cfg, t["metric"])
                    detail = ""
                    if v is not None and t.get("over"):
                        base = figure(row, t["over"], t["metric"])
                        detail = "%s %.3f us, %s %.3f us" % (
                            LABEL[cfg], v, LABEL[t["over"]], base) if base else ""
                        v = v / base if base else None
                    if v is None:
                        ok = None
                        if row and cfg in row["status"]:
                            detail = row["status"][cfg]
                    elif t.get("ahead"):
                        peers = {p: figure(row, p, t["metric"]) for p in PEER_CONFIGS}
                        peers = {p: x for p, x in peers.items() if x is not None}
                        ok = all(v > x for x in peers.values()) if peers else None
                        detail = ", ".join("%s %.1f" % (LABEL[p], x) for p, x in peers.items())
                    elif "min" in t:
                        ok = v >= t["min"]
                    else:
                        ok = v <= t["max"]
                    checks.append(dict(what=t["what"], ranks=ranks, case=case, config=cfg,
                                       value=v, ok=ok, detail=detail))
    return checks


def busy_by_config(runs):
    """{config: [median, max]} of the CPUs' busy fraction sampled before its
    runs (others' work on the machine: bench/compare's run_jobs)."""
    return busy_summary(runs, "config", CONFIG_NAMES)


def checksum_disagreements(rows):
    """Jacobi rows whose checksums differ between runs (every library and
    repetition computes the same grid, bit for bit)."""
    out = []
    for key, row in sorted(rows.items(), key=lambda kv: str(kv[0])):
        seen = {c for sums in row["checksums"].values() for c in sums}
        if len(seen) > 1:
            out.append((row, sorted(seen)))
    return out


# ---- Markdown ----

def fmt(v, digits=None):
    if v is None:
        return "-"
    if digits is not None:
        return "%.*f" % (digits, v)
    if abs(v) >= 1000:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def cell(row, cfg, text):
    """The cell of one configuration: text, or why there is no figure."""
    if row and cfg in row["medians"]:
        return text
    if row and cfg in row["status"]:
        return row["status"][cfg].split(":")[0]
    return "-"


def overlap_tables(rows, ranks, compute, configs):
    md = []
    head = "| case | " + " | ".join(LABEL[c] for c in configs) + " |"
    sep = "|---|" + "---|" * len(configs)
    md += ["Overlap % (higher is better; 100: the whole communication hidden behind the "
           "compute):", "", head, sep]
    for case in CASES:
        row = rows.get((ranks, "overlap", case, compute))
        md.append("| %s | " % case + " | ".join(
            cell(row, c, fmt(figure(row, c, "overlap_pct"), 0)) for c in configs) + " |")
    md += ["", "Pure / overall / compute, us (the median iteration, the slowest rank):", "",
           head, sep]
    for case in CASES:
        row = rows.get((ranks, "overlap", case, compute))
        md.append("| %s | " % case + " | ".join(
            cell(row, c, "%s / %s / %s" % tuple(fmt(figure(row, c, m)) for m in (
                "pure_usec", "overall_usec", "compute_usec"))) for c in configs) + " |")
    md += ["", "Host CPU in the MPI calls per iteration, us (% of the pure time):", "",
           head, sep]
    for case in CASES:
        row = rows.get((ranks, "overlap", case, compute))
        md.append("| %s | " % case + " | ".join(
            cell(row, c, "%s (%s%%)" % (fmt(figure(row, c, "host_cpu_usec")),
                                       fmt(figure(row, c, "host_cpu_pct"), 0)))
            for c in configs) + " |")
    return md


def compute_phase(meta):
    """How long the compute phase lasted (bench/compare --compute-min)."""
    floor = meta.get("compute_min") or 0
    if not floor:
        return "as long as the pure time (OSU's rule)"
    return ("as long as the pure time but at least %g us (the same floor for every "
            "configuration: a timed sleep shorter than that mostly measures the machine's "
            "timer, bench/sleep_cost)" % floor)


def markdown(meta, rows, checks, plots):
    """The report: targets, then per rank count the overlap tables (sleep,
    busy), the 8-byte persistent broadcast, Jacobi, and the plots."""
    configs = [c for c in CONFIG_NAMES if c in meta["configs"]]
    hosts = meta.get("hosts")
    md = ["# Overlap of communication and computation%s: FMPL, Open MPI, MPICH" % (
        " across %d hosts" % len(hosts) if hosts else ""), ""]
    md.append("%s, %s run, %d interleaved repetitions, ranks %s; took %s." % (
        measured(meta), "quick" if meta["quick"] else "full", meta["reps"],
        ",".join(map(str, meta["ranks"])), meta["duration"]))
    md.append("")
    for c in configs:
        info = meta["configs"][c]
        env = ", ".join("`%s=%s`" % (k, v) for k, v in sorted(info["env"].items())
                        if v is not None)
        md.append("- **%s**: %s; `%s`%s" % (LABEL[c], info["version"], info["launcher"],
                                            "; " + env if env else ""))
    md += tuning_bullets(meta.get("tuning"), "run")
    md += ["", "Each figure is the median over the repetitions (runs interleaved: every "
           "configuration, then again). Method: bench/README.md, \"mpi-overlap\" and "
           "\"jacobi\". In short: per case the pure time of start + wait, then start, a compute "
           "phase %s, wait; overlap %% = max(0, 100 (1 - (overall - "
           "compute) / pure)); **sleep**: the rank is off the CPU while it computes; **busy**: "
           "it spins on its core. Host CPU: the calling thread's CPU time "
           "(CLOCK_THREAD_CPUTIME_ID) inside the start and the wait calls, not the compute. "
           "Every case's data are verified once." % compute_phase(meta), ""]
    if meta.get("binding"):
        md += [meta["binding"], ""]
    busy = meta.get("busy_before") or {}
    if busy:
        md.append("Other work on the machine: how busy the CPUs were in the half second "
                  "before each run (median and maximum over the runs of each "
                  "configuration): %s." % "; ".join(
                      "%s %.0f%% and %.0f%%" % (LABEL[c], 100 * b[0], 100 * b[1])
                      for c, b in busy.items()))
        if max(b[1] for b in busy.values()) > meta.get("idle", 0.1):
            md.append(red("Some runs started on a busy machine: their figures include the "
                          "others' work (rerun with --wait-idle)."))
        md.append("")
    if checks:
        met = [c for c in checks if c["ok"]]
        missed = [c for c in checks if c["ok"] is False]
        missing = [c for c in checks if c["ok"] is None]
        md += ["## Targets (issue 14, section 5)", "",
               "%d met, %d missed, %d without a figure." % (len(met), len(missed),
                                                            len(missing)), ""]
        for group, word in ((missed, "missed"), (missing, "no figure"), (met, "met")):
            for c in group:
                line = "%s: %d ranks, %s, %s: %s%s" % (
                    c["what"], c["ranks"], c["case"], LABEL[c["config"]],
                    fmt(c["value"]) if c["value"] is not None else "-",
                    " (%s)" % c["detail"] if c["detail"] else "")
                md.append("- " + (red(word + ": " + line) if word == "missed"
                                  else word + ": " + line))
        md.append("")
    if meta.get("failures"):
        md += ["## Errors", ""] + ["- " + red(f) for f in meta["failures"]] + [""]
    for row, sums in checksum_disagreements(rows):
        md.append("- " + red("Jacobi %s, %d ranks: the checksums differ between runs: %s" % (
            row["name"], row["ranks"], ", ".join("%.17g" % s for s in sums))))
    for ranks in sorted({k[0] for k in rows}):
        md += ["## %d ranks" % ranks, ""]
        if any(k[0] == ranks and k[1] == "overlap" for k in rows):
            for compute in COMPUTE:
                md += ["### Overlap, compute: %s, %d ranks" % (compute, ranks), ""]
                md += overlap_tables(rows, ranks, compute, configs)
                for name in ("overlap-%s" % compute, "host-cpu-%s" % compute):
                    rel = plots.get("%s-%dranks" % (name, ranks))
                    if rel:
                        md += ["", "![%s, %d ranks](%s)" % (name, ranks, rel)]
                md.append("")
        row = rows.get((ranks, "latency", LATENCY_CASE, None))
        if row:
            md += ["### Persistent broadcast of 8 B against MPI_Bcast, %d ranks" % ranks, "",
                   "| configuration | MPI_Start to MPI_Wait (us) | MPI_Bcast (us) | ratio |",
                   "|---|---|---|---|"]
            for c in configs:
                md.append("| %s | %s |" % (LABEL[c], cell(row, c, " | ".join(
                    fmt(figure(row, c, m), 3) for m in ("value", "bcast_usec", "ratio"))) if
                    c in row["medians"] else cell(row, c, "") + " | |"))
            md.append("")
        row = rows.get((ranks, "sync", SYNC_CASE, None))
        if row:
            md += ["### Synchronous 8 B paths, %d ranks" % ranks, "",
                   "Blocking calls, us per operation (the median of 15 blocks, the slowest "
                   "rank); with the agent on they must stay within 5% of agent off.", "",
                   "| configuration | " + " | ".join(SYNC_LABEL[m] for m in SYNC_METRICS) +
                   " |", "|---|" + "---|" * len(SYNC_METRICS)]
            for c in configs:
                md.append("| %s | %s |" % (LABEL[c], cell(row, c, " | ".join(
                    fmt(figure(row, c, m), 3) for m in SYNC_METRICS))))
            md.append("")
        jac = [rows.get((ranks, "jacobi", m, None)) for m in JACOBI_MODES]
        if any(jac):
            n = next(r["size"] for r in jac if r)
            md += ["### Jacobi, %d x %d grid, %d ranks" % (n, n, ranks), "",
                   "Time per iteration (the slowest rank) and the part of it spent in "
                   "MPI_Waitall, us; plain / overlap above 1: overlapping the halo exchange "
                   "with the interior update pays.", "",
                   "| configuration | overlap | plain | plain / overlap | wait, overlap | "
                   "wait, plain |", "|---|---|---|---|---|---|"]
            for c in configs:
                o, p = (figure(r, c, "value") for r in jac)
                wo, wp = (figure(r, c, "wait_usec") for r in jac)
                if o is None and p is None:
                    why = next((r["status"][c] for r in jac if r and c in r["status"]), "-")
                    md.append("| %s | %s | | | | |" % (LABEL[c], why.split(":")[0]))
                    continue
                md.append("| %s | %s | %s | %s | %s | %s |" % (
                    LABEL[c], fmt(o), fmt(p), fmt(p / o, 2) if o and p else "-", fmt(wo),
                    fmt(wp)))
            rel = plots.get("jacobi-%dranks" % ranks)
            if rel:
                md += ["", "![jacobi, %d ranks](%s)" % (ranks, rel)]
            md.append("")
    return "\n".join(md)


# ---- plots ----

COLORS = {"fmpl-off": "#f4a582", "fmpl-thread": "#b2182b", "openmpi": "#2166ac",
          "mpich": "#1b7837", "mpich-async": "#7fbf7b", "overlap": "#b2182b", "plain": "#999999"}


def plot(rows, outdir, configs):
    """PNGs under outdir/plots; returns {name: relative path}, or None
    without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    os.makedirs(os.path.join(outdir, "plots"), exist_ok=True)
    plots = {}

    def bars(name, title, ylabel, groups, series, line=None):
        """groups: x labels; series: [(config, [value or None per group])]."""
        if not any(v is not None for _, vals in series for v in vals):
            return
        fig, ax = plt.subplots(figsize=(8, 4.5))
        width = 0.8 / max(1, len(series))
        top = max(v for _, vals in series for v in vals if v is not None) or 1
        for i, (cfg, vals) in enumerate(series):
            xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
            ax.bar([x for x, v in zip(xs, vals) if v is not None],
                   [v for v in vals if v is not None], width, label=LABEL.get(cfg, cfg),
                   color=COLORS.get(cfg))
            # Each bar's figure above it; "-" where there is none (n/a, failed),
            # so that a missing bar is not read as a zero.
            for x, v in zip(xs, vals):
                ax.text(x, (v or 0) + top * 0.01, "-" if v is None else "%.0f" % v,
                        ha="center", va="bottom", fontsize=6)
        if line is not None:
            ax.axhline(line, color="black", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        rel = os.path.join("plots", name + ".png")
        fig.savefig(os.path.join(outdir, rel), dpi=100)
        plt.close(fig)
        plots[name] = rel

    for ranks in sorted({k[0] for k in rows}):
        for compute in COMPUTE:
            got = [(c, [figure(rows.get((ranks, "overlap", case, compute)), c, "overlap_pct")
                        for case in CASES]) for c in configs]
            bars("overlap-%s-%dranks" % (compute, ranks),
                 "Overlap, compute: %s, %d ranks (target 90%%)" % (compute, ranks),
                 "overlap % (higher is better)", CASES, got, line=90 if compute == "sleep"
                 else None)
            got = [(c, [figure(rows.get((ranks, "overlap", case, compute)), c, "host_cpu_pct")
                        for case in CASES]) for c in configs]
            bars("host-cpu-%s-%dranks" % (compute, ranks),
                 "Host CPU in MPI calls, %% of the pure time, compute: %s, %d ranks" % (
                     compute, ranks),
                 "% of pure time (lower is better)", CASES, got, line=10)
        jac = [rows.get((ranks, "jacobi", m, None)) for m in JACOBI_MODES]
        got = [(m, [figure(jac[i], c, "value") for c in configs])
               for i, m in enumerate(JACOBI_MODES)]
        if any(jac):
            bars("jacobi-%dranks" % ranks, "Jacobi, time per iteration, %d ranks" % ranks,
                 "us per iteration (lower is better)", [LABEL[c] for c in configs], got)
    return plots


def save_rows(rows):
    return [dict(r) for _, r in sorted(rows.items(), key=lambda kv: str(kv[0]))]


def load_rows(saved):
    return {(r["ranks"], r["table"], r["name"], r["compute"]): r for r in saved}
