#!/usr/bin/env python3
"""Writes the brain scenario suite (docs/scenarios.md) into a directory, deterministically.

    tests/scenarios/generate.py OUT [--set small|large|all] [--seed N]

Every scenario is a directory OUT/<class>-<name>/ in the format `hsnsctl scenario run` reads. The small set
(fabrics of up to 64 hosts written as topology.json, streams of a few hundred lines) is committed under
tests/scenarios/suite/; the large set (1,000-host fabrics, the 24-simulated-hour healthy trace of 1,000
ports) is written at test time. The same seed always gives the same files (random.Random(seed), sorted
keys, no clock). Only the Python standard library is used.

The classes: pattern (one per shipped pattern of patterns/), multi (independent simultaneous faults),
storm (one device down, many symptoms), far_end (symptoms only on the far end), noise (recovering flaps,
counter resets, late and duplicate samples beside a real fault), job (faults hitting registered jobs),
scale (1,000-host fabrics), healthy (noisy traces that must give no incident).
"""

import argparse
import json
import os
import random
import shutil
import sys

# ---------------------------------------------------------------------------------------------- fabrics

STYLES = {
    # style: (switch port name of index i (0-based), syslog app of link messages)
    "sonic": lambda i: "Ethernet%d" % (4 * i),
    "eos": lambda i: "Ethernet%d/1" % (i + 1),
    "huawei": lambda i: "100GE1/0/%d" % (i + 1),
    "cumulus": lambda i: "swp%d" % (i + 1),
}


class Fabric:
    """A rail-optimised two-tier Clos fabric written as the aggregator's topology import document."""

    def __init__(self, hosts, rails=1, hosts_per_su=8, spines=2, style="sonic"):
        self.style = style
        self.rails = rails
        self.spine_names = ["spine%02d" % k for k in range(spines)]
        sus = (hosts + hosts_per_su - 1) // hosts_per_su
        self.leaf_names = ["leaf%02d" % (su * rails + r) for su in range(sus) for r in range(rails)]
        self.host_names = ["host%04d" % (h + 1) for h in range(hosts)]
        self.peer = {}  # entity -> entity at the other end of its link
        self.host_leaf = {}  # (host, rail) -> (leaf, leaf port)
        port = STYLES[style]
        doc_hosts = []
        for h, host in enumerate(self.host_names):
            su, j = divmod(h, hosts_per_su)
            npus = []
            for r in range(rails):
                leaf = self.leaf_names[su * rails + r]
                lp = port(j)
                npus.append({"index": r, "port": "eth%d" % r, "leaf": leaf, "leaf_port": lp})
                self.link("%s/eth%d" % (host, r), "%s/%s" % (leaf, lp))
                self.host_leaf[(host, r)] = (leaf, lp)
            doc_hosts.append({"name": host, "npus": npus})
        links = []
        self.uplink = {}  # (leaf, spine) -> (leaf port, spine port)
        for li, leaf in enumerate(self.leaf_names):
            for k, spine in enumerate(self.spine_names):
                lp, sp = port(hosts_per_su + k), port(li)
                links.append({"lower": leaf, "upper": spine, "lower_port": lp, "upper_port": sp})
                self.link("%s/%s" % (leaf, lp), "%s/%s" % (spine, sp))
                self.uplink[(leaf, spine)] = (lp, sp)
        switches = [{"name": n, "tier": "leaf"} for n in self.leaf_names]
        switches += [{"name": n, "tier": "spine"} for n in self.spine_names]
        self.doc = {"version": 1, "name": "scenario", "defaults": {"bandwidth_gbps": 400, "latency_us": 0.5},
                    "switches": switches, "hosts": doc_hosts, "links": links}
        self.generate = None

    def link(self, a, b):
        self.peer[a] = b
        self.peer[b] = a

    def leaf_of(self, host, rail=0):
        return self.host_leaf[(host, rail)]


class GeneratedFabric:
    """The aggregator's own generator (POST /api/v1/topology/generate): names computed as it names them."""

    def __init__(self, hosts, npus_per_host, hosts_per_su, spines_per_plane):
        self.generate = {"hosts": hosts, "npus_per_host": npus_per_host, "hosts_per_su": hosts_per_su,
                         "spines_per_plane": spines_per_plane, "name": "scale"}
        self.doc = None
        self.style = "generated"
        sus = (hosts + hosts_per_su - 1) // hosts_per_su
        hw = max(3, len(str(hosts)))
        lw = max(3, len(str(sus * npus_per_host)))
        sw = max(2, len(str(spines_per_plane)))
        self.host_names = ["host%0*d" % (hw, h + 1) for h in range(hosts)]
        self.leaf_names = ["leaf%0*d" % (lw, i) for i in range(sus * npus_per_host)]
        self.spine_names = ["spine%0*d" % (sw, k) for k in range(spines_per_plane)]
        self.peer = {}
        self.host_leaf = {}
        self.uplink = {}
        for h, host in enumerate(self.host_names):
            su, j = divmod(h, hosts_per_su)
            for r in range(npus_per_host):
                leaf = self.leaf_names[su * npus_per_host + r]
                lp = "Eth1/%d" % (j + 1)
                self.host_leaf[(host, r)] = (leaf, lp)
                self.peer["%s/eth%d" % (host, r)] = "%s/%s" % (leaf, lp)
                self.peer["%s/%s" % (leaf, lp)] = "%s/eth%d" % (host, r)
        counters = [0] * spines_per_plane
        for leaf in self.leaf_names:
            for k, spine in enumerate(self.spine_names):
                counters[k] += 1
                lp, sp = "Eth2/%d.0" % (k + 1), "Eth1/%d" % counters[k]
                self.uplink[(leaf, spine)] = (lp, sp)
                self.peer["%s/%s" % (leaf, lp)] = "%s/%s" % (spine, sp)
                self.peer["%s/%s" % (spine, sp)] = "%s/%s" % (leaf, lp)

    def leaf_of(self, host, rail=0):
        return self.host_leaf[(host, rail)]


def link_entity(fabric, entity):
    return "link:%s|%s" % tuple(sorted([entity, fabric.peer[entity]]))


# ---------------------------------------------------------------------------------------------- streams

TAIL_MS = 60000  # telemetry after a scenario's last event
HEARTBEAT_MS = 10000

SEV = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warning": 4, "notice": 5, "info": 6, "debug": 7}


