#!/usr/bin/env python3
"""Peak memory of the aggregator under the worst loads one role can send (docs/security.md).

Usage: bench/hostile_load.py [--aggregator build/release/aggregator/hsns-aggregator] [--quick]

Starts the aggregator on loopback with its default limits (syslog over UDP and TCP on), measures its
resident set when idle (the baseline, in the same run), then runs each load in turn and prints the peak
resident set (VmHWM) after it, what the aggregator answered, and the slowest /healthz seen while it ran.
The loads are issue 31's: four concurrent 64 MiB reports from one agent token, a 58 MB report of tiny CBOR
values, 100 MB of 8 KB syslog lines from 13,000 invented hosts, pushed events of 5,000 invented
entities, 200 WebSocket streams of one viewer token and 1,500 wrong logins. Traffic goes to 127.0.0.1
only.
"""
import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

AGENT = "agent-token-0123456789abcdef"
VIEWER = "viewer-token-0123456789abcdef"


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class Aggregator:
    def __init__(self, binary, workdir):
        self.tcp = free_port()
        self.udp = free_port(socket.SOCK_DGRAM)
        with open(os.path.join(workdir, "tokens.yaml"), "w") as f:
            f.write("tokens:\n  - {name: agent, role: agent, token: %s}\n  - {name: viewer, role: viewer, token: %s}\n"
                    % (AGENT, VIEWER))
        with open(os.path.join(workdir, "aggregator.yaml"), "w") as f:
            f.write('syslog:\n  udp_listen: "127.0.0.1:%d"\n  tcp_listen: "127.0.0.1:%d"\n' % (self.udp, self.tcp))
        ready = os.path.join(workdir, "ready")
        self.proc = subprocess.Popen(
            [binary, "run", "--config", os.path.join(workdir, "aggregator.yaml"), "--listen", "127.0.0.1:0",
             "--database", os.path.join(workdir, "aggregator.db"), "--tokens-file",
             os.path.join(workdir, "tokens.yaml"), "--ready-file", ready, "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not (os.path.exists(ready) and open(ready).read().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("hsns-aggregator did not start")
            time.sleep(0.05)
        self.port = int(open(ready).read().split()[1])

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.terminate()
            self.proc.wait(timeout=30)


def http(port, method, path, body=b"", token=None, content_type="application/json", timeout=120):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=body or None, method=method)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if body:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


class HealthWatch:
    """Polls /healthz every 50 ms on a thread; the slowest answer is the figure."""

    def __init__(self, port):
        self.port, self.worst, self.failed, self.stop = port, 0.0, 0, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            t = time.monotonic()
            if http(self.port, "GET", "/healthz", timeout=10) != 200:
                self.failed += 1
            self.worst = max(self.worst, time.monotonic() - t)
            time.sleep(0.05)

    def finish(self):
        self.stop = True
        self.thread.join()
        return self.worst, self.failed


def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    if n < 1 << 8:
        return bytes([major << 5 | 24, n])
    if n < 1 << 16:
        return bytes([major << 5 | 25]) + n.to_bytes(2, "big")
    return bytes([major << 5 | 26]) + n.to_bytes(4, "big")


def flow_report(n_bytes):
    """A report whose one flow batch holds small rows: as many as fit in n_bytes."""
    row = cbor_head(4, 6) + bytes([1, 2, 3, 4, 5, 6])  # 7 bytes: [1,2,3,4,5,6]
    rows = (n_bytes - 64) // len(row)
    head = cbor_head(5, 2) + cbor_head(3, 3) + b"seq" + bytes([1]) + cbor_head(3, 5) + b"flows"
    batch = cbor_head(4, 1) + cbor_head(5, 2) + cbor_head(3, 5) + b"epoch" + bytes([1]) + cbor_head(3, 4) + b"rows"
    return head + batch + cbor_head(4, rows) + row * rows


def tiny_values(n_bytes):
    return cbor_head(5, 1) + cbor_head(3, 5) + b"flows" + cbor_head(4, n_bytes) + bytes(n_bytes)


def load_reports(agg, quick):
    body = flow_report((16 if quick else 64) << 20)
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(
        http(agg.port, "POST", "/api/v1/agents/node-%d/reports" % i, body, AGENT, "application/cbor")))
        for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # 0: refused before its body was read (503 and the connection closed while the client still sent).
    return "answers %s" % sorted("refused early" if a == 0 else a for a in answers)


