#!/usr/bin/env python3
"""Unit tests of bench/compare's report logic: medians, the FMPL / best peer
ratio and its direction, the target table, the Markdown marks.  Nothing is
built or run, no timing is involved."""
import argparse
import importlib.machinery
import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_loader = importlib.machinery.SourceFileLoader("compare", os.path.join(HERE, "compare"))
_spec = importlib.util.spec_from_loader("compare", _loader)
compare = importlib.util.module_from_spec(_spec)
_loader.exec_module(compare)
ovr = compare.overlap_report


def run(lib, ranks, results, rep=0):
    return dict(lib=lib, ranks=ranks, rep=rep, results=results)


def rec(bench, size, value, unit="us", **extra):
    r = dict(bench=bench, status="ok", value=value, unit=unit, **extra)
    if size is not None:
        r["size"] = size
    return r


class Report(unittest.TestCase):
    def test_median_ignores_missing(self):
        self.assertEqual(compare.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(compare.median([4.0, None, 1.0, 2.0, 3.0]), 2.5)
        self.assertIsNone(compare.median([]))

    def test_best_peer_direction(self):
        m = {"fmpl": 1.0, "openmpi": 2.0, "mpich": 3.0}
        self.assertEqual(compare.best_peer(m, "us"), ("openmpi", 2.0))
        self.assertEqual(compare.best_peer(m, "MB/s"), ("mpich", 3.0))
        self.assertEqual(compare.best_peer({"fmpl": 1.0}, "us"), (None, None))

    def test_rows_medians_ratio_and_marks(self):
        runs = []
        for rep, (f, o, m) in enumerate([(1.0, 2.0, 4.0), (3.0, 2.2, 4.0), (1.2, 1.8, 9.0)]):
            runs.append(run("fmpl", 2, [rec("latency", 8, f), rec("bw", 1 << 20, 1000 * f,
                                                                   "MB/s")], rep))
            runs.append(run("openmpi", 2, [rec("latency", 8, o), rec("bw", 1 << 20, 1000 * o,
                                                                      "MB/s")], rep))
            runs.append(run("mpich", 2, [rec("latency", 8, m), rec("bw", 1 << 20, 1000 * m,
                                                                    "MB/s")], rep))
        rows = compare.build_rows(runs)
        lat = rows[(2, "latency", 8)]
        self.assertEqual(lat["medians"], {"fmpl": 1.2, "openmpi": 2.0, "mpich": 4.0})
        self.assertEqual(lat["best_peer"], "openmpi")
        self.assertAlmostEqual(lat["ratio"], 0.6)
        # 0.6 <= 0.6 (0-64 B target) and within 10%: pass.
        self.assertTrue(all(c["ok"] for c in lat["checks"]), lat["checks"])
        self.assertEqual(compare.mark(lat["checks"]), "pass")
        bw = rows[(2, "bw", 1 << 20)]
        self.assertEqual(bw["best_peer"], "mpich")          # highest MB/s
        self.assertAlmostEqual(bw["ratio"], 1200 / 4000)
        self.assertIn("color:red", compare.mark(bw["checks"]))
        self.assertIn(">= 1.7", compare.mark(bw["checks"]))

    def test_general_slack(self):
        def one(f, o):
            rows = compare.build_rows([run("fmpl", 2, [rec("gather", 64, f)]),
                                       run("openmpi", 2, [rec("gather", 64, o)])])
            return rows[(2, "gather", 64)]["checks"]
        self.assertEqual(compare.mark(one(1.09, 1.0)), "pass")
        self.assertIn("10%", compare.mark(one(1.11, 1.0)))

    def test_reference_openmpi_and_own_bcast(self):
        runs = [run("fmpl", 4, [rec("barrier", None, 0.65)]),
                run("openmpi", 4, [rec("barrier", None, 1.0)]),
                run("mpich", 4, [rec("barrier", None, 0.1)]),
                run("fmpl", 2, [rec("bcast", 8, 1.0), rec("bcast_init", 8, 0.75)]),
                run("mpich", 2, [rec("bcast", 8, 2.0), rec("bcast_init", 8, 2.0)])]
        rows = compare.build_rows(runs)
        barrier = rows[(4, "barrier", None)]["checks"]
        named = [c for c in barrier if c["what"] != compare.GENERAL_TEXT]
        self.assertEqual(len(named), 1)
        self.assertAlmostEqual(named[0]["ratio"], 0.65)   # against Open MPI, not MPICH
        self.assertTrue(named[0]["ok"])
        pers = [c for c in rows[(2, "bcast_init", 8)]["checks"]
                if c["what"] != compare.GENERAL_TEXT]
        self.assertAlmostEqual(pers[0]["ratio"], 0.75)   # against FMPL's own MPI_Bcast
        self.assertTrue(pers[0]["ok"])

    def test_unsupported_spreads_and_native_only_sizes_drop(self):
        runs = [run("fmpl", 2, [dict(bench="put_lat", status="unsupported",
                                     error="rank 0: operation not supported")]),
                run("openmpi", 2, [rec("put_lat", 8, 0.5), rec("put_lat", 64, 0.6)]),
                run(compare.NATIVE, 2, [rec("latency", 16, 0.1)])]
        rows = compare.build_rows(runs)
        self.assertNotIn((2, "put_lat", None), rows)
        self.assertTrue(rows[(2, "put_lat", 8)]["status"]["fmpl"].startswith("unsupported"))
        self.assertNotIn((2, "latency", 16), rows)
        md = compare.table([rows[(2, "put_lat", 8)], rows[(2, "put_lat", 64)]],
                           ["fmpl", "openmpi"])
        self.assertIn("| 8 B | unsupported | 0.500 |", md)

    def test_targets_table_shape(self):
        for t in compare.TARGETS:
            self.assertIn(t["bench"], compare.ALL_BENCHES)
            self.assertTrue(("max_ratio" in t) != ("min_ratio" in t), t)


# ---- --overlap and --jacobi (bench/overlap_report.py) ----

def orun(config, kind, results, rep=0, ranks=2):
    return dict(config=config, kind=kind, ranks=ranks, rep=rep, results=results)


def ov(case, compute, overlap, pure=100.0, cpu_pct=50.0, **extra):
    r = dict(bench=case, size=1 << 20, compute=compute, status="ok", unit="%", value=overlap,
             overlap_pct=overlap, pure_usec=pure, overall_usec=2 * pure - overlap,
             compute_usec=pure, host_cpu_usec=cpu_pct * pure / 100, host_cpu_pct=cpu_pct)
    r.update(extra)
    return r


def lat(ratio_, bcast=1.0):
    return dict(bench="bcast_init_8b", size=8, status="ok", unit="us", value=ratio_ * bcast,
                bcast_usec=bcast, ratio=ratio_)


def jac(mode, usec, checksum=123.5, wait=10.0):
    return dict(bench="jacobi", mode=mode, n=64, status="ok", unit="us", value=usec,
                usec_min=usec, wait_usec=wait, checksum=checksum)


class OverlapReport(unittest.TestCase):
    def runs(self):
        runs = []
        # Three repetitions of FMPL with the agent: medians 95 (sleep), 40 (busy).
        for rep, (s, b) in enumerate([(95.0, 40.0), (80.0, 10.0), (97.0, 45.0)]):
            runs.append(orun("fmpl-thread", "overlap", [
                ov(c, "sleep", s, cpu_pct=5.0) for c in ovr.CASES] + [
                ov(c, "busy", b) for c in ovr.CASES] + [lat(0.7)], rep))
            runs.append(orun("openmpi", "overlap", [
                ov("ibcast", "sleep", 96.0), ov("ibcast", "busy", 90.0),
                dict(bench="allreduce_init", size=1 << 20, status="n/a",
                     error="needs MPI 4 (this mpi.h is MPI 3.1)")], rep))
            runs.append(orun("mpich", "overlap", [ov("ibcast", "sleep", 1.0)], rep))
            runs.append(orun("fmpl-thread", "jacobi", [jac("overlap", 90.0 + rep),
                                                       jac("plain", 120.0)], rep))
            runs.append(orun("openmpi", "jacobi", [jac("overlap", 100.0), jac("plain", 100.0)],
                             rep))
        return runs

    def test_rows_medians_and_statuses(self):
        rows = ovr.build_rows(self.runs())
        row = rows[(2, "overlap", "ibcast", "sleep")]
        self.assertEqual(row["values"]["fmpl-thread"]["overlap_pct"], [95.0, 80.0, 97.0])
        self.assertEqual(ovr.figure(row, "fmpl-thread", "overlap_pct"), 95.0)
        self.assertEqual(ovr.figure(row, "openmpi", "overlap_pct"), 96.0)
        self.assertEqual(ovr.figure(rows[(2, "overlap", "ibcast", "busy")], "fmpl-thread",
                                    "overlap_pct"), 40.0)
        # A case that did not run is marked for both kinds of compute.
        for compute in ovr.COMPUTE:
            st = rows[(2, "overlap", "allreduce_init", compute)]["status"]["openmpi"]
            self.assertTrue(st.startswith("n/a: needs MPI 4"), st)
        self.assertEqual(ovr.figure(rows[(2, "latency", "bcast_init_8b", None)], "fmpl-thread",
                                    "ratio"), 0.7)
        j = rows[(2, "jacobi", "overlap", None)]
        self.assertEqual(ovr.figure(j, "fmpl-thread", "value"), 91.0)
        self.assertEqual(j["size"], 64)
        self.assertEqual(ovr.checksum_disagreements(rows), [])

    def test_targets(self):
        checks = ovr.check_targets(ovr.build_rows(self.runs()))

        def one(what, case, config="fmpl-thread"):
            got = [c for c in checks if c["what"].startswith(what) and c["case"] == case and
                   c["config"] == config]
            self.assertEqual(len(got), 1, (what, case, got))
            return got[0]
        self.assertTrue(one("overlap >= 90%", "iallreduce")["ok"])         # median 95
        # ibcast: 95 is not ahead of Open MPI's 96; MPICH's 1 does not matter.
        ahead = one("overlap ahead", "ibcast")
        self.assertFalse(ahead["ok"])
        self.assertIn("Open MPI 96.0", ahead["detail"])
        # No peer figure at all: nothing to be ahead of.
        self.assertIsNone(one("overlap ahead", "isend_irecv")["ok"])
        self.assertTrue(one("host CPU", "bcast_init")["ok"])              # 5% <= 10%
        self.assertFalse(any(c["case"] == "isend_irecv" for c in checks
                             if c["what"].startswith("host CPU")))      # 1 MiB cases only
        self.assertTrue(one("persistent 8 B", "bcast_init_8b")["ok"])     # 0.7 <= 0.8
        off = one("persistent 8 B", "bcast_init_8b", "fmpl-off")
        self.assertIsNone(off["ok"])                                      # no figure

    def test_sync_paths_against_agent_off(self):
        def sync(pp, bc, ar):
            return dict(bench="sync_8b", size=8, status="ok", unit="us", value=pp,
                        pingpong_usec=pp, bcast_usec=bc, allreduce_usec=ar)
        runs = []
        # Medians: off 0.10 / 0.20 / 0.30; on 0.104 / 0.22 / 0.30.
        for rep, (off, on) in enumerate([((0.10, 0.20, 0.30), (0.104, 0.22, 0.29)),
                                         ((0.11, 0.19, 0.31), (0.100, 0.23, 0.30)),
                                         ((0.09, 0.21, 0.30), (0.110, 0.21, 0.31))]):
            runs.append(orun("fmpl-off", "overlap", [sync(*off)], rep))
            runs.append(orun("fmpl-thread", "overlap", [sync(*on)], rep))
        rows = ovr.build_rows(runs)
        self.assertIn((2, "sync", "sync_8b", None), rows)
        checks = {c["what"].split(" with ")[0].split("8 B ")[1]: c
                  for c in ovr.check_targets(rows) if c["case"] == "sync_8b"}
        self.assertEqual(sorted(checks), ["MPI_Allreduce", "MPI_Bcast",
                                          "MPI_Send/MPI_Recv one way"])
        self.assertAlmostEqual(checks["MPI_Send/MPI_Recv one way"]["value"], 1.04)
        self.assertTrue(checks["MPI_Send/MPI_Recv one way"]["ok"])
        self.assertAlmostEqual(checks["MPI_Bcast"]["value"], 1.1)
        self.assertFalse(checks["MPI_Bcast"]["ok"])
        self.assertTrue(checks["MPI_Allreduce"]["ok"])
        self.assertIn("FMPL, agent off 0.200 us", checks["MPI_Bcast"]["detail"])
        # Without agent-off runs there is nothing to compare with.
        rows = ovr.build_rows([r for r in runs if r["config"] == "fmpl-thread"])
        self.assertTrue(all(c["ok"] is None for c in ovr.check_targets(rows)
                            if c["case"] == "sync_8b"))
        md = ovr.markdown(dict(quick=False, reps=3, ranks=[2], duration="1s", configs={
            c: dict(version="v", launcher="l", env={}) for c in ("fmpl-off", "fmpl-thread")},
            date="d", host="h", cpu="c", cores=2, kernel="k"), rows, [], {})
        self.assertIn("### Synchronous 8 B paths, 2 ranks", md)

    def test_missed_target_and_failure_marks(self):
        runs = [orun("fmpl-thread", "overlap", [ov("ibcast", "sleep", 50.0, cpu_pct=30.0)]),
                orun("openmpi", "overlap", [ov("ibcast", "sleep", 20.0)]),
                orun("fmpl-thread", "jacobi", [jac("overlap", 1.0, checksum=1.0)]),
                orun("openmpi", "jacobi", [jac("overlap", 1.0, checksum=2.0)])]
        rows = ovr.build_rows(runs)
        checks = ovr.check_targets(rows)
        missed = {(c["what"].split()[0], c["case"]) for c in checks if c["ok"] is False}
        self.assertIn(("overlap", "ibcast"), missed)       # 50 < 90
        self.assertIn(("host", "ibcast"), missed)          # 30% > 10%
        self.assertEqual(len(ovr.checksum_disagreements(rows)), 1)
        meta = dict(configs={c: dict(version="v", launcher="run", env={})
                             for c in ("fmpl-thread", "openmpi")},
                    date="d", host="h", cpu="c", cores=2, kernel="k", quick=True, reps=1,
                    ranks=[2], duration="0:01", failures=["Open MPI, 2 ranks: exit 1"],
                    busy_before={"openmpi": [0.05, 0.5]}, idle=0.1)
        md = ovr.markdown(meta, rows, checks, {})
        self.assertIn("| ibcast | 50 | 20 |", md)
        self.assertIn("color:red", md)
        self.assertIn("missed: overlap >= 90% while the rank sleeps: 2 ranks, ibcast", md)
        self.assertIn("checksums differ", md)
        self.assertIn("exit 1", md)
        self.assertIn("rerun with --wait-idle", md)             # a run began 50% busy

    def test_markdown_tables(self):
        rows = ovr.build_rows(self.runs())
        meta = dict(configs={c: dict(version="v", launcher="run", env=cfg["env"])
                             for cfg in ovr.CONFIGS for c in [cfg["name"]]
                             if c in ("fmpl-thread", "openmpi")},
                    date="d", host="h", cpu="c", cores=2, kernel="k", quick=True, reps=3,
                    ranks=[2], duration="0:01")
        md = ovr.markdown(meta, rows, ovr.check_targets(rows), {"jacobi-2ranks": "plots/j.png"})
        self.assertIn("| allreduce_init | 95 | n/a |", md)
        self.assertIn("`FMPL_AGENT=thread`", md)
        # Jacobi: plain / overlap = 120 / 91.
        self.assertIn("| FMPL, agent thread | 91.0 | 120.0 | 1.32 |", md)
        self.assertIn("![jacobi, 2 ranks](plots/j.png)", md)
        self.assertIn("| FMPL, agent thread | 0.700 | 1.000 | 0.700 |", md)
        self.assertIn("| Open MPI | - | | |", md)       # no 8-byte figure: a full row

    def test_jobs_interleaved_with_each_configuration_environment(self):
        a = argparse.Namespace(overlap=True, jacobi=True, quick=True, reps=2, hosts=False,
                               bind="none", compute_min=100)
        libs = ["fmpl", "openmpi", "mpich"]
        exes = {(k, lib): "%s-%s" % (k, lib) for k in ("overlap", "jacobi") for lib in libs}
        jobs = compare.overlap_jobs(a, ovr.CONFIG_NAMES, libs, exes, [2], "/b", dict(cores=2))
        self.assertEqual(len(jobs), 2 * 5 * 2)
        order = [(j["rep"], j["config"], j["kind"]) for j in jobs[:4]]
        self.assertEqual(order, [(0, "fmpl-off", "overlap"), (0, "fmpl-off", "jacobi"),
                                 (0, "fmpl-thread", "overlap"), (0, "fmpl-thread", "jacobi")])
        by = {(j["config"], j["kind"]): j for j in jobs if j["rep"] == 1}
        self.assertEqual(by[("fmpl-off", "overlap")]["env"]["FMPL_AGENT"], "off")
        self.assertEqual(by[("fmpl-thread", "jacobi")]["env"]["FMPL_AGENT"], "thread")
        self.assertEqual(by[("mpich-async", "overlap")]["env"]["MPIR_CVAR_ASYNC_PROGRESS"], "1")
        self.assertIn("--bind-to", by[("openmpi", "overlap")]["cmd"])
        self.assertIn("none", by[("openmpi", "overlap")]["cmd"])
        self.assertIn("jacobi-mpich", by[("mpich", "jacobi")]["cmd"])
        # The plain MPICH run must not inherit the progress thread from the shell.
        os.environ["MPIR_CVAR_ASYNC_PROGRESS"] = "1"
        try:
            env = compare.clean_env(by[("mpich", "overlap")]["env"])
        finally:
            del os.environ["MPIR_CVAR_ASYNC_PROGRESS"]
        self.assertNotIn("MPIR_CVAR_ASYNC_PROGRESS", env)
        self.assertIn("--quick", by[("fmpl-off", "jacobi")]["cmd"])
        # Every configuration's compute phase has the same floor; jacobi has none.
        cmd = by[("mpich-async", "overlap")]["cmd"]
        self.assertEqual(cmd[cmd.index("--compute-min") + 1], "100")
        self.assertNotIn("--compute-min", by[("fmpl-off", "jacobi")]["cmd"])

    def test_jobs_across_hosts(self):
        a = argparse.Namespace(overlap=True, jacobi=False, quick=False, reps=1, hosts=True,
                               bind="none", compute_min=0)
        exes = {("overlap", lib): "ov-" + lib for lib in ("fmpl", "mpich")}
        jobs = compare.overlap_jobs(a, ["fmpl-thread", "mpich-async"], ["fmpl", "mpich"], exes,
                                    [2], "/b", dict(cores=2))
        self.assertEqual([j["config"] for j in jobs], ["fmpl-thread", "mpich-async"])
        fmpl, mpich = jobs
        self.assertIn("--hosts", fmpl["cmd"])
        self.assertIn("fmpl-h1:1,fmpl-h2:1", fmpl["cmd"])
        self.assertEqual(fmpl["env"]["FMPL_AGENT"], "thread")
        self.assertIn("-hosts", mpich["cmd"])
        self.assertEqual(mpich["env"]["MPIR_CVAR_ASYNC_PROGRESS"], "1")
        self.assertNotIn("--quick", mpich["cmd"])
        self.assertEqual(mpich["cmd"][mpich["cmd"].index("--compute-min") + 1], "0")


# ---- --npb (bench/npb_report.py) ----

nrep = compare.npb_report


def nrun(lib, kernel, ranks, mops, rep=0, cls="A", ok=True, why=None):
    return dict(lib=lib, kernel=kernel, cls=cls, ranks=ranks, rep=rep, mops=mops, ok=ok, why=why)


def profile_json(calls, seconds, wall=1.0, ranks=2):
    """A pmpi_profile JSON report: every rank with the same figures."""
    names = ["MPI_Send", "MPI_Wait", "MPI_Alltoallv"]
    return dict(tool="pmpi_profile", ranks=ranks, calls_named=names, per_rank=[
        dict(rank=r, wall_seconds=wall, calls=[calls.get(n, 0) for n in names],
             seconds=[seconds.get(n, 0.0) for n in names],
             bytes=[8 * calls.get(n, 0) for n in names]) for r in range(ranks)])


class NpbReport(unittest.TestCase):
    def runs(self):
        runs = []
        # CG at 2 ranks: FMPL 120 (median of 100, 120, 130), MPICH 100, Open MPI 90.
        for rep, (f, m, o) in enumerate([(100.0, 100.0, 95.0), (120.0, 90.0, 90.0),
                                         (130.0, 110.0, 80.0)]):
            runs += [nrun("fmpl", "cg", 2, f, rep), nrun("mpich", "cg", 2, m, rep),
                     nrun("openmpi", "cg", 2, o, rep)]
            # FT at 4 ranks: 1.10 x Open MPI, the best peer: short of 1.15, not 3% behind.
            runs += [nrun("fmpl", "ft", 4, 110.0, rep), nrun("mpich", "ft", 4, 10.0, rep),
                     nrun("openmpi", "ft", 4, 100.0, rep)]
            # EP at 2 ranks: 0.96 x MPICH: more than 3% behind; not a communication kernel.
            runs += [nrun("fmpl", "ep", 2, 96.0, rep), nrun("mpich", "ep", 2, 100.0, rep)]
        # IS at 4 ranks: FMPL's runs fail verification; BT at 1 rank has no peer.
        runs += [nrun("fmpl", "is", 4, 500.0, ok=False, why="verification not SUCCESSFUL"),
                 nrun("mpich", "is", 4, 50.0), nrun("fmpl", "bt", 1, 1000.0)]
        return runs

    def test_rows_medians_best_peer_ratio(self):
        rows = nrep.build_rows(self.runs())
        cg = rows[("cg", "A", 2)]
        self.assertEqual(cg["values"]["fmpl"], [100.0, 120.0, 130.0])
        self.assertEqual(cg["medians"], {"fmpl": 120.0, "mpich": 100.0, "openmpi": 90.0})
        self.assertEqual(cg["best_peer"], "mpich")                 # the higher Mop/s
        self.assertAlmostEqual(cg["ratio"], 1.2)
        self.assertEqual(rows[("ft", "A", 4)]["best_peer"], "openmpi")
        is4 = rows[("is", "A", 4)]
        self.assertNotIn("fmpl", is4["medians"])                  # unverified: no figure
        self.assertEqual(is4["failed"]["fmpl"], ["verification not SUCCESSFUL"])
        self.assertIsNone(is4["ratio"])
        self.assertIsNone(rows[("bt", "A", 1)]["ratio"])           # no peer ran

    def test_targets(self):
        checks = nrep.check_targets(nrep.build_rows(self.runs()))

        def one(kernel, ranks, bound):
            got = [c for c in checks if (c["kernel"], c["ranks"]) == (kernel, ranks) and
                   c["what"].startswith(">= %s" % bound)]
            self.assertEqual(len(got), 1, (kernel, ranks, bound, checks))
            return got[0]
        self.assertTrue(one("cg", 2, "1.15")["ok"])                # 1.20
        self.assertTrue(one("cg", 2, "0.97")["ok"])
        self.assertFalse(one("ft", 4, "1.15")["ok"])               # 1.10
        self.assertTrue(one("ft", 4, "0.97")["ok"])
        self.assertFalse(one("ep", 2, "0.97")["ok"])               # 0.96
        self.assertFalse(any(c["kernel"] == "ep" and c["what"].startswith(">= 1.15")
                             for c in checks))                     # not communication-heavy
        self.assertIsNone(one("is", 4, "1.15")["ok"])              # FMPL has no figure
        self.assertIsNone(one("bt", 1, "0.97")["ok"])
        self.assertFalse(any(c["kernel"] == "bt" and c["what"].startswith(">= 1.15")
                             for c in checks))
        # The 1.15 target is for 2 and 4 ranks only.
        rows = nrep.build_rows([nrun("fmpl", "cg", 1, 100.0), nrun("mpich", "cg", 1, 100.0)])
        self.assertEqual([c["what"][:7] for c in nrep.check_targets(rows)], [">= 0.97"])

    def test_markdown(self):
        rows = nrep.build_rows(self.runs())
        checks = nrep.check_targets(rows)
        libs = {lib: dict(version="v", launcher="run", compile="fc -O3")
                for lib in ("fmpl", "mpich", "openmpi")}
        meta = dict(libraries=libs, date="d", host="h", cpu="c", cores=2, kernel="k",
                    classes=["A"], kernels=["cg", "ft"], ranks=[2, 4], reps=3, duration="1:00",
                    busy_before={"fmpl": [0.05, 0.5]}, idle=0.1, autogroup=True,
                    failures=["FMPL, 4 ranks, repetition 1: verification not SUCCESSFUL"])
        prof = {("cg", "A", 2): {
            "fmpl": nrep.summarize_profile(profile_json({"MPI_Wait": 10, "MPI_Send": 10},
                                                        {"MPI_Wait": 0.2, "MPI_Send": 0.1})),
            "mpich": nrep.summarize_profile(profile_json({"MPI_Wait": 10, "MPI_Alltoallv": 1},
                                                         {"MPI_Wait": 0.4,
                                                          "MPI_Alltoallv": 0.5}))}}
        md = nrep.markdown(meta, rows, checks, {"ratios": "plots/npb-ratios.png"}, prof)
        self.assertIn("| CG | A | 2 | 120.0 | 100.0 | 90.0 | 1.20 | pass |", md)
        self.assertIn("| FT | A | 4 | 110.0 | 10.0 | 100.0 | 1.10 | "
                      '<span style="color:red">miss: >= 1.15 x the best peer</span> |', md)
        self.assertIn("| IS | A | 4 | " + nrep.red("verification not SUCCESSFUL") +
                      " | 50.0 | - | - | no figure |", md)
        self.assertIn("missed: >= 0.97 x the best peer (never more than 3% behind): ep.A, "
                      "2 ranks: FMPL / best peer 0.96", md)
        self.assertIn("![FMPL / best peer](plots/npb-ratios.png)", md)
        self.assertIn("rerun with --wait-idle", md)
        self.assertIn("autogroup scheduling is on", md)
        # The profile: FMPL's functions by time, then MPICH's own heavy one.
        self.assertIn("| MPI_Wait | 0.4000 (20) | 0.8000 (20) | 8 |", md)
        self.assertIn("| MPI_Alltoallv | - | 1.0000 (2) | 8 |", md)
        self.assertLess(md.index("| MPI_Wait |"), md.index("| MPI_Send |"))
        self.assertIn("0.300 / 1.000 s (30%)", md)                 # (0.4 + 0.2) / 2 ranks
        self.assertIn("## Errors", md)
        self.assertIn(nrep.red("FMPL, 4 ranks, repetition 1: verification not SUCCESSFUL"), md)

    def test_ceiling_explains_a_miss(self):
        # FT at 4 ranks misses 1.15 (1.10 x Open MPI).  Open MPI's profiled run
        # spends 0.1 s of 1 s per rank in MPI: no library can be more than
        # 1 / 0.9 = 1.11 x ahead of it on that run.
        rows = nrep.build_rows(self.runs())
        checks = nrep.check_targets(rows)
        prof = {("ft", "A", 4): {"openmpi": nrep.summarize_profile(
            profile_json({"MPI_Alltoallv": 4}, {"MPI_Alltoallv": 0.1}, ranks=4))}}
        limit = nrep.ceiling(rows[("ft", "A", 4)], prof[("ft", "A", 4)])
        self.assertAlmostEqual(limit[0], 1 / 0.9)
        self.assertAlmostEqual(limit[1], 0.1)
        self.assertEqual(limit[2], "openmpi")
        self.assertIsNone(nrep.ceiling(rows[("cg", "A", 2)], prof.get(("cg", "A", 2))))
        meta = dict(libraries={lib: dict(version="v", launcher="run", compile="fc")
                               for lib in ("fmpl", "mpich", "openmpi")},
                    date="d", host="h", cpu="c", cores=2, kernel="k", classes=["A"],
                    kernels=["ft"], ranks=[4], reps=3, duration="1:00")
        md = nrep.markdown(meta, rows, checks, {}, prof)
        self.assertIn("ft.A, 4 ranks: FMPL / best peer 1.10; at most 1.11 x with no time in "
                      "MPI (Open MPI spends 10% of its wall time in MPI)", md)

    def test_summarize_profile(self):
        rep = profile_json({"MPI_Send": 3}, {"MPI_Send": 0.5}, wall=2.0, ranks=4)
        rep["per_rank"][2]["seconds"][0] = 1.5
        rep["per_rank"][3]["wall_seconds"] = 3.0
        got = nrep.summarize_profile(rep)
        self.assertEqual(got["ranks"], 4)
        self.assertEqual(got["wall"], 3.0)                         # the slowest rank
        self.assertEqual(list(got["calls"]), ["MPI_Send"])         # uncalled ones left out
        self.assertEqual(got["calls"]["MPI_Send"], dict(calls=12, seconds=3.0,
                                                        max_rank_seconds=1.5, bytes=96))

    def test_jobs_interleaved_square_ranks_and_profile_env(self):
        libs = ["fmpl", "mpich", "openmpi"]
        exes = {(lib, k, "A"): "%s.A.x-%s" % (k, lib) for lib in libs for k in ("cg", "bt")}
        del exes[("mpich", "bt", "A")]                             # did not build
        jobs = compare.npb_jobs(["cg", "bt"], ["A"], libs, exes, [2, 4], 2, "/b", 2)
        order = [(j["ranks"], j["rep"], j["kernel"], j["lib"]) for j in jobs]
        self.assertEqual(order[:6], [(2, 0, "cg", "fmpl"), (2, 0, "cg", "mpich"),
                                     (2, 0, "cg", "openmpi"), (2, 1, "cg", "mpich"),
                                     (2, 1, "cg", "openmpi"), (2, 1, "cg", "fmpl")])
        self.assertFalse(any(j["kernel"] == "bt" and j["ranks"] == 2 for j in jobs))
        self.assertEqual(order[6:11], [(4, 0, "cg", "fmpl"), (4, 0, "cg", "mpich"),
                                       (4, 0, "cg", "openmpi"), (4, 0, "bt", "fmpl"),
                                       (4, 0, "bt", "openmpi")])
        self.assertEqual(len(jobs), 2 * 3 + 2 * (3 + 2))
        last_ompi = [j for j in jobs if j["lib"] == "openmpi"][-1]
        self.assertIn("--oversubscribe", last_ompi["launch"][0])  # 4 ranks on 2 cores
        fm = compare.npb_job("fmpl", "cg", "A", 2, 0, "x", "/b", 2, ("/p.so", "/o.json"))
        self.assertEqual(fm["launch"][1]["LD_PRELOAD"], "/p.so")
        self.assertEqual(fm["launch"][1]["PMPI_PROFILE_JSON"], "/o.json")
        self.assertTrue(fm["name"].endswith("-profile"))
        om = compare.npb_job("openmpi", "cg", "A", 2, 0, "x", "/b", 2, ("/p.so", "/o.json"))
        self.assertNotIn("LD_PRELOAD", om["launch"][1])           # the ranks alone get it
        self.assertIn("LD_PRELOAD=/p.so", om["launch"][0])
        self.assertEqual(om["launch"][0][om["launch"][0].index("LD_PRELOAD=/p.so") - 1], "-x")



# ---- --scalapack (bench/scalapack_report.py) ----

srep = compare.scalapack_report


def srun(config, ranks, rep, gemm, gesv, ok=True, why=None, n=2000):
    """A scalapack-bench run record with PDGEMM and PDGESV at order n."""
    grid = [1, 2] if ranks == 2 else [2, 2]
    return dict(config=config, ranks=ranks, rep=rep, ok=ok, why=why, busy_before=0.02,
                loadavg_before=[0.1, 0.2, 0.3], seconds=5.0,
                results=[dict(bench="pdgemm", size=n, status="ok", value=gemm, seconds=1.0,
                              grid=grid),
                         dict(bench="pdgesv", size=n, status="ok", value=gesv, seconds=0.5,
                              grid=grid)])


class ScalapackReport(unittest.TestCase):
    def runs(self):
        figures = {"fmpl-blacs": [(10, 5), (12, 6), (11, 7)],
                   "fmpl-mpiblacs": [(9, 4), (9, 4), (9, 4)],
                   "mpich": [(8, 2), (8, 3), (8, 4)],
                   "openmpi": [(10, 5), (9, 5), (11, 5)]}
        return [srun(c, 2, rep, *figures[c][rep]) for rep in range(3) for c in srep.CONFIG_NAMES]

    def test_rows_medians_best_peer_and_ratios(self):
        rows = srep.build_rows(self.runs())
        gemm = rows[("pdgemm", 2000, 2)]
        self.assertEqual(gemm["medians"], {"fmpl-blacs": 11, "fmpl-mpiblacs": 9, "mpich": 8,
                                           "openmpi": 10})
        self.assertEqual((gemm["best_peer"], gemm["best_value"]), ("openmpi", 10))
        self.assertAlmostEqual(gemm["ratios"]["fmpl-blacs"], 1.1)
        self.assertAlmostEqual(gemm["ratios"]["fmpl-mpiblacs"], 0.9)
        self.assertNotIn("mpich", gemm["ratios"])                 # peers have no ratio
        gesv = rows[("pdgesv", 2000, 2)]
        self.assertEqual(gesv["best_peer"], "openmpi")             # 5 against MPICH's 3
        self.assertAlmostEqual(gesv["ratios"]["fmpl-blacs"], 6 / 5)
        self.assertEqual(gesv["grid"], [1, 2])

    def test_failed_checks_and_runs_have_no_figure(self):
        runs = self.runs()
        runs[0]["results"][1] = dict(bench="pdgesv", size=2000, status="error",
                                     error="scaled residual 40 is not below 16")
        # A run whose calls reached MPI's BLACS: none of its figures count,
        # not even the ones whose check passed.
        runs[4] = srun("fmpl-blacs", 2, 1, 99, 99, ok=False,
                       why="BLACS from libscalapack-mpich.so.2.2.1, not libblacs-fmpl")
        runs[8] = dict(config="fmpl-blacs", ranks=2, rep=2, ok=False, why="exit 1", results=[])
        rows = srep.build_rows(runs)
        gesv = rows[("pdgesv", 2000, 2)]
        self.assertNotIn("fmpl-blacs", gesv["medians"])
        self.assertNotIn("fmpl-blacs", gesv["ratios"])
        self.assertEqual(gesv["failed"]["fmpl-blacs"][0], "scaled residual 40 is not below 16")
        self.assertEqual(len(gesv["failed"]["fmpl-blacs"]), 3)
        gemm = rows[("pdgemm", 2000, 2)]
        self.assertEqual(gemm["medians"]["fmpl-blacs"], 10)       # the first run's only
        self.assertEqual(gemm["failed"]["fmpl-blacs"],
                         ["BLACS from libscalapack-mpich.so.2.2.1, not libblacs-fmpl",
                          "exit 1"])
        self.assertIn("color:red", srep.cell(gesv, "fmpl-blacs"))
        self.assertEqual(srep.cell(gemm, "fmpl-blacs"), "10.0 (1.00 s) (2 failed)")

    def test_blacs_mismatch(self):
        self.assertIsNone(srep.blacs_mismatch("fmpl-blacs", {"blacs": "libblacs-fmpl.so.0.1.0"}))
        self.assertIn("not libblacs-fmpl",
                      srep.blacs_mismatch("fmpl-blacs", {"blacs": "libscalapack-mpich.so.2.2.1"}))
        self.assertIsNone(srep.blacs_mismatch("fmpl-mpiblacs",
                                              {"blacs": "libscalapack-mpich.so.2.2.1"}))
        self.assertIsNotNone(srep.blacs_mismatch("fmpl-mpiblacs",
                                                 {"blacs": "libblacs-fmpl.so.0.1.0"}))
        self.assertIsNotNone(srep.blacs_mismatch("openmpi",
                                                 {"blacs": "libscalapack-mpich.so.2.2.1"}))
        self.assertEqual(srep.blacs_mismatch("mpich", {}), "no header naming the BLACS")

    def test_markdown(self):
        runs = self.runs()
        runs[1]["busy_before"] = 0.6
        rows = srep.build_rows(runs)
        meta = dict(configs={c: dict(version="v-" + c, blacs="b", scalapack="s", blas="o",
                                     command="run " + c) for c in srep.CONFIG_NAMES},
                    date="d", host="h", cpu="c", cores=2, kernel="k", sizes=[2000], nb=64,
                    iters=3, ranks=[2], reps=3, duration="1:00", command="bench/compare x",
                    compile=["mpicc.mpich -O2 ..."], failures=["Open MPI, 2 ranks: exit 1"],
                    busy_before=srep.busy_by_config(runs), load_before=[1.0, 2.0, 3.0],
                    load_after=[0.5, 0.5, 0.5], idle=0.1)
        md = srep.markdown(meta, rows, {"pdgemm": "plots/scalapack-pdgemm.png"}, runs)
        self.assertIn("| 2 | 1 x 2 | 2000 | 11.0 (1.00 s) | 9.00 (1.00 s) | 8.00 (1.00 s) | "
                      "10.0 (1.00 s) | 1.10 | 0.90 |", md)
        self.assertIn("![pdgemm](plots/scalapack-pdgemm.png)", md)
        self.assertIn("run fmpl-blacs", md)
        self.assertIn("`mpicc.mpich -O2 ...`", md)
        self.assertIn("exit 1", md)
        self.assertIn("rerun with --wait-idle", md)                 # one run began 60% busy
        self.assertIn("load average 1.00/2.00/3.00 before", md)
        self.assertIn("| 2 | FMPL, MPI BLACS | 2 | 1 | 60% | 0.10 | 5.0 | ok |", md)
        # Geometric mean of BLACS-FMPL's ratios: 1.1 (PDGEMM) and 1.2 (PDGESV).
        self.assertIn("**FMPL, BLACS-FMPL** / best peer: geometric mean 1.15 over 2 rows "
                      "(1.10 to 1.20)", md)

    def test_jobs_interleaved_with_each_configuration_environment(self):
        exes = {"mpich": "/o/bin/scalapack-bench-mpich",
                "openmpi": "/o/bin/scalapack-bench-openmpi"}
        jobs = compare.scalapack_jobs(srep.CONFIG_NAMES, exes, [2, 4], 2, ["--sizes", "100"],
                                      "/b", 2)
        self.assertEqual(len(jobs), 2 * 2 * 4)
        self.assertEqual([(j["ranks"], j["rep"], j["config"]) for j in jobs[:5]],
                         [(2, 0, c) for c in srep.CONFIG_NAMES] + [(2, 1, "fmpl-blacs")])
        env = {j["config"]: j["env"] for j in jobs}
        for c in srep.CONFIG_NAMES:
            self.assertEqual(env[c]["OPENBLAS_NUM_THREADS"], "1")
            self.assertEqual(env[c]["OMP_NUM_THREADS"], "1")
        self.assertEqual(env["fmpl-blacs"]["LD_PRELOAD"], "/b/libblacs-fmpl.so")
        self.assertEqual(env["fmpl-blacs"]["LD_LIBRARY_PATH"], "/b")
        self.assertNotIn("LD_PRELOAD", env["fmpl-mpiblacs"])
        self.assertEqual(env["fmpl-mpiblacs"]["LD_LIBRARY_PATH"], "/b")
        for c in ("mpich", "openmpi"):
            self.assertNotIn("LD_LIBRARY_PATH", env[c])
            self.assertNotIn("LD_PRELOAD", env[c])
        exe = {j["config"]: j["cmd"][j["cmd"].index("--sizes") - 1] for j in jobs}
        self.assertEqual(exe["fmpl-blacs"], exes["mpich"])        # one binary for FMPL, MPICH
        self.assertEqual(exe["openmpi"], exes["openmpi"])
        self.assertIn("--oversubscribe", jobs[-1]["cmd"])          # 4 ranks on 2 cores
        text = compare.scalapack_command_text(jobs[0], "/o")
        self.assertEqual(text, "LD_LIBRARY_PATH=<build> LD_PRELOAD=<build>/libblacs-fmpl.so "
                               "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 fmplrun -n 2 --bind core "
                               "bin/scalapack-bench-mpich --sizes 100 --json FILE")
        # No ScaLAPACK for Open MPI: its configuration has no runs.
        jobs = compare.scalapack_jobs(srep.CONFIG_NAMES, {"mpich": "x"}, [2], 1, [], "/b", 2)
        self.assertEqual([j["config"] for j in jobs], ["fmpl-blacs", "fmpl-mpiblacs", "mpich"])



class PortableCmd(unittest.TestCase):
    def test_environment_settings_name_no_path_of_this_machine(self):
        got = compare.portable_cmd(["LD_PRELOAD=/o/bin/p.so", "LD_LIBRARY_PATH=/b", "/b/fmplrun",
                                    "-n", "2", "/o/logs/a.json", "/usr/bin/x"], "/o", "/b")
        self.assertEqual(got, ["LD_PRELOAD=bin/p.so", "LD_LIBRARY_PATH=<build>", "<build>/fmplrun",
                               "-n", "2", "logs/a.json", "/usr/bin/x"])

    def test_npb_binaries_outside_the_build_are_named_by_their_root(self):
        got = compare.portable_cmd(["/b/fmplrun", "/w/fmpl/NPB3.4-MPI/bin/cg.A.x", "/wx/y"],
                                   "/o", "/b", (("<npb-work>", "/w"),))
        self.assertEqual(got, ["<build>/fmplrun", "<npb-work>/fmpl/NPB3.4-MPI/bin/cg.A.x",
                               "/wx/y"])
        job = compare.npb_jobs(["cg"], ["A"], ["fmpl"], {("fmpl", "cg", "A"): "/w/x"}, [2], 1,
                               "/b", 2, "/w")[0]
        self.assertEqual(job["work"], "/w")

if __name__ == "__main__":
    unittest.main()
