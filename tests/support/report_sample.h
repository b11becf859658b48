// A complete telemetry report batch (hsns/proto/report.h) with every section filled, for the report
// contract's round-trip tests, the ingest route's tests and bench/report_ingest.
//
// Contract: sample_report(seq, flow_records, ports) is valid for read_report (every section's own rules);
// records and ports are numbered so that no two are equal. flow_between() is a flow record's key for the
// tests that set its counts themselves. rows_form(document, bytes) rewrites a report
// document's flow batches from a document per record into the rows form of hsns/proto/flows.h (addresses as
// byte strings when `bytes`, else as text): the tests' own writer of that form, independent of hsnsd's
// encoder; rows_form_report(r) is the Report such a document reads to (no host, the batch's epoch).
// Header-only; values only.
#pragma once

#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hsns/proto/report.h"

namespace hsns::testing {

inline proto::FlowRecord sample_report_flow(std::uint64_t epoch, std::size_t i) {
  proto::FlowRecord f;
  f.host = "node-1";
  f.ifindex = 7;
  f.ifname = "ens1f0np0";
  f.direction = proto::FlowDirection::egress;
  f.family = 4;
  f.src = "198.18.0." + std::to_string(1 + i % 200);
  f.dst = "198.18.1." + std::to_string(1 + i % 200);
  f.sport = static_cast<std::uint16_t>(0xC000 + i % 0x3FFF);
  f.dest_qp = static_cast<std::uint32_t>(0x100 + i);
  f.packets = 1000 + i;
  f.bytes = 4096 * (1000 + i);
  f.first_ns = 1'764'640'000'000'000'000;
  f.last_ns = f.first_ns + 500'000'000;
  f.op[1] = 900;
  f.op[4] = 100 + i;
  f.ect = 1000;
  f.ce = i % 3;
  f.cnp = i % 2;
  f.psn = proto::FlowPsn{1, 1000, 1000};
  f.epoch = epoch;
  return f;
}

// A flow record of `host` on eth0 (ifindex 2) from src to dst (IPv4): the key; the tests set the counts.
inline proto::FlowRecord flow_between(const std::string& host, proto::FlowDirection direction,
                                      const std::string& src, const std::string& dst, std::uint16_t sport) {
  proto::FlowRecord f;
  f.host = host;
  f.ifindex = 2;
  f.ifname = "eth0";
  f.direction = direction;
  f.src = src;
  f.dst = dst;
  f.sport = sport;
  return f;
}

inline proto::CounterSample sample_counter(std::uint64_t i) {
  return {1'000'000 + i, 1000 + i, 100.0 + static_cast<double>(i)};
}

inline proto::Report sample_report(std::uint64_t seq, std::size_t flow_records = 4, std::size_t ports = 2) {
  proto::Report r;
  r.seq = seq;
  r.ts_ms = 1'764'640'000'000 + static_cast<std::int64_t>(seq) * 10'000;

  proto::CountersSnapshot c;
  c.ts_ms = r.ts_ms;
  c.interval_ms = 10'000;
  c.read_errors["ethtool"] = 1;
  for (std::size_t p = 0; p < ports; ++p) {
    const std::string netdev = "ens" + std::to_string(p) + "f0np0";
    proto::RdmaPortCounters rdma;
    rdma.device = "mlx5_" + std::to_string(p);
    rdma.netdev = netdev;
    rdma.counters["port_xmit_data"] = sample_counter(p);
    rdma.counters["port_rcv_data"] = sample_counter(p + 1);
    rdma.hw_counters["np_cnp_sent"] = sample_counter(p + 2);
    c.rdma.push_back(rdma);
    proto::NetdevCounters nd;
    nd.netdev = netdev;
    nd.statistics["rx_bytes"] = sample_counter(p + 3);
    nd.ethtool["rx_prio3_pause"] = sample_counter(p + 4);
    nd.pause.push_back({3, sample_counter(1), sample_counter(2), sample_counter(3), sample_counter(4)});
    c.netdevs.push_back(nd);

    proto::PortOperState ps;
    ps.name = netdev;
    ps.oper_state = p % 2 == 0 ? "up" : "down";
    if (p % 2 == 0) ps.speed_mbps = 400'000;
    r.ports.push_back(ps);
  }
  r.counters = c;

  proto::QpInventory qp;
  qp.host = "node-1";
  qp.ts_ms = r.ts_ms;
  proto::QpRecord q;
  q.device = "mlx5_0";
  q.port = 1;
  q.lqpn = 0x101;
  q.rqpn = 0x202;
  q.type = "RC";
  q.state = "RTS";
  q.pid = 4242;
  q.comm = "trainer";
  q.addresses = proto::QpAddresses{4, "198.18.0.1", "198.18.1.1"};
  q.sport = 0xC123;
  qp.qps.push_back(q);
  r.qp = qp;

  proto::OpticsReport optics;
  optics.host = "node-1";
  optics.ts_ms = r.ts_ms;
  proto::ModuleDiagnostics m;
  m.netdev = "ens0f0np0";
  m.standard = proto::ModuleStandard::cmis;
  m.vendor = "ACME";
  m.serial = "SN0001";
  m.temperature_celsius = 41.5;
  m.voltage_volts = 3.3;
  proto::LaneDiagnostics lane;
  lane.lane = 1;
  lane.tx_power_watts = 0.0012;
  lane.rx_power_watts = 0.0011;
  lane.bias_amperes = 0.007;
  m.lanes.push_back(lane);
  optics.modules.push_back(m);
  r.optics = optics;

  proto::LldpNeighbors lldp;
  lldp.host = "node-1";
  lldp.ts_ms = r.ts_ms;
  proto::LldpNeighbor n;
  n.netdev = "ens0f0np0";
  n.npu = 0;
  n.source_mac = "aa:bb:cc:dd:ee:01";
  n.chassis_id_subtype = "mac_address";
  n.chassis_id = "aa:bb:cc:dd:ee:01";
  n.port_id_subtype = "interface_name";
  n.port_id = "swp12";
  n.ttl_s = 120;
  n.last_seen_ms = r.ts_ms;
  n.system_name = "leaf-3";
  lldp.neighbors.push_back(n);
  r.lldp = lldp;

  if (flow_records > 0) {
    proto::ReportFlowBatch b;
    b.epoch = seq;
    for (std::size_t i = 0; i < flow_records; ++i) b.records.push_back(sample_report_flow(seq, i));
    r.flows.push_back(std::move(b));
  }
  return r;
}

inline nlohmann::json rows_form(nlohmann::json document, bool bytes) {
  using nlohmann::json;
  const auto address = [bytes](const json& record, const char* name) -> json {
    const std::string text = record[name];
    if (!bytes) return text;
    const bool v4 = record["family"] == 4;
    std::vector<std::uint8_t> raw(v4 ? 4 : 16);
    inet_pton(v4 ? AF_INET : AF_INET6, text.c_str(), raw.data());
    return json::binary(raw);
  };
  for (auto& batch : document["flows"]) {
    json rows = json::array();
    for (const auto& f : batch["records"]) {
      json row = json::array();
      for (const char* name : proto::kFlowRowFields) {
        const std::string n = name;
        if (n == "src" || n == "dst") {
          row.push_back(address(f, name));
        } else if (n == "direction") {
          row.push_back(f[name] == "ingress" ? 0 : f[name] == "egress" ? 1 : 2);
        } else if (n.rfind("op_", 0) == 0) {
          row.push_back(f["op"][n.substr(3)]);
        } else if (n.rfind("nak_", 0) == 0) {
          row.push_back(f["nak"][n.substr(4)]);
        } else {
          row.push_back(f.contains(n) ? f[n] : json(nullptr));
        }
      }
      rows.push_back(std::move(row));
    }
    batch.erase("records");
    batch["fields"] = proto::kFlowRowFields;
    batch["rows"] = std::move(rows);
  }
  return document;
}

inline proto::Report rows_form_report(proto::Report r) {
  for (auto& b : r.flows)
    for (auto& f : b.records) {
      f.host.clear();
      f.epoch = b.epoch;
    }
  return r;
}

}  // namespace hsns::testing
