"""How busy this machine is before a benchmark run: shared by bench/ab and
bench/compare.  On a 2-core machine another process on either core changes
a microsecond figure many times over, so each run records the CPUs' busy
fraction just before it, and may wait for them to be idle."""
import statistics
import subprocess
import time


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + (v[4] if len(v) > 4 else 0)


def busy_fraction(secs=0.5):
    """How busy the CPUs are (0..1) over secs, before a run: others' work."""
    t0, i0 = cpu_times()
    time.sleep(secs)
    t1, i1 = cpu_times()
    return 1 - (i1 - i0) / (t1 - t0) if t1 > t0 else 0.0


def settle(wait, threshold):
    """Sample the CPUs; with wait > 0, retry up to wait seconds for them to be
    at most threshold busy.  Returns the last sample."""
    deadline = time.time() + wait
    busy = busy_fraction()
    while busy > threshold and time.time() < deadline:
        busy = busy_fraction()
    return busy


def uptime_line():
    r = subprocess.run(["uptime"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "load %s" % load_average()


def busy_summary(runs, key, names):
    """{name: [median, max]} of the busy fraction sampled before the runs
    whose run[key] is name (bench/compare's run_jobs keeps it as
    "busy_before")."""
    out = {}
    for name in names:
        b = [r["busy_before"] for r in runs if r.get(key) == name and
             r.get("busy_before") is not None]
        if b:
            out[name] = [statistics.median(b), max(b)]
    return out
