#!/usr/bin/env python3
"""Unit tests of bench/compare's report logic: medians, the FMPL / best peer
ratio and its direction, the target table, the Markdown marks.  Nothing is
built or run, no timing is involved."""
import importlib.machinery
import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_loader = importlib.machinery.SourceFileLoader("compare", os.path.join(HERE, "compare"))
_spec = importlib.util.spec_from_loader("compare", _loader)
compare = importlib.util.module_from_spec(_spec)
_loader.exec_module(compare)


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


if __name__ == "__main__":
    unittest.main()
