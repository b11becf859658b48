// What feeding a report's LLDP section to the topology costs (services::TopologyService::
// merge_reported_lldp, called by POST /api/v1/agents/{host}/reports after the batch is stored), beside the
// baseline of the same run: storing the same report (store::SqliteTelemetryStore::ingest, the work every
// report costs anyway). One SQLite file (WAL, synchronous=FULL), a rail-aligned topology of H hosts x 8
// NPUs on 8 leaves and 4 spines imported without host links, a report per host with its 8 neighbours.
//   first:     each host's first report: its 8 links are added (a new model and a stored revision)
//   unchanged: the same neighbours again, after every other host moved the revision (the model holds
//              them already: one comparison)
// Figures: milliseconds per report (wall; the calling thread's CPU time beside it) and the ratios
// first / ingest and unchanged / ingest that docs/performance.md reports.
//
// Usage: hsns_bench_lldp_report_merge [hosts=1024] [reports=200]     (reports <= hosts)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "hsns/proto/report.h"
#include "services/topology_cache.h"
#include "services/topology_service.h"
#include "store/database.h"
#include "store/sqlite_telemetry_store.h"
#include "store/sqlite_topology_store.h"

namespace {

using hsns::bench::Clock;
using hsns::bench::ms_since;
using hsns::bench::thread_cpu_ms;
namespace proto = hsns::proto;
namespace store = hsns::store;

constexpr int kNpus = 8;
constexpr int kSpines = 4;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "lldp_report_merge: %s\n", what);
    std::exit(1);
  }
}

std::string host_name(int i) {
  return "host" + std::to_string(i);
}

std::string topology_yaml(int hosts) {
  std::string y = "version: 1\nname: bench\ndefaults: {bandwidth_gbps: 400, latency_us: 0.5}\nswitches:\n";
  for (int j = 0; j < kNpus; ++j) y += "  - {name: leaf" + std::to_string(j) + ", tier: leaf}\n";
  for (int k = 0; k < kSpines; ++k) y += "  - {name: spine" + std::to_string(k) + ", tier: spine}\n";
  y += "hosts:\n";
  for (int i = 0; i < hosts; ++i) {
    y += "  - name: " + host_name(i) + "\n    npus:\n";
    for (int j = 0; j < kNpus; ++j) {
      y += "      - {index: " + std::to_string(j) + ", port: eth" + std::to_string(j) + "}\n";
    }
  }
  y += "links:\n";
  for (int j = 0; j < kNpus; ++j) {
    for (int k = 0; k < kSpines; ++k) {
      y += "  - {lower: leaf" + std::to_string(j) + ", upper: spine" + std::to_string(k) + "}\n";
    }
  }
  return y;
}

proto::Report report_of(int i) {
  proto::Report r;
  r.seq = 1;
  r.ts_ms = 1'764'640'000'000;
  proto::LldpNeighbors section{host_name(i), r.ts_ms, {}};
  for (int j = 0; j < kNpus; ++j) {
    proto::LldpNeighbor n;
    n.netdev = "eth" + std::to_string(j);
    n.npu = j;
    n.source_mac = "02:00:00:00:00:0" + std::to_string(j);
    n.chassis_id_subtype = "mac_address";
    n.chassis_id = n.source_mac;
    n.port_id_subtype = "interface_name";
    n.port_id = "h" + std::to_string(i);
    n.ttl_s = 120;
    n.last_seen_ms = r.ts_ms;
    n.system_name = "leaf" + std::to_string(j);
    section.neighbors.push_back(std::move(n));
  }
  r.lldp = std::move(section);
  return r;
}

struct Figures {
  double wall_ms = 0;
  double cpu_ms = 0;
};

template <typename Fn>
Figures timed(Fn fn) {
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  fn();
  return {ms_since(t0), thread_cpu_ms() - cpu0};
}

}  // namespace

int main(int argc, char** argv) {
  const int hosts = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int reports = argc > 2 ? std::atoi(argv[2]) : 200;
  check(hosts >= 1 && reports >= 1 && reports <= hosts, "usage: [hosts >= 1] [1 <= reports <= hosts]");
  const auto dir = std::filesystem::temp_directory_path() / ("hsns-bench-lldp-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    store::Database db({(dir / "bench.db").string()});
    {
      auto lease = db.writer();
      check(lease.has_value(), "writer");
      for (int i = 0; i < reports; ++i) {
        check(lease->connection()
                  .execute("INSERT INTO hosts (name, generation, created_at, updated_at) VALUES ('" +
                           host_name(i) + "', 1, '', '')")
                  .has_value(),
              "register host");
      }
    }
    store::SqliteTelemetryStore telemetry(db);
    store::SqliteTopologyStore topology_store(db);
    hsns::services::TopologyService topology(std::make_shared<hsns::services::TopologyCache>(topology_store));
    check(topology.import_document(topology_yaml(hosts), hsns::topology::FileFormat::kYaml).has_value(),
          "import");
    std::vector<proto::Report> batches;
    batches.reserve(static_cast<std::size_t>(reports));
    for (int i = 0; i < reports; ++i) batches.push_back(report_of(i));

    const Figures ingest = timed([&] {
      for (int i = 0; i < reports; ++i)
        check(telemetry.ingest(host_name(i), batches[i], 1000).has_value(), "ingest");
    });
    const Figures first = timed([&] {
      for (const auto& b : batches) {
        auto r = topology.merge_reported_lldp(*b.lldp);
        check(r.has_value() && !r->unchanged && r->outcome.report.added == kNpus, "first merge");
      }
    });
    const Figures unchanged = timed([&] {
      for (const auto& b : batches) {
        auto r = topology.merge_reported_lldp(*b.lldp);
        check(r.has_value() && r->unchanged, "unchanged merge");
      }
    });
    const auto per = [&](const Figures& f) { return f.wall_ms / reports; };
    std::printf("topology: %d hosts x %d NPUs; %d reports of %d neighbours each\n", hosts, kNpus, reports,
                kNpus);
    std::printf("%-34s %10s %10s %8s\n", "", "ms/report", "cpu ms", "ratio");
    std::printf("%-34s %10.3f %10.3f %8s\n", "baseline: telemetry ingest", per(ingest),
                ingest.cpu_ms / reports, "1.00");
    std::printf("%-34s %10.3f %10.3f %8.2f\n", "LLDP feed, first report (adds 8)", per(first),
                first.cpu_ms / reports, first.wall_ms / ingest.wall_ms);
    std::printf("%-34s %10.3f %10.3f %8.2f\n", "LLDP feed, unchanged", per(unchanged),
                unchanged.cpu_ms / reports, unchanged.wall_ms / ingest.wall_ms);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