class Scenario:
    def __init__(self, cls, name, fabric, description):
        self.cls, self.name, self.fabric, self.description = cls, name, fabric, description
        self.kpis, self.syslog, self.jobs, self.incidents, self.clean = [], [], [], [], []
        self.min_compression = None
        self.devices = set()  # devices that log something

    def heartbeat(self):
        """The fabric keeps reporting after the last event: a healthy receive-power series on an uplink of
        devices nothing else in the scenario names, from the start to TAIL_MS past the last event. The
        brain's clock is its telemetry's event time, so without it the faults at a scenario's very end
        would never be confirmed (an incident opens once its alarm has been active for 5 s)."""
        last = max([r["at_ms"] for r in self.kpis + self.syslog] or [0])
        named = set(self.devices)
        named.update(r["entity"].split("/")[0] for r in self.kpis)
        for i in self.incidents:
            for rc in ([i["root_cause"]] if isinstance(i["root_cause"], str) else i["root_cause"]):
                for part in rc.replace("link:", "").split("|"):
                    named.add(part.split("/")[0])
        pairs = sorted(self.fabric.uplink)
        free = [p for p in pairs if p[0] not in named and p[1] not in named] or pairs
        leaf, spine = free[-1]
        entity = "%s/%s" % (spine, self.fabric.uplink[(leaf, spine)][1])
        self.series(0, last + TAIL_MS, HEARTBEAT_MS, entity, "rx_power_dbm", lambda t: -2.0)

    # one KPI sample; ts: its own offset when it differs from the send offset (a late sample)
    def kpi(self, at, entity, metric, value, ts=None):
        row = {"at_ms": int(at), "entity": entity, "metric": metric, "value": value}
        if ts is not None:
            row["ts_ms"] = int(ts)
        self.kpis.append(row)

    def series(self, start, end, step, entity, metric, value_of):
        t = start
        while t <= end:
            self.kpi(t, entity, metric, value_of(t))
            t += step

    # a syslog line as the device would send it; {ts} is the replay's event time
    def log(self, at, host, app, message, severity="notice", rfc="5424", pid="-"):
        pri = 16 * 8 + SEV[severity]  # local0
        if rfc == "5424":
            line = "<%d>1 {ts} %s %s %s - - %s" % (pri, host, app, pid, message)
        else:
            tag = app if pid == "-" else "%s[%s]" % (app, pid)
            line = "<%d>{ts} %s %s: %s" % (pri, host, tag, message)
        self.syslog.append({"at_ms": int(at), "line": line})
        self.devices.add(host)

    def expect(self, root_cause, fault_type, jobs=()):
        self.incidents.append({"root_cause": root_cause, "fault_type": fault_type, "affected_jobs": list(jobs)})

    def job(self, name, hosts, npus_per_host=1):
        self.jobs.append({"job_name": name, "hosts": hosts, "npus_per_host": npus_per_host,
                          "model": {"parameters": 1000000000, "layers": 8, "hidden": 2048, "heads": 16,
                                    "seq_len": 2048, "micro_batch": 1, "global_batch": 64},
                          "parallel": {"tp": npus_per_host, "dp": len(hosts)},
                          "algorithm": "ring", "framework": "megatron", "ecmp_seeds": 1,
                          "allow_unreachable": True})

    def write(self, out):
        self.heartbeat()
        d = os.path.join(out, "%s-%s" % (self.cls, self.name))
        os.makedirs(d, exist_ok=True)
        if self.fabric.generate is not None:
            dump_json(os.path.join(d, "generate.json"), self.fabric.generate)
        else:
            dump_topology(os.path.join(d, "topology.json"), self.fabric.doc)
        if self.jobs:
            dump_json(os.path.join(d, "jobs.json"), self.jobs)
        if self.kpis:
            dump_lines(os.path.join(d, "kpis.jsonl"), sorted(self.kpis, key=lambda r: r["at_ms"]))
        if self.syslog:
            dump_lines(os.path.join(d, "syslog.jsonl"), sorted(self.syslog, key=lambda r: r["at_ms"]))
        with open(os.path.join(d, "expect.yaml"), "w") as f:
            f.write("# generated by tests/scenarios/generate.py; edit the generator, not this file\n")
            f.write("class: %s\n" % self.cls)
            f.write("description: %s\n" % json.dumps(self.description))
            if not self.incidents:
                f.write("incidents: []\n")
            else:
                f.write("incidents:\n")
                for i in self.incidents:
                    f.write("  - root_cause: %s\n" % json.dumps(i["root_cause"]))
                    if i["fault_type"]:  # omitted: any fault type is right
                        f.write("    fault_type: %s\n" % json.dumps(i["fault_type"]))
                    f.write("    affected_jobs: %s\n" % json.dumps(i["affected_jobs"]))
            f.write("clean: %s\n" % json.dumps(sorted(set(self.clean))))
            if self.min_compression is not None:
                f.write("min_compression: %s\n" % self.min_compression)


def dump_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


def dump_topology(path, doc):
    """The import document with one switch, host or link per line: small, and a diff shows what changed."""
    with open(path, "w") as f:
        f.write("{\n")
        keys = sorted(doc)
        for i, k in enumerate(keys):
            v = doc[k]
            if isinstance(v, list):
                f.write(" %s: [\n" % json.dumps(k))
                f.write(",\n".join("  " + json.dumps(x, sort_keys=True, separators=(",", ":")) for x in v))
                f.write("\n ]")
            else:
                f.write(" %s: %s" % (json.dumps(k), json.dumps(v, sort_keys=True)))
            f.write(",\n" if i + 1 < len(keys) else "\n")
        f.write("}\n")


