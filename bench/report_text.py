"""Markdown pieces that bench/compare's reports share (the suite's,
bench/overlap_report.py's and bench/npb_report.py's)."""


def red(text):
    """A miss or an error, in red (GitHub renders the span)."""
    return '<span style="color:red">%s</span>' % text


def measured(meta):
    """"Measured DATE on `HOST` (CPU, N cores, KERNEL)", from bench/compare's
    machine() and the run's date."""
    return "Measured %s on `%s` (%s, %d cores, %s)" % (meta["date"], meta["host"], meta["cpu"],
                                                      meta["cores"], meta["kernel"])


def tuning_bullets(tuning, who):
    """The bullet naming the environment's tuning variables (bench/compare's
    tuning_env), if any: figures measured with them are not default ones."""
    if not tuning:
        return []
    return ["- **Set in the environment** (every %s saw it): %s" % (
        who, ", ".join("`%s=%s`" % kv for kv in sorted(tuning.items())))]
