#include "rdma_qp_component.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "hsns/log.h"
#include "inventory.h"
#include "metrics.h"
#include "roce_sport.h"

namespace hsns::daemon {
namespace {

std::string read_comm(const std::string& procfs_root, std::uint32_t pid) {
  std::ifstream in(std::filesystem::path(procfs_root) / std::to_string(pid) / "comm");
  std::string comm;
  std::getline(in, comm);
  if (comm.size() > 64) comm.resize(64);
  return comm;
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

proto::QpInventory to_inventory(const rdma::QpSnapshot& snapshot, const std::string& host, std::int64_t ts_ms,
                                const std::string& procfs_root, const RoceV2Ports& roce_v2_ports) {
  proto::QpInventory inv;
  inv.host = host;
  inv.ts_ms = ts_ms;
  inv.qps.reserve(snapshot.qps.size());
  for (const auto& e : snapshot.qps) {
    proto::QpRecord q;
    q.device = e.device;
    q.port = e.port;
    q.lqpn = e.lqpn & proto::kMaxQpn;
    if (e.rqpn) q.rqpn = *e.rqpn & proto::kMaxQpn;
    q.type = rdma::qp_type_name(e.type);
    q.state = rdma::qp_state_name(e.state);
    q.pid = e.pid;
    q.kernel = !e.kern_name.empty();
    q.comm = q.kernel ? e.kern_name : e.pid ? read_comm(procfs_root, *e.pid) : std::string();
    if (e.src && e.dst && e.src->family == e.dst->family)
      q.addresses = proto::QpAddresses{e.src->family, e.src->address, e.dst->address};
    if (e.type == rdma::kQpTypeRc && q.rqpn && roce_v2_ports.contains({e.device, e.port}))
      q.sport = rdma::rocev2_source_port(q.lqpn, *q.rqpn);
    inv.qps.push_back(std::move(q));
  }
  return inv;
}

RoceV2Ports discover_roce_v2_ports(const DaemonConfig& config) {
  RoceV2Ports out;
  for (const auto& p : discover(config).rdma)
    if (p.link_layer == "Ethernet" && !p.rocev2_gids.empty() && p.port > 0)
      out.emplace(p.device, static_cast<std::uint32_t>(p.port));
  return out;
}

RdmaQpComponent::RdmaQpComponent(const DaemonConfig& config, std::string host, prometheus::Registry& registry,
                                 QpSnapshotSource source)
    : config_(config),
      host_(std::move(host)),
      source_(std::move(source)),
      qps_family_(prometheus::BuildGauge()
                      .Name("hsns_rdma_qps")
                      .Help("RDMA queue pairs of the last inventory by device, port, state and type")
                      .Register(registry)),
      errors_family_(prometheus::BuildCounter()
                         .Name("hsns_rdma_qp_read_errors_total")
                         .Help("Failed RDMA netlink QP inventory reads (and CM ID dumps) by reason")
                         .Register(registry)),
      reads_(add_counter(registry, "hsns_rdma_qp_reads_total", "Successful RDMA netlink QP inventory reads")),
      available_(add_gauge(registry, "hsns_rdma_netlink_available",
                           "1 when the kernel answers RDMA netlink, 0 when it has none")),
      last_read_(add_gauge(registry, "hsns_rdma_qp_last_read_timestamp_seconds",
                           "Unix time of the last successful QP inventory read")) {
  for (const auto reason : rdma::kNlErrorReasons) errors_family_.Add({{"reason", std::string(reason)}});
  inventory_.host = host_;
}

tl::expected<void, std::string> RdmaQpComponent::start() {
  read_once();
  next_ = Clock::now() + telemetry_interval(config_);
  started_ = true;
  return {};
}

Component::Clock::time_point RdmaQpComponent::tick(Clock::time_point now) {
  if (now >= next_) {
    read_once();
    next_ = now + telemetry_interval(config_);
  }
  return next_;
}

void RdmaQpComponent::count_error(const rdma::NlError& error) {
  errors_family_.Add({{"reason", error.reason}}).Increment();
}

void RdmaQpComponent::read_once() {
  auto snapshot = source_();
  if (!snapshot) {
    const auto& e = snapshot.error();
    count_error(e);
    if (e.reason == "absent") {
      available_.Set(0);
      inventory_ = proto::QpInventory{host_, unix_ms(), {}};
      export_counts();
      if (!absent_logged_)
        HSNS_LOG(notice) << "rdma_qp: RDMA netlink is absent (" << e.detail
                         << "); the QP inventory stays empty until it appears";
      absent_logged_ = true;
      return;
    }
    available_.Set(1);
    if (e.detail != last_warning_) HSNS_LOG(warning) << "rdma_qp: QP inventory read failed: " << e.detail;
    last_warning_ = e.detail;
    return;
  }
  if (absent_logged_) HSNS_LOG(info) << "rdma_qp: RDMA netlink answers; reading the QP inventory";
  absent_logged_ = false;
  last_warning_.clear();
  for (const auto& w : snapshot->warnings) {
    count_error(w);
    HSNS_LOG(debug) << "rdma_qp: " << w.detail;
  }
  bool any_rc = false;
  for (const auto& q : snapshot->qps) any_rc = any_rc || (q.type == rdma::kQpTypeRc && q.rqpn);
  const auto ports = any_rc ? discover_roce_v2_ports(config_) : RoceV2Ports{};
  const auto now_ms = unix_ms();
  inventory_ = to_inventory(*snapshot, host_, now_ms, config_.procfs_root, ports);
  available_.Set(1);
  reads_.Increment();
  last_read_.Set(static_cast<double>(now_ms) / 1000.0);
  export_counts();
}

void RdmaQpComponent::export_counts() {
  std::map<std::map<std::string, std::string>, int> counts;
  for (const auto& q : inventory_.qps)
    ++counts[{{"device", q.device}, {"port", std::to_string(q.port)}, {"state", q.state}, {"type", q.type}}];
  for (auto it = qp_series_.begin(); it != qp_series_.end();) {
    if (counts.contains(it->first)) {
      ++it;
      continue;
    }
    qps_family_.Remove(it->second);
    it = qp_series_.erase(it);
  }
  for (const auto& [labels, n] : counts) {
    auto& gauge = qp_series_[labels];
    if (!gauge) gauge = &qps_family_.Add(labels);
    gauge->Set(n);
  }
}

}  // namespace hsns::daemon
