#!/usr/bin/env python3
"""Independent fault-scenario generator for the hsns network brain.

    generate.py OUT --seed N [--clean] [--summary]

Writes one scenario directory per scenario under OUT in the format of docs/scenarios.md. Python 3
standard library only; the output is a pure function of the seed. Every scenario must be replayed with
`--base 2026-12-07T10:00:00.000Z --speed 0`: dialects that carry their own textual date (NX-OS, EOS and
Junos RFC 3164, Huawei with a zone offset) are written from that base. See README.md for the fault
physics, the noise, the sources and the seed split (development 1, 2, 3; reserved 101, 102, 103).
"""
import argparse
import datetime
import ipaddress
import json
import math
import os
import random
import re
import shutil
import sys

BASE = datetime.datetime(2026, 12, 7, 10, 0, 0, tzinfo=datetime.timezone.utc)
BASE_TEXT = "2026-12-07T10:00:00.000Z"
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
MAX_LINES = 19500
INF = 1e18


def wall(ms):
    return BASE + datetime.timedelta(milliseconds=ms)


def d3164(ms, frac=0):
    t = wall(ms)
    s = f"{MONTHS[t.month - 1]} {t.day:2d} {t:%H:%M:%S}"
    if frac == 3:
        s += f".{t.microsecond // 1000:03d}"
    elif frac == 6:
        s += f".{t.microsecond:06d}"
    return s


def poisson(rng, lam):
    if lam <= 0:
        return 0
    if lam > 40:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    lim, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= lim:
            return k
        k += 1


# ----------------------------------------------------------------------------------------------------
# Fabric model
# ----------------------------------------------------------------------------------------------------

VENDORS = ["sonic", "eos", "nxos", "huawei", "junos"]

# Module threshold profiles as vendors burn them into the EEPROM (SFF-8636 / CMIS threshold pages):
# (rx_low_alarm, rx_low_warning, tx_low_alarm, temp_high_alarm, temp_high_warning, rx_nominal_range)
OPTIC_PROFILES = [
    (-13.9, -9.9, -10.5, 75.0, 70.0, (-6.0, -1.0)),   # 100G-SR4 class, VCSEL
    (-10.4, -7.4, -6.4, 80.0, 75.0, (-4.5, -0.5)),    # 400G-DR4 class
    (-12.0, -9.0, -8.0, 78.0, 73.0, (-5.5, -1.0)),    # 400G-FR4 class
    (-14.4, -11.4, -8.9, 70.0, 67.0, (-7.0, -2.0)),   # AOC / older SR
    (-9.4, -6.4, -5.4, 85.0, 80.0, (-3.8, -0.4)),     # 800G-2xDR4 class
    (-11.9, -8.9, -7.3, 75.0, 72.0, (-5.0, -1.0)),    # 200G-FR4 class
]


def port_name(vendor, idx, speed):
    if vendor == "sonic":
        return f"Ethernet{idx * (8 if speed >= 400 else 4)}"
    if vendor == "eos":
        return f"Ethernet{idx + 1}/1"
    if vendor == "nxos":
        return f"Ethernet1/{idx + 1}"
    if vendor == "huawei":
        return f"{speed}GE1/0/{idx + 1}"
    if vendor == "junos":
        return f"et-0/0/{idx}"
    raise ValueError(vendor)


class Switch:
    def __init__(self, name, tier, vendor, rng, mgmt):
        self.name, self.tier, self.vendor, self.mgmt = name, tier, vendor, mgmt
        self.ports = {}       # port -> peer entity
        self.ifindex = {}
        self.variant = {"sonic": rng.choice(["3164", "3164", "5424"]),
                        "eos": rng.choice(["3164", "3164", "5424"]),
                        "junos": rng.choice(["3164", "5424sd"]),
                        "nxos": rng.choice(["s", "ms"]),
                        "huawei": rng.choice(["s", "s", "ms"])}.get(vendor, "3164")
        self.tz = rng.choice([480, 480, 480, 180, 330, -300, 60, 0])
        self.poll = rng.choice([10, 15, 20, 30])
        self.phase = rng.uniform(0, self.poll)
        self.skew = rng.randint(-700, 700)
        self.seq = rng.randint(10, 9000)
        self.fans = rng.randint(4, 6)
        self.psus = 2
        self.uptime0 = rng.randint(3, 400) * 86400 + rng.randint(0, 86399)
        self.pid = {p: rng.randint(900, 32000) for p in
                    ["bgpd", "mib2d", "rpd", "chassisd", "mgd", "sshd", "ntpd", "lldpd", "sudo", "xcvrd",
                     "psud", "thermalctld", "syncd", "bgp"]}
        self.asn = None
        self.model = rng.choice(["29", "137", "143", "197", "206"])
        self.serial = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(11))

    def ent(self, port):
        return f"{self.name}/{port}"


class Host:
    def __init__(self, name, su, rng):
        self.name, self.su = name, su
        self.npus = []        # (rail, netdev, leaf, leaf_port)
        self.poll = rng.choice([10, 10, 15])
        self.phase = rng.uniform(0, self.poll)
        self.uptime = rng.uniform(2e5, 4e6)
        self.variant = rng.choice(["3164", "3164", "5424"])
        self.pci = {}
        self.vendor = "linux"
        self.skew = rng.randint(-300, 300)
        self.name_ = name

    def netdev(self, rail):
        return self.npus[rail][1]


class Fabric:
    def __init__(self):
        self.switches, self.hosts = {}, {}
        self.leaf_of = {}          # (su, rail) -> leaf name
        self.leaf_pos = {}         # leaf -> (su, rail)
        self.su_hosts = []
        self.spines = []
        self.links = []            # (a_ent, b_ent, kind)
        self.peer, self.link_id = {}, {}
        self.bgp = {}              # leaf-side port ent -> (leaf_ip, spine_ip)
        self.uplinks = {}          # leaf -> [(leaf_port_ent, spine, spine_port_ent)]
        self.generated = None
        self.rails, self.speed, self.mtu_sw, self.mtu_host = 1, 400, 9216, 9000
        self.pfc_mask = 8

    def add_link(self, a, b, kind):
        lid = f"link:{a}|{b}"
        self.links.append((a, b, kind))
        self.peer[a], self.peer[b] = b, a
        self.link_id[a] = self.link_id[b] = lid
        return lid

    def dev(self, name):
        return self.switches.get(name) or self.hosts.get(name)

    def host_ent(self, h, rail):
        return f"{h}/{self.hosts[h].npus[rail][1]}"

    def leaf_ent(self, h, rail):
        hh = self.hosts[h].npus[rail]
        return f"{hh[2]}/{hh[3]}"

    def entity_ok(self, ent):
        dev, _, rest = ent.partition("/")
        if dev in self.hosts:
            if not rest:
                return True
            return any(rest == n[1] for n in self.hosts[dev].npus)
        if dev in self.switches:
            if not rest:
                return True
            if rest in self.switches[dev].ports:
                return True
            return re.fullmatch(r"(fan\d+|psu\d+|asic)", rest) is not None
        return False

    def topology_doc(self, name):
        sw = []
        for s in self.switches.values():
            d = {"name": s.name, "tier": s.tier}
            if s.mgmt:
                d["management_address"] = s.mgmt
            sw.append(d)
        hosts = [{"name": h.name, "npus": [{"index": r, "port": nd, "leaf": lf, "leaf_port": lp}
                                           for (r, nd, lf, lp) in h.npus]} for h in self.hosts.values()]
        links = []
        for a, b, kind in self.links:
            if kind == "fabric":
                la, pa = a.split("/", 1)
                lb, pb = b.split("/", 1)
                links.append({"lower": la, "upper": lb, "lower_port": pa, "upper_port": pb,
                              "bandwidth_gbps": self.speed, "latency_us": 1.0})
        return {"version": 1, "name": name, "defaults": {"bandwidth_gbps": self.speed, "latency_us": 0.5},
                "switches": sw, "hosts": hosts, "links": links}


HOST_STYLES = ["host{n:04d}", "gpu{n:03d}", "node-su{su}-{k:02d}", "dgx{n:03d}", "hgx-b{n:04d}", "cn{n:03d}"]
SW_STYLES = [("leaf{g:02d}", "spine{s:02d}"), ("leaf-su{su}-r{rail}", "spine-{s:02d}"),
             ("lf{g:03d}", "sp{s:02d}"), ("t1-su{su}-{rail:02d}", "t2-{s:02d}"), ("tor{g:03d}", "agg{s:02d}")]
NETDEV_BUS = [12, 18, 75, 84, 141, 148, 186, 204]


def build_fabric(rng, n_hosts, hps, rails, n_spines, mgmt_net, speed=400, vendor_mode="mixed", vendors=None,
                 eth_only=False):
    f = Fabric()
    f.rails, f.speed = rails, speed
    f.mtu_sw = rng.choice([9216, 9216, 9100, 9214])
    f.mtu_host = rng.choice([9000, 9000, 4200, f.mtu_sw])
    f.pfc_mask = rng.choice([8, 8, 8, 24])
    hstyle = rng.choice(HOST_STYLES)
    lstyle, sstyle = rng.choice(SW_STYLES)
    nd_style = "eth" if eth_only else rng.choice(["eth", "enp", "ens"])
    pool = vendors or VENDORS
    leaf_vendor = rng.choice(pool)
    spine_vendor = rng.choice(pool)
    n_su = (n_hosts + hps - 1) // hps
    mgmt_base = int(ipaddress.IPv4Address(mgmt_net))
    counter = [0]

    def vendor_for(tier):
        if vendor_mode == "mono":
            return leaf_vendor
        if vendor_mode == "tiered":
            return leaf_vendor if tier == "leaf" else spine_vendor
        return rng.choice(pool)

    def mk_switch(name, tier):
        counter[0] += 1
        mg = str(ipaddress.IPv4Address(mgmt_base + counter[0] * 3 + 1))
        s = Switch(name, tier, vendor_for(tier), rng, mg)
        f.switches[name] = s
        return s

    for s in range(n_spines):
        sw = mk_switch(sstyle.format(s=s + 1 if "agg" in sstyle else s), "spine")
        sw.asn = 65000 if rng.random() < 0.5 else 4200000000
        f.spines.append(sw.name)
    up_base = 32 if hps <= 32 else (64 if hps <= 64 else hps)
    n = 0
    link_no = 0
    for su in range(n_su):
        hosts_here = min(hps, n_hosts - su * hps)
        leaves = []
        for rail in range(rails):
            g = su * rails + rail
            sw = mk_switch(lstyle.format(g=g, su=su, rail=rail), "leaf")
            sw.asn = 65100 + g
            f.leaf_of[(su, rail)] = sw.name
            f.leaf_pos[sw.name] = (su, rail)
            leaves.append(sw)
        f.su_hosts.append([])
        for k in range(hosts_here):
            n += 1
            hname = hstyle.format(n=n, su=su, k=k + 1)
            h = Host(hname, su, rng)
            f.hosts[hname] = h
            f.su_hosts[su].append(hname)
            for rail in range(rails):
                if nd_style == "eth":
                    nd = f"eth{rail}"
                elif nd_style == "enp":
                    nd = f"enp{NETDEV_BUS[rail % 8] + 256 * (rail // 8)}s0np0"
                else:
                    nd = f"ens{rail + 1}f0np0"
                leaf = leaves[rail]
                lp = port_name(leaf.vendor, k, speed)
                leaf.ports[lp] = f"{hname}/{nd}"
                leaf.ifindex[lp] = 1000 + k
                h.npus.append((rail, nd, leaf.name, lp))
                h.pci[rail] = f"0000:{NETDEV_BUS[rail % 8]:02x}:00.0"
                f.add_link(f"{hname}/{nd}", f"{leaf.name}/{lp}", "host")
        for leaf in leaves:
            g = f.leaf_pos[leaf.name][0] * rails + f.leaf_pos[leaf.name][1]
            f.uplinks[leaf.name] = []
            for si, spn in enumerate(f.spines):
                sp = f.switches[spn]
                lp = port_name(leaf.vendor, up_base + si, speed)
                spp = port_name(sp.vendor, g, speed)
                leaf.ports[lp] = f"{spn}/{spp}"
                sp.ports[spp] = f"{leaf.name}/{lp}"
                leaf.ifindex[lp] = 1000 + up_base + si
                sp.ifindex[spp] = 1000 + g
                a, b = f"{leaf.name}/{lp}", f"{spn}/{spp}"
                f.add_link(a, b, "fabric")
                f.uplinks[leaf.name].append((a, spn, b))
                ipn = int(ipaddress.IPv4Address("10.128.0.0")) + 2 * link_no
                link_no += 1
                f.bgp[a] = (str(ipaddress.IPv4Address(ipn + 1)), str(ipaddress.IPv4Address(ipn)))
    return f


def build_generated(rng, hosts, rails, hps, spines):
    """Mirror of POST /api/v1/topology/generate naming (docs/topology.md "Generator")."""
    f = Fabric()
    f.rails, f.speed = rails, 400
    f.generated = {"hosts": hosts, "npus_per_host": rails, "hosts_per_su": hps, "spines_per_plane": spines,
                   "name": f"outside-gen-{hosts}"}
    f.mtu_sw, f.mtu_host, f.pfc_mask = 9216, 9000, 8
    n_su = (hosts + hps - 1) // hps
    hw = max(3, len(str(hosts)))
    lw = max(3, len(str(n_su * rails)))
    sw_w = max(2, len(str(spines)))
    for s in range(spines):
        sw = Switch(f"spine{s:0{sw_w}d}", "spine", rng.choice(["sonic", "eos"]), rng, None)
        sw.asn = 65000
        f.switches[sw.name] = sw
        f.spines.append(sw.name)
    spine_ctr = [0] * spines
    link_no = 0
    for su in range(n_su):
        leaves = []
        for rail in range(rails):
            g = su * rails + rail
            sw = Switch(f"leaf{g:0{lw}d}", "leaf", rng.choice(["sonic", "eos"]), rng, None)
            sw.asn = 65100 + g
            f.switches[sw.name] = sw
            f.leaf_of[(su, rail)] = sw.name
            f.leaf_pos[sw.name] = (su, rail)
            leaves.append(sw)
        f.su_hosts.append([])
        first = su * hps
        for h in range(first, min(hosts, first + hps)):
            hn = f"host{h + 1:0{hw}d}"
            ho = Host(hn, su, rng)
            f.hosts[hn] = ho
            f.su_hosts[su].append(hn)
            for rail in range(rails):
                lp = f"Eth1/{h - first + 1}"
                leaves[rail].ports[lp] = f"{hn}/eth{rail}"
                leaves[rail].ifindex[lp] = 1000 + h - first
                ho.npus.append((rail, f"eth{rail}", leaves[rail].name, lp))
                ho.pci[rail] = f"0000:{NETDEV_BUS[rail % 8]:02x}:00.0"
                f.add_link(f"{hn}/eth{rail}", f"{leaves[rail].name}/{lp}", "host")
        for leaf in leaves:
            f.uplinks[leaf.name] = []
            for k in range(spines):
                spine_ctr[k] += 1
                lp, spp = f"Eth2/{k + 1}.0", f"Eth1/{spine_ctr[k]}"
                spn = f.spines[k]
                leaf.ports[lp] = f"{spn}/{spp}"
                f.switches[spn].ports[spp] = f"{leaf.name}/{lp}"
                a, b = f"{leaf.name}/{lp}", f"{spn}/{spp}"
                f.add_link(a, b, "fabric")
                f.uplinks[leaf.name].append((a, spn, b))
                ipn = int(ipaddress.IPv4Address("10.128.0.0")) + 2 * link_no
                link_no += 1
                f.bgp[a] = (str(ipaddress.IPv4Address(ipn + 1)), str(ipaddress.IPv4Address(ipn)))
    return f


# ----------------------------------------------------------------------------------------------------
# Dialects: what each vendor writes for an event. An item is (process, facility, severity, tag, text, sd).
# NX-OS/EOS: %FAC-SEV-MNEMONIC; Huawei: %%01FAC/level/MNEMONIC(l)[seq]; Junos: process[pid]: TAG (or RFC 5424
# with junos@2636 structured data); SONiC: container#program: text; Linux hosts: kernel / sshd / sudo.
# ----------------------------------------------------------------------------------------------------

SONIC_SEV = {0: "EMERG", 1: "ALERT", 2: "CRIT", 3: "ERR", 4: "WARNING", 5: "NOTICE", 6: "INFO", 7: "DEBUG"}


def I(proc, fac, sev, tag, text, sd=None):
    return (proc, fac, sev, tag, text, sd)


def cat_port(sw, port, up, reason="link"):
    v = sw.vendor
    idx = sw.ifindex.get(port, 1000)
    if v == "nxos":
        if up:
            return [I("", "ETHPORT", 5, "SPEED", f"Interface {port}, operational speed changed to 400 Gbps"),
                    I("", "ETHPORT", 5, "IF_UP", f"Interface {port} is up in Layer3")]
        if reason == "admin":
            return [I("", "ETHPORT", 5, "IF_DOWN_ADMIN_DOWN", f"Interface {port} is down (Administratively down)")]
        if reason == "errdisable":
            return [I("", "ETHPORT", 5, "IF_DOWN_ERROR_DISABLED",
                      f"Interface {port} is down (Error disabled. Reason:link flap)")]
        return [I("", "ETHPORT", 5, "IF_DOWN_LINK_FAILURE", f"Interface {port} is down (Link failure)")]
    if v == "eos":
        st = "up" if up else "down"
        out = [I("Ebra", "LINK", 3, "UPDOWN", f"Interface {port}, changed state to {st}"),
               I("Ebra", "LINEPROTO", 5, "UPDOWN", f"Line protocol on Interface {port}, changed state to {st}")]
        if reason == "errdisable" and not up:
            out.insert(0, I("Ebra", "ETH", 4, "ERRDISABLE", f"link-flap error detected on {port}."))
        return out
    if v == "huawei":
        st = "UP" if up else "DOWN"
        out = [I("", "IFPDT", 4, "IF_STATE", f"Interface {port} has turned into {st} state."),
               I("", "IFNET", 2, "linkDown_clear" if up else "linkDown_active",
                 f"The interface status changes. (ifName={port}, AdminStatus={'DOWN' if reason == 'admin' else 'UP'}, "
                 f"OperStatus={st}, Reason={'Interface physical link is up' if up else ('The interface is shut down' if reason == 'admin' else ('The interface is error down' if reason == 'errdisable' else 'Interface physical link is down'))}, mainIfname={port})"),
               I("", "IFNET", 4, "LINK_STATE", f"The line protocol IP on the interface {port} has entered the {st} state.")]
        if reason == "errdisable" and not up:
            out.insert(0, I("", "ERROR-DOWN", 4, "hwErrordown_active",
                            f"Error-down occurred. (Ifindex={idx}, Ifname={port}, Cause=link-flap)"))
        return out
    if v == "junos":
        tag = "SNMP_TRAP_LINK_UP" if up else "SNMP_TRAP_LINK_DOWN"
        adm = "down(2)" if reason == "admin" else "up(1)"
        op = "up(1)" if up else "down(2)"
        return [I("mib2d", "", 4 if not up else 6, tag,
                  f"ifIndex {idx}, ifAdminStatus {adm}, ifOperStatus {op}, ifName {port}",
                  {"snmp-interface-index": idx, "admin-status": adm, "operational-status": op,
                   "interface-name": port})]
    if v == "sonic":
        a, b = ("down", "up") if up else ("up", "down")
        out = [I("swss#orchagent", "", 5, "", f":- updatePortOperStatus: Port {port} oper state set from {a} to {b}")]
        if reason == "admin" and not up:
            out.insert(0, I("swss#orchagent", "", 5, "", f":- doPortTask: Set port {port} admin status to down"))
        return out
    return []