def load_tiny_values(agg, quick):
    return "answer %d" % http(agg.port, "POST", "/api/v1/agents/node-1/reports",
                              tiny_values((8 if quick else 58) << 20), AGENT, "application/cbor")


def load_syslog(agg, quick):
    total = (20 if quick else 100) << 20
    line_body = "x" * 8000
    sent = 0
    conns = [socket.create_connection(("127.0.0.1", agg.tcp)) for _ in range(8)]
    i = 0
    while sent < total:
        msg = ("<14>1 - invented%05d app - - - %s" % (i % 13000, line_body)).encode()
        frame = str(len(msg)).encode() + b" " + msg
        try:
            conns[i % len(conns)].sendall(frame)
        except OSError:
            conns[i % len(conns)] = socket.create_connection(("127.0.0.1", agg.tcp))
        sent += len(frame)
        i += 1
    for c in conns:
        c.close()
    time.sleep(1)
    return "%d lines of 8 KB" % i


def load_events(agg, quick):
    answers = set()
    for b in range(10 if quick else 50):
        events = [{"entity": "ghost%05d/eth0" % (b * 100 + k), "type": "flap", "severity": "warning",
                   "message": "m" * 4000} for k in range(100)]
        answers.add(http(agg.port, "POST", "/api/v1/events", json.dumps({"events": events}).encode(), AGENT))
    return "answers %s" % sorted(answers)


def load_streams(agg, quick):
    opened, refused, socks = 0, 0, []
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", agg.port))
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(("GET /api/v1/alarms/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
                   "Authorization: Bearer %s\r\n\r\n" % (key, VIEWER)).encode())
        status = s.recv(64).split(b" ")[1:2]
        if status == [b"101"]:
            opened += 1
            socks.append(s)
        else:
            refused += 1
            s.close()
    health = http(agg.port, "GET", "/healthz")
    for s in socks:
        s.close()
    return "%d opened, %d refused, /healthz %d meanwhile" % (opened, refused, health)


def load_logins(agg, quick):
    answers = {}
    for _ in range(1500):
        code = http(agg.port, "POST", "/api/v1/session", json.dumps({"token": "wrong-token-0123456789"}).encode())
        answers[code] = answers.get(code, 0) + 1
    return "answers %s" % dict(sorted(answers.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--aggregator", default="build/release/aggregator/hsns-aggregator")
    p.add_argument("--quick", action="store_true", help="smaller loads (for a try on a small machine)")
    args = p.parse_args()
    workdir = tempfile.mkdtemp(prefix="hsns-hostile-")
    agg = Aggregator(args.aggregator, workdir)
    try:
        time.sleep(1)
        base = rss_kib(agg.proc.pid, "VmRSS")
        print("baseline (idle): RSS %.0f MiB" % (base / 1024))
        print("%-40s %14s %14s %12s  %s" % ("load", "peak RSS MiB", "vs baseline", "healthz max", "outcome"))
        for name, load in [("4 concurrent 64 MiB reports (agent)", load_reports),
                           ("58 MB report of tiny CBOR values", load_tiny_values),
                           ("100 MB of 8 KB syslog lines, 13k hosts", load_syslog),
                           ("5,000 events of invented entities", load_events),
                           ("200 streams of one viewer token", load_streams),
                           ("1,500 wrong logins", load_logins)]:
            watch = HealthWatch(agg.port)
            outcome = load(agg, args.quick)
            worst, failed = watch.finish()
            if not agg.alive():
                print("%-40s the aggregator died (exit %s)" % (name, agg.proc.returncode))
                return 1
            peak = rss_kib(agg.proc.pid, "VmHWM")
            print("%-40s %14.0f %+13.0f %10.0f ms  %s%s" % (name, peak / 1024, (peak - base) / 1024, worst * 1000,
                                                            outcome, ", %d /healthz failed" % failed if failed else ""))
        print("the aggregator is alive; final RSS %.0f MiB" % (rss_kib(agg.proc.pid, "VmRSS") / 1024))
        return 0
    finally:
        agg.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