def dump_lines(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------------------------- faults
# Each fault function writes the streams of one fault into a scenario and its expectation, and returns
# the entities it touched (so noise and other faults keep clear of them). t0: when the fault starts.

STEP = 5000  # ms between KPI samples of a series


def warm(s, entity, metric, value, t0, start=0):
    """Healthy samples of a series before the fault."""
    s.series(start, t0 - STEP, STEP, entity, metric, lambda t: value)


def counter_run(s, entity, metric, t0, t1, healthy_rate, fault_rate, start=0):
    """A counter: healthy_rate/s until t0, fault_rate/s from t0 to t1, healthy again for a minute."""
    v = 0.0
    t = start
    while t <= t1 + 60000:
        s.kpi(t, entity, metric, round(v))
        v += (fault_rate if t0 <= t < t1 else healthy_rate) * STEP / 1000.0
        t += STEP


def rising(s, entity, metric, t0, t1, per_s):
    """A counter rising at per_s from t0 (the brain declares it a counter and sees its rate)."""
    v = per_s * STEP / 1000.0
    t = t0
    while t <= t1:
        s.kpi(t, entity, metric, round(v))
        v += per_s * STEP / 1000.0
        t += STEP


def host_port(f, host, rail=0):
    return "%s/eth%d" % (host, rail)


def leaf_port(f, host, rail=0):
    leaf, lp = f.leaf_of(host, rail)
    return leaf, lp, "%s/%s" % (leaf, lp)


def link_down_line(s, at, device, port, down=True):
    st = s.fabric.style
    if st == "sonic":
        s.log(at, device, "swss#portsyncd", "Port %s oper state set from %s" % (port, "up to down" if down else "down to up"))
    elif st == "eos":
        s.log(at, device, "Ebra", "%%LINEPROTO-5-UPDOWN: Line protocol on Interface %s, changed state to %s"
              % (port, "down" if down else "up"), rfc="3164", pid="1802")
    elif st in ("huawei", "generated"):
        s.log(at, device, "IFNET", "Interface %s has turned into %s state." % (port, "DOWN" if down else "UP"),
              rfc="3164")
    else:
        s.log(at, device, "switchd", "%s: link %s" % (port, "down" if down else "up"), rfc="3164", pid="1234")


def f_switch_link_down(s, host, t0, rail=0, recover_at=None, expect=True, jobs=()):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    link_down_line(s, t0, leaf, lp)
    if recover_at:
        link_down_line(s, recover_at, leaf, lp, down=False)
    if expect:
        s.expect([ent, link_entity(s.fabric, ent)], "link_down", jobs)
    return [ent, host_port(s.fabric, host, rail)]


def f_nic_link_down(s, host, t0, rail=0, jobs=()):
    ent = host_port(s.fabric, host, rail)
    s.log(t0, host, "kernel", "mlx5_core 0000:%02x:00.0 eth%d: Link down" % (0x3b + rail, rail), severity="err",
          rfc="3164")
    s.expect([ent, link_entity(s.fabric, ent)], "link_down", jobs)
    return [ent, leaf_port(s.fabric, host, rail)[2]]


def f_link_flap_syslog(s, host, t0, rail=0, jobs=()):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    for k in range(3):
        link_down_line(s, t0 + k * 60000, leaf, lp)
        link_down_line(s, t0 + k * 60000 + 20000, leaf, lp, down=False)
    s.expect(link_entity(s.fabric, ent), "link_flapping", jobs)
    return [ent, host_port(s.fabric, host, rail)]


def f_errdisable_eos(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "Ebra", "%%ETH-4-ERRDISABLE: Interface %s is error-disabled due to link-flap" % lp,
          severity="warning", rfc="3164", pid="1802")
    s.expect(link_entity(s.fabric, ent), "link_flapping")
    return [ent, host_port(s.fabric, host, rail)]


def f_link_flap_counter(s, host, t0, rail=0, jobs=()):
    ent = host_port(s.fabric, host, rail)
    v = 0
    t = 0
    while t <= t0 + 240000:
        if t >= t0 and (t - t0) % 60000 == 0 and t < t0 + 180000:
            v += 1
        s.kpi(t, ent, "link_downed", v)
        t += STEP
    s.expect(link_entity(s.fabric, ent), "link_flapping", jobs)
    return [ent]


def f_crc_port(s, host, t0, rail=0, jobs=()):
    ent = host_port(s.fabric, host, rail)
    counter_run(s, ent, "port_rcv_errors", t0, t0 + 90000, 0, 50)
    s.expect(ent, "crc_errors", jobs)
    return [ent]


def f_symbol_both_ends(s, host, t0, rail=0):
    a = host_port(s.fabric, host, rail)
    b = s.fabric.peer[a]
    counter_run(s, a, "symbol_error", t0, t0 + 90000, 0, 40)
    counter_run(s, b, "symbol_error", t0 + 5000, t0 + 90000, 0, 40)
    s.expect(link_entity(s.fabric, a), "crc_errors")
    return [a, b]


def f_crc_huawei(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "PORT", "hwPhysicalPortCrcError_active: The CRC error is rising. (hwPhysicalPortIfIndex=17, "
          "hwPhysicalPortName=%s, hwPhysicalPortCrcErrorStatistics=1523)" % lp, severity="warning", rfc="3164")
    s.expect(ent, "crc_errors")
    return [ent, host_port(s.fabric, host, rail)]


def f_fec(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    rising(s, ent, "rx_fec_uncorrectable_per_s", t0, t0 + 60000, 200)
    s.expect(link_entity(s.fabric, ent), "fec_uncorrectable")
    return [ent]


def f_rx_power(s, host, t0, rail=0, high=False, far_end=True, jobs=()):
    # far_end: the leaf sees the weak signal the host sends (only the far end reports)
    ent = leaf_port(s.fabric, host, rail)[2] if far_end else host_port(s.fabric, host, rail)
    warm(s, ent, "rx_power_dbm", -2.5, t0)
    s.series(t0, t0 + 90000, STEP, ent, "rx_power_dbm", lambda t: 5.5 if high else -13.2)
    s.expect(link_entity(s.fabric, ent), "optical_power_out_of_range", jobs)
    return [ent, s.fabric.peer[ent]]


def f_tx_power(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    warm(s, ent, "tx_power_dbm", -1.0, t0)
    s.series(t0, t0 + 90000, STEP, ent, "tx_power_dbm", lambda t: -11.0)
    s.expect(ent + "/module", "optical_power_out_of_range")
    return [ent]


def f_optics_syslog(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "xcvrd", "%s: rx power low alarm, -14.2 dBm below threshold -12.0 dBm" % lp, severity="warning")
    s.expect([link_entity(s.fabric, ent), ent], "optical_power_out_of_range")  # the light it receives
    return [ent]


def f_optics_tx_syslog(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "xcvrd", "%s: tx power low alarm, -9.6 dBm below threshold -8.0 dBm" % lp, severity="warning")
    s.expect(ent + "/module", "optical_power_out_of_range")  # its own laser
    return [ent]


def f_temperature(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    warm(s, ent, "temperature_celsius", 48.0, t0)
    s.series(t0, t0 + 120000, STEP, ent, "temperature_celsius", lambda t: 82.0)
    s.expect(ent + "/module", "module_overtemperature")
    return [ent]


def f_temperature_syslog(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "xcvrd", "%s: module temperature high alarm (78.5 C)" % lp, severity="warning")
    s.expect(ent + "/module", "module_overtemperature")
    return [ent]


def f_pfc_storm_nic(s, host, t0, rail=0, jobs=()):
    ent = host_port(s.fabric, host, rail)
    rising(s, ent, "tx_prio3_pause_duration", t0, t0 + 40000, 950000)
    s.expect(ent, "pfc_storm", jobs)
    return [ent]


def f_pfc_pause_received(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    rising(s, ent, "rx_prio3_pause_duration", t0, t0 + 60000, 850000)
    s.expect(link_entity(s.fabric, ent), "pfc_storm")
    return [ent]


def f_pfc_watchdog(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "syncd", "PFC Watchdog detected PFC storm on port %s, queue index 3, detection time 200 ms" % lp,
          severity="warning")
    s.expect(ent, "pfc_storm")
    return [ent]


def f_pfc_deadlock(s, leaf, spine, t0):
    lp, sp = s.fabric.uplink[(leaf, spine)]
    a, b = "%s/%s" % (leaf, lp), "%s/%s" % (spine, sp)
    rising(s, a, "rx_prio3_pause_duration", t0, t0 + 60000, 960000)
    rising(s, b, "rx_prio3_pause_duration", t0 + 5000, t0 + 60000, 960000)
    s.expect(link_entity(s.fabric, a), "pfc_deadlock")
    return [a, b]


def f_pfc_watchdog_huawei(s, leaf, spine, t0):
    # CloudEngine's "PFC deadlock" detection on one port: that port held paused by its far end, a storm
    lp, _ = s.fabric.uplink[(leaf, spine)]
    a = "%s/%s" % (leaf, lp)
    s.log(t0, leaf, "QOS", "hwPfcDeadLockAlarm_active: PFC deadlock was detected. (interface=%s, priority=3)" % lp,
          severity="err", rfc="3164")
    s.expect(link_entity(s.fabric, a), "pfc_storm")
    return [a]


def f_ecn(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    v = 0.0
    t = 0
    while t <= t0 + 120000:
        s.kpi(t, ent, "np_ecn_marked_roce_packets", round(v))
        v += (40000 if t >= t0 else 200) * STEP / 1000.0
        t += STEP
    s.expect(ent, "ecn_surge")
    return [ent]


def f_cnp(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    rising(s, ent, "np_cnp_sent", t0, t0 + 60000, 80000)
    s.expect(ent, "cnp_surge")
    return [ent]


def f_out_of_buffer(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    counter_run(s, ent, "out_of_buffer", t0, t0 + 90000, 0, 500)
    s.expect(ent, "buffer_drops")
    return [ent]


def f_rx_discards(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    rising(s, ent, "rx_discards_phy", t0, t0 + 60000, 5000)
    s.expect(ent, "buffer_drops")
    return [ent]


def f_out_discards(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    rising(s, ent, "if_out_discards", t0, t0 + 60000, 5000)
    s.expect(ent, "buffer_drops")
    return [ent]


def f_out_of_sequence(s, host, t0, rail=0, jobs=()):
    ent = host_port(s.fabric, host, rail)
    counter_run(s, ent, "out_of_sequence", t0, t0 + 90000, 1, 2000)
    s.expect(ent, "retransmission_burst", jobs)
    return [ent]


def f_ack_timeout(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    counter_run(s, ent, "local_ack_timeout_err", t0, t0 + 90000, 0, 100)
    s.expect(ent, "retransmission_burst")
    return [ent]


def f_switch_reboot(s, device, t0):
    s.log(t0, device, "process-reboot-cause", "Reboot cause: Power Loss, Time: unknown", severity="warning")
    s.expect(device, "switch_reboot")
    return [device]


def f_psu(s, device, t0):
    s.log(t0, device, "psud", "PSU 2 status is not OK, power supply lost", severity="err")
    s.expect(device, "switch_power_fault")
    return [device]


def f_fan(s, device, t0):
    s.log(t0, device, "thermalctld", "Fan 3 failed, speed 0 RPM below the minimum", severity="err")
    s.expect(device, "switch_fan_fault")
    return [device]


def f_npu_port(s, host, t0, jobs=()):
    s.log(t0, host, "npu-smi", "npu 3 link is down", severity="err", rfc="3164")
    s.expect(host, "npu_port_down", jobs)
    return [host]


def f_mtu_ospf(s, leaf, spine, t0):
    lp, _ = s.fabric.uplink[(leaf, spine)]
    s.log(t0, leaf, "ospfd", "Neighbor 10.1.0.2 MTU 9216 is larger than [%s:10.1.0.1]" % lp, severity="warning",
          rfc="3164", pid="812")
    a = "%s/%s" % (leaf, lp)
    s.expect(link_entity(s.fabric, a), "mtu_mismatch")
    return [a]


def f_mtu_generic(s, leaf, spine, t0):
    lp, _ = s.fabric.uplink[(leaf, spine)]
    s.log(t0, leaf, "lldpmgrd", "MTU mismatch detected on interface %s: local 9100, peer 1500" % lp,
          severity="warning")
    a = "%s/%s" % (leaf, lp)
    s.expect(link_entity(s.fabric, a), "mtu_mismatch")
    return [a]


def bgp_line(s, at, leaf, spine, down=True):
    s.log(at, leaf, "bgpd", "%%ADJCHANGE: neighbor 10.1.%d.2(%s) in vrf default %s" %
          (s.fabric.spine_names.index(spine), spine, "Down BGP Notification send" if down else "Up"),
          rfc="3164", pid="911")


def f_bgp_down(s, leaf, spine, t0):
    bgp_line(s, t0, leaf, spine)
    s.expect(leaf, "routing_session_down")
    return [leaf]


def f_bgp_flap(s, leaf, spine, t0):
    for k in range(3):
        bgp_line(s, t0 + k * 90000, leaf, spine)
        bgp_line(s, t0 + k * 90000 + 30000, leaf, spine, down=False)
    s.expect(leaf, "routing_session_flapping")
    return [leaf]


def f_qos_host(s, host, t0):
    s.series(t0, t0 + 420000, 30000, host, "hsns_daemon_qos_drift_ports", lambda t: 2)
    s.expect(host, "qos_config_drift")
    return [host]


def f_qos_switch(s, leaf, t0):
    s.log(t0, leaf, "swss#orchagent", "PFC configuration mismatch between CONFIG_DB and ASIC on Ethernet12",
          severity="warning")
    s.expect(leaf, "qos_config_drift")
    return [leaf]


# ---------------------------------------------------------------------------------------------- noise

def noise(s, rng, entities, t_end, avoid):
    """Healthy-but-noisy streams on `entities` (none of them may get an incident): recovering flaps,
    counter resets, late and duplicate samples, single-sample spikes."""
    for k, ent in enumerate(entities):
        if ent in avoid:
            continue
        s.clean.append(ent)
        base = -2.0 - rng.random()
        vals = {}
        t = 0
        while t <= t_end:
            v = round(base + rng.uniform(-0.3, 0.3), 2)
            if rng.random() < 0.03:
                v = -11.5  # a single low reading: not 30 s
            vals[t] = v
            s.kpi(t, ent, "rx_power_dbm", v)
            t += STEP
        # duplicates and late samples of the same series
        for t in sorted(vals)[3::7]:
            s.kpi(t + 1000, ent, "rx_power_dbm", vals[t], ts=t)  # duplicate, resent a second later
        for t in sorted(vals)[5::11]:
            s.kpi(t + 20000, ent, "rx_power_dbm", vals[t], ts=t)  # late
        # a counter that resets (driver reload) and keeps counting slowly
        c = 0
        t = 0
        reset_at = rng.randrange(10, 20) * STEP
        while t <= t_end:
            if t == reset_at:
                c = 0
            s.kpi(t, ent, "symbol_error", c)
            c += rng.choice([0, 0, 0, 1])
            t += STEP


def recovering_flap(s, device, port, t):
    link_down_line(s, t, device, port)
    link_down_line(s, t + 800, device, port, down=False)


# ---------------------------------------------------------------------------------------------- suite

def fabric_for(i, style="sonic"):
    sizes = [4, 8, 16, 32, 48, 64]
    hosts = sizes[i % len(sizes)]
    return Fabric(hosts, rails=2 if hosts <= 16 else 1, hosts_per_su=8 if hosts >= 8 else 4,
                  spines=2 if hosts < 32 else 4, style=style)


# ---- devices' own counters and states (docs/brain.md "Device inputs") ----

def raw_counter(s, entity, metric, t0, t1, healthy_rate, fault_rate):
    """A raw monotonic counter as a switch counts it: healthy_rate/s, fault_rate/s from t0 to t1."""
    v = 1000.0
    t = 0
    while t <= t1 + 60000:
        s.kpi(t, entity, metric, round(v))
        v += (fault_rate if t0 <= t < t1 else healthy_rate) * STEP / 1000.0
        t += STEP


def f_oper_status(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    warm(s, ent, "if_oper_status", 1, t0)
    s.series(t0, t0 + 90000, STEP, ent, "if_oper_status", lambda t: 2)
    s.expect([ent, link_entity(s.fabric, ent)], "link_down")
    return [ent]


def f_pause_frames_sent(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    raw_counter(s, ent, "pfc_prio3_tx_pause_frames", t0, t0 + 60000, 5, 24000)
    s.expect([ent, link_entity(s.fabric, ent), host], "pfc_storm")
    return [ent]


def f_pause_frames_received(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    raw_counter(s, ent, "pfc_prio3_rx_pause_frames", t0, t0 + 90000, 5, 20000)
    s.expect([ent, link_entity(s.fabric, ent)], "pfc_storm")
    return [ent]


def f_pause_frames_deadlock(s, leaf, spine, t0):
    lp, sp = s.fabric.uplink[(leaf, spine)]
    for ent in ("%s/%s" % (leaf, lp), "%s/%s" % (spine, sp)):
        raw_counter(s, ent, "pfc_prio3_rx_pause_frames", t0, t0 + 90000, 5, 23000)
    s.expect(link_entity(s.fabric, "%s/%s" % (leaf, lp)), "pfc_deadlock")
    return ["%s/%s" % (leaf, lp)]


def f_watchdog_counter(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    s.series(0, t0 - STEP, STEP, ent, "pfc_wd_storm_detected", lambda t: 4)
    s.series(t0, t0 + 60000, STEP, ent, "pfc_wd_storm_detected", lambda t: 5)
    s.expect([ent, link_entity(s.fabric, ent)], "pfc_storm")
    return [ent]


def f_fcs_errors(s, host, t0, rail=0):
    _, _, ent = leaf_port(s.fabric, host, rail)
    raw_counter(s, ent, "dot3_stats_fcs_errors", t0, t0 + 60000, 0, 40)
    s.expect([ent, link_entity(s.fabric, ent)], "crc_errors")
    return [ent]


def f_egress_ecn(s, leaf, spine, t0):
    lp, _ = s.fabric.uplink[(leaf, spine)]
    ent = "%s/%s" % (leaf, lp)
    raw_counter(s, ent, "ecn_marked_packets", t0, t0 + 60000, 50, 150000)
    s.expect([ent, link_entity(s.fabric, ent)], "ecn_surge")
    return [ent]


def module_thresholds(s, ent, rx_low=-13.9, tx_low=-9.0, temp_high=70.0):
    for metric, value in (("rx_power_low_alarm_dbm", rx_low), ("tx_power_low_alarm_dbm", tx_low),
                          ("temperature_high_alarm_celsius", temp_high)):
        s.kpi(0, ent, metric, value)


def f_rx_below_module_alarm(s, host, t0, rail=0):
    # -11.5 dBm is fine for the generic bound's neighbour but below this module's own -11.0 dBm alarm
    ent = host_port(s.fabric, host, rail)
    module_thresholds(s, ent, rx_low=-11.0)
    warm(s, ent, "rx_power_dbm", -3.0, t0, start=STEP)
    s.series(t0, t0 + 90000, STEP, ent, "rx_power_dbm", lambda t: -11.6)
    s.expect([link_entity(s.fabric, ent), ent], "optical_power_out_of_range")
    return [ent]


def f_rx_below_module_warning(s, host, t0, rail=0):
    # a degrading receiver: below the module's own warning threshold, above its alarm threshold
    ent = host_port(s.fabric, host, rail)
    module_thresholds(s, ent, rx_low=-12.0)
    s.kpi(0, ent, "rx_power_low_warning_dbm", -9.0)
    warm(s, ent, "rx_power_dbm", -3.0, t0, start=STEP)
    s.series(t0, t0 + 120000, STEP, ent, "rx_power_dbm", lambda t: -9.8)
    s.expect([link_entity(s.fabric, ent), ent], "optical_power_out_of_range")
    return [ent]


def f_rx_falling(s, host, t0, rail=0):
    # the light slides 3.5 dB below the port's own level over five minutes, inside every threshold of the
    # module (warning -9 dBm, alarm -12 dBm), and stays there
    ent = host_port(s.fabric, host, rail)
    module_thresholds(s, ent, rx_low=-12.0)
    s.kpi(0, ent, "rx_power_low_warning_dbm", -9.0)
    warm(s, ent, "rx_power_dbm", -2.0, t0, start=STEP)
    s.series(t0, t0 + 300000, STEP, ent, "rx_power_dbm", lambda t: -2.0 - 3.5 * (t - t0) / 300000)
    s.series(t0 + 300000, t0 + 420000, STEP, ent, "rx_power_dbm", lambda t: -5.5)
    s.expect([link_entity(s.fabric, ent), ent], "optical_power_out_of_range")
    return [ent]


def f_temp_above_module_warning(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    module_thresholds(s, ent, temp_high=80.0)
    s.kpi(0, ent, "temperature_high_warning_celsius", 70.0)
    warm(s, ent, "temperature_celsius", 45.0, t0, start=STEP)
    s.series(t0, t0 + 180000, STEP, ent, "temperature_celsius", lambda t: 73.0)
    s.expect(ent + "/module", "module_overtemperature")
    return [ent]


def f_temp_rising(s, host, t0, rail=0):
    # the module heats 25 degrees in five minutes and stays below its own warning threshold (70)
    ent = host_port(s.fabric, host, rail)
    module_thresholds(s, ent, temp_high=80.0)
    s.kpi(0, ent, "temperature_high_warning_celsius", 70.0)
    warm(s, ent, "temperature_celsius", 40.0, t0, start=STEP)
    s.series(t0, t0 + 300000, STEP, ent, "temperature_celsius", lambda t: 40.0 + 25.0 * (t - t0) / 300000)
    s.series(t0 + 300000, t0 + 420000, STEP, ent, "temperature_celsius", lambda t: 65.0)
    s.expect(ent + "/module", "module_overtemperature")
    return [ent]


def f_tx_below_module_alarm(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    module_thresholds(s, ent, tx_low=-6.0)
    warm(s, ent, "tx_power_dbm", -1.0, t0, start=STEP)
    s.series(t0, t0 + 90000, STEP, ent, "tx_power_dbm", lambda t: -7.2)
    s.expect(ent + "/module", "optical_power_out_of_range")
    return [ent]


def f_temp_above_module_alarm(s, host, t0, rail=0):
    ent = host_port(s.fabric, host, rail)
    module_thresholds(s, ent, temp_high=68.0)
    warm(s, ent, "temperature_celsius", 45.0, t0, start=STEP)
    s.series(t0, t0 + 120000, STEP, ent, "temperature_celsius", lambda t: 71.0)
    s.expect(ent + "/module", "module_overtemperature")
    return [ent]


def f_fan_state(s, device, t0):
    s.series(0, t0 - STEP, STEP, device + "/fan2", "fan_status", lambda t: 1)
    s.series(t0, t0 + 120000, STEP, device + "/fan2", "fan_status", lambda t: 3)
    s.expect([device, device + "/fan2"], "switch_fan_fault")
    return [device]


def f_psu_state(s, device, t0):
    s.series(0, t0 - STEP, STEP, device + "/psu1", "psu_status", lambda t: 1)
    s.series(t0, t0 + 120000, STEP, device + "/psu1", "psu_status", lambda t: 3)
    s.expect([device, device + "/psu1"], "switch_power_fault")
    return [device]


def f_uptime_reset(s, device, t0):
    s.series(0, t0 - STEP, STEP, device, "sys_uptime_seconds", lambda t: 8640000 + t / 1000)
    s.series(t0 + 30000, t0 + 120000, STEP, device, "sys_uptime_seconds", lambda t: (t - t0) / 1000)
    s.expect(device, "switch_reboot")
    return [device]


def f_mtu_ends(s, host, t0, rail=0):
    _, _, leaf_ent = leaf_port(s.fabric, host, rail)
    ent = host_port(s.fabric, host, rail)
    s.series(0, t0 + 60000, STEP * 3, leaf_ent, "if_mtu", lambda t: 9216)
    s.series(0, t0 - STEP, STEP * 3, ent, "if_mtu", lambda t: 9216)
    s.series(t0, t0 + 60000, STEP * 3, ent, "if_mtu", lambda t: 1500)
    s.expect([link_entity(s.fabric, ent), ent, leaf_ent], "mtu_mismatch")
    return [ent]


def f_qos_fabric(s, leaf, t0):
    f = s.fabric
    ports = ["%s/%s" % (leaf, STYLES[f.style](k)) for k in range(4)]
    for k, ent in enumerate(ports):
        drifted = k == 2
        s.series(0, t0 + 60000, STEP * 3, ent, "pfc_enabled_mask",
                 lambda t, d=drifted: 0 if d and t >= t0 else 8)
    s.expect([ports[2], leaf], "qos_config_drift")
    return [ports[2]]


def f_nxos_link_down(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "ETHPORT", "%%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface %s is down (Link failure)" % lp,
          rfc="3164")
    s.expect([ent, link_entity(s.fabric, ent)], "link_down")
    return [ent]


def f_junos_link_down(s, host, t0, rail=0):
    leaf, lp, ent = leaf_port(s.fabric, host, rail)
    s.log(t0, leaf, "mib2d", "SNMP_TRAP_LINK_DOWN: ifIndex 531, ifAdminStatus up(1), ifOperStatus down(2), ifName %s" % lp,
          severity="warning", rfc="3164", pid="1712")
    s.expect([ent, link_entity(s.fabric, ent)], "link_down")
    return [ent]


def pattern_scenarios():
    T0 = 60000
    out = []

    def add(name, style, fn, desc, i):
        f = fabric_for(i, style)
        s = Scenario("pattern", name, f, desc)
        fn(s, f)
        out.append(s)

    h = lambda f, k=1: f.host_names[k % len(f.host_names)]
    L = lambda f, k=0: f.leaf_names[k % len(f.leaf_names)]
    S = lambda f, k=0: f.spine_names[k % len(f.spine_names)]
    specs = [
        ("link-down-sonic", "sonic", lambda s, f: f_switch_link_down(s, h(f), T0), "a SONiC leaf port goes down"),
        ("link-down-eos", "eos", lambda s, f: f_switch_link_down(s, h(f), T0), "an EOS leaf port goes down"),
        ("link-down-huawei", "huawei", lambda s, f: f_switch_link_down(s, h(f), T0), "a CloudEngine port goes down"),
        ("link-down-cumulus", "cumulus", lambda s, f: f_switch_link_down(s, h(f), T0), "a Cumulus port goes down"),
        ("nic-link-down", "sonic", lambda s, f: f_nic_link_down(s, h(f, 2), T0), "a host NIC reports link down"),
        ("link-flap-syslog", "sonic", lambda s, f: f_link_flap_syslog(s, h(f), T0), "a leaf port flaps three times"),
        ("link-flap-errdisable-eos", "eos", lambda s, f: f_errdisable_eos(s, h(f), T0), "EOS err-disables a flapping port"),
        ("link-flap-counter", "sonic", lambda s, f: f_link_flap_counter(s, h(f), T0), "link_downed rises three times"),
        ("crc-errors-port", "sonic", lambda s, f: f_crc_port(s, h(f), T0), "a burst of receive errors on a NIC port"),
        ("symbol-errors-both-ends", "sonic", lambda s, f: f_symbol_both_ends(s, h(f), T0), "symbol errors on both ends"),
        ("crc-errors-huawei", "huawei", lambda s, f: f_crc_huawei(s, h(f), T0), "CloudEngine CRC error alarm"),
        ("fec-uncorrectable", "sonic", lambda s, f: f_fec(s, h(f), T0), "uncorrectable FEC blocks on a leaf port"),
        ("optics-rx-power-low", "sonic", lambda s, f: f_rx_power(s, h(f), T0, far_end=False), "low receive power"),
        ("optics-rx-power-high", "sonic", lambda s, f: f_rx_power(s, h(f), T0, high=True, far_end=False),
         "receive power above +4 dBm"),
        ("optics-tx-power-low", "sonic", lambda s, f: f_tx_power(s, h(f), T0), "a module's transmit power is low"),
        ("optics-alarm-syslog", "sonic", lambda s, f: f_optics_syslog(s, h(f), T0), "xcvrd rx power low alarm"),
        ("module-temperature-high", "sonic", lambda s, f: f_temperature(s, h(f), T0), "a module runs hot"),
        ("module-temperature-syslog", "sonic", lambda s, f: f_temperature_syslog(s, h(f), T0),
         "xcvrd module temperature alarm"),
        ("pfc-storm-host-nic", "sonic", lambda s, f: f_pfc_storm_nic(s, h(f), T0), "a NIC sends PFC pause nonstop"),
        ("pfc-pause-received-sustained", "sonic", lambda s, f: f_pfc_pause_received(s, h(f), T0),
         "a leaf port is paused 85% of the time"),
        ("pfc-storm-sonic-watchdog", "sonic", lambda s, f: f_pfc_watchdog(s, h(f), T0), "the PFC watchdog fires"),
        ("pfc-deadlock-both-ends", "sonic", lambda s, f: f_pfc_deadlock(s, L(f), S(f), T0), "a leaf-spine deadlock"),
        ("pfc-watchdog-huawei", "huawei", lambda s, f: f_pfc_watchdog_huawei(s, L(f), S(f), T0),
         "CloudEngine's PFC deadlock detection on one port"),
        ("ecn-marking-surge", "sonic", lambda s, f: f_ecn(s, h(f), T0), "ECN marking shifts up"),
        ("cnp-surge", "sonic", lambda s, f: f_cnp(s, h(f), T0), "a receiver sends CNPs at 80,000/s"),
        ("buffer-drops-host", "sonic", lambda s, f: f_out_of_buffer(s, h(f), T0), "a NIC runs out of buffers"),
        ("buffer-drops-port", "sonic", lambda s, f: f_rx_discards(s, h(f), T0), "a leaf port discards packets"),
        ("retransmission-out-of-sequence", "sonic", lambda s, f: f_out_of_sequence(s, h(f), T0),
         "out-of-sequence packets burst"),
        ("retransmission-ack-timeout", "sonic", lambda s, f: f_ack_timeout(s, h(f), T0), "local ACK timeouts burst"),
        ("switch-reboot", "sonic", lambda s, f: f_switch_reboot(s, L(f, 1), T0), "a leaf reports a power-loss reboot"),
        ("switch-power-supply-fault", "sonic", lambda s, f: f_psu(s, S(f, 1), T0), "a spine loses a PSU"),
        ("switch-fan-fault", "sonic", lambda s, f: f_fan(s, L(f), T0), "a leaf fan fails"),
        ("npu-port-down", "sonic", lambda s, f: f_npu_port(s, h(f, 3), T0), "an NPU driver reports its port down"),
        ("mtu-mismatch-ospf", "sonic", lambda s, f: f_mtu_ospf(s, L(f), S(f), T0), "OSPF MTU mismatch"),
        ("mtu-mismatch-generic", "sonic", lambda s, f: f_mtu_generic(s, L(f), S(f, 1), T0), "an MTU mismatch message"),
        ("bgp-session-down", "sonic", lambda s, f: f_bgp_down(s, L(f), S(f), T0), "a BGP session goes down"),
        ("bgp-session-flap", "sonic", lambda s, f: f_bgp_flap(s, L(f), S(f), T0), "a BGP session flaps three times"),
        ("qos-drift-host", "sonic", lambda s, f: f_qos_host(s, h(f), T0), "hsnsd reports QoS drift for 7 minutes"),
        ("qos-drift-switch", "sonic", lambda s, f: f_qos_switch(s, L(f), T0), "a switch reports a PFC mismatch"),
        # Appended (not in family order) so that the scenarios above keep their fabrics.
        ("buffer-drops-switch-egress", "sonic", lambda s, f: f_out_discards(s, h(f), T0),
         "a leaf port's egress queue discards packets (IF-MIB ifOutDiscards)"),
        ("if-oper-status-down", "sonic", lambda s, f: f_oper_status(s, h(f), T0), "IF-MIB says a leaf port is down"),
        ("pfc-pause-frames-sent-storm", "sonic", lambda s, f: f_pause_frames_sent(s, h(f), T0),
         "a NIC sends 24,000 pause frames a second"),
        ("pfc-pause-frames-received-sustained", "sonic", lambda s, f: f_pause_frames_received(s, h(f), T0),
         "a leaf port receives 20,000 pause frames a second"),
        ("pfc-deadlock-pause-frames-both-ends", "sonic", lambda s, f: f_pause_frames_deadlock(s, L(f), S(f), T0),
         "both ends of an uplink are paused nonstop"),
        ("pfc-watchdog-storm-counted", "sonic", lambda s, f: f_watchdog_counter(s, h(f), T0),
         "the PFC watchdog's storm counter rises"),
        ("fcs-errors-port", "eos", lambda s, f: f_fcs_errors(s, h(f), T0), "FCS errors burst on a leaf port"),
        ("switch-egress-ecn-marking", "sonic", lambda s, f: f_egress_ecn(s, L(f), S(f), T0),
         "a leaf uplink's egress queue marks 150,000 packets a second"),
        ("optics-rx-power-below-module-alarm", "sonic", lambda s, f: f_rx_below_module_alarm(s, h(f), T0),
         "receive power below the module's own alarm threshold"),
        ("optics-tx-power-below-module-alarm", "sonic", lambda s, f: f_tx_below_module_alarm(s, h(f), T0),
         "transmit power below the module's own alarm threshold"),
        ("module-temperature-above-module-alarm", "sonic", lambda s, f: f_temp_above_module_alarm(s, h(f), T0),
         "a module above its own high-temperature alarm"),
        ("fan-state-failed", "sonic", lambda s, f: f_fan_state(s, L(f), T0), "ENTITY-SENSOR-MIB says a fan failed"),
        ("psu-state-failed", "sonic", lambda s, f: f_psu_state(s, S(f, 1), T0),
         "ENTITY-SENSOR-MIB says a power supply failed"),
        ("switch-uptime-restarted", "sonic", lambda s, f: f_uptime_reset(s, S(f), T0), "a spine's sysUpTime restarts"),
        ("mtu-differs-between-ends", "sonic", lambda s, f: f_mtu_ends(s, h(f), T0),
         "a host port's MTU drops to 1500 under a 9216 leaf"),
        ("qos-setting-differs-from-fabric", "sonic", lambda s, f: f_qos_fabric(s, L(f), T0),
         "one leaf port loses its PFC priority"),
        ("link-down-nxos", "eos", lambda s, f: f_nxos_link_down(s, h(f), T0), "an NX-OS port goes down"),
        ("link-down-junos", "eos", lambda s, f: f_junos_link_down(s, h(f), T0), "a Junos port goes down"),
        ("optics-tx-alarm-syslog", "sonic", lambda s, f: f_optics_tx_syslog(s, h(f), T0), "xcvrd tx power low alarm"),
        ("optics-rx-power-below-module-warning", "sonic", lambda s, f: f_rx_below_module_warning(s, h(f), T0),
         "receive power below the module's own warning threshold"),
        ("module-temperature-above-module-warning", "sonic", lambda s, f: f_temp_above_module_warning(s, h(f), T0),
         "a module above its own high-temperature warning"),
        ("module-temperature-rising", "sonic", lambda s, f: f_temp_rising(s, h(f), T0),
         "a module heats 25 degrees in five minutes, below its own warning threshold"),
        ("optics-rx-power-falling", "sonic", lambda s, f: f_rx_falling(s, h(f), T0),
         "receive power slides 3.5 dB below its own level, inside every threshold"),
    ]
    for i, (name, style, fn, desc) in enumerate(specs):
        add(name, style, fn, desc, i)
    return out


def multi_scenarios(rng):
    out = []
    combos = [
        ("linkdown-and-psu", [lambda s, f: f_switch_link_down(s, f.host_names[1], 60000),
                              lambda s, f: f_psu(s, f.spine_names[1], 65000)]),
        ("optics-and-crc", [lambda s, f: f_rx_power(s, f.host_names[0], 60000),
                            lambda s, f: f_crc_port(s, f.host_names[-1], 62000)]),
        ("three-faults", [lambda s, f: f_nic_link_down(s, f.host_names[2], 60000),
                          lambda s, f: f_fan(s, f.leaf_names[-1], 61000),
                          lambda s, f: f_temperature(s, f.host_names[-2], 60000)]),
        ("two-leaves-two-ports", [lambda s, f: f_switch_link_down(s, f.host_names[0], 60000),
                                  lambda s, f: f_switch_link_down(s, f.host_names[-1], 60000)]),
        ("pfc-and-bgp", [lambda s, f: f_pfc_storm_nic(s, f.host_names[3], 60000),
                         lambda s, f: f_bgp_down(s, f.leaf_names[-1], f.spine_names[0], 61000)]),
        ("reboot-and-ecn", [lambda s, f: f_switch_reboot(s, f.spine_names[0], 60000),
                            lambda s, f: f_ecn(s, f.host_names[5], 60000)]),
        ("flap-and-fec", [lambda s, f: f_link_flap_syslog(s, f.host_names[4], 60000),
                          lambda s, f: f_fec(s, f.host_names[-3], 60000)]),
    ]
    for i, (name, faults) in enumerate(combos):
        f = Fabric([16, 32, 48, 64][i % 4], rails=1, hosts_per_su=8, spines=4)
        s = Scenario("multi", name, f, "independent simultaneous faults: " + name)
        for fn in faults:
            fn(s, f)
        s.clean += [f.spine_names[2], f.leaf_names[1] + "/" + STYLES["sonic"](6)]
        out.append(s)
    return out


def storm_scenarios():
    out = []
    # a spine loses power: every leaf's uplink to it and every BGP session to it go down; it comes back and
    # logs the reboot cause.
    for name, hosts, style in [("spine-reboot-16-leaves", 128, "sonic"), ("spine-reboot-eos", 96, "eos"),
                               ("spine-reboot-huawei", 160, "huawei")]:
        f = Fabric(hosts, rails=1, hosts_per_su=8, spines=4, style=style)
        s = Scenario("storm", name, f, "a spine reboots: every uplink and BGP session to it drops")
        spine = f.spine_names[1]
        for i, leaf in enumerate(f.leaf_names):
            lp, _ = f.uplink[(leaf, spine)]
            link_down_line(s, 60000 + 37 * i, leaf, lp)
            bgp_line(s, 61000 + 41 * i, leaf, spine)
        s.log(150000, spine, "process-reboot-cause", "Reboot cause: Power Loss", severity="warning")
        for i, leaf in enumerate(f.leaf_names):
            lp, _ = f.uplink[(leaf, spine)]
            link_down_line(s, 170000 + 37 * i, leaf, lp, down=False)
            bgp_line(s, 180000 + 41 * i, leaf, spine, down=False)
        s.expect(spine, "switch_reboot")
        s.clean += [x for x in f.spine_names if x != spine]
        s.min_compression = 10
        out.append(s)
    # a leaf reboots: every host NIC on it reports link down, the spines see the uplinks go down
    for name, hosts in [("leaf-reboot-hosts", 64), ("leaf-reboot-large-su", 128)]:
        f = Fabric(hosts, rails=1, hosts_per_su=hosts // 4, spines=4)
        s = Scenario("storm", name, f, "a leaf reboots: its hosts' NICs and the spines' downlinks go down")
        leaf = f.leaf_names[2]
        k = 0
        for host in f.host_names:
            if f.leaf_of(host)[0] == leaf:
                s.log(60000 + 23 * k, host, "kernel", "mlx5_core 0000:3b:00.0 eth0: Link down", severity="err",
                      rfc="3164")
                k += 1
        for j, spine in enumerate(f.spine_names):
            _, sp = f.uplink[(leaf, spine)]
            link_down_line(s, 60500 + 29 * j, spine, sp)
        s.log(140000, leaf, "process-reboot-cause", "Reboot cause: Kernel Panic", severity="warning")
        s.expect(leaf, "switch_reboot")
        s.clean += [x for x in f.leaf_names if x != leaf]
        s.min_compression = 10
        out.append(s)
    # a silent spine (no message of its own): only its neighbours speak; any fault type on the spine is right
    f = Fabric(128, rails=1, hosts_per_su=8, spines=4)
    s = Scenario("storm", "silent-spine", f, "a spine dies without a word: only the leaves report")
    spine = f.spine_names[3]
    for i, leaf in enumerate(f.leaf_names):
        lp, _ = f.uplink[(leaf, spine)]
        link_down_line(s, 60000 + 31 * i, leaf, lp)
        bgp_line(s, 60900 + 31 * i, leaf, spine)
    s.incidents.append({"root_cause": spine, "fault_type": [], "affected_jobs": []})
    s.clean += [x for x in f.spine_names if x != spine]
    s.min_compression = 10
    out.append(s)
    return out


def far_end_scenarios():
    out = []
    f = Fabric(16, rails=2, hosts_per_su=8, spines=2)
    s = Scenario("far_end", "host-silent-leaf-reports", f, "a host NIC dies silently; only its leaf port goes down")
    f_switch_link_down(s, f.host_names[5], 60000, rail=1)
    out.append(s)
    f = Fabric(32, rails=1, hosts_per_su=8, spines=4)
    s = Scenario("far_end", "weak-host-laser", f, "a host's laser is weak: only the leaf sees low receive power")
    f_rx_power(s, f.host_names[9], 60000, far_end=True)
    out.append(s)
    f = Fabric(32, rails=1, hosts_per_su=8, spines=4)
    s = Scenario("far_end", "leaf-uplink-seen-by-spine", f, "a leaf's uplink optic is weak: only the spine reports")
    leaf = f.leaf_names[2]
    _, sp = f.uplink[(leaf, f.spine_names[1])]
    ent = "%s/%s" % (f.spine_names[1], sp)
    warm(s, ent, "rx_power_dbm", -2.0, 60000)
    s.series(60000, 150000, STEP, ent, "rx_power_dbm", lambda t: -12.8)
    s.expect(link_entity(f, ent), "optical_power_out_of_range")
    out.append(s)
    f = Fabric(48, rails=1, hosts_per_su=8, spines=4, style="eos")
    s = Scenario("far_end", "leaf-silent-spine-reports", f, "a leaf port dies silently; only the spine logs it")
    leaf = f.leaf_names[4]
    _, sp = f.uplink[(leaf, f.spine_names[2])]
    link_down_line(s, 60000, f.spine_names[2], sp)
    ent = "%s/%s" % (f.spine_names[2], sp)
    s.expect([ent, link_entity(f, ent)], "link_down")
    out.append(s)
    f = Fabric(8, rails=2, hosts_per_su=4, spines=2)
    s = Scenario("far_end", "crc-on-receiver", f, "a bad cable: only the receiving NIC counts errors")
    f_crc_port(s, f.host_names[6], 60000, rail=1)
    out.append(s)
    return out


def noise_scenarios(rng):
    out = []
    for i in range(6):
        hosts = [8, 16, 32, 48, 64, 16][i]
        f = Fabric(hosts, rails=1, hosts_per_su=8, spines=2 if hosts < 32 else 4)
        real = i < 4
        s = Scenario("noise", ("fault-among-noise-%d" % i) if real else ("noise-only-%d" % i), f,
                     "recovering flaps, counter resets, late and duplicate samples" +
                     (" beside one real fault" if real else ", and nothing else"))
        touched = []
        if real:
            fault = [f_switch_link_down, f_rx_power, f_crc_port, f_pfc_storm_nic][i]
            touched = fault(s, f.host_names[1], 90000)
        others = [p for h in f.host_names[2:6] for p in [host_port(f, h)]]
        noise(s, rng, others, 240000, set(touched))
        for j, h in enumerate(f.host_names[6:8]):
            leaf, lp, ent = leaf_port(f, h)
            recovering_flap(s, leaf, lp, 100000 + 30000 * j)
            s.clean.append(ent)
        out.append(s)
    return out


def job_scenarios():
    out = []
    f = Fabric(16, rails=2, hosts_per_su=8, spines=2)
    s = Scenario("job", "nic-down-in-job", f, "a NIC of a running job's host goes down")
    s.job("train-a", f.host_names[0:4], 2)
    f_nic_link_down(s, f.host_names[2], 60000, rail=1, jobs=["train-a"])
    out.append(s)

    f = Fabric(16, rails=2, hosts_per_su=8, spines=2)
    s = Scenario("job", "leaf-port-down-under-job", f, "the leaf port of a job's host goes down")
    s.job("train-b", f.host_names[4:8], 2)
    f_switch_link_down(s, f.host_names[5], 60000, jobs=["train-b"])
    out.append(s)

    f = Fabric(32, rails=1, hosts_per_su=8, spines=4)
    s = Scenario("job", "two-jobs-one-hit", f, "two jobs run; a link of one of them loses light")
    s.job("train-c", f.host_names[0:8], 1)
    s.job("train-d", f.host_names[8:16], 1)
    f_rx_power(s, f.host_names[10], 60000, far_end=False, jobs=["train-d"])
    s.clean += [host_port(f, h) for h in f.host_names[0:8]]
    out.append(s)

    f = Fabric(16, rails=1, hosts_per_su=8, spines=2)
    s = Scenario("job", "fault-outside-job", f, "a job runs; the fault is on a host it does not use")
    s.job("train-e", f.host_names[0:4], 1)
    f_crc_port(s, f.host_names[12], 60000)
    out.append(s)

    f = Fabric(8, rails=2, hosts_per_su=4, spines=2)
    s = Scenario("job", "pfc-storm-in-job", f, "a job host's NIC storms PFC pause")
    s.job("train-f", f.host_names[0:8], 2)
    f_pfc_storm_nic(s, f.host_names[3], 60000, rail=1, jobs=["train-f"])
    out.append(s)

    f = Fabric(16, rails=1, hosts_per_su=8, spines=2)
    s = Scenario("job", "retransmissions-in-job", f, "retransmissions burst on a job host")
    s.job("train-g", f.host_names[0:2], 1)
    s.job("train-h", f.host_names[2:6], 1)
    f_out_of_sequence(s, f.host_names[3], 60000, jobs=["train-h"])
    out.append(s)
    return out


def scale_scenarios():
    out = []
    f = GeneratedFabric(1000, 1, 50, 4)
    s = Scenario("scale", "1000-hosts-rx-power", f, "1,000 hosts: one host link loses light")
    f_rx_power(s, f.host_names[997], 60000, far_end=False)
    out.append(s)
    f = GeneratedFabric(1000, 2, 100, 4)
    s = Scenario("scale", "1000-hosts-port-down", f, "1,000 hosts x 2 rails: a leaf port goes down")
    f_switch_link_down(s, f.host_names[512], 60000, rail=1)
    out.append(s)
    f = GeneratedFabric(512, 1, 32, 8)
    s = Scenario("scale", "512-hosts-two-faults", f, "512 hosts: a NIC storms and a spine reboots")
    f_pfc_storm_nic(s, f.host_names[300], 60000)
    f_switch_reboot(s, f.spine_names[5], 62000)
    out.append(s)
    f = GeneratedFabric(1000, 1, 100, 2)
    s = Scenario("scale", "1000-hosts-job", f, "1,000 hosts: a job of 64 hosts loses one NIC")
    s.job("big-train", f.host_names[100:164], 1)
    f_crc_port(s, f.host_names[130], 60000, jobs=["big-train"])
    out.append(s)
    return out


def healthy_small(rng):
    f = Fabric(16, rails=2, hosts_per_su=8, spines=2)
    s = Scenario("healthy", "noisy-hour-16-hosts", f, "an hour of noisy but healthy telemetry on 32 ports")
    ents = [host_port(f, h, r) for h in f.host_names for r in range(2)]
    for k, ent in enumerate(ents):
        base = -2.0 - rng.random()
        t = k * 37
        c = 0
        while t <= 3600000:
            s.kpi(t, ent, "rx_power_dbm", round(base + rng.uniform(-0.4, 0.4), 2))
            s.kpi(t, ent, "temperature_celsius", round(45 + rng.uniform(-3, 3), 1))
            c = 0 if rng.random() < 0.01 else c + rng.choice([0, 0, 1])
            s.kpi(t, ent, "symbol_error", c)
            t += 60000
        s.clean.append(ent)
    for j, h in enumerate(f.host_names[:3]):
        leaf, lp, _ = leaf_port(f, h)
        recovering_flap(s, leaf, lp, 600000 * (j + 1))
    return s


def healthy_day(rng, ports=1000, step_ms=1800000):
    """24 simulated hours of 1,000 ports: noisy optics, slow counters with resets, duplicates, late samples,
    recovering flaps; no fault."""
    f = GeneratedFabric(ports, 1, 50, 4)
    s = Scenario("healthy", "24h-1000-ports", f, "24 hours of 1,000 healthy but noisy ports: no incident")
    day = 24 * 3600 * 1000
    for k, host in enumerate(f.host_names):
        ent = host_port(f, host)
        base = -2.0 - rng.random()
        c = 0
        t = (k * 911) % step_ms
        while t <= day:
            v = round(base + rng.uniform(-0.4, 0.4), 2)
            s.kpi(t, ent, "rx_power_dbm", v)
            c = 0 if rng.random() < 0.005 else c + rng.choice([0, 0, 0, 2])
            s.kpi(t, ent, "symbol_error", c)
            if rng.random() < 0.01:
                s.kpi(t + 2000, ent, "rx_power_dbm", v, ts=t)  # duplicate
            if rng.random() < 0.01:
                s.kpi(t + 60000, ent, "symbol_error", c, ts=t)  # late duplicate
            t += step_ms
    for j in range(12):
        host = f.host_names[(j * 83) % ports]
        leaf, lp = f.leaf_of(host)
        recovering_flap(s, leaf, lp, 3600000 * 2 * j + 1234)
    return s


def build(which, seed):
    rng = random.Random(seed)
    small = pattern_scenarios() + multi_scenarios(rng) + storm_scenarios() + far_end_scenarios() + \
        noise_scenarios(rng) + job_scenarios()
    large = scale_scenarios() + [healthy_small(random.Random(seed + 2)), healthy_day(random.Random(seed + 1))]
    return {"small": small, "large": large, "all": small + large}[which]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--set", choices=["small", "large", "all"], default="all")
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--clean", action="store_true", help="remove OUT's scenario directories first")
    a = p.parse_args()
    scenarios = build(a.set, a.seed)
    if a.clean and os.path.isdir(a.out):
        for name in os.listdir(a.out):
            if os.path.isfile(os.path.join(a.out, name, "expect.yaml")):
                shutil.rmtree(os.path.join(a.out, name))
    for s in scenarios:
        s.write(a.out)
    print("%d scenarios written to %s" % (len(scenarios), a.out), file=sys.stderr)


if __name__ == "__main__":
    main()