def cat_bgp(sw, port_ent, up, reason="link", flap=False):
    """BGP session over the fabric link whose local end is port_ent."""
    v = sw.vendor
    f = CUR_FABRIC
    leaf_side = port_ent if port_ent in f.bgp else f.peer[port_ent]
    lip, sip = f.bgp[leaf_side]
    peer_ip = sip if port_ent == leaf_side else lip
    peer_dev = f.peer[port_ent].split("/")[0]
    peer_as = f.switches[peer_dev].asn
    port = port_ent.split("/", 1)[1]
    if v == "nxos":
        why = {"link": "Interface flap", "hold": "holdtimer expired error", "notif": "received notification",
               "config": "peer closed the session"}[reason]
        return [I("", "BGP", 5, "ADJCHANGE", f" bgp- [{sw.pid['bgp']}] (default) neighbor {peer_ip} Up") if up else
                I("", "BGP", 5, "ADJCHANGE", f" bgp- [{sw.pid['bgp']}] (default) neighbor {peer_ip} Down - {why}")]
    if v == "eos":
        if up:
            return [I("Bgp", "BGP", 5, "ADJCHANGE", f"peer {peer_ip} (VRF default AS {peer_as}) old state OpenConfirm "
                                                   f"event RecvKeepAlive new state Established")]
        ev = {"link": "Stop", "hold": "HoldTimerExpired", "notif": "RecvNotify", "config": "RecvNotify"}[reason]
        out = [I("Bgp", "BGP", 5, "ADJCHANGE", f"peer {peer_ip} (VRF default AS {peer_as}) old state Established "
                                              f"event {ev} new state Idle")]
        if reason == "hold":
            out.insert(0, I("Bgp", "BGP", 3, "NOTIFICATION", f"sent to neighbor {peer_ip} (VRF default AS {peer_as}) "
                                                            f"4/0 (Hold Timer Expired Error) 0 bytes"))
        return out
    if v == "huawei":
        if up:
            return [I("", "BGP", 2, "hwBgpPeerBackwardTransition_clear",
                      f"The BGP FSM enters the Established state. (BgpPeerRemoteAddr={peer_ip}, BgpPeerLastError=0, "
                      f"BgpPeerState=6, VpnInstance=_public_)")]
        why = {"link": "Interface is down", "hold": "Receive hold timer expired", "notif": "Receive Notification",
               "config": "Configuration change"}[reason]
        return [I("", "BGP", 2, "hwBgpPeerBackwardTransition_active",
                  f"The BGP FSM moves from a higher numbered state to a lower numbered state. (BgpPeerRemoteAddr={peer_ip}, "
                  f"InstanceId=0, Afi=1, Safi=1, PeerType=1, PeerRemoteAddr={peer_ip}, InterfaceIndex={sw.ifindex.get(port, 0)}, "
                  f"BgpPeerLastError=6, BgpPeerState=1, BgpPeerUnavaiReason={why}, InterfaceName={port})")]
    if v == "junos":
        if up:
            return [I("rpd", "", 4, "BGP_NEIGHBOR_STATE_CHANGED" if flap else "RPD_BGP_NEIGHBOR_STATE_CHANGED",
                      f"BGP peer {peer_ip} (External AS {peer_as}) changed state from OpenConfirm to Established "
                      f"(event RecvKeepAlive) (instance master)")]
        ev = {"link": "Stop", "hold": "HoldTime", "notif": "RecvNotify", "config": "RecvNotify"}[reason]
        return [I("rpd", "", 4, "RPD_BGP_NEIGHBOR_STATE_CHANGED",
                  f"BGP peer {peer_ip} (External AS {peer_as}) changed state from Established to Idle "
                  f"(event {ev}) (instance master)")]
    if v == "sonic":
        if up:
            return [I("bgp#bgpd", "", 5, "", f"%ADJCHANGE: neighbor {peer_ip}({peer_dev}) in vrf default Up")]
        why = {"link": "Interface down", "hold": "BGP Notification send", "notif": "BGP Notification received",
               "config": "Peer closed the session"}[reason]
        out = [I("bgp#bgpd", "", 5, "", f"%ADJCHANGE: neighbor {peer_ip}({peer_dev}) in vrf default Down {why}")]
        if reason == "hold":
            out.insert(0, I("bgp#bgpd", "", 4, "", f"%NOTIFICATION: sent to neighbor {peer_ip} 4/0 (Hold Timer Expired) 0 bytes"))
        return out
    return []


def cat_env(sw, what, n, ok, why="fail"):
    v = sw.vendor
    if what == "fan":
        if v == "nxos":
            return [I("", "PLATFORM", 2, "FANMOD_FAN_OK" if ok else "FANMOD_FAN_FAIL",
                      f"Fan module {n} (Fan{n}(sys_fan{n}) fan) {'ok' if ok else 'failed'}")]
        if v == "eos":
            return [I("Thermostat", "ENVMON", 6 if ok else 4, "FAN_RESTORED" if ok else "FAN_FAILED",
                      f"Fan {n}/1 has {'been restored' if ok else 'failed'}")]
        if v == "huawei":
            return [I("", "DEVM", 1, "hwFanInvalid_clear" if ok else "hwFanInvalid_active",
                      f"{'The fan module recovered from a complete failure.' if ok else 'A fan module experienced a complete failure.'} "
                      f"(EntityPhysicalIndex={16842752 + n}, EntPhysicalIndex={16842752 + n}, EntPhysicalName=FAN{n}, "
                      f"EntityTrapFaultID=137216, Reason=The fan module was in abnormal state.)")]
        if v == "junos":
            return [I("chassisd", "", 4, "CHASSISD_SNMP_TRAP6",
                      f"SNMP trap generated: {'Fan/Blower OK' if ok else 'Fan Failure'} (jnxContentsContainerIndex 4, "
                      f"jnxContentsL1Index {n}, jnxContentsL2Index 1, jnxContentsL3Index 0, jnxContentsDescr Fan Tray {n - 1} Fan 1, "
                      f"jnxOperatingState/Temp {2 if ok else 6})")]
        if v == "sonic":
            return [I("pmon#thermalctld", "", 4, "",
                      f"Fan fault warning cleared: FAN {n} is back to normal" if ok else f"Fan fault warning: FAN {n} is broken")]
    else:
        if v == "nxos":
            return [I("", "PLATFORM", 2, "PS_OK" if ok else "PS_FAIL",
                      f"Power supply {n} {'ok' if ok else 'failed or shut down'} (Serial number {sw.serial})")]
        if v == "eos":
            return [I("PowerManager", "ENVMON", 6 if ok else 3, "POWER_SUPPLY_RESTORED" if ok else "POWER_SUPPLY_FAILED",
                      f"Power supply {n} has {'been restored' if ok else 'failed'}")]
        if v == "huawei":
            return [I("", "DEVM", 1, "hwPowerInvalid_clear" if ok else "hwPowerInvalid_active",
                      f"{'The power module recovered from a complete failure.' if ok else 'A power module experienced a complete failure.'} "
                      f"(EntityPhysicalIndex={16908288 + n}, EntPhysicalIndex={16908288 + n}, EntPhysicalName=PWR{n}, "
                      f"EntityTrapFaultID=136966, Reason={'The power supply is normal.' if ok else 'The power module was not powered on or the input is abnormal.'})")]
        if v == "junos":
            return [I("chassisd", "", 4, "CHASSISD_SNMP_TRAP6",
                      f"SNMP trap generated: {'Power Supply OK' if ok else 'Power Supply failed'} (jnxContentsContainerIndex 2, "
                      f"jnxContentsL1Index {n}, jnxContentsL2Index 0, jnxContentsL3Index 0, jnxContentsDescr PSM {n - 1}, "
                      f"jnxOperatingState/Temp {2 if ok else 6})")]
        if v == "sonic":
            return [I("pmon#psud", "", 4, "",
                      f"Power absence warning cleared: PSU {n} power is back to normal." if ok
                      else f"Power absence warning: PSU {n} is out of power.")]
    return []


def cat_optic(sw, port, kind, level, value=None, thr=None):
    """kind: rx_low | temp_high; level: warning | alarm | cleared."""
    v = sw.vendor
    if v == "nxos":
        what = "Low Rx Power" if kind == "rx_low" else "High Temperature"
        if level == "alarm":
            return [I("", "ETHPORT", 3, "IF_SFP_ALARM", f"Interface {port}, {what} Alarm")]
        if level == "warning":
            return [I("", "ETHPORT", 4, "IF_SFP_WARNING", f"Interface {port}, {what} Warning")]
        return [I("", "ETHPORT", 5, "IF_SFP_WARNING", f"Interface {port}, {what} Warning cleared")]
    if v == "eos":
        if level == "cleared":
            return []
        what = "receive power" if kind == "rx_low" else "temperature"
        rel = "below the low" if kind == "rx_low" else "above the high"
        return [I("Xcvr", "TRANSCEIVER", 3 if level == "alarm" else 4,
                  f"{'RX_POWER_LOW' if kind == 'rx_low' else 'TEMPERATURE_HIGH'}_{level.upper()}",
                  f"Interface {port}: {what} {value:.2f} {'dBm' if kind == 'rx_low' else 'C'} {rel} {level} threshold {thr:.2f}")]
    if v == "huawei":
        if level != "alarm":
            return []
        reason = "The input power is too low." if kind == "rx_low" else "The temperature of the optical module is too high."
        return [I("", "DEVM", 2, "hwOpticalInvalid_active",
                  f"The optical module failed completely. (EntityPhysicalIndex={16850000 + sw.ifindex.get(port, 0)}, "
                  f"EntPhysicalIndex={16850000 + sw.ifindex.get(port, 0)}, EntPhysicalName={port}, "
                  f"EntityTrapFaultID={136203 if kind == 'rx_low' else 136196}, Reason={reason})")]
    return []   # SONiC xcvrd and Junos publish DOM thresholds to their databases / SNMP, not to syslog


def cat_pfcwd(sw, port, prio, detected, count=1):
    v = sw.vendor
    if v == "sonic":
        qoid = 0x15000000000000 + (hash_s(port) & 0xfff) * 8 + prio
        poid = 0x1000000000000 + (hash_s(port) & 0xfff)
        w = "detected" if detected else "restored"
        return [I("swss#orchagent", "", 5 if not detected else 4, "",
                  f":- {'handle_pfc_storm' if detected else 'handle_pfc_restore'}: PFC Watchdog storm {w} on port {port}, "
                  f"queue index {prio}, queue id 0x{qoid:x} and port id 0x{poid:x}.")]
    if v == "eos":
        if detected:
            return [I("Pfc", "PFC", 4, "WATCHDOG_STUCK_QUEUE",
                      f"Priority-flow-control watchdog detected a stuck queue on interface {port} priority {prio}; "
                      f"action errdisable")]
        return [I("Pfc", "PFC", 5, "WATCHDOG_QUEUE_RECOVERED",
                  f"Priority-flow-control watchdog recovered queue on interface {port} priority {prio}")]
    if v == "huawei":
        if detected:
            return [I("", "QOS", 4, "hwXQoSPfcDeadLockAlarm_active",
                      f"PFC deadlock is detected. (interface={port}, priority={prio}, detected number={count}, "
                      f"recovered number={max(0, count - 1)})")]
        return [I("", "QOS", 4, "hwXQoSPfcDeadLockAlarm_clear",
                  f"PFC deadlock is recovered. (interface={port}, priority={prio}, detected number={count}, "
                  f"recovered number={count})")]
    return []


def hash_s(s):
    h = 2166136261
    for ch in s.encode():
        h = ((h ^ ch) * 16777619) & 0xffffffff
    return h


def cat_config(sw, user, ip, cmd):
    v = sw.vendor
    if v == "nxos":
        return [I("", "VSHD", 5, "VSHD_SYSLOG_CONFIG_I", f"Configured from vty by {user} on {ip}@pts/{hash_s(cmd) % 7}")]
    if v == "eos":
        return [I("ConfigAgent", "SYS", 5, "CONFIG_I", f"Configured from console by {user} on vty{hash_s(cmd) % 9} ({ip})")]
    if v == "huawei":
        return [I("", "SHELL", 5, "CMDRECORD",
                  f"Recorded command information. (Task=VT{hash_s(cmd) % 5}, Ip={ip}, VpnName=, User={user}, "
                  f"AuthenticationMethod=\"Local-user\", Command=\"{cmd}\", Result=Success)"),
                I("", "CONFIGURATION", 5, "CFG_CHANGE",
                  f"Configuration is changed. (CurrentCfgChgSeqID={hash_s(cmd) % 900 + 100}, CfgChgSeqIDReveralCount=0, "
                  f"CfgChgTableMaxItem=10000, CfgBaselineTime=2026-11-30 02:00:00)")]
    if v == "junos":
        return [I("mgd", "", 6, "UI_CMDLINE_READ_LINE", f"User '{user}', command 'set {cmd}'"),
                I("mgd", "", 5, "UI_COMMIT", f"User '{user}' requested 'commit' operation (comment: change {hash_s(cmd) % 9000})"),
                I("mgd", "", 6, "UI_COMMIT_COMPLETED", "commit complete")]
    if v == "sonic":
        return [I("sudo", "", 5, "", f"   {user} : TTY=pts/{hash_s(cmd) % 5} ; PWD=/home/{user} ; USER=root ; "
                                    f"COMMAND=/usr/local/bin/config {cmd}")]
    return []


def cat_crash(sw, mode):
    v = sw.vendor
    if mode == "power":
        return []
    if v == "nxos":
        if mode == "reload":
            return [I("", "VSHD", 5, "VSHD_SYSLOG_CONFIG_I", "Configured from vty by admin on 10.250.0.9@pts/1"),
                    I("", "PLATFORM", 2, "PFM_SYSTEM_RESET", "Manual system restart from Command Line Interface")]
        return [I("", "SYSMGR", 2, "SERVICE_CRASHED", 'Service "ipfib" (PID 6120) hasn\'t caught signal 11 (core will be saved).'),
                I("", "SYSMGR", 2, "HAP_FAILURE_SUP_RESET", 'Service "ipfib" in vdc 1 has had a hap failure')]
    if v == "eos":
        if mode == "reload":
            return [I("Cli", "SYS", 5, "RELOAD_REQUESTED", "Reload requested by admin on vty4 (10.250.0.9)")]
        return [I("ProcMgr-worker", "PROCMGR", 3, "PROCESS_TERMINATED",
                  "'Sand' (PID=2711) has terminated with signal 11 (SIGSEGV); restarting is disabled, reloading")]
    if v == "huawei":
        return [I("", "SYSTEM", 4, "SYS_RELOAD_ACTION",
                  f"The device will be reloaded. (Reason={'Reboot by user command' if mode == 'reload' else 'Software exception'}, Slot=1)")]
    if v == "junos":
        if mode == "reload":
            return [I("mgd", "", 5, "UI_REBOOT_EVENT", "System rebooted by 'netops' [mgd] (user-requested)")]
        return [I("chassisd", "", 2, "CHASSISD_FPC_OFFLINE_NOTICE", "Taking FPC 0 offline: Error")]
    if v == "sonic":
        if mode == "reload":
            return [I("sudo", "", 5, "", "   admin : TTY=pts/0 ; PWD=/home/admin ; USER=root ; COMMAND=/usr/local/bin/reboot")]
        return [I("kernel", "", 0, "", "Kernel panic - not syncing: Fatal exception in interrupt")]
    return []


def cat_boot(sw):
    v = sw.vendor
    if v == "nxos":
        return [I("", "VDC_MGR", 2, "VDC_ONLINE", "vdc 1 has come online"),
                I("", "PLATFORM", 5, "MOD_STATUS", "Module 1 current-status is MOD_STATUS_ONLINE/OK")]
    if v == "eos":
        return [I("Launcher", "SYS", 5, "SYSTEM_RESTARTED", "System restarted")]
    if v == "huawei":
        return [I("", "DEVM", 4, "hwBoardInvalid_clear", "The board resumed from total failure. (EntPhysicalIndex=16842753, "
                                                          "EntPhysicalName=SLOT1, EntityType=1, EntityTrapFaultID=132137, Reason=The board was powered on.)")]
    if v == "junos":
        return [I("chassisd", "", 5, "CHASSISD_FRU_ONLINE", "FPC 0 is online")]
    if v == "sonic":
        return [I("kernel", "", 5, "", "Linux version 5.10.0-23-2-amd64 (debian-kernel@lists.debian.org)"),
                I("swss#orchagent", "", 5, "", ":- main: Created underlay router interface ID 6000000000626")]
    return []


