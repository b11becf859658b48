#!/usr/bin/env python3
"""Runs brain scenarios against the real aggregator and judges them (docs/scenarios.md, "The suite").

    run_suite.py --aggregator BIN --hsnsctl BIN [--speed 0] [--parallel 2] [--report FILE] DIR...

Each DIR is a scenario directory or a directory of them. Every scenario gets a fresh hsns-aggregator (its
own database, tokens and syslog TCP port on 127.0.0.1), is replayed by `hsnsctl scenario run --judge`, and
the aggregator is stopped. Prints one table row per scenario class (scenarios, top-1 %, top-3 %, jobs
exact %, clean %, false incidents, the lowest compression of the class) and exits 1 when the suite is
below the issue's thresholds: top-1 >= 97 %, top-3 >= 99.5 %, affected jobs exactly right in every
scenario, compression >= each storm's bound, and no incident at all in the healthy class. Standard
library only.
"""

import argparse
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOKEN = "scenario-operator-token-0123456789abcdef"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scenario_dirs(paths):
    out = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "expect.yaml")):
            out.append(p)
        elif os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                if os.path.isfile(os.path.join(p, name, "expect.yaml")):
                    out.append(os.path.join(p, name))
    return out


class Aggregator:
    def __init__(self, binary, workdir):
        self.workdir = workdir
        self.syslog_port = free_port()
        with open(os.path.join(workdir, "tokens.yaml"), "w") as f:
            f.write("tokens:\n  - {name: scenario, role: operator, token: %s}\n" % TOKEN)
        with open(os.path.join(workdir, "aggregator.yaml"), "w") as f:
            # A replay's event times are its base plus offsets: with a fixed --base they may lie days
            # away from now, so the data time window is opened wide (docs/security.md, "Data time").
            f.write('syslog:\n  tcp_listen: "127.0.0.1:%d"\ningest:\n  max_future_s: 315360000\n'
                    '  max_past_s: 0\n' % self.syslog_port)
        with open(os.path.join(workdir, "token"), "w") as f:
            f.write(TOKEN + "\n")
        ready = os.path.join(workdir, "ready")
        self.log = open(os.path.join(workdir, "aggregator.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "run", "--config", os.path.join(workdir, "aggregator.yaml"), "--listen", "127.0.0.1:0",
             "--database", os.path.join(workdir, "aggregator.db"), "--tokens-file",
             os.path.join(workdir, "tokens.yaml"), "--ready-file", ready, "--threads", "2"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120  # an ASan build on a busy machine starts slowly
        while not (os.path.exists(ready) and open(ready).read().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("hsns-aggregator did not start:\n" + self.log_text())
            time.sleep(0.02)
        self.port = int(open(ready).read().split()[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def log_text(self):
        with open(os.path.join(self.workdir, "aggregator.log")) as f:
            return f.read()[-4000:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def run_one(args, directory, root):
    name = os.path.basename(os.path.normpath(directory))
    workdir = tempfile.mkdtemp(prefix=name[:40] + "-", dir=root)
    started = time.monotonic()
    # The syslog port is picked free and bound by the aggregator a moment later: a parallel run may take it
    # in between, so a start that found it taken is tried again on another port.
    for attempt in range(3):
        try:
            agg = Aggregator(args.aggregator, workdir)
            break
        except RuntimeError as e:
            if attempt == 2 or "Address already in use" not in str(e):
                return {"scenario": name, "error": str(e)[-2000:], "wall_s": round(time.monotonic() - started, 2)}
            for leftover in ("aggregator.db", "aggregator.db-wal", "aggregator.db-shm", "ready"):
                if os.path.exists(os.path.join(workdir, leftover)):
                    os.remove(os.path.join(workdir, leftover))
    try:
        cmd = [args.hsnsctl, "--server", agg.url, "--token-file", os.path.join(workdir, "token"), "--timeout", "120",
               "scenario", "run", directory, "--judge", "--speed", str(args.speed), "--settle", str(args.settle),
               "--syslog", "tcp://127.0.0.1:%d" % agg.syslog_port]
        if args.base:
            cmd += ["--base", args.base]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        try:
            out = json.loads(r.stdout)
        except ValueError:
            out = {"scenario": name, "error": (r.stderr or r.stdout).strip()[-2000:]}
        if r.returncode not in (0, 1) or ("verdict" not in out and "error" not in out):
            out.setdefault("error", (r.stderr or "exit %d" % r.returncode).strip()[-2000:])
    except subprocess.TimeoutExpired:
        out = {"scenario": name, "error": "timed out after %d s" % args.timeout}
    finally:
        agg.stop()
    out["scenario"] = name
    out["wall_s"] = round(time.monotonic() - started, 2)
    if "error" in out and args.verbose:
        out["aggregator_log"] = agg.log_text()
    return out


def pct(n, d):
    return "-" if d == 0 else "%.1f" % (100.0 * n / d)


# The acceptance bounds: the project's own suite, and an independently written one (docs/scenarios.md).
THRESHOLDS = {
    "suite": {"top1": 97.0, "top3": 99.5, "jobs": 100.0, "false_per_scenario": None},
    "outside": {"top1": 90.0, "top3": 97.0, "jobs": 90.0, "false_per_scenario": 0.2},
    # the outside suite's development seed in the test run: a floor under what it reached (100 % top-1)
    "outside-floor": {"top1": 90.0, "top3": 90.0, "jobs": 90.0, "false_per_scenario": 0.2},
}


def by_fault_type(results):
    """Per expected fault type (its first name): expected incidents, named at rank 1, at rank <= 3."""
    types = {}
    for r in results:
        for e in r.get("verdict", {}).get("expected", []):
            name = (e.get("fault_type") or ["any"])[0]
            row = types.setdefault(name, [0, 0, 0])
            row[0] += 1
            rank = e.get("rank")
            row[1] += 1 if rank == 1 else 0
            row[2] += 1 if rank is not None and rank <= 3 else 0
    lines = ["%-28s %9s %7s %7s" % ("fault type", "expected", "top-1%", "top-3%")]
    for name in sorted(types):
        n, t1, t3 = types[name]
        lines.append("%-28s %9d %7s %7s" % (name, n, pct(t1, n), pct(t3, n)))
    return lines


def summarize(results, bounds=THRESHOLDS["suite"]):
    """Rows per class and the threshold checks; returns (table lines, failures)."""
    classes = {}
    for r in results:
        cls = r.get("verdict", {}).get("class") or r.get("class") or r["scenario"].split("-")[0]
        classes.setdefault(cls, []).append(r)
    header = "%-10s %9s %7s %7s %9s %8s %8s %12s %8s" % (
        "class", "scenarios", "top-1%", "top-3%", "jobs-ok%", "clean%", "false", "compression", "errors")
    lines = [header, "-" * len(header)]
    total = {"n": 0, "top1": 0, "top3": 0, "jobs_n": 0, "jobs": 0, "false": 0}
    failures = []
    for cls in sorted(classes):
        rows = classes[cls]
        v = [r.get("verdict") for r in rows]
        ok = [x for x in v if x]
        errors = len(rows) - len(ok)
        top1 = sum(1 for x in ok if x["top1"])
        top3 = sum(1 for x in ok if x["top3"])
        with_inc = [x for x in ok if x["expected_incidents"] > 0]
        jobs = sum(1 for x in with_inc if x["jobs_exact"])
        clean = sum(1 for x in ok if x["clean"])
        false = sum(len(x["false_incidents"]) for x in ok)
        comps = [x["compression"] for x in ok if x.get("min_compression") is not None]
        comp = "-" if not comps else ("%.1f" % min(c if c is not None else 0 for c in comps))
        lines.append("%-10s %9d %7s %7s %9s %8s %8d %12s %8d" % (
            cls, len(rows), pct(top1, len(rows)), pct(top3, len(rows)), pct(jobs, len(with_inc)),
            pct(clean, len(rows)), false, comp, errors))
        total["n"] += len(rows)
        total["top1"] += top1
        total["top3"] += top3
        total["jobs_n"] += len(with_inc)
        total["jobs"] += jobs
        total["false"] += false
        for x in ok:
            if x.get("compression_ok") is False:
                failures.append("%s: compression %s below %s" % (cls, x["compression"], x["min_compression"]))
        if cls == "healthy":
            incidents = sum(x["incidents"] for x in ok)
            if incidents or errors:
                failures.append("healthy: %d incidents, %d errors (want none)" % (incidents, errors))
    lines.append("-" * len(header))
    lines.append("%-10s %9d %7s %7s %9s" % ("all", total["n"], pct(total["top1"], total["n"]),
                                           pct(total["top3"], total["n"]), pct(total["jobs"], total["jobs_n"])))
    if total["n"]:
        lines.append("false incidents: %d in %d scenarios (%.2f per scenario)" % (
            total["false"], total["n"], total["false"] / total["n"]))
    if total["n"] == 0:
        failures.append("no scenario ran")
    else:
        if 100.0 * total["top1"] / total["n"] < bounds["top1"]:
            failures.append("top-1 %s%% < %g%%" % (pct(total["top1"], total["n"]), bounds["top1"]))
        if 100.0 * total["top3"] / total["n"] < bounds["top3"]:
            failures.append("top-3 %s%% < %g%%" % (pct(total["top3"], total["n"]), bounds["top3"]))
        if total["jobs_n"] and 100.0 * total["jobs"] / total["jobs_n"] < bounds["jobs"]:
            failures.append("affected jobs wrong in %d scenarios" % (total["jobs_n"] - total["jobs"]))
        limit = bounds["false_per_scenario"]
        if limit is not None and total["false"] / total["n"] > limit:
            failures.append("%.2f false incidents per scenario > %g" % (total["false"] / total["n"], limit))
    return lines, failures


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dirs", nargs="+")
    p.add_argument("--aggregator", required=True)
    p.add_argument("--hsnsctl", required=True)
    p.add_argument("--speed", default="0")
    p.add_argument("--settle", default="1")
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--timeout", type=int, default=300, help="seconds per scenario")
    p.add_argument("--report", help="write every scenario's run output and verdict here (JSON)")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--base", help="event time of offset 0 (hsnsctl scenario run --base)")
    p.add_argument("--thresholds", choices=sorted(THRESHOLDS), default="suite",
                   help="acceptance bounds: the project's suite, or an independently written one")
    p.add_argument("--by-type", action="store_true", help="also print top-1/top-3 per expected fault type")
    args = p.parse_args()
    dirs = scenario_dirs(args.dirs)
    root = tempfile.mkdtemp(prefix="hsns-scenarios-")
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        results = list(pool.map(lambda d: run_one(args, d, root), dirs))
    for r in results:
        v = r.get("verdict")
        if v is None:
            print("ERROR %-45s %s" % (r["scenario"], r.get("error", "")[:300]))
        elif not v["pass"]:
            top = [(e["rank"], e["root_cause"]) for e in v["expected"]]
            print("FAIL  %-45s top1=%s top3=%s jobs=%s clean=%s false=%d expected(rank,cause)=%s" % (
                r["scenario"], v["top1"], v["top3"], v["jobs_exact"], v["clean"], len(v["false_incidents"]),
                json.dumps(top)))
    lines, failures = summarize(results, THRESHOLDS[args.thresholds])
    print("\n".join(lines))
    if args.by_type:
        print("\n".join(by_fault_type(results)))
    print("%d scenarios in %.1f s" % (len(results), time.monotonic() - started))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(results, f, indent=1)
    for f in failures:
        print("BELOW THRESHOLD: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