def cat_chatter(sw, kind, rng, port=None, peer=None):
    v = sw.vendor
    user = rng.choice(["netops", "admin", "automation", "jlee", "svc-ansible"])
    ip = f"10.250.{rng.randint(0, 3)}.{rng.randint(2, 250)}"
    if kind == "login":
        if v == "nxos":
            return [I("", "AUTHPRIV", 6, "SYSTEM_MSG", f"pam_unix(sshd:session): session opened for user {user} by (uid=0) - sshd[{rng.randint(2000, 30000)}]")]
        if v == "huawei":
            return [I("", "SSH", 5, "SSH_USER_LOGIN", f"The SSH user succeeded in logging in. (UserName={user}, IPAddress={ip}, VpnInstanceName=_public_)")]
        if v == "junos":
            return [I("mgd", "", 5, "UI_LOGIN_EVENT", f"User '{user}' login, class 'j-super-user' [{rng.randint(20000, 60000)}], ssh-connection '{ip} {rng.randint(40000, 60000)} 10.250.9.1 22', client-mode 'cli'")]
        return [I("sshd", "AUTHPRIV", 6, "", f"Accepted publickey for {user} from {ip} port {rng.randint(40000, 65000)} ssh2: ED25519 SHA256:{''.join(rng.choice('abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789') for _ in range(12))}")]
    if kind == "ntp":
        if v == "nxos":
            return [I("", "NTP", 5, "NTP_SYSLOG_LOGGING", f"NTP server 10.250.9.{rng.randint(1, 9)} selected as reference clock")]
        if v == "huawei":
            return [I("", "NTP", 4, "STRATUM_CHANGE", f"System stratum changes from {rng.randint(3, 4)} to {rng.randint(2, 3)} after clock update.")]
        if v == "junos":
            return [I("xntpd", "", 5, "NTP_SERVER_REACHABLE", f"NTP Server 10.250.9.{rng.randint(1, 9)} is Reachable")]
        return [I("ntpd", "", 6, "", f"synchronized to 10.250.9.{rng.randint(1, 9)}, stratum 2")]
    if kind == "lldp" and port:
        pdev = peer.split("/")[0] if peer else "unknown"
        pport = peer.split("/", 1)[1] if peer else "eth0"
        if v == "nxos":
            return [I("", "LLDP", 5, "SERVER_ADDED", f"Server with Chassis ID {rng.randint(0, 0xffff):04x}.{rng.randint(0, 0xffff):04x}.{rng.randint(0, 0xffff):04x} Port ID {pport} Management Address NIL discovered on local port {port} in vlan 0 with enabled capability Station")]
        if v == "eos":
            return [I("Lldp", "LLDP", 5, "NEIGHBOR_NEW", f"LLDP neighbor with chassisId {rng.randint(0, 0xffff):04x}.{rng.randint(0, 0xffff):04x}.{rng.randint(0, 0xffff):04x} and portId \"{pport}\" added on interface {port}")]
        if v == "huawei":
            return [I("", "LLDP", 4, "NBRCHGTRAP", f"Neighbor information is changed. (LldpStatsRemTablesInserts=1, LldpStatsRemTablesDeletes=0, LldpStatsRemTablesDrops=0, LldpStatsRemTablesAgeouts=0)")]
        if v == "junos":
            return [I("lldpd", "", 6, "LLDP_NEIGHBOR_UP", f"A neighbor has come up for interface {port}. Local Port ID: {sw.ifindex.get(port, 0)}, Remote Chassis ID: {pdev}, Remote Port ID: {pport}")]
        return [I("lldp#lldpmgrd", "", 6, "", f"Port name {port} neighbor {pdev} port {pport} updated")]
    if kind == "desc" and port:
        txt = f"interface {port} description to-{(peer or 'x').replace('/', ':')}"
        if v == "sonic":
            return cat_config(sw, user, ip, f"interface description {port} \"to {(peer or 'x')}\"")
        return cat_config(sw, user, ip, txt)
    if kind == "save":
        if v == "nxos":
            return [I("", "VSHD", 5, "VSHD_SYSLOG_CONFIG_I", f"Configured from vty by {user} on {ip}@pts/0")]
        if v == "eos":
            return [I("ConfigAgent", "SYS", 5, "CONFIG_STARTUP", f"Startup config saved from system:/running-config by {user} on vty3 ({ip}).")]
        if v == "huawei":
            return [I("", "CFM", 4, "SAVE", "The user chose Y when deciding whether to save the configuration to the device.")]
        if v == "junos":
            return [I("mgd", "", 6, "UI_COMMIT_COMPLETED", "commit complete")]
        return [I("sudo", "", 5, "", f"   {user} : TTY=pts/1 ; PWD=/home/{user} ; USER=root ; COMMAND=/usr/local/bin/config save -y")]
    if kind == "stp" and port:
        if v == "eos":
            return [I("Stp", "SPANTREE", 6, "INTERFACE_STATE", f"Interface {port} instance MST0 moving from learning to forwarding")]
        if v == "nxos":
            return [I("", "STP", 6, "PORT_STATE", f"Interface {port}, vlan 1 moving to forwarding state")]
        return []
    if kind == "clear":
        if v == "sonic":
            return [I("sudo", "", 5, "", f"   {user} : TTY=pts/2 ; PWD=/home/{user} ; USER=root ; COMMAND=/usr/local/bin/sonic-clear counters")]
        if v == "eos":
            return [I("Cli", "SYS", 6, "CLEAR_COUNTERS", f"Counters cleared by {user} on vty2 ({ip})")]
        if v == "junos":
            return [I("mgd", "", 6, "UI_CMDLINE_READ_LINE", f"User '{user}', command 'clear interfaces statistics all '")]
        if v == "huawei":
            return [I("", "SHELL", 5, "CMDRECORD", f"Recorded command information. (Task=VT1, Ip={ip}, VpnName=, User={user}, AuthenticationMethod=\"Local-user\", Command=\"reset counters interface\", Result=Success)")]
        return [I("", "VSHD", 5, "VSHD_SYSLOG_CONFIG_I", f"Configured from vty by {user} on {ip}@pts/2")]
    return []


def cat_host(h, kind, rail=0, **kw):
    nd = h.npus[rail][1] if h.npus else "eth0"
    pci = h.pci.get(rail, "0000:0c:00.0")
    if kind == "link_down":
        return [I("kernel", "", 6, "", f"mlx5_core {pci} {nd}: Link down")]
    if kind == "link_up":
        return [I("kernel", "", 6, "", f"mlx5_core {pci} {nd}: Link up")]
    if kind == "nic_fail":
        return [I("kernel", "", 4, "", f"NETDEV WATCHDOG: {nd} (mlx5_core): transmit queue {kw.get('q', 3)} timed out"),
                I("kernel", "", 3, "", f"mlx5_core {pci}: poll_health:801:(pid 0): device's health compromised - reached miss count"),
                I("kernel", "", 3, "", f"mlx5_core {pci}: mlx5_health_try_recover:319:(pid {kw.get('pid', 1423)}): health recovery flow aborted, PCI reads still not working"),
                I("kernel", "", 6, "", f"mlx5_core {pci} {nd}: Link down")]
    if kind == "admin_down":
        return [I("sudo", "", 5, "", f"    root : TTY=pts/0 ; PWD=/root ; USER=root ; COMMAND=/usr/sbin/ip link set dev {nd} down")]
    if kind == "mtu":
        return [I("sudo", "", 5, "", f"    root : TTY=pts/1 ; PWD=/root ; USER=root ; COMMAND=/usr/sbin/ip link set dev {nd} mtu {kw['mtu']}")]
    if kind == "chatter":
        return [kw["rng"].choice([
            I("systemd", "", 6, "", f"Started Session {kw['rng'].randint(100, 9000)} of User root."),
            I("CRON", "", 6, "", "(root) CMD (/usr/local/bin/collect-gpu-metrics >/dev/null 2>&1)"),
            I("sshd", "", 6, "", f"Accepted publickey for slurm from 10.250.1.{kw['rng'].randint(2, 99)} port {kw['rng'].randint(40000, 65000)} ssh2"),
            I("kernel", "", 6, "", f"mlx5_core {pci}: mlx5_fw_tracer_handle_traces:764:(pid 0): FW tracer event"),
            I("chronyd", "", 6, "", "Selected source 10.250.9.2 (ntp2)"),
        ])]
    return []


CUR_FABRIC = None


# ----------------------------------------------------------------------------------------------------
# Scenario engine: series (polled as devices count), syslog, jobs, expectations
# ----------------------------------------------------------------------------------------------------

class Series:
    def __init__(self, ent, metric, kind, fn, seed, init=0, every=0, nd=2, prio=False):
        self.ent, self.metric, self.kind, self.fn = ent, metric, kind, fn
        self.rng = random.Random(hash_s(f"{ent}|{metric}") ^ seed)
        self.init, self.every, self.nd, self.prio = init, every, nd, prio
        self.steps, self.resets = [], []
        self.start, self.end = 0.0, None


def over(series, t0, t1, g):
    """Overlay g(t, r, old_value) on [t0, t1)."""
    old = series.fn
    hi = INF if t1 is None else t1

    def fn(t, r, old=old, g=g, t0=t0, hi=hi):
        v = old(t, r)
        return g(t, r, v) if t0 <= t < hi else v
    series.fn = fn


class Scn:
    def __init__(self, name, cls, seed, fab, rng):
        global CUR_FABRIC
        CUR_FABRIC = fab
        self.name, self.cls, self.seed, self.fab, self.rng = name, cls, seed, fab, rng
        self.series = {}
        self.logs = []          # (at_ms, line, source)
        self.extra = []         # raw kpi dicts (heartbeat)
        self.jobs = []          # {name, hosts, L, start, end, body}
        self.jobs_stream = False
        self.incidents, self.clean_cand, self.notes = [], [], []
        self.silent, self.boots = {}, {}
        self.touched = set()
        self.end = 600.0
        self.kinds = []
        self.optic = {}
        self.desc = ""
        self.hb_ent = None

    # -- schedules ---------------------------------------------------------------------------------
    def sched(self, dev):
        d = self.fab.dev(dev)
        return d.poll, d.phase

    def silent_at(self, dev, t):
        return any(a <= t < b for a, b in self.silent.get(dev, []))

    def is_host(self, dev):
        return dev in self.fab.hosts

    # -- series ------------------------------------------------------------------------------------
    def add(self, ent, metric, kind, fn, init=0, every=0, nd=2, prio=False):
        key = (ent, metric)
        if key in self.series:
            if prio:
                self.series[key].prio = True
            return self.series[key]
        s = Series(ent, metric, kind, fn, self.seed, init, every, nd, prio)
        self.series[key] = s
        return s

    def ser(self, ent, metric):
        return self.series[(ent, metric)]

    def watch(self, ent, groups=("base",), prio=False):
        r = random.Random(hash_s(ent) ^ self.seed)
        dev = ent.split("/")[0]
        host = self.is_host(dev)
        bps = self.fab.speed * 1e9 / 8
        if "status" in groups or "base" in groups:
            self.add(ent, "if_oper_status", "g", lambda t, r: 1, nd=0, prio=prio)
        if "base" in groups:
            for m in ("if_in_octets", "if_out_octets"):
                u, ph, per = r.uniform(0.08, 0.5), r.uniform(0, 6.28), r.uniform(180, 1200)
                self.add(ent, m, "c", lambda t, rr, u=u, ph=ph, per=per: bps * u * (1 + 0.35 * math.sin(ph + t / per)),
                         init=r.randint(10 ** 12, 9 * 10 ** 14), prio=prio)
            self.add(ent, "if_in_errors", "c", lambda t, r: 0.0004, init=r.choice([0, 0, 3, 17, 212]), prio=prio)
            self.add(ent, "dot3_stats_fcs_errors", "c", lambda t, r: 0.0002, init=r.choice([0, 0, 1, 9, 140]), prio=prio)
        if "fec" in groups:
            c = r.choice([40.0, 300.0, 2500.0, 18000.0])
            self.add(ent, "fec_corrected_codewords", "c", lambda t, rr, c=c: c * (1 + 0.2 * math.sin(t / 97.0)),
                     init=r.randint(10 ** 6, 10 ** 10), prio=prio)
            self.add(ent, "fec_uncorrectable_codewords", "c", lambda t, r: 0.00005, init=r.choice([0, 0, 2, 31]), prio=prio)
        if "disc" in groups:
            self.add(ent, "if_in_discards", "c", lambda t, r: 0.001, init=r.choice([0, 5, 1022]), prio=prio)
            self.add(ent, "if_out_discards", "c", lambda t, r: 0.002, init=r.choice([0, 12, 4410]), prio=prio)
        if "pfc" in groups:
            base_rx = r.choice([0.0, 0.0, 0.5, 3.0, 25.0])
            base_tx = r.choice([0.0, 0.0, 0.5, 3.0, 25.0])
            p = 3 if self.fab.pfc_mask & 8 else 4
            self.add(ent, f"pfc_prio{p}_rx_pause_frames", "c",
                     lambda t, rr, b=base_rx: b * max(0.0, math.sin(t / 41.0)) ** 4 * 3, init=r.randint(0, 10 ** 6), prio=prio)
            self.add(ent, f"pfc_prio{p}_tx_pause_frames", "c",
                     lambda t, rr, b=base_tx: b * max(0.0, math.sin(t / 53.0 + 1)) ** 4 * 3, init=r.randint(0, 10 ** 6), prio=prio)
            self.add(ent, "ecn_marked_packets", "c", lambda t, rr, b=r.choice([0.0, 2.0, 40.0, 300.0]): b * (1 + 0.5 * math.sin(t / 71.0)),
                     init=r.randint(0, 10 ** 8), prio=prio)
            if not host:
                self.add(ent, "pfc_wd_storm_detected", "c", lambda t, r: 0.0, init=r.choice([0, 0, 0, 1, 2]), prio=prio)
        if "qos" in groups:
            self.add(ent, "pfc_enabled_mask", "g", lambda t, r: self.fab.pfc_mask, nd=0, every=60, prio=prio)
            self.add(ent, "ecn_enabled", "g", lambda t, r: 1, nd=0, every=60, prio=prio)
        if "mtu" in groups:
            m = self.fab.mtu_host if host else self.fab.mtu_sw
            self.add(ent, "if_mtu", "g", lambda t, r, m=m: m, nd=0, every=60, prio=prio)
        if "admin" in groups:
            self.add(ent, "if_admin_status", "g", lambda t, r: 1, nd=0, prio=prio)
        if "optics" in groups:
            prof = r.choice(OPTIC_PROFILES)
            lo, hi = prof[5]
            rx = round(r.uniform(max(lo, prof[1] + 2.5), hi), 2)
            tx = round(r.uniform(-1.0, 2.5), 2)
            temp = round(r.uniform(33.0, 52.0), 1)
            bias = round(r.choice([r.uniform(6.0, 8.5), r.uniform(38.0, 72.0)]), 2)
            self.optic[ent] = {"prof": prof, "rx": rx, "tx": tx, "temp": temp, "bias": bias}
            self.add(ent, "rx_power_dbm", "g", lambda t, rr, b=rx: b + rr.gauss(0, 0.04), prio=prio)
            self.add(ent, "tx_power_dbm", "g", lambda t, rr, b=tx: b + rr.gauss(0, 0.03), prio=prio)
            self.add(ent, "temperature_celsius", "g",
                     lambda t, rr, b=temp, ph=r.uniform(0, 6): b + 1.2 * math.sin(ph + t / 900.0) + rr.gauss(0, 0.15), nd=1, prio=prio)
            self.add(ent, "bias_ma", "g", lambda t, rr, b=bias: b + rr.gauss(0, 0.05), prio=prio)
            self.add(ent, "voltage_volts", "g", lambda t, rr, b=r.uniform(3.24, 3.34): b + rr.gauss(0, 0.002), nd=3,
                     every=60, prio=prio)
            for m, v in (("rx_power_low_alarm_dbm", prof[0]), ("rx_power_low_warning_dbm", prof[1]),
                         ("tx_power_low_alarm_dbm", prof[2]), ("temperature_high_alarm_celsius", prof[3]),
                         ("temperature_high_warning_celsius", prof[4])):
                self.add(ent, m, "g", lambda t, rr, v=v: v, every=300, prio=prio)
            self.add(ent, "rx_los", "g", lambda t, r: 0, nd=0, every=30, prio=prio)
            self.add(ent, "tx_fault", "g", lambda t, r: 0, nd=0, every=60, prio=prio)
        if "rdma" in groups and host:
            cnp = r.choice([0.0, 1.0, 8.0, 60.0])
            self.add(ent, "np_cnp_sent", "c", lambda t, rr, c=cnp: c * (1 + 0.4 * math.sin(t / 60.0)), init=r.randint(0, 10 ** 7), prio=prio)
            self.add(ent, "rp_cnp_handled", "c", lambda t, rr, c=cnp: c * (1 + 0.4 * math.cos(t / 50.0)), init=r.randint(0, 10 ** 7), prio=prio)
            self.add(ent, "np_ecn_marked_roce_packets", "c", lambda t, rr, c=cnp: c * 1.3, init=r.randint(0, 10 ** 7), prio=prio)
            self.add(ent, "out_of_sequence", "c", lambda t, r: 0.001, init=r.randint(0, 400), prio=prio)
            self.add(ent, "local_ack_timeout_err", "c", lambda t, r: 0.0, init=r.choice([0, 0, 2, 7]), prio=prio)
            self.add(ent, "symbol_error", "c", lambda t, r: 0.0001, init=r.choice([0, 0, 1, 4]), prio=prio)
            self.add(ent, "port_rcv_errors", "c", lambda t, r: 0.0001, init=r.choice([0, 0, 1, 4]), prio=prio)
            self.add(ent, "link_downed", "c", lambda t, r: 0.0, init=r.choice([0, 1, 1, 2, 5]), prio=prio)

    def watch_env(self, sw, prio=False):
        s = self.fab.switches[sw]
        r = random.Random(hash_s(sw) ^ self.seed)
        up0 = s.uptime0
        self.add(sw, "sys_uptime_seconds", "g", lambda t, rr, u=up0: int(u + t), nd=0, every=30, prio=prio)
        for n in range(1, s.fans + 1):
            self.add(f"{sw}/fan{n}", "fan_status", "g", lambda t, r: 1, nd=0, every=30, prio=prio)
        for n in range(1, s.psus + 1):
            self.add(f"{sw}/psu{n}", "psu_status", "g", lambda t, r: 1, nd=0, every=30, prio=prio)
        self.add(f"{sw}/asic", "sensor_temperature_celsius", "g",
                 lambda t, rr, b=r.uniform(48, 66): b + 1.5 * math.sin(t / 700.0) + rr.gauss(0, 0.3), nd=1, every=30, prio=prio)

    def setv(self, ent, metric, t0, t1, g):
        over(self.ser(ent, metric), t0, t1, g)

    def const(self, ent, metric, t0, t1, v):
        over(self.ser(ent, metric), t0, t1, lambda t, r, old, v=v: v)

    def rate(self, ent, metric, t0, t1, fn, add=True):
        if add:
            over(self.ser(ent, metric), t0, t1, lambda t, r, old, fn=fn: old + fn(t))
        else:
            over(self.ser(ent, metric), t0, t1, lambda t, r, old, fn=fn: fn(t))

    def step(self, ent, metric, t, n=1):
        key = (ent, metric)
        if key in self.series:
            self.series[key].steps.append((t, n))

    def clear_counters(self, dev, t, ports=None):
        for (ent, m), s in self.series.items():
            d, _, p = ent.partition("/")
            if d == dev and s.kind == "c" and (ports is None or p in ports):
                s.resets.append(t)

    # -- syslog ------------------------------------------------------------------------------------
    def log(self, devname, t, items):
        d = self.fab.dev(devname)
        if d is None or self.silent_at(devname, t) or t < 0 or t > self.end:
            return
        ms = int(t * 1000)
        for it in items:
            self.logs.append(render_line(d, ms, it, devname in self.fab.hosts) + (devname,))
            ms += 1 + hash_s(it[4]) % 30

    # -- jobs --------------------------------------------------------------------------------------
    def add_job(self, name, hosts, L, start=None, end=None):
        hosts = list(dict.fromkeys(hosts))  # a host drawn twice is one host (the schedule API refuses repeats)
        r = self.rng
        tp = max(x for x in (1, 2, 4, 8) if L % x == 0)
        dp = len(hosts) * L // tp
        mb = r.choice([1, 1, 2])
        body = {"job_name": name, "hosts": list(hosts), "npus_per_host": L,
                "parallel": {"dp": dp, "tp": tp, "pp": 1},
                "model": {"parameters": r.choice([7, 13, 34, 70]) * 10 ** 9, "layers": r.choice([32, 40, 48, 80]),
                          "hidden": r.choice([4096, 5120, 8192]), "heads": 32, "seq_len": r.choice([2048, 4096, 8192]),
                          "global_batch": dp * mb * r.choice([4, 8, 16]), "micro_batch": mb},
                "framework": "megatron", "algorithm": "ring", "allow_unreachable": True, "ecmp_seeds": 1}
        self.jobs.append({"name": name, "hosts": list(hosts), "L": L, "start": start, "end": end, "body": body})

    def job_uses(self, job, elem):
        f = self.fab
        sus = sorted({f.hosts[h].su for h in job["hosts"]})
        kind = elem[0]
        if kind == "none":
            return False
        if kind == "hostlink":
            return elem[1] in job["hosts"] and elem[2] < job["L"]
        if kind == "leaf":
            su, rail = f.leaf_pos[elem[1]]
            return su in sus and rail < job["L"]
        if kind == "uplink":
            su, rail = f.leaf_pos[elem[1]]
            return len(sus) > 1 and su in sus and rail < job["L"]
        if kind == "spine":
            return len(sus) > 1
        raise ValueError(elem)

    def affected(self, elem, t0, t1):
        t1 = self.end if t1 is None else t1
        out = []
        for j in self.jobs:
            js = -1e9 if j["start"] is None else j["start"]
            je = 1e18 if j["end"] is None else j["end"]
            if js < t1 and je > t0 and self.job_uses(j, elem):
                out.append(j["name"])
        return sorted(out)

    # -- expectations ------------------------------------------------------------------------------
    def expect(self, root, types, elem, t0, t1, state=None, kind=None):
        inc = {"root": root, "types": types, "elem": elem, "t0": t0, "t1": t1, "state": state}
        self.incidents.append(inc)
        self.kinds.append(kind or types[0])
        return inc


def render_line(d, ms, it, is_host):
    proc, fac, sev, tag, text, sd = it
    lat = 20 + hash_s(d.name + str(ms // 500)) % 280
    v = d.vendor
    pri_dev = 184 + min(7, sev)
    src = None if is_host else d.mgmt
    if is_host:
        fac_n = {"kernel": 0, "sshd": 80, "sudo": 80, "CRON": 72, "systemd": 24, "chronyd": 24}.get(proc, 8)
        body = f"[{d.uptime + ms / 1000.0:.6f}] {text}" if proc == "kernel" else text
        pid = "" if proc == "kernel" else f"[{1000 + hash_s(text) % 60000}]"
        if d.variant == "5424":
            return (ms, f"<{fac_n + sev}>1 {{ts}} {d.name} {proc} {pid.strip('[]') or '-'} - - {body}", None)
        return (ms + lat, f"<{fac_n + sev}>{d3164(ms + d.skew)} {d.name} {proc}{pid}: {body}", None)
    if v == "nxos":
        t = wall(ms + d.skew)
        ts = f"{t.year} {MONTHS[t.month - 1]} {t.day:2d} {t:%H:%M:%S}"
        if d.variant == "ms":
            ts += f".{t.microsecond // 1000:03d}"
        return (ms + lat, f"<{pri_dev}>: {ts} UTC: %{fac}-{sev}-{tag}: {text}", src)
    if v == "eos":
        msg = f"%{fac}-{sev}-{tag}: {text}"
        if d.variant == "5424":
            return (ms, f"<{pri_dev}>1 {{ts}} {d.name} {proc} - - - {msg}", src)
        return (ms + lat, f"<{pri_dev}>{d3164(ms + d.skew)} {d.name} {proc}: {msg}", src)
    if v == "huawei":
        t = wall(ms + d.skew) + datetime.timedelta(minutes=d.tz)
        ts = f"{MONTHS[t.month - 1]} {t.day:2d} {t.year} {t:%H:%M:%S}"
        if d.variant == "ms":
            ts += f".{t.microsecond // 1000:03d}"
        sign = "+" if d.tz >= 0 else "-"
        ts += f"{sign}{abs(d.tz) // 60:02d}:{abs(d.tz) % 60:02d}"
        pri = 187 if sev <= 4 else (189 if sev == 5 else 190)
        return (ms + lat, f"<{pri}>{ts} {d.name} %%01{fac}/{sev}/{tag}(l)[@SEQ@]:{text}", src)
    if v == "junos":
        pid = d.pid.get(proc, 1000 + hash_s(proc) % 9000)
        pri = 24 + min(7, sev)
        if d.variant == "5424sd":
            if sd:
                sdt = " ".join(f'{k}="{v_}"' for k, v_ in sd.items())
                sdp = f"[junos@2636.1.1.1.2.{d.model} {sdt}]"
            else:
                sdp = "-"
            return (ms, f"<{pri}>1 {{ts}} {d.name} {proc} {pid} {tag or '-'} {sdp} {text}", src)
        return (ms + lat, f"<{pri}>{d3164(ms + d.skew)} {d.name} {proc}[{pid}]: {tag + ': ' if tag else ''}{text}", src)
    if v == "sonic":
        pri = (184 if proc != "sudo" else 80) + min(7, sev)
        if proc == "kernel":
            pri = min(7, sev)
        base = proc.split("#")[-1]
        pid = d.pid.get(base)
        tagp = f"{proc}[{pid}]" if pid and proc not in ("swss#orchagent", "kernel") else proc
        body = f"[{(d.uptime0 % 100000) + ms / 1000.0:.6f}] {text}" if proc == "kernel" else text
        if d.variant == "5424":
            return (ms, f"<{pri}>1 {{ts}} {d.name} {proc} {pid or '-'} - - {body}", src)
        return (ms + lat, f"<{pri}>{d3164(ms + d.skew, 6)} {d.name} {SONIC_SEV[min(7, sev)]} {tagp}: {body}", src)
    raise ValueError(v)


def render_kpis(sc):
    out = []
    end = sc.end
    for key in sorted(sc.series):
        s = sc.series[key]
        dev = key[0].split("/")[0]
        P, ph = sc.sched(dev)
        r = s.rng
        last_emit = -INF
        val = s.init
        tprev = None
        boots = sc.boots.get(dev, [])
        resets = sorted(s.resets + (boots if s.kind == "c" else []))
        steps = sorted(s.steps)
        k = 0
        while True:
            t = ph + k * P + r.uniform(-0.15, 0.15)
            k += 1
            if t > end:
                break
            if t < s.start or (s.end is not None and t > s.end):
                continue
            silent = sc.silent_at(dev, t)
            if s.kind == "c":
                a = 0.0 if tprev is None else tprev
                if tprev is None:
                    tprev = t
                    a = t
                rs = [x for x in resets if a < x <= t]
                if rs:
                    val = 0
                    a = rs[-1]
                # integrate the rate on [a, t] in sub-steps
                x = a
                while x < t - 1e-9:
                    y = min(t, x + 5.0)
                    rate = s.fn((x + y) / 2, r)
                    val += poisson(r, max(0.0, rate) * (y - x))
                    x = y
                for (ts_, n) in steps:
                    if tprev < ts_ <= t and not (rs and ts_ < rs[-1]):
                        val += n
                tprev = t
                value = int(val)
            else:
                if silent:
                    continue
                v = s.fn(t, r)
                if v is None:
                    continue
                value = int(round(v)) if s.nd == 0 else round(v, s.nd)
            if silent:
                continue
            if s.every and t - last_emit < s.every - 0.5:
                continue
            last_emit = t
            at = int(t * 1000)
            rec = {"at_ms": at, "entity": s.ent, "metric": s.metric, "value": value}
            u = r.random()
            p_dup, p_late = (0.004, 0.002) if s.prio else (0.012, 0.007)
            if u < p_late and at + 95000 < end * 1000:
                rec = {"at_ms": at + r.randint(12000, 90000), "ts_ms": at, "entity": s.ent, "metric": s.metric,
                       "value": value}
                out.append(rec)
            else:
                out.append(rec)
                if u < p_late + p_dup and at + 30000 < end * 1000:
                    out.append({"at_ms": at + r.randint(500, 25000), "ts_ms": at, "entity": s.ent, "metric": s.metric,
                                "value": value})
    out.extend(sc.extra)
    out.sort(key=lambda x: x["at_ms"])
    return out


def yq(x):
    return json.dumps(x)


def write_scenario(sc, outdir, mgmt_required):
    d = os.path.join(outdir, sc.name)
    os.makedirs(d, exist_ok=True)
    f = sc.fab
    # heartbeat: a healthy rx power series on a spine port nothing else names, every 10 s to end + 60 s
    kpis = render_kpis(sc)
    logs = sorted(sc.logs, key=lambda x: x[0])
    # Huawei info-center sequence numbers count up per device in time order
    seqs = {}
    for i, (at, line, src, dev) in enumerate(logs):
        if "(l)[@SEQ@]" in line:
            seqs[dev] = seqs.get(dev, f.switches[dev].seq) + 1
            logs[i] = (at, line.replace("[@SEQ@]", f"[{seqs[dev]}]"), src, dev)
    last = max([k["at_ms"] for k in kpis] + [l[0] for l in logs] + [int(sc.end * 1000)])
    hb = sc.hb_ent
    hr = random.Random(sc.seed ^ 77)
    hb_base = round(hr.uniform(-3.5, -1.2), 2)
    hbk = [{"at_ms": t, "entity": hb, "metric": "rx_power_dbm", "value": round(hb_base + hr.gauss(0, 0.03), 2)}
           for t in range(0, last + 60001, 10000)]
    kpis = sorted(kpis + hbk, key=lambda x: x["at_ms"])
    if f.generated:
        with open(os.path.join(d, "generate.json"), "w") as fh:
            json.dump(f.generated, fh, indent=1)
    else:
        with open(os.path.join(d, "topology.json"), "w") as fh:
            json.dump(f.topology_doc(sc.name), fh, separators=(",", ":"))
    with open(os.path.join(d, "kpis.jsonl"), "w") as fh:
        fh.write(f"# {sc.name}: raw device counters and gauges as polled; base {BASE_TEXT}\n")
        for k in kpis:
            fh.write(json.dumps(k, separators=(",", ":")) + "\n")
    if logs:
        with open(os.path.join(d, "syslog.jsonl"), "w") as fh:
            for at, line, src, _dev in logs:
                o = {"at_ms": at, "line": line}
                if src:
                    o["source"] = src
                fh.write(json.dumps(o, separators=(",", ":")) + "\n")
    pre = [j for j in sc.jobs if j["start"] is None]
    timed = [j for j in sc.jobs if j["start"] is not None or j["end"] is not None]
    if pre and not sc.jobs_stream:
        with open(os.path.join(d, "jobs.json"), "w") as fh:
            json.dump([j["body"] for j in pre], fh, indent=1)
    if sc.jobs_stream:
        ev = []
        for j in sc.jobs:
            if j["start"] is None:
                continue
            ev.append((int(j["start"] * 1000), 0, {"at_ms": int(j["start"] * 1000), "schedule": j["body"]}))
        for j in sc.jobs:
            if j["end"] is not None:
                ev.append((int(j["end"] * 1000), 1, {"at_ms": int(j["end"] * 1000), "release": j["name"]}))
        ev.sort(key=lambda x: (x[0], x[1]))
        if pre:
            with open(os.path.join(d, "jobs.json"), "w") as fh:
                json.dump([j["body"] for j in pre], fh, indent=1)
        with open(os.path.join(d, "jobs.jsonl"), "w") as fh:
            for _, _, o in ev:
                fh.write(json.dumps(o, separators=(",", ":")) + "\n")
    # expectations
    lines = [f"# outside scenario {sc.name} (seed {sc.seed}); replay with --base {BASE_TEXT} --speed 0"]
    for n in sc.notes:
        lines.append(f"# {n}")
    vend = {}
    for s in f.switches.values():
        vend.setdefault(s.vendor, []).append(s.name)
    lines.append("# vendors: " + "; ".join(f"{k}: {len(v)}" for k, v in sorted(vend.items())))
    lines.append(f"class: {sc.cls}")
    lines.append(f"description: {yq(sc.desc)}")
    if not sc.incidents:
        lines.append("incidents: []")
    else:
        lines.append("incidents:")
        for inc in sc.incidents:
            jobs = sc.affected(inc["elem"], inc["t0"], inc["t1"]) if sc.jobs else []
            inc["jobs"] = jobs
            lines.append(f"  - root_cause: {yq(inc['root'])}")
            lines.append(f"    fault_type: {yq(inc['types'])}")
            lines.append(f"    affected_jobs: {yq(jobs)}")
            if inc.get("state"):
                lines.append(f"    state: {inc['state']}")
    clean = []
    for c in sc.clean_cand:
        if c in clean or not f.entity_ok(c):
            continue
        if any(blames(c, r) for inc in sc.incidents for r in inc["root"]):
            continue
        clean.append(c)
    sc.clean = clean
    lines.append(f"clean: {yq(clean)}")
    with open(os.path.join(d, "expect.yaml"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    self_check(sc, d, mgmt_required)
    return d


def blames(clean, root):
    if root == clean or root.startswith(clean + "/"):
        return True
    if root.startswith("link:"):
        for end in root[5:].split("|"):
            if end == clean or end.startswith(clean + "/"):
                return True
    return False


def self_check(sc, d, mgmt_required):
    f = sc.fab
    errs = []
    total = 0
    allowed = {"kpis.jsonl": {"at_ms", "ts_ms", "entity", "metric", "value"},
               "syslog.jsonl": {"at_ms", "line", "source"},
               "jobs.jsonl": {"at_ms", "schedule", "release"}}
    mgmts = {s.mgmt for s in f.switches.values() if s.mgmt}
    ent_ok_cache = {}
    for fn, keys in allowed.items():
        p = os.path.join(d, fn)
        if not os.path.exists(p):
            continue
        prev = -1
        with open(p) as fh:
            for no, line in enumerate(fh, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                total += 1
                o = json.loads(line)
                if set(o) - keys:
                    errs.append(f"{fn}:{no}: unknown keys {set(o) - keys}")
                if not isinstance(o.get("at_ms"), int) or o["at_ms"] < 0 or o["at_ms"] < prev:
                    errs.append(f"{fn}:{no}: at_ms not ascending")
                prev = o["at_ms"]
                if fn == "kpis.jsonl":
                    e = o["entity"]
                    if e not in ent_ok_cache:
                        ent_ok_cache[e] = f.entity_ok(e)
                    if not ent_ok_cache[e]:
                        errs.append(f"{fn}:{no}: unknown entity {e}")
                    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:]{0,127}", o["metric"]):
                        errs.append(f"{fn}:{no}: bad metric")
                    if "ts_ms" in o and o["ts_ms"] > o["at_ms"]:
                        errs.append(f"{fn}:{no}: ts_ms after at_ms")
                if fn == "syslog.jsonl":
                    if "source" in o:
                        ip = ipaddress.IPv4Address(o["source"])
                        if not ip.is_loopback or o["source"] not in mgmts:
                            errs.append(f"{fn}:{no}: source {o['source']} is no switch management address")
                    elif o["line"].startswith("<") and re.match(r"<\d+>: \d{4} ", o["line"]):
                        errs.append(f"{fn}:{no}: hostname-less line without source")
                    if "{" in o["line"].replace("{ts}", ""):
                        errs.append(f"{fn}:{no}: stray brace")
                if fn == "jobs.jsonl" and "schedule" in o:
                    for h in o["schedule"]["hosts"]:
                        if h not in f.hosts:
                            errs.append(f"{fn}:{no}: unknown job host {h}")
    for j in sc.jobs:
        for h in j["hosts"]:
            if h not in f.hosts:
                errs.append(f"job {j['name']}: unknown host {h}")
            elif len(f.hosts[h].npus) < j["L"]:
                errs.append(f"job {j['name']}: host {h} has too few NPUs")
    for s in f.switches.values():
        if s.mgmt and not ipaddress.IPv4Address(s.mgmt).is_loopback:
            errs.append(f"switch {s.name}: management address not loopback")
    if len(mgmts) != len([s for s in f.switches.values() if s.mgmt]):
        errs.append("management addresses not distinct")
    for inc in sc.incidents:
        for r in inc["root"]:
            if r.startswith("link:"):
                a, _, b = r[5:].partition("|")
                if not (f.entity_ok(a) and f.entity_ok(b) and f.peer.get(a) == b):
                    errs.append(f"expect: bad link {r}")
            elif not f.entity_ok(r):
                errs.append(f"expect: unknown root {r}")
        if not inc["types"]:
            errs.append("expect: no fault type")
    for c in sc.clean:
        if not f.entity_ok(c):
            errs.append(f"expect: unknown clean {c}")
    if total > 20000:
        errs.append(f"{total} stream lines (> 20000)")
    if sc.end > 3600 and sc.cls != "healthy":
        errs.append("duration over one hour")
    if errs:
        raise SystemExit(f"self-check failed for {sc.name}:\n  " + "\n  ".join(errs[:20]))
    sc.total_lines = total


# ----------------------------------------------------------------------------------------------------
# Fault physics
# ----------------------------------------------------------------------------------------------------

def ends(f, ent):
    return ent, f.peer[ent]


def root_link(f, *ports):
    """Equivalent names of a link fault: the link and the given ports."""
    lid = f.link_id[ports[0]]
    out = [lid]
    for p in ports:
        if p not in out:
            out.append(p)
    return out


def link_windows(sc, a, windows, final_reason="link", bgp_reason="link", host_log=True, errdis_last=False):
    """Link a<->b is down in each (t_down, t_up|None) window; both ends react as devices do."""
    f, r = sc.fab, sc.rng
    b = f.peer[a]
    for e in (a, b):
        sc.watch(e, ("base", "optics"), prio=True)
        if sc.is_host(e.split("/")[0]):
            sc.watch(e, ("rdma",), prio=True)
    for i, (td, tu) in enumerate(windows):
        last = i == len(windows) - 1
        for e in (a, b):
            dev, port = e.split("/", 1)
            sc.const(e, "if_oper_status", td, tu, 2)
            sc.rate(e, "if_in_octets", td, tu, lambda t: 0.0, add=False)
            sc.rate(e, "if_out_octets", td, tu, lambda t: 0.0, add=False)
            sc.setv(e, "rx_power_dbm", td, tu, lambda t, rr, old: -40.0)
            sc.const(e, "rx_los", td, tu, 1)
            if sc.is_host(dev):
                sc.step(e, "link_downed", td + 0.01, 1)
                if host_log:
                    hr = sc.fab.hosts[dev]
                    rail = [n[0] for n in hr.npus if n[1] == port][0]
                    sc.log(dev, td + r.uniform(0.01, 0.4), cat_host(hr, "link_down", rail))
                    if tu is not None:
                        sc.log(dev, tu + r.uniform(0.5, 2.5), cat_host(hr, "link_up", rail))
            else:
                sw = f.switches[dev]
                reason = "errdisable" if (errdis_last and last) else final_reason
                sc.log(dev, td + r.uniform(0.01, 0.5), cat_port(sw, port, False, reason))
                if tu is not None:
                    sc.log(dev, tu + r.uniform(0.2, 2.0), cat_port(sw, port, True))
    # BGP over a fabric link: down at the first drop, up once the link has stayed up long enough
    if a in f.bgp or b in f.bgp:
        state_up = True
        t_next_ok = None
        for i, (td, tu) in enumerate(windows):
            if state_up:
                for e in (a, b):
                    dev = e.split("/")[0]
                    sc.log(dev, td + r.uniform(0.05, 1.2), cat_bgp(f.switches[dev], e, False, bgp_reason))
                state_up = False
            if tu is None:
                break
            est = tu + r.uniform(6, 28)
            nxt = windows[i + 1][0] if i + 1 < len(windows) else INF
            if est < nxt:
                for e in (a, b):
                    dev = e.split("/")[0]
                    sc.log(dev, est + r.uniform(0, 0.4), cat_bgp(f.switches[dev], e, True))
                state_up = True


def fault_link_down(sc, a, t0, t1=None, host_log=True):
    f = sc.fab
    link_windows(sc, a, [(t0, t1)], host_log=host_log)
    b = f.peer[a]
    sc.touched.update({a.split("/")[0], b.split("/")[0]})
    return root_link(f, a, b)


def flap_windows(r, t0, n, min_down=0.4, max_down=9.0):
    w, t = [], t0
    for _ in range(n):
        dn = r.uniform(min_down, max_down)
        w.append((t, t + dn))
        t += dn + r.uniform(4.0, 45.0)
    return w


def fault_flap(sc, a, t0, n, errdis=False):
    f, r = sc.fab, sc.rng
    w = flap_windows(r, t0, n)
    if errdis:
        w[-1] = (w[-1][0], None)
    link_windows(sc, a, w, errdis_last=errdis)
    b = f.peer[a]
    for e in (a, b):
        sc.watch(e, ("fec",), prio=True)
        for (td, tu) in w:
            if tu is not None:
                # link training / CDR relock around each transition
                sc.step(e, "fec_uncorrectable_codewords", tu + 0.2, r.randint(3, 400))
                sc.step(e, "dot3_stats_fcs_errors", tu + 0.2, r.randint(0, 40))
                sc.step(e, "if_in_errors", tu + 0.2, r.randint(0, 40))
    sc.touched.update({a.split("/")[0], b.split("/")[0]})
    return root_link(f, a, b), w


def fault_crc(sc, rx, t0, t1, severity, fec_led=False):
    """Dirty connector / marginal cable: the receiver at rx counts FCS errors (far-end tx is silent)."""
    f, r = sc.fab, sc.rng
    tx = f.peer[rx]
    sc.watch(rx, ("base", "fec", "optics"), prio=True)
    sc.watch(tx, ("base", "fec"), prio=True)
    ramp = r.uniform(20, 120)

    def shape(t, s=severity, t0=t0, ramp=ramp):
        return s * min(1.0, (t - t0) / ramp) * (0.6 + 0.8 * abs(math.sin(t / 13.0)))
    sc.rate(rx, "dot3_stats_fcs_errors", t0, t1, shape)
    sc.rate(rx, "if_in_errors", t0, t1, shape)
    sc.rate(rx, "fec_uncorrectable_codewords", t0, t1, lambda t: shape(t) * (1.6 if fec_led else 1.05))
    sc.rate(rx, "fec_corrected_codewords", t0, t1, lambda t: shape(t) * (400 if fec_led else 60) + 2e4)
    if sc.is_host(rx.split("/")[0]):
        sc.watch(rx, ("rdma",), prio=True)
        sc.rate(rx, "symbol_error", t0, t1, lambda t: shape(t) * 2.2)
        sc.rate(rx, "port_rcv_errors", t0, t1, shape)
    sc.touched.update({rx.split("/")[0], tx.split("/")[0]})
    return root_link(f, rx, tx)


def fault_optical(sc, rx, t0, ramp_s, cause="fiber", t_fix=None):
    """Receive power slides across the module's own warning and alarm thresholds."""
    f, r = sc.fab, sc.rng
    tx = f.peer[rx]
    sc.watch(rx, ("base", "optics", "fec"), prio=True)
    sc.watch(tx, ("base", "optics"), prio=True)
    o = sc.optic[rx]
    prof = o["prof"]
    start, floor = o["rx"], prof[0] - r.uniform(0.8, 2.6)
    t_end = t0 + ramp_s

    def level(t):
        if t >= t_end:
            return floor
        x = (t - t0) / ramp_s
        return start + (floor - start) * (x ** 1.4)
    sc.setv(rx, "rx_power_dbm", t0, t_fix, lambda t, rr, old: level(t) + rr.gauss(0, 0.05))
    if cause == "laser":
        otx = sc.optic[tx]
        drop = start - floor
        sc.setv(tx, "tx_power_dbm", t0, t_fix, lambda t, rr, old, b=otx["tx"]: b - (start - level(t)) * 0.98 + rr.gauss(0, 0.03))
        sc.setv(tx, "bias_ma", t0, t_fix, lambda t, rr, old, b=otx["bias"]: b * (1 + 0.35 * min(1.0, (t - t0) / ramp_s)))
    # once below sensitivity the FEC starts to lose
    t_bad = t0 + ramp_s * 0.93
    sc.rate(rx, "fec_corrected_codewords", t_bad, t_fix, lambda t: 5e5)
    sc.rate(rx, "fec_uncorrectable_codewords", t_end, t_fix, lambda t: 3.0)
    # crossings, as the device's own DOM monitor reports them
    dev, port = rx.split("/", 1)
    if not sc.is_host(dev):
        sw = f.switches[dev]
        for thr, lvl in ((prof[1], "warning"), (prof[0], "alarm")):
            frac = ((start - thr) / (start - floor)) ** (1 / 1.4)
            tc = t0 + frac * ramp_s
            sc.log(dev, tc + r.uniform(1, 9), cat_optic(sw, port, "rx_low", lvl, thr - 0.05, thr))
        if t_fix:
            sc.log(dev, t_fix + r.uniform(2, 8), cat_optic(sw, port, "rx_low", "cleared"))
    sc.touched.update({dev, tx.split("/")[0]})
    if cause == "laser":
        return [tx, f.link_id[rx], rx]
    return [rx, f.link_id[rx], tx]


def fault_overtemp(sc, port_ent, t0, ramp_s, t_fix=None):
    f, r = sc.fab, sc.rng
    sc.watch(port_ent, ("base", "optics"), prio=True)
    o = sc.optic[port_ent]
    prof = o["prof"]
    peak = prof[3] + r.uniform(1.5, 6.0)
    b0 = o["temp"]

    def temp(t):
        x = min(1.0, (t - t0) / ramp_s)
        return b0 + (peak - b0) * (1 - (1 - x) ** 2)
    sc.setv(port_ent, "temperature_celsius", t0, t_fix, lambda t, rr, old: temp(t) + rr.gauss(0, 0.2))
    sc.setv(port_ent, "bias_ma", t0, t_fix, lambda t, rr, old: old * (1 + 0.004 * max(0.0, temp(t) - b0)))
    sc.setv(port_ent, "tx_power_dbm", t0, t_fix, lambda t, rr, old: old - 0.02 * max(0.0, temp(t) - b0))
    dev, port = port_ent.split("/", 1)
    if not sc.is_host(dev):
        sw = f.switches[dev]
        for thr, lvl in ((prof[4], "warning"), (prof[3], "alarm")):
            x = 1 - math.sqrt(max(0.0, 1 - (thr - b0) / (peak - b0)))
            sc.log(dev, t0 + x * ramp_s + r.uniform(2, 12), cat_optic(sw, port, "temp_high", lvl, thr + 0.1, thr))
    sc.touched.add(dev)
    return [port_ent, f.link_id[port_ent]]


def fault_switch_outage(sc, swn, t0, t1, mode, host_log_frac=0.7, max_kpi_peers=24):
    """The switch stops (power, crash, reload); neighbours see every link go; t1=None: it stays down."""
    f, r = sc.fab, sc.rng
    sw = f.switches[swn]
    sc.watch_env(swn, prio=True)
    sc.log(swn, t0 - r.uniform(0.3, 3.0), cat_crash(sw, mode))
    sc.silent.setdefault(swn, []).append((t0, INF if t1 is None else t1))
    if t1 is not None:
        sc.boots.setdefault(swn, []).append(t1)
        up_at = r.uniform(20, 70)
        sc.setv(swn, "sys_uptime_seconds", t1, None, lambda t, rr, old, t1=t1, u=up_at: int(t - t1 + u))
        sc.log(swn, t1 + r.uniform(1, 5), cat_boot(sw))
    ports = sorted(sw.ports)
    kp = 0
    for p in ports:
        me, peer = f"{swn}/{p}", sw.ports[p]
        pdev, pport = peer.split("/", 1)
        tu = None if t1 is None else t1 + r.uniform(8, 75)
        if kp < max_kpi_peers:
            full = kp < 4
            sc.watch(peer, ("base",) if full else ("status",), prio=True)
            sc.const(peer, "if_oper_status", t0, tu, 2)
            if full:
                sc.rate(peer, "if_in_octets", t0, tu, lambda t: 0.0, add=False)
                sc.rate(peer, "if_out_octets", t0, tu, lambda t: 0.0, add=False)
            kp += 1
        if sc.is_host(pdev):
            h = f.hosts[pdev]
            rail = [n[0] for n in h.npus if n[1] == pport][0]
            if r.random() < host_log_frac:
                sc.log(pdev, t0 + r.uniform(0.02, 0.6), cat_host(h, "link_down", rail))
                if tu is not None:
                    sc.log(pdev, tu + r.uniform(0.3, 2.0), cat_host(h, "link_up", rail))
        else:
            psw = f.switches[pdev]
            sc.log(pdev, t0 + r.uniform(0.02, 0.8), cat_port(psw, pport, False))
            sc.log(pdev, t0 + r.uniform(0.1, 1.5), cat_bgp(psw, peer, False, "link"))
            if tu is not None:
                sc.log(pdev, tu + r.uniform(0.1, 1.0), cat_port(psw, pport, True))
                sc.log(pdev, tu + r.uniform(9, 35), cat_bgp(psw, peer, True))
        if tu is not None:
            sc.log(swn, tu + r.uniform(0.1, 1.0), cat_port(sw, p, True))
            if not sc.is_host(pdev):
                sc.log(swn, tu + r.uniform(9, 35), cat_bgp(sw, me, True))
    sc.touched.add(swn)
    return [swn]


def fault_env(sc, swn, what, n, t0, t1=None, status=3):
    f, r = sc.fab, sc.rng
    sw = f.switches[swn]
    sc.watch_env(swn, prio=True)
    comp = f"{swn}/{what}{n}"
    metric = "fan_status" if what == "fan" else "psu_status"
    sc.const(comp, metric, t0, t1, status)
    if what == "fan":
        sc.setv(f"{swn}/asic", "sensor_temperature_celsius", t0, t1,
                lambda t, rr, old, t0=t0: old + min(6.5, (t - t0) / 120.0))
    sc.log(swn, t0 + r.uniform(0.2, 3.0), cat_env(sw, what, n, False))
    if t1 is not None:
        sc.log(swn, t1 + r.uniform(0.2, 3.0), cat_env(sw, what, n, True))
    sc.touched.add(swn)
    return [comp, swn]


def fault_npu_port(sc, host, rail, t0, t1, mode):
    f, r = sc.fab, sc.rng
    h = f.hosts[host]
    he, le = f.host_ent(host, rail), f.leaf_ent(host, rail)
    sc.watch(he, ("base", "admin", "rdma", "optics"), prio=True)
    sc.watch(le, ("base",), prio=True)
    for e in (he, le):
        sc.const(e, "if_oper_status", t0, t1, 2)
        sc.rate(e, "if_in_octets", t0, t1, lambda t: 0.0, add=False)
        sc.rate(e, "if_out_octets", t0, t1, lambda t: 0.0, add=False)
    sc.step(he, "link_downed", t0 + 0.01, 1)
    if mode == "admin":
        sc.const(he, "if_admin_status", t0, t1, 2)
        sc.log(host, t0 - r.uniform(0.2, 1.0), cat_host(h, "admin_down", rail))
        sc.setv(le, "if_oper_status", t0, t1, lambda t, rr, old: 2)
    else:
        sc.log(host, t0 - r.uniform(0.5, 4.0), cat_host(h, "nic_fail", rail, q=r.randint(0, 31), pid=r.randint(200, 9000)))
        # the NIC stops driving its laser: the leaf loses light
        sc.watch(le, ("optics",), prio=True)
        sc.setv(le, "rx_power_dbm", t0, t1, lambda t, rr, old: -40.0)
        sc.const(le, "rx_los", t0, t1, 1)
        sc.const(he, "tx_fault", t0, t1, 1)
    ldev, lport = le.split("/", 1)
    sc.log(ldev, t0 + r.uniform(0.02, 0.5), cat_port(f.switches[ldev], lport, False))
    if t1 is not None:
        sc.log(ldev, t1 + r.uniform(0.5, 3.0), cat_port(f.switches[ldev], lport, True))
        sc.log(host, t1 + r.uniform(0.5, 3.0), cat_host(h, "link_up", rail))
    sc.touched.update({host})
    return [he, f.link_id[he]]


def fault_mtu(sc, end_ent, t0, new_mtu, t1=None):
    f, r = sc.fab, sc.rng
    other = f.peer[end_ent]
    dev, port = end_ent.split("/", 1)
    sc.watch(end_ent, ("base", "mtu", "disc"), prio=True)
    sc.watch(other, ("base", "mtu", "disc"), prio=True)
    sc.const(end_ent, "if_mtu", t0, t1, new_mtu)
    if sc.is_host(dev):
        h = f.hosts[dev]
        rail = [n[0] for n in h.npus if n[1] == port][0]
        sc.log(dev, t0 - r.uniform(0.3, 2.0), cat_host(h, "mtu", rail, mtu=new_mtu))
    else:
        sw = f.switches[dev]
        cmd = f"interface mtu {port} {new_mtu}" if sw.vendor == "sonic" else f"interface {port} mtu {new_mtu}"
        sc.log(dev, t0 - r.uniform(0.5, 4.0), cat_config(sw, r.choice(["netops", "jlee", "automation"]), f"10.250.1.{r.randint(2, 99)}", cmd))
    big = r.uniform(800, 40000)
    # frames larger than the new MTU arriving at end_ent are dropped as oversize (giants / MTU exceeded)
    sc.rate(end_ent, "if_in_errors", t0, t1, lambda t: big * (0.7 + 0.3 * math.sin(t / 17.0)))
    sc.rate(end_ent, "if_in_discards", t0, t1, lambda t: big * 0.2)
    # and the other direction: the small-MTU end cannot send big frames, the peer's side stays clean
    sc.touched.update({dev})
    return [end_ent, f.link_id[end_ent]]


def fault_qos(sc, swn, ports, t0, what):
    f, r = sc.fab, sc.rng
    sw = f.switches[swn]
    newmask = r.choice([0, 16 if f.pfc_mask == 8 else 8])
    p = 3 if f.pfc_mask & 8 else 4
    for pt in ports:
        e = f"{swn}/{pt}"
        sc.watch(e, ("base", "qos", "pfc", "disc"), prio=True)
        if what == "pfc":
            sc.const(e, "pfc_enabled_mask", t0, None, newmask)
            sc.rate(e, f"pfc_prio{p}_tx_pause_frames", t0, None, lambda t: 0.0, add=False)
            sc.rate(e, "if_in_discards", t0, None, lambda t, k=r.uniform(50, 3000): k * (0.5 + abs(math.sin(t / 23.0))))
        else:
            sc.const(e, "ecn_enabled", t0, None, 0)
            sc.rate(e, "ecn_marked_packets", t0, None, lambda t: 0.0, add=False)
            sc.rate(e, f"pfc_prio{p}_tx_pause_frames", t0, None, lambda t, k=r.uniform(800, 20000): k * (0.5 + abs(math.sin(t / 19.0))))
    if what == "pfc":
        cmd = {"sonic": "qos reload --no-dynamic-buffer", "eos": f"interface {ports[0]} no priority-flow-control priority {p} no-drop",
               "nxos": f"interface {ports[0]} priority-flow-control mode off", "huawei": f"interface {ports[0]} undo dcb pfc enable mode manual",
               "junos": f"class-of-service interfaces {ports[0]} congestion-notification-profile none"}[sw.vendor]
    else:
        cmd = {"sonic": "ecn -profile AZURE_LOSSLESS -gmin 0 -gmax 0", "eos": f"interface {ports[0]} tx-queue {p} no random-detect ecn",
               "nxos": "policy-map type queuing RoCE class type queuing c-out-8q-q3 no random-detect ecn",
               "huawei": f"interface {ports[0]} undo qos queue {p} ecn", "junos": f"class-of-service schedulers roce no-explicit-congestion-notification"}[sw.vendor]
    sc.log(swn, t0 - r.uniform(1.0, 8.0), cat_config(sw, r.choice(["netops", "automation", "kwang"]), f"10.250.2.{r.randint(2, 99)}", cmd))
    sc.touched.add(swn)
    if len(ports) > 1:
        return [swn]
    return [f"{swn}/{ports[0]}", swn]


def fault_pfc_storm(sc, host, rail, t0, t1, host_counters=True):
    """A host NIC whose receive path stalls sends XOFF on the RoCE priority without end."""
    f, r = sc.fab, sc.rng
    he, le = f.host_ent(host, rail), f.leaf_ent(host, rail)
    p = 3 if f.pfc_mask & 8 else 4
    rate = r.choice([24000.0, 60000.0, 150000.0, 390000.0])
    sc.watch(le, ("base", "pfc", "disc"), prio=True)
    if host_counters:
        sc.watch(he, ("base", "pfc", "rdma"), prio=True)
        sc.rate(he, f"pfc_prio{p}_tx_pause_frames", t0, t1, lambda t: rate * (0.97 + 0.03 * math.sin(t)), add=False)
        sc.rate(he, "if_in_octets", t0, t1, lambda t: 2e5, add=False)
    sc.rate(le, f"pfc_prio{p}_rx_pause_frames", t0, t1, lambda t: rate * (0.97 + 0.03 * math.sin(t)), add=False)
    sc.rate(le, "if_out_octets", t0, t1, lambda t: 2e5, add=False)
    sc.rate(le, "if_out_discards", t0, t1, lambda t: 8e4 * (0.8 + 0.2 * math.sin(t / 7.0)))
    ldev, lport = le.split("/", 1)
    sw = f.switches[ldev]
    t = t0 + r.uniform(0.2, 1.0)
    n = 0
    end = sc.end if t1 is None else t1
    while t < end:
        n += 1
        sc.step(le, "pfc_wd_storm_detected", t, 1)
        sc.log(ldev, t, cat_pfcwd(sw, lport, p, True, n))
        rest = t + r.uniform(0.2, 0.4) + r.choice([2.0, 5.0, 10.0])
        if rest < end:
            sc.log(ldev, rest, cat_pfcwd(sw, lport, p, False, n))
        t = rest + r.uniform(0.1, 0.3) + r.uniform(20, 60)   # re-detected while the storm lasts (logging is rate-limited)
    sc.touched.add(host)
    roots = [he, f.link_id[he]]
    if not host_counters:
        roots.append(le)
    return roots


def fault_deadlock(sc, a, t0, t1):
    """Cyclic buffer dependency over a leaf-spine link: both ends pause each other, nothing drains."""
    f, r = sc.fab, sc.rng
    b = f.peer[a]
    p = 3 if f.pfc_mask & 8 else 4
    for e in (a, b):
        sc.watch(e, ("base", "pfc", "disc"), prio=True)
        k = r.uniform(9000, 45000)
        sc.rate(e, f"pfc_prio{p}_rx_pause_frames", t0, t1, lambda t, k=k: k, add=False)
        sc.rate(e, f"pfc_prio{p}_tx_pause_frames", t0, t1, lambda t, k=k: k * 1.02, add=False)
        sc.rate(e, "if_out_octets", t0, t1, lambda t: 1.5e5, add=False)
        sc.rate(e, "if_in_octets", t0, t1, lambda t: 1.5e5, add=False)
        dev, port = e.split("/", 1)
        sw = f.switches[dev]
        t = t0 + r.uniform(0.3, 2.5)
        n = 0
        end = sc.end if t1 is None else t1
        while t < end:
            n += 1
            sc.step(e, "pfc_wd_storm_detected", t, 1)
            sc.log(dev, t, cat_pfcwd(sw, port, p, True, n))
            t += r.uniform(25, 70)
    sc.touched.update({a.split("/")[0], b.split("/")[0]})
    return root_link(f, a, b)


def fault_congestion(sc, egress, t0, t1, senders, receiver_ent, kind="ecn"):
    """Incast: many senders into one egress port; ECN marks there, CNPs from the receiver to the senders."""
    f, r = sc.fab, sc.rng
    bps = f.speed * 1e9 / 8
    sc.watch(egress, ("base", "pfc", "disc"), prio=True)
    sc.rate(egress, "if_out_octets", t0, t1, lambda t: bps * 0.97, add=False)
    if kind == "ecn":
        k = r.uniform(8e4, 9e5)
        sc.rate(egress, "ecn_marked_packets", t0, t1, lambda t, k=k: k * (0.7 + 0.3 * abs(math.sin(t / 9.0))))
    else:
        k = r.uniform(300, 30000)
        sc.rate(egress, "if_out_discards", t0, t1, lambda t, k=k: k * (0.5 + abs(math.sin(t / 11.0))))
    if receiver_ent:
        sc.watch(receiver_ent, ("rdma",), prio=True)
        if kind == "ecn":
            sc.rate(receiver_ent, "np_ecn_marked_roce_packets", t0, t1, lambda t, k=k: k * 0.95)
            sc.rate(receiver_ent, "np_cnp_sent", t0, t1, lambda t, k=k: k * 0.4)
        else:
            sc.rate(receiver_ent, "out_of_sequence", t0, t1, lambda t, k=k: k * 0.3)
    for s_ent in senders:
        sc.watch(s_ent, ("rdma",), prio=True)
        if kind == "ecn":
            sc.rate(s_ent, "rp_cnp_handled", t0, t1, lambda t, k=k, n=len(senders): k * 0.4 / n)
    sc.touched.add(egress.split("/")[0])
    return [egress, f.link_id[egress]]


def fault_retrans(sc, he, t0, t1):
    f, r = sc.fab, sc.rng
    sc.watch(he, ("base", "rdma", "pfc"), prio=True)
    k = r.uniform(40, 900)
    sc.rate(he, "out_of_sequence", t0, t1, lambda t, k=k: k * (0.4 + abs(math.sin(t / 8.0))))
    sc.rate(he, "local_ack_timeout_err", t0, t1, lambda t, k=k: k * 0.05)
    le = f.peer[he]
    sc.watch(le, ("base", "fec", "pfc"), prio=False)
    host = he.split("/")[0]
    sc.touched.add(host)
    return [he, host]


def fault_bgp(sc, a, t0, flapping, t_fix=None):
    """The session over leaf port a drops while the link stays up (config change / hold-timer expiry)."""
    f, r = sc.fab, sc.rng
    b = f.peer[a]
    leaf = a.split("/")[0]
    sc.watch(a, ("base",), prio=True)
    sc.watch(b, ("base",), prio=True)
    windows = []
    if flapping:
        t = t0
        for _ in range(r.randint(4, 8)):
            dn = r.uniform(35, 95)
            windows.append((t, t + dn))
            t += dn + r.uniform(60, 180)
    else:
        windows.append((t0, t_fix))
        sw = f.switches[leaf]
        lip, sip = f.bgp[a]
        cmd = {"sonic": f"bgp neighbor {sip} password", "eos": f"router bgp {sw.asn} neighbor {sip} password 7 xxxx",
               "nxos": f"router bgp {sw.asn} neighbor {sip} password 3 xxxx", "huawei": f"bgp {sw.asn} peer {sip} password cipher xxxx",
               "junos": f"protocols bgp group spines neighbor {sip} authentication-key xxxx"}[sw.vendor]
        sc.log(leaf, t0 - r.uniform(2, 10), cat_config(sw, r.choice(["netops", "automation"]), f"10.250.3.{r.randint(2, 99)}", cmd))
    for (td, tu) in windows:
        for e in (a, b):
            dev = e.split("/")[0]
            sc.log(dev, td + r.uniform(0, 1.0), cat_bgp(f.switches[dev], e, False, "hold" if flapping else "config", flap=flapping))
            if tu is not None:
                sc.log(dev, tu + r.uniform(0, 1.0), cat_bgp(f.switches[dev], e, True, flap=flapping))
            # routes withdrawn: ECMP stops using the link while the session is down
            sc.rate(e, "if_in_octets", td, tu, lambda t: 900.0, add=False)
            sc.rate(e, "if_out_octets", td, tu, lambda t: 900.0, add=False)
    sc.touched.update({leaf, b.split("/")[0]})
    root = [f.link_id[a], a, b]
    if not flapping:
        root.append(leaf)
    return root, windows


def victims(sc, hosts_rails, t0, t1, kind):
    """Traffic peers of a fault: their RoCE transport notices (they are not the cause)."""
    r = sc.rng
    out = []
    for (h, rail) in hosts_rails:
        he = sc.fab.host_ent(h, rail)
        sc.watch(he, ("base", "rdma"), prio=True)
        k = r.uniform(5, 300)
        if kind == "timeouts":
            sc.rate(he, "local_ack_timeout_err", t0, t1, lambda t, k=k: k * 0.1)
            sc.rate(he, "out_of_sequence", t0, t1, lambda t, k=k: k * 0.5)
        elif kind == "naks":
            sc.rate(he, "out_of_sequence", t0, t1, lambda t, k=k: k)
        elif kind == "burst":
            sc.rate(he, "local_ack_timeout_err", t0, t0 + r.uniform(3, 12), lambda t, k=k: k)
            sc.rate(he, "out_of_sequence", t0, t0 + r.uniform(3, 12), lambda t, k=k: k * 4)
            sc.rate(he, "rp_cnp_handled", t0, t0 + r.uniform(60, 240), lambda t, k=k: k * 20)
        elif kind == "cnp":
            sc.rate(he, "rp_cnp_handled", t0, t1, lambda t, k=k: k * 30)
        out.append(h)
    return out


# ----------------------------------------------------------------------------------------------------
# Placement: which element fails, its equivalent names, its neighbours (clean) and its traffic peers
# ----------------------------------------------------------------------------------------------------

def free_hosts(sc, su=None, vendor=None):
    f = sc.fab
    out = []
    for h in sorted(f.hosts):
        ho = f.hosts[h]
        if h in sc.touched or (su is not None and ho.su != su):
            continue
        if any(n[2] in sc.touched for n in ho.npus):
            continue
        if vendor and not any(f.switches[n[2]].vendor == vendor for n in ho.npus):
            continue
        out.append(h)
    return out


def pick_host_rail(sc, vendor=None, su=None, min_rail=0):
    f, r = sc.fab, sc.rng
    hs = free_hosts(sc, su, vendor)
    if not hs:
        pairs = [(h, n[0]) for h in sorted(f.hosts) if h not in sc.touched and (su is None or f.hosts[h].su == su)
                 for n in f.hosts[h].npus if n[2] not in sc.touched]
        if not pairs and vendor:
            return pick_host_rail(sc, None, su, min_rail)
        return r.choice(pairs)
    h = r.choice(hs)
    rails = [n[0] for n in f.hosts[h].npus if n[0] >= min_rail and (not vendor or f.switches[n[2]].vendor == vendor)]
    if not rails:
        rails = [n[0] for n in f.hosts[h].npus]
    return h, r.choice(rails)


def pick_uplink(sc, vendor=None, su=None, spine=None):
    f, r = sc.fab, sc.rng
    cands = []
    for leaf in sorted(f.uplinks):
        if leaf in sc.touched or (su is not None and f.leaf_pos[leaf][0] != su):
            continue
        for (lp, spn, sp) in f.uplinks[leaf]:
            if spn in sc.touched or (spine and spn != spine):
                continue
            if vendor and f.switches[leaf].vendor != vendor and f.switches[spn].vendor != vendor:
                continue
            cands.append((lp, spn, sp))
    if not cands and vendor:
        return pick_uplink(sc, None, su, spine)
    return r.choice(cands)


def pick_switch(sc, tier, vendor=None, min_rail=0):
    f, r = sc.fab, sc.rng
    c = [s for s in sorted(f.switches) if f.switches[s].tier == tier and s not in sc.touched
         and (vendor is None or f.switches[s].vendor == vendor)
         and (tier != "leaf" or f.leaf_pos[s][1] >= min(min_rail, f.rails - 1))]
    if not c and vendor:
        return pick_switch(sc, tier, None, min_rail)
    return r.choice(c)


def near_host_link(sc, h, rail):
    f, r = sc.fab, sc.rng
    leaf = f.hosts[h].npus[rail][2]
    su = f.hosts[h].su
    out = []
    others = [p for p in sorted(f.switches[leaf].ports) if f.switches[leaf].ports[p].split("/")[0] != h]
    for p in r.sample(others, min(2, len(others))):
        out.append(f"{leaf}/{p}")
    mates = [x for x in f.su_hosts[su] if x != h]
    out += r.sample(mates, min(2, len(mates)))
    out += r.sample(f.spines, min(2, len(f.spines)))
    if f.rails > 1:
        out.append(f.leaf_of[(su, (rail + 1) % f.rails)])
    return out


def near_uplink(sc, leaf, spn):
    f, r = sc.fab, sc.rng
    su, rail = f.leaf_pos[leaf]
    out = [s for s in f.spines if s != spn][:3]
    out += [f.leaf_of[(su, k)] for k in range(f.rails) if k != rail][:2]
    out += [f.leaf_of[(s2, rail)] for s2 in range(len(f.su_hosts)) if s2 != su][:2]
    out += r.sample(f.su_hosts[su], min(2, len(f.su_hosts[su])))
    return out


def peers_of(sc, h, rail, n):
    f, r = sc.fab, sc.rng
    su = f.hosts[h].su
    mates = [x for x in f.su_hosts[su] if x != h and x not in sc.touched]
    return [(x, rail) for x in r.sample(mates, min(n, len(mates)))]


TYPES = {
    "link_down": ["link_down"], "flap": ["link_flapping"], "flap_errdis": ["link_flapping", "link_down"],
    "crc": ["crc_errors", "fec_uncorrectable"], "fec": ["fec_uncorrectable", "crc_errors"],
    "optical": ["optical_power_out_of_range"], "overtemp": ["module_overtemperature"],
    "reboot": ["switch_reboot", "switch_down"], "down": ["switch_down", "switch_reboot"],
    "fan": ["switch_fan_fault"], "psu": ["switch_power_fault"], "npu": ["npu_port_down", "link_down"],
    "mtu": ["mtu_mismatch"], "qos": ["qos_config_drift"], "pfc_storm": ["pfc_storm"], "deadlock": ["pfc_deadlock"],
    "ecn": ["ecn_surge", "cnp_surge"], "buffer": ["buffer_drops"], "retrans": ["retransmission_burst"],
    "bgp_down": ["routing_session_down"], "bgp_flap": ["routing_session_flapping", "routing_session_down"],
}


def inject(sc, kind, t0, t1=None, vendor=None, dur=None, opts=None):
    """Inject one fault; returns the expectation record (root names, types, element, window, peers)."""
    f, r = sc.fab, sc.rng
    opts = opts or {}
    dur = dur or r.uniform(240, 600)
    near, peers, vk = [], [], "naks"
    label = kind
    if kind in ("link_down_host", "rxlos_host"):
        h, rail = pick_host_rail(sc, vendor, opts.get("su"))
        he, le = f.host_ent(h, rail), f.leaf_ent(h, rail)
        root = fault_link_down(sc, le, t0, t1, host_log=r.random() < 0.7)
        root = [f.link_id[he], le, he]
        elem, types, near = ("hostlink", h, rail), TYPES["link_down"], near_host_link(sc, h, rail)
        peers, vk = peers_of(sc, h, rail, 3), "timeouts"
    elif kind == "link_down_uplink":
        lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
        root = fault_link_down(sc, lp, t0, t1)
        leaf = lp.split("/")[0]
        elem, types, near = ("uplink", leaf, spn), TYPES["link_down"], near_uplink(sc, leaf, spn)
        su, rail = f.leaf_pos[leaf]
        peers, vk = [(h, rail) for h in r.sample(f.su_hosts[su], min(3, len(f.su_hosts[su])))], "burst"
    elif kind in ("flap_uplink", "flap_spine_link", "flap_errdis"):
        lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
        errdis = kind == "flap_errdis"
        root, w = fault_flap(sc, sp if kind == "flap_spine_link" else lp, t0, r.randint(5, 14), errdis=errdis)
        leaf = lp.split("/")[0]
        t1 = None if errdis else w[-1][1]
        elem, types = ("uplink", leaf, spn), TYPES["flap_errdis" if errdis else "flap"]
        near = near_uplink(sc, leaf, spn)
        su, rail = f.leaf_pos[leaf]
        peers, vk = [(h, rail) for h in r.sample(f.su_hosts[su], min(3, len(f.su_hosts[su])))], "burst"
        label = "flap"
    elif kind == "flap_host":
        h, rail = pick_host_rail(sc, vendor, opts.get("su"))
        le = f.leaf_ent(h, rail)
        root, w = fault_flap(sc, le, t0, r.randint(5, 12))
        t1 = w[-1][1]
        root = [f.link_id[le], le, f.host_ent(h, rail)]
        elem, types, near = ("hostlink", h, rail), TYPES["flap"], near_host_link(sc, h, rail)
        peers, vk = peers_of(sc, h, rail, 2), "burst"
        label = "flap"
    elif kind in ("crc_host_rx", "crc_leaf_rx", "fec_host", "fec_leaf"):
        h, rail = pick_host_rail(sc, vendor, opts.get("su"))
        he, le = f.host_ent(h, rail), f.leaf_ent(h, rail)
        rx = he if kind in ("crc_host_rx", "fec_host") else le
        sev = r.choice([15.0, 120.0, 900.0, 6000.0])
        root = fault_crc(sc, rx, t0, t1, sev, fec_led=kind.startswith("fec"))
        elem, near = ("hostlink", h, rail), near_host_link(sc, h, rail)
        types = TYPES["fec" if kind.startswith("fec") else "crc"]
        peers, vk = peers_of(sc, h, rail, 3), "naks"
        label = "fec" if kind.startswith("fec") else "crc"
    elif kind == "crc_uplink":
        lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
        rx = r.choice([lp, sp])
        root = fault_crc(sc, rx, t0, t1, r.choice([40.0, 400.0, 3000.0]))
        leaf = lp.split("/")[0]
        elem, types, near = ("uplink", leaf, spn), TYPES["crc"], near_uplink(sc, leaf, spn)
        su, rail = f.leaf_pos[leaf]
        peers, vk = [(h, rail) for h in r.sample(f.su_hosts[su], min(3, len(f.su_hosts[su])))], "naks"
        label = "crc"
    elif kind in ("optical_uplink", "optical_laser", "optical_host"):
        if kind == "optical_host":
            h, rail = pick_host_rail(sc, vendor, opts.get("su"))
            rx = r.choice([f.host_ent(h, rail), f.leaf_ent(h, rail)])
            elem, near = ("hostlink", h, rail), near_host_link(sc, h, rail)
            peers = peers_of(sc, h, rail, 2)
        else:
            lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
            rx = r.choice([lp, sp]) if not vendor else (lp if f.switches[lp.split("/")[0]].vendor == vendor else sp)
            leaf = lp.split("/")[0]
            elem, near = ("uplink", leaf, spn), near_uplink(sc, leaf, spn)
        root = fault_optical(sc, rx, t0, opts.get("ramp", r.uniform(240, 900)), "laser" if kind == "optical_laser" else "fiber", t1)
        types, label = TYPES["optical"], "optical"
    elif kind == "overtemp":
        if r.random() < 0.6:
            lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
            pe = r.choice([lp, sp])
            leaf = lp.split("/")[0]
            elem, near = ("uplink", leaf, spn), near_uplink(sc, leaf, spn)
            sw = pe.split("/")[0]
            others = [p for p in sorted(f.switches[sw].ports) if f"{sw}/{p}" != pe]
            for p in r.sample(others, min(3, len(others))):
                sc.watch(f"{sw}/{p}", ("base", "optics"))
                near.append(f"{sw}/{p}")
        else:
            h, rail = pick_host_rail(sc, vendor, opts.get("su"))
            pe = r.choice([f.host_ent(h, rail), f.leaf_ent(h, rail)])
            elem, near = ("hostlink", h, rail), near_host_link(sc, h, rail)
        root = fault_overtemp(sc, pe, t0, opts.get("ramp", r.uniform(300, 900)), t1)
        types = TYPES["overtemp"]
    elif kind in ("reboot_leaf", "reboot_spine", "down_leaf", "down_spine"):
        tier = "leaf" if kind.endswith("leaf") else "spine"
        swn = opts.get("switch") or pick_switch(sc, tier, vendor, min_rail=1)
        if kind.startswith("reboot"):
            t1 = t1 if t1 is not None else t0 + r.uniform(150, 420)
            mode = opts.get("mode") or r.choice(["crash", "reload", "power"])
        else:
            mode = "power"
        root = fault_switch_outage(sc, swn, t0, t1 if kind.startswith("reboot") or t1 else None, mode)
        if kind.startswith("down"):
            t1 = t1
        elem = ("leaf", swn) if tier == "leaf" else ("spine", swn)
        types = TYPES["reboot" if kind.startswith("reboot") else "down"]
        if tier == "leaf":
            su, rail = f.leaf_pos[swn]
            near = [s for s in f.spines][:3] + f.su_hosts[su][:3] + [f.leaf_of[(su, k)] for k in range(f.rails) if k != rail][:2]
            peers = [(h, rail) for h in f.su_hosts[su][:0]]
        else:
            near = [s for s in f.spines if s != swn][:3] + r.sample(sorted(f.uplinks), min(3, len(f.uplinks)))
            peers = []
        vk = "timeouts"
        label = "reboot" if kind.startswith("reboot") else "down"
    elif kind in ("fan", "psu"):
        swn = opts.get("switch") or pick_switch(sc, r.choice(["leaf", "spine"]), vendor)
        sw = f.switches[swn]
        n = r.randint(1, sw.fans if kind == "fan" else sw.psus)
        root = fault_env(sc, swn, kind, n, t0, t1, status=opts.get("status", 3))
        elem, types = ("none",), TYPES[kind]
        near = [s for s in sorted(f.switches) if s != swn][:4]
    elif kind in ("npu_nic", "npu_admin"):
        h, rail = pick_host_rail(sc, vendor, opts.get("su"))
        root = fault_npu_port(sc, h, rail, t0, t1, "admin" if kind == "npu_admin" else "nic")
        elem, types, near = ("hostlink", h, rail), TYPES["npu"], near_host_link(sc, h, rail)
        peers, vk, label = peers_of(sc, h, rail, 3), "timeouts", "npu"
    elif kind in ("mtu_host", "mtu_leaf"):
        h, rail = pick_host_rail(sc, vendor, opts.get("su"))
        he, le = f.host_ent(h, rail), f.leaf_ent(h, rail)
        end_ent = he if kind == "mtu_host" else le
        new = r.choice([1500, 1500, 2048, 1514]) if kind == "mtu_host" else r.choice([1500, 1500, 2500])
        root = fault_mtu(sc, end_ent, t0, new, t1)
        elem, types, near = ("hostlink", h, rail), TYPES["mtu"], near_host_link(sc, h, rail)
        peers, vk, label = peers_of(sc, h, rail, 3), "timeouts", "mtu"
    elif kind in ("qos_pfc", "qos_ecn"):
        tier = r.choice(["leaf", "leaf", "spine"])
        swn = pick_switch(sc, tier, vendor)
        sw = f.switches[swn]
        allp = sorted(sw.ports)
        ports = allp if r.random() < 0.5 else [r.choice(allp)]
        if len(ports) > 12:
            for p in ports[12:]:
                pass
        root = fault_qos(sc, swn, ports[:12] if len(ports) > 1 else ports, t0, "pfc" if kind == "qos_pfc" else "ecn")
        if len(ports) == 1:
            pe = f"{swn}/{ports[0]}"
            peer = f.peer[pe]
            if sc.is_host(peer.split("/")[0]):
                h = peer.split("/")[0]
                rail = [n[0] for n in f.hosts[h].npus if f"{h}/{n[1]}" == peer][0]
                elem = ("hostlink", h, rail)
            else:
                elem = ("uplink", swn if tier == "leaf" else peer.split("/")[0], peer.split("/")[0] if tier == "leaf" else swn)
        else:
            elem = ("leaf", swn) if tier == "leaf" else ("spine", swn)
        types, label = TYPES["qos"], "qos"
        near = [s for s in sorted(f.switches) if s != swn and f.switches[s].tier == tier][:3]
    elif kind in ("pfc_storm", "pfc_storm_leafonly"):
        h, rail = pick_host_rail(sc, vendor, opts.get("su"))
        root = fault_pfc_storm(sc, h, rail, t0, t1, host_counters=kind == "pfc_storm")
        elem, types, label = ("hostlink", h, rail), TYPES["pfc_storm"], "pfc_storm"
        near = near_host_link(sc, h, rail)
        leaf = f.hosts[h].npus[rail][2]
        near = [x for x in near if x != leaf]
        peers, vk = peers_of(sc, h, rail, 3), "timeouts"
    elif kind == "deadlock":
        lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
        root = fault_deadlock(sc, lp, t0, t1)
        leaf = lp.split("/")[0]
        elem, types, near = ("uplink", leaf, spn), TYPES["deadlock"], near_uplink(sc, leaf, spn)
        su, rail = f.leaf_pos[leaf]
        peers, vk = [(h, rail) for h in f.su_hosts[su][:3]], "timeouts"
    elif kind in ("ecn", "buffer", "ecn_spine"):
        if kind == "ecn_spine":
            lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
            egress = sp
            leaf = lp.split("/")[0]
            su, rail = f.leaf_pos[leaf]
            recv = f.host_ent(f.su_hosts[su][0], rail)
            senders = []
            for s2 in range(len(f.su_hosts)):
                if s2 != su:
                    senders += [f.host_ent(x, rail) for x in f.su_hosts[s2][:2]]
            senders = senders[:4] or [f.host_ent(x, rail) for x in f.su_hosts[su][1:3]]
            elem, near = ("uplink", leaf, spn), near_uplink(sc, leaf, spn)
        else:
            h, rail = pick_host_rail(sc, vendor, opts.get("su"))
            egress = f.leaf_ent(h, rail)
            recv = f.host_ent(h, rail)
            su = f.hosts[h].su
            senders = [f.host_ent(x, rail) for x in f.su_hosts[su] if x != h][:5]
            elem, near = ("hostlink", h, rail), near_host_link(sc, h, rail)
        root = fault_congestion(sc, egress, t0, t1, senders, recv, "ecn" if kind != "buffer" else "drop")
        near += [s.split("/")[0] for s in senders]
        types = TYPES["buffer" if kind == "buffer" else "ecn"]
        label = "buffer" if kind == "buffer" else "ecn"
    elif kind == "retrans":
        h, rail = pick_host_rail(sc, vendor, opts.get("su"))
        he = f.host_ent(h, rail)
        root = fault_retrans(sc, he, t0, t1)
        elem, types = ("hostlink", h, rail), TYPES["retrans"]
        near = [f.hosts[h].npus[rail][2]] + near_host_link(sc, h, rail)
    elif kind in ("bgp_down", "bgp_flap"):
        lp, spn, sp = pick_uplink(sc, vendor, opts.get("su"))
        root, w = fault_bgp(sc, lp, t0, kind == "bgp_flap", t1)
        leaf = lp.split("/")[0]
        if kind == "bgp_flap":
            t1 = w[-1][1]
        elem, types = ("uplink", leaf, spn), TYPES[kind]
        near = near_uplink(sc, leaf, spn)
    else:
        raise ValueError(kind)
    inc = sc.expect(root, types, elem, t0, t1, kind=label)
    inc["near"], inc["peers"], inc["vk"] = near, peers, vk
    sc.clean_cand += near
    return inc


# ----------------------------------------------------------------------------------------------------
# Background and noise present in every scenario
# ----------------------------------------------------------------------------------------------------

def background(sc, n_ports, env=2):
    f, r = sc.fab, sc.rng
    pool = sorted(e for e in f.peer if e.split("/")[0] not in sc.touched)
    for e in r.sample(pool, min(n_ports, len(pool))):
        sc.watch(e, ("base", r.choice(["optics", "fec", "pfc", "disc", "optics"])))
    sws = [s for s in sorted(f.switches) if s not in sc.touched]
    for s in r.sample(sws, min(env, len(sws))):
        sc.watch_env(s)


def choose_heartbeat(sc):
    f, r = sc.fab, sc.rng
    named = set()
    for inc in sc.incidents:
        for x in inc["root"]:
            named.add(x.split("/")[0].replace("link:", ""))
    cands = []
    for a, b, kind in f.links:
        if kind != "fabric":
            continue
        da, db = a.split("/")[0], b.split("/")[0]
        if da in sc.touched or db in sc.touched or da in named or db in named:
            continue
        if (b, "rx_power_dbm") in sc.series:
            continue
        cands.append(b)
    if not cands:
        cands = [e for e in sorted(f.peer) if e.split("/")[0] not in sc.touched and (e, "rx_power_dbm") not in sc.series]
    sc.hb_ent = r.choice(cands)
    sc.touched.add(sc.hb_ent.split("/")[0])


def noise(sc, chatter=8, flaps=1, clears=1, marginal=True, dup_late=True):
    f, r = sc.fab, sc.rng
    end = sc.end
    sws = sorted(f.switches)
    for _ in range(chatter):
        swn = r.choice(sws)
        sw = f.switches[swn]
        p = r.choice(sorted(sw.ports)) if sw.ports else None
        kind = r.choice(["login", "login", "ntp", "lldp", "desc", "save", "stp"])
        t = r.uniform(5, end - 5)
        sc.log(swn, t, cat_chatter(sw, kind, r, p, sw.ports.get(p)))
    hosts = sorted(f.hosts)
    for _ in range(max(1, chatter // 3)):
        h = f.hosts[r.choice(hosts)]
        sc.log(h.name, r.uniform(5, end - 5), cat_host(h, "chatter", 0, rng=r))
    # recovering sub-second flaps on links nothing else involves
    pool = sorted(a for a, b, k in f.links if k == "host" and a.split("/")[0] not in sc.touched
                  and b.split("/")[0] not in sc.touched)
    for _ in range(flaps):
        if not pool:
            break
        he = r.choice(pool)
        le = f.peer[he]
        h, nd = he.split("/", 1)
        ho = f.hosts[h]
        rail = [n[0] for n in ho.npus if n[1] == nd][0]
        t = r.uniform(60, end - 60)
        dn = r.uniform(0.15, 0.85)
        ldev, lport = le.split("/", 1)
        sc.log(ldev, t, cat_port(f.switches[ldev], lport, False))
        sc.log(ldev, t + dn, cat_port(f.switches[ldev], lport, True))
        sc.log(h, t + 0.05, cat_host(ho, "link_down", rail))
        sc.log(h, t + dn + 0.6, cat_host(ho, "link_up", rail))
        sc.watch(he, ("base", "rdma"))
        sc.step(he, "link_downed", t, 1)
        sc.clean_cand += [he, le]
    # an operator clears the counters of a healthy switch
    cands = [s for s in sws if s not in sc.touched]
    for _ in range(clears):
        if not cands:
            break
        swn = r.choice(cands)
        sw = f.switches[swn]
        ports = sorted(sw.ports)
        for p in r.sample(ports, min(3, len(ports))):
            sc.watch(f"{swn}/{p}", ("base", "fec"))
        sc.watch_env(swn)
        t = r.uniform(120, end - 60)
        sc.clear_counters(swn, t)
        sc.log(swn, t - 0.5, cat_chatter(sw, "clear", r))
        sc.clean_cand.append(swn)
    if marginal:
        # a marginal but stable module: -9.5 dBm against its own -13.9 dBm alarm (inside -10 would alarm a naive rule)
        pool = sorted(a for a, b, k in f.links if a.split("/")[0] not in sc.touched and b.split("/")[0] not in sc.touched
                      and (a, "rx_power_dbm") not in sc.series)
        if pool:
            e = r.choice(pool)
            sc.watch(e, ("base", "optics"))
            lvl = r.uniform(-10.3, -9.2)
            sc.series[(e, "rx_power_dbm")].fn = lambda t, rr, l=lvl: l + rr.gauss(0, 0.06)
            sc.series[(e, "rx_power_low_alarm_dbm")].fn = lambda t, rr: -13.9
            sc.series[(e, "rx_power_low_warning_dbm")].fn = lambda t, rr: -11.9
            # and a single low reading on another module
            e2 = r.choice(pool)
            sc.watch(e2, ("base", "optics"))
            tg = r.uniform(200, end - 100)
            sc.setv(e2, "rx_power_dbm", tg, tg + 9, lambda t, rr, old: old - r.uniform(1.0, 2.0))
            sc.clean_cand += [e, e2]


# ----------------------------------------------------------------------------------------------------
# Classes
# ----------------------------------------------------------------------------------------------------

SIZES = [4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 200]


def make_fabric(r, seed, size=None, rails=None, min_su=1, vendors=None, vendor_mode=None, eth_only=False, hps=None):
    n = size or r.choice(SIZES)
    rails = rails or r.choice([2, 4, 4, 8])
    if n * rails > 1600:
        rails = max(2, 1600 // n)
    hps_c = [x for x in (4, 8, 16, 32) if (n + x - 1) // x >= min_su and (n + x - 1) // x <= 12]
    hps = hps or (r.choice(hps_c) if hps_c else max(2, n // max(1, min_su)))
    spines = r.choice([2, 4, 4, 8])
    speed = r.choice([400, 400, 400, 200, 100])
    mode = vendor_mode or r.choice(["mixed", "mixed", "mono", "tiered"])
    net = f"127.{20 + seed % 180}.{r.randint(0, 250)}.0"
    return build_fabric(r, n, hps, rails, spines, net, speed, mode, vendors, eth_only)


class Gen:
    def __init__(self, seed, out):
        self.seed, self.out = seed, out
        self.written = []

    def rng(self, cls, i):
        return random.Random(f"outside|{self.seed}|{cls}|{i}")

    def finish(self, sc, n_bg=None, chatter=None, flaps=None, peers_symptoms=True):
        r = sc.rng
        for inc in sc.incidents:
            if peers_symptoms and inc.get("peers") and inc["elem"][0] != "none":
                vs = victims(sc, inc["peers"], inc["t0"] + r.uniform(0.5, 5), inc["t1"], inc["vk"])
                sc.clean_cand += vs
        background(sc, r.randint(4, 10) if n_bg is None else n_bg)
        choose_heartbeat(sc)
        noise(sc, chatter=r.randint(6, 16) if chatter is None else chatter,
              flaps=r.choice([0, 1, 1, 2]) if flaps is None else flaps, clears=r.choice([0, 1, 1]))
        sc.clean_cand = [c for c in sc.clean_cand if c.split("/")[0] != sc.hb_ent.split("/")[0] or "/" in c]
        self.emit(sc)

    def emit(self, sc):
        # keep the stream under the budget: drop background series first
        while True:
            n = sum(1 for _ in render_kpis(sc)) + len(sc.logs) + int(sc.end / 10) + 10
            if n <= MAX_LINES:
                break
            bg = sorted(k for k, s in sc.series.items() if not s.prio)
            if not bg:
                # slow the host reports
                for h in sc.fab.hosts.values():
                    h.poll = min(60, h.poll * 2)
                for s in sc.fab.switches.values():
                    s.poll = min(60, s.poll * 2)
                continue
            for k in sc.rng.sample(bg, max(1, len(bg) // 3)):
                del sc.series[k]
        write_scenario(sc, self.out, True)
        self.written.append(sc)

    # -- class 1 -------------------------------------------------------------------------------------
    def dialect(self, count):
        plan = [("nxos", "link_down_host"), ("huawei", "flap_errdis"), ("nxos", "reboot_leaf"), ("junos", "fan"),
                ("huawei", "psu"), ("junos", "bgp_down"), ("sonic", "pfc_storm"), ("huawei", "deadlock"),
                ("nxos", "optical_uplink"), ("eos", "flap_uplink"), ("sonic", "link_down_uplink"), ("eos", "reboot_spine"),
                ("linux", "npu_nic"), ("eos", "psu"), ("sonic", "fan"), ("junos", "link_down_uplink"), ("nxos", "psu"),
                ("huawei", "link_down_host"), ("eos", "pfc_storm"), ("junos", "flap_uplink"), ("nxos", "bgp_flap"),
                ("huawei", "overtemp")]
        off = (self.seed * 7) % len(plan)
        two = set(self.rng("dialect", 99).sample(range(count), 3))
        for i in range(count):
            focus, kind = plan[(off + i) % len(plan)]
            r = self.rng("dialect", i)
            vendors = None if focus == "linux" else [focus] * 4 + VENDORS
            fab = make_fabric(r, self.seed, vendors=vendors, vendor_mode="mixed")
            sc = Scn(f"dialect-{i:02d}-{focus}-{kind}", "dialect", self.seed, fab, r)
            t0 = r.uniform(240, 540)
            t1 = None
            if kind in ("link_down_host", "link_down_uplink", "fan", "psu") and r.random() < 0.5:
                t1 = t0 + r.uniform(200, 500)
            if kind in ("pfc_storm", "deadlock"):
                t1 = t0 + r.uniform(240, 600)
            sc.end = t0 + 900
            inc = inject(sc, kind, t0, t1, vendor=None if focus == "linux" else focus)
            span = (inc["t1"] or t0 + 300) - t0
            sc.end = min(3300, t0 + max(span, 300) + r.uniform(180, 420))
            desc = f"{focus} dialect: {kind.replace('_', ' ')}"
            if i in two:
                k2 = r.choice(["fan", "psu", "link_down_host", "crc_leaf_rx", "npu_nic"])
                t0b = r.uniform(t0 + 60, sc.end - 200)
                k2 = second(sc, k2, t0b)
                desc += f"; independently {k2.replace('_', ' ')}"
            sc.desc = desc
            sc.notes.append(f"fault at +{t0:.0f} s; dialect under test: {focus}")
            self.finish(sc)

    # -- class 2 -------------------------------------------------------------------------------------
    def counters(self, count):
        plan = ["crc_leaf_rx", "fec_leaf", "optical_uplink", "overtemp", "link_down_uplink", "ecn", "pfc_storm",
                "mtu_leaf", "qos_pfc", "buffer", "crc_uplink", "npu_admin", "fec_host", "optical_host", "qos_ecn",
                "ecn_spine", "rxlos_host"]
        off = (self.seed * 5) % len(plan)
        two = set(self.rng("counters", 99).sample(range(count), 3))
        big = self.rng("counters", 98).randrange(count)
        for i in range(count):
            kind = plan[(off + i) % len(plan)]
            r = self.rng("counters", i)
            if i == big:
                hosts = r.choice([512, 640, 1000])
                fab = build_generated(r, hosts, r.choice([2, 4, 8]) if hosts < 1000 else r.choice([1, 2]) * 2, 32, r.choice([4, 8]))
            else:
                fab = make_fabric(r, self.seed)
            sc = Scn(f"counters-{i:02d}-{kind}" + ("-large" if i == big else ""), "counters", self.seed, fab, r)
            t0 = r.uniform(360, 600)
            t1 = t0 + r.uniform(300, 700) if kind in ("ecn", "buffer", "pfc_storm", "ecn_spine") else None
            sc.end = t0 + 1200
            inc = inject(sc, kind, t0, t1)
            sc.logs.clear()      # counters only: the fault says nothing in syslog
            span = (inc["t1"] or t0 + 420) - t0
            sc.end = min(3300, t0 + max(span, 420) + r.uniform(120, 300))
            desc = f"counters only: {kind.replace('_', ' ')}"
            if r.random() < 0.5 and inc["elem"][0] != "none":
                # the operator clears the faulty device's counters in the middle of the fault
                dev = inc["root"][0].replace("link:", "").split("/")[0].split("|")[0]
                if dev in fab.switches:
                    tc = t0 + r.uniform(90, 200)
                    sc.clear_counters(dev, tc)
                    sc.watch_env(dev)
                    sc.notes.append(f"counters of {dev} cleared at +{tc:.0f} s (sysUpTime continues)")
            if i in two:
                k2 = r.choice(["crc_host_rx", "optical_host", "fan", "psu", "overtemp"])
                n_logs = len(sc.logs)
                k2 = second(sc, k2, r.uniform(t0 + 30, sc.end - 300))
                del sc.logs[n_logs:]
                desc += f"; independently {k2.replace('_', ' ')}"
            sc.desc = desc
            self.finish(sc, n_bg=r.randint(3, 8))

    # -- class 3 -------------------------------------------------------------------------------------
    def fault_type(self, count):
        plan = ["crc_host_rx", "down_leaf", "ecn", "flap_uplink", "flap_spine_link", "mtu_host", "qos_pfc",
                "pfc_storm", "deadlock", "optical_laser", "overtemp", "fan", "psu", "npu_admin", "retrans", "buffer",
                "bgp_down", "bgp_flap", "fec_host", "mtu_leaf", "qos_ecn", "npu_nic", "reboot_spine", "optical_host",
                "pfc_storm_leafonly"]
        off = (self.seed * 11) % len(plan)
        two = set(self.rng("fault_type", 99).sample(range(count), 3))
        for i in range(count):
            kind = plan[(off + i) % len(plan)]
            r = self.rng("fault_type", i)
            fab = make_fabric(r, self.seed)
            sc = Scn(f"fault_type-{i:02d}-{kind}", "fault_type", self.seed, fab, r)
            t0 = r.uniform(300, 600)
            t1 = None
            if kind in ("ecn", "buffer", "pfc_storm", "pfc_storm_leafonly", "deadlock", "retrans"):
                t1 = t0 + r.uniform(240, 600)
            sc.end = t0 + 1200
            inc = inject(sc, kind, t0, t1)
            span = (inc["t1"] or t0 + 360) - t0
            sc.end = min(3300, t0 + max(span, 360) + r.uniform(150, 360))
            desc = {"crc_host_rx": "host NIC counts symbol/FCS errors: CRC, not retransmissions",
                    "down_leaf": "a leaf loses power: it says nothing, every neighbour sees its link go",
                    "flap_spine_link": "one spine link flaps (the spine's other links are fine): the link, not the spine",
                    "flap_uplink": "a leaf uplink flaps, BGP over it goes down and up with it: one link incident",
                    "retrans": "retransmissions on one host port with no physical cause anywhere",
                    }.get(kind, kind.replace("_", " "))
            if kind == "flap_spine_link":
                sp = [x for x in inc["root"] if not x.startswith("link:") and x.split("/")[0] in fab.spines]
                if sp:
                    sc.clean_cand.append(sp[0].split("/")[0])
            if i in two:
                k2 = r.choice(["fan", "psu", "crc_leaf_rx", "link_down_host", "optical_uplink"])
                k2 = second(sc, k2, r.uniform(t0 + 40, sc.end - 250))
                desc += f"; independently {k2.replace('_', ' ')}"
            sc.desc = desc
            self.finish(sc)

    # -- class 4 -------------------------------------------------------------------------------------
    def victims_cls(self, count):
        plan = ["link_down_uplink", "flap_uplink", "crc_host_rx", "reboot_leaf", "link_down_host", "optical_uplink",
                "ecn", "reboot_spine", "npu_nic", "crc_uplink", "bgp_flap", "down_leaf"]
        off = (self.seed * 3) % len(plan)
        two = set(self.rng("victims", 99).sample(range(count), 3))
        big = self.rng("victims", 98).randrange(count)
        for i in range(count):
            kind = plan[(off + i) % len(plan)]
            r = self.rng("victims", i)
            if i == big:
                hosts = r.choice([512, 768, 1000])
                fab = build_generated(r, hosts, 8 if hosts < 1000 else 4, 32, 8)
            else:
                fab = make_fabric(r, self.seed, min_su=2, eth_only=True, size=r.choice([16, 24, 32, 48, 64, 96, 128]))
            sc = Scn(f"victims-{i:02d}-{kind}" + ("-large" if i == big else ""), "victims", self.seed, fab, r)
            t0 = r.uniform(300, 540)
            t1 = t0 + r.uniform(240, 500) if kind in ("link_down_host", "link_down_uplink", "ecn", "crc_host_rx", "crc_uplink") and r.random() < 0.6 else None
            sc.end = t0 + 1200
            inc = inject(sc, kind, t0, t1)
            inc["peers"] = []
            # jobs: two or three crossing the faulty element, one or two elsewhere
            jobs_on(sc, inc, r)
            span = (inc["t1"] or t0 + 360) - t0
            sc.end = min(3300, t0 + max(span, 360) + r.uniform(150, 360))
            # victims: every host of an affected job reports transport trouble (not a cause)
            for j in sc.jobs:
                if j["name"] in sc.affected(inc["elem"], inc["t0"], inc["t1"]):
                    hr = []
                    for h in j["hosts"]:
                        if h in sc.touched:
                            continue
                        rail = inc["elem"][2] if inc["elem"][0] == "hostlink" else (
                            fab.leaf_pos[inc["elem"][1]][1] if inc["elem"][0] in ("leaf", "uplink") else 0)
                        if rail < j["L"]:
                            hr.append((h, rail))
                    vs = victims(sc, hr[:8], t0 + r.uniform(0.5, 4), inc["t1"],
                                 "cnp" if kind == "ecn" else ("burst" if kind in ("link_down_uplink", "flap_uplink", "bgp_flap") else "timeouts"))
                    sc.clean_cand += vs
            desc = f"{kind.replace('_', ' ')} with victims on the jobs crossing it: one incident naming the cause"
            if i in two:
                k2 = r.choice(["fan", "psu", "crc_leaf_rx", "optical_host"])
                k2 = second(sc, k2, r.uniform(t0 + 40, sc.end - 250))
                sc.incidents[-1]["peers"] = []
                desc += f"; independently {k2.replace('_', ' ')}"
            sc.desc = desc
            self.finish(sc, n_bg=r.randint(2, 6))

    # -- class 5 -------------------------------------------------------------------------------------
    def job_impact(self, count):
        plan = ["link_down_host", "link_down_uplink", "reboot_spine", "reboot_leaf", "fan", "psu", "crc_host_rx",
                "flap_uplink", "npu_nic", "down_leaf", "optical_uplink", "down_spine"]
        off = (self.seed * 5 + 1) % len(plan)
        for i in range(count):
            kind = plan[(off + i) % len(plan)]
            r = self.rng("job_impact", i)
            fab = make_fabric(r, self.seed, min_su=2, eth_only=True, size=r.choice([16, 24, 32, 48, 64, 96]),
                              rails=r.choice([2, 4, 4, 8]))
            while len(fab.su_hosts) < 2 or min(len(x) for x in fab.su_hosts) < 6:
                fab = make_fabric(r, self.seed, min_su=2, eth_only=True, size=r.choice([24, 32, 48, 64]), rails=4, hps=r.choice([8, 12, 16]))
            sc = Scn(f"job_impact-{i:02d}-{kind}", "job_impact", self.seed, fab, r)
            sc.jobs_stream = True
            t0 = r.uniform(540, 780)
            repaired = kind not in ("down_leaf", "down_spine") and r.random() < 0.85
            t1 = t0 + r.uniform(240, 480) if repaired and kind not in ("reboot_spine", "reboot_leaf", "flap_uplink") else None
            sc.end = t0 + 1500
            inc = inject(sc, kind, t0, t1, opts={"su": 0} if kind not in ("fan", "psu", "reboot_spine", "down_spine") else {})
            inc["peers"] = []
            te = inc["t1"]
            timed_jobs(sc, inc, r, te)
            last_job = max([j["start"] or 0 for j in sc.jobs] + [j["end"] or 0 for j in sc.jobs])
            sc.end = min(3400, max(last_job + r.uniform(120, 300), (te or t0 + 400) + r.uniform(200, 400)))
            sc.desc = f"jobs registered and released around a {kind.replace('_', ' ')}: exactly the jobs on its path while it lasted"
            sc.notes.append(f"fault window +{t0:.0f} s .. {'+%.0f s' % te if te else 'end'}")
            for j in sc.jobs:
                sc.notes.append(f"job {j['name']}: hosts {len(j['hosts'])} x {j['L']} NPUs, "
                                f"{'+%.0f' % j['start'] if j['start'] is not None else 'before 0'} .. "
                                f"{'+%.0f' % j['end'] if j['end'] is not None else 'end'}")
            self.finish(sc, n_bg=r.randint(2, 5))

    # -- class 6 -------------------------------------------------------------------------------------
    def state(self, count):
        plan = [("fan", "open"), ("fan", "resolved"), ("psu", "open"), ("psu", "resolved"), ("rxlos_host", "open"),
                ("link_down_uplink", "resolved"), ("optical_host", "resolved"), ("overtemp", "resolved"),
                ("down_leaf", "open"), ("npu_admin", "resolved"), ("psu_unavail", "open"), ("link_down_host", "resolved")]
        off = (self.seed * 2) % len(plan)
        two = set(self.rng("state", 99).sample(range(count), 2))
        for i in range(count):
            kind, st = plan[(off + i) % len(plan)]
            r = self.rng("state", i)
            fab = make_fabric(r, self.seed, size=r.choice([4, 8, 12, 16, 32, 48, 64]))
            for s in fab.switches.values():
                s.poll = max(s.poll, 20)
            for h in fab.hosts.values():
                h.poll = 30
            sc = Scn(f"state-{i:02d}-{kind}-{st}", "state", self.seed, fab, r)
            t0 = r.uniform(240, 480)
            if st == "open":
                t1 = None
                sc.end = t0 + r.uniform(1850, 2700)
            else:
                t1 = t0 + r.uniform(420, 1200)
                sc.end = t1 + r.uniform(900, 1500)
            sc.end = min(3500, sc.end)
            opts = {}
            k = kind
            if kind == "psu_unavail":
                k, opts = "psu", {"status": 2}
            inc = inject(sc, k, t0, t1, opts=opts)
            inc["state"] = st
            if k == "rxlos_host":
                sc.notes.append("module dead: rx_los held at 1 to the end")
            desc = f"{kind.replace('_', ' ')} {'held to the end: the incident stays open' if st == 'open' else 'repaired: the incident is resolved'}"
            if i in two:
                k2 = r.choice(["fan", "psu"])
                t0b = r.uniform(t0 + 60, t0 + 400)
                k2 = second(sc, k2, t0b)
                sc.incidents[-1]["state"] = "open"
                desc += f"; independently {k2} failed and stays failed"
            sc.desc = desc
            self.finish(sc, n_bg=r.randint(2, 5), chatter=r.randint(8, 20))

    # -- class 7 -------------------------------------------------------------------------------------
    def healthy(self, count):
        for i in range(count):
            r = self.rng("healthy", i)
            long_run = i == 0
            fab = make_fabric(r, self.seed, size=r.choice([16, 32, 64]) if long_run else r.choice(SIZES),
                              vendors=VENDORS, vendor_mode="mixed")
            sc = Scn(f"healthy-{i:02d}-{'24h' if long_run else 'noise'}", "healthy", self.seed, fab, r)
            if long_run:
                sc.end = 86400 - 120
                for s in fab.switches.values():
                    s.poll = 1800
                for h in fab.hosts.values():
                    h.poll = 1800
                background(sc, r.randint(25, 40), env=4)
                chatter, flaps = 120, 12
            else:
                sc.end = r.uniform(1500, 3300)
                background(sc, r.randint(8, 16), env=3)
                chatter, flaps = r.randint(25, 60), r.randint(2, 5)
                # a switch whose counters are all cleared (sysUpTime continues) and one whose poll arrives late
                sws = sorted(fab.switches)
                swn = r.choice(sws)
                for p in r.sample(sorted(fab.switches[swn].ports), min(4, len(fab.switches[swn].ports))):
                    sc.watch(f"{swn}/{p}", ("base", "fec", "pfc"))
                sc.watch_env(swn)
            choose_heartbeat(sc)
            noise(sc, chatter=chatter, flaps=flaps, clears=2)
            sc.desc = "healthy fabric, noise only: chatter of every dialect, sub-second flaps, counter clears, " \
                      "duplicate and late samples, a marginal but stable module"
            sc.clean_cand += sorted(fab.switches)[:6]
            self.emit(sc)


def second(sc, kind, t0):
    """An independent second fault on devices the first one does not touch (a fan if nothing else fits)."""
    try:
        inject(sc, kind, t0, None)
        return kind
    except (IndexError, ValueError):
        inject(sc, "fan", t0, None)
        return "fan"


def jobs_on(sc, inc, r):
    """Pre-registered jobs for the victims class: some crossing the element, some not."""
    f = sc.fab
    elem = inc["elem"]
    used = set(sc.touched)
    n = 0

    def take(pool, k):
        c = [h for h in pool if h not in used]
        if len(c) < k:
            return None
        pick = r.sample(c, k)
        used.update(pick)
        return pick
    sus = list(range(len(f.su_hosts)))
    if elem[0] == "hostlink":
        h = elem[1]
        su = f.hosts[h].su
        others = take(f.su_hosts[su], r.randint(1, 3))
        if others:
            sc.add_job("train-a", [h] + others, f.rails)
            n += 1
        hs = take(f.su_hosts[su], 2)
        if hs:
            sc.add_job("train-b", hs, max(1, f.rails // 2))
    elif elem[0] in ("leaf", "uplink", "spine"):
        su = f.leaf_pos[elem[1]][0] if elem[0] != "spine" else 0
        other = [s for s in sus if s != su] or [su]
        a = take(f.su_hosts[su], 2)
        b = take(f.su_hosts[other[0]], 2)
        if a and b:
            sc.add_job("train-a", a + b, f.rails)
        c = take(f.su_hosts[su], 2)
        if c:
            sc.add_job("train-b", c, f.rails)
        d = take(f.su_hosts[other[-1]], 2)
        if d:
            sc.add_job("eval-c", d, max(1, f.rails // 2))
    else:
        a = take(f.su_hosts[0], 2)
        if a:
            sc.add_job("train-a", a, f.rails)


def timed_jobs(sc, inc, r, te):
    """jobs.jsonl: jobs that end before the fault, start after the repair, start during it, stay elsewhere."""
    f = sc.fab
    elem, t0 = inc["elem"], inc["t0"]
    used = set()

    def take(pool, k, excl=()):
        c = [h for h in pool if h not in used and h not in excl]
        if len(c) < k:
            return None
        pick = r.sample(c, k)
        used.update(pick)
        return pick
    rails = f.rails
    if elem[0] == "hostlink":
        h, k = elem[1], elem[2]
        su = f.hosts[h].su
        # the same host in three jobs at three times: before (no), during (yes), after the repair (no)
        a = take(f.su_hosts[su], 2, excl=[h])
        b = take(f.su_hosts[1 - su if len(f.su_hosts) > 1 else su], 2, excl=[h])
        if a:
            sc.add_job("pre-fault", [h] + a, rails, start=r.uniform(30, 120), end=t0 - r.uniform(150, 300))
        if b:
            sc.add_job("during-fault", [h] + b, rails, start=t0 + r.uniform(60, 120),
                       end=(te + r.uniform(30, 90)) if te else None)
        if te:
            c = take(f.su_hosts[su], 1, excl=[h])
            if c:
                sc.add_job("post-repair", [h] + c, rails, start=te + r.uniform(300, 420))
        # same leaf, other hosts: the faulty host link is not on their path
        d = take(f.su_hosts[su], 2, excl=[h])
        if d:
            sc.add_job("same-leaf-other-hosts", d, rails)
        # the faulty host with fewer NPUs than the faulty rail: not on its path
        if k >= 1:
            pass
        e = take(f.su_hosts[1 - su] if len(f.su_hosts) > 1 else f.su_hosts[su], 2, excl=[h])
        if e:
            sc.add_job("elsewhere", e, max(1, rails // 2), start=r.uniform(0, 200))
    elif elem[0] in ("leaf", "uplink", "spine"):
        su = f.leaf_pos[elem[1]][0] if elem[0] != "spine" else r.randrange(len(f.su_hosts))
        rail = f.leaf_pos[elem[1]][1] if elem[0] != "spine" else 0
        other = [s for s in range(len(f.su_hosts)) if s != su]
        o = other[0]
        # crossing, running throughout -> affected
        a = take(f.su_hosts[su], 1)
        a2 = take(f.su_hosts[o], 1)
        if a and a2:
            sc.add_job("span-throughout", a + a2, rails)
        # inside one SU: uses only that SU's leaves (affected only by a fault on one of them)
        b = take(f.su_hosts[su], 2)
        if b:
            sc.add_job("one-su-local", b, rails, start=r.uniform(20, 200))
        # crossing but released before the fault -> not affected
        c = take(f.su_hosts[su], 1)
        c2 = take(f.su_hosts[o], 1)
        if c and c2:
            sc.add_job("span-ended-before", c + c2, rails, start=r.uniform(10, 60), end=t0 - r.uniform(150, 300))
        # crossing, registered while the fault is active -> affected
        d = take(f.su_hosts[su], 1)
        d2 = take(f.su_hosts[o], 1)
        if d and d2:
            sc.add_job("span-started-during", d + d2, rails, start=t0 + r.uniform(45, 120))
        # crossing but on rails below the faulty one (a leaf or uplink of rail k is not on an L<=k job's path)
        if elem[0] in ("leaf", "uplink") and rail >= 1:
            e = take(f.su_hosts[su], 1)
            e2 = take(f.su_hosts[o], 1)
            if e and e2:
                sc.add_job("span-low-rails", e + e2, rail)
        # crossing, starting after the repair -> not affected
        if te:
            g = take(f.su_hosts[su], 1)
            g2 = take(f.su_hosts[o], 1)
            if g and g2:
                sc.add_job("span-after-repair", g + g2, rails, start=te + r.uniform(300, 420))
        # the other SU alone
        h_ = take(f.su_hosts[o], 2)
        if h_:
            sc.add_job("other-su-local", h_, max(1, rails // 2), end=t0 + r.uniform(60, 200))
    else:
        # a fan or PSU: no data-plane effect, whatever runs
        for k, su in enumerate(range(min(3, len(f.su_hosts)))):
            a = take(f.su_hosts[su], 2)
            if a:
                sc.add_job(f"job-{k}", a, rails, start=None if k == 0 else r.uniform(20, inc["t0"] + 60))
        o = take(f.su_hosts[0], 1)
        o2 = take(f.su_hosts[-1], 1)
        if o and o2:
            sc.add_job("span-job", o + o2, rails, start=r.uniform(100, 300))


# ----------------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--clean", action="store_true", help="remove OUT first")
    ap.add_argument("--summary", action="store_true", help="print the class x fault-type table")
    a = ap.parse_args(argv)
    if a.clean and os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out, exist_ok=True)
    g = Gen(a.seed, a.out)
    r = random.Random(f"outside-counts|{a.seed}")
    g.dialect(r.randint(10, 11))
    g.counters(r.randint(10, 11))
    g.fault_type(r.randint(12, 14))
    g.victims_cls(r.randint(10, 11))
    g.job_impact(r.randint(10, 11))
    g.state(r.randint(10, 11))
    g.healthy(r.randint(3, 4))
    classes = ["dialect", "counters", "fault_type", "victims", "job_impact", "state", "healthy"]
    per = {c: [s for s in g.written if s.cls == c] for c in classes}
    for c in classes[:6]:
        assert len(per[c]) >= 8, c
    assert len(per["healthy"]) >= 3 and len(g.written) >= 64
    two = sum(1 for s in g.written if len(s.incidents) >= 2)
    print(f"wrote {len(g.written)} scenarios to {a.out} (seed {a.seed}; {two} with two faults; "
          f"{sum(s.total_lines for s in g.written)} stream lines; replay with --base {BASE_TEXT} --speed 0)")
    if a.summary:
        types = sorted({inc["types"][0] for s in g.written for inc in s.incidents})
        w = max(len(t) for t in types + ["fault type"])
        head = f"{'fault type':<{w}} " + " ".join(f"{c[:10]:>10}" for c in classes[:6]) + "      total"
        print(head)
        for t in types:
            row = [sum(1 for s in per[c] for inc in s.incidents if inc["types"][0] == t) for c in classes[:6]]
            print(f"{t:<{w}} " + " ".join(f"{x:>10}" for x in row) + f" {sum(row):>10}")
        print(f"{'scenarios':<{w}} " + " ".join(f"{len(per[c]):>10}" for c in classes[:6]) +
              f" {sum(len(per[c]) for c in classes[:6]):>10}")
        print(f"healthy scenarios (no incident): {len(per['healthy'])}; two-fault scenarios: {two}; "
              f"largest: {max(len(s.fab.hosts) for s in g.written)} hosts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
