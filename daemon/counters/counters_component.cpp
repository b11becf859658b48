#include "counters_component.h"

#include <chrono>
#include <set>

#include "hsns/log.h"
#include "metrics.h"

namespace hsns::daemon::counters {
namespace {

constexpr const char* kSources[] = {"rdma_counters", "rdma_hw_counters", "netdev_statistics", "ethtool"};

prometheus::Family<prometheus::Counter>& family(prometheus::Registry& registry, const std::string& name,
                                                const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

CounterTargets counter_targets(const Inventory& inventory) {
  CounterTargets t;
  std::set<std::string> netdevs;
  for (const auto& n : inventory.npus)
    if (netdevs.insert(n.netdev).second) t.netdevs.push_back(n.netdev);
  for (const auto& r : inventory.rdma)
    if (!r.netdev.empty() && netdevs.count(r.netdev) != 0) t.rdma_ports.emplace_back(r.device, r.port);
  return t;
}

CountersComponent::CountersComponent(const DaemonConfig& config, prometheus::Registry& registry,
                                     EthtoolSource ethtool)
    : config_(config),
      ethtool_(std::move(ethtool)),
      rdma_bytes_(family(registry, "hsns_rdma_port_bytes_total",
                         "Bytes sent (tx) and received (rx) by an RDMA port (counters/port_*_data times 4)")),
      rdma_packets_(family(registry, "hsns_rdma_port_packets_total",
                           "Packets sent (tx) and received (rx) by an RDMA port (counters/port_*_packets)")),
      rdma_counter_(family(registry, "hsns_rdma_port_events_total",
                           "An RDMA port's other InfiniBand PMA counters (counters/<counter>)")),
      rdma_hw_counter_(family(registry, "hsns_rdma_hw_events_total",
                              "An RDMA port's driver counters (hw_counters/<counter>): congestion, loss, "
                              "retransmission, receiver starvation")),
      netdev_bytes_(family(registry, "hsns_netdev_bytes_total", "Bytes sent and received by a netdev")),
      netdev_packets_(family(registry, "hsns_netdev_packets_total", "Packets sent and received by a netdev")),
      netdev_statistic_(family(registry, "hsns_netdev_statistic_total",
                               "A netdev's other standard statistics (statistics/<counter>)")),
      pause_frames_(family(registry, "hsns_port_pause_frames_total",
                           "PFC pause frames received (rx) and sent (tx) per priority")),
      pause_seconds_(family(registry, "hsns_port_pause_duration_seconds_total",
                            "Time paused by PFC per priority, received (rx) and sent (tx) pauses")),
      read_errors_(family(registry, "hsns_counters_read_errors_total",
                          "Counter files, netdevs or ethtool queries that could not be read, by source")),
      discontinuities_(family(registry, "hsns_counters_discontinuities_total",
                              "Counters that went down: taken as a reset or as a wrap")),
      readings_(add_counter(registry, "hsns_counters_readings_total", "Readings of the ports' counters")) {
  for (const char* source : kSources) read_errors_.Add({{"source", source}});
  discontinuities_.Add({{"kind", "reset"}});
  discontinuities_.Add({{"kind", "wrap"}});
}

tl::expected<void, std::string> CountersComponent::start() {
  read(Clock::now());
  started_ = true;
  return {};
}

Component::Clock::time_point CountersComponent::tick(Clock::time_point now) {
  if (now >= next_read_) read(now);
  return next_read_;
}

prometheus::Counter& CountersComponent::counter(prometheus::Family<prometheus::Counter>& f,
                                                const std::map<std::string, std::string>& labels) {
  return f.Add(labels);
}

proto::CounterSample CountersComponent::update(const std::string& key, const CounterReading& reading,
                                               double interval_s, prometheus::Counter& metric,
                                               double metric_scale) {
  const auto s = tracker_.update(key, reading.raw, reading.width, reading.scale, interval_s);
  const auto added = tracker_.last_was_first() ? s.value : s.delta;
  metric.Increment(static_cast<double>(added) * metric_scale);
  return s;
}

void CountersComponent::read_rdma_port(const std::string& device, int port, double interval_s,
                                       std::vector<ReadError>& errors) {
  const auto reading = counters::read_rdma_port(config_.sysfs_root, device, port, errors, dirs_);
  proto::RdmaPortCounters p;
  p.device = device;
  p.port = port;
  const auto port_label = std::to_string(port);
  const auto prefix = "rdma/" + device + "/" + port_label + "/";
  for (const auto& c : reading.counters) {
    if (!proto::is_counter_name(c.name)) continue;
    prometheus::Counter* metric = nullptr;
    if (c.name == "port_xmit_data" || c.name == "port_rcv_data")
      metric =
          &counter(rdma_bytes_,
                   {{"device", device}, {"port", port_label}, {"direction", c.name[5] == 'x' ? "tx" : "rx"}});
    else if (c.name == "port_xmit_packets" || c.name == "port_rcv_packets")
      metric =
          &counter(rdma_packets_,
                   {{"device", device}, {"port", port_label}, {"direction", c.name[5] == 'x' ? "tx" : "rx"}});
    else
      metric = &counter(rdma_counter_, {{"device", device}, {"port", port_label}, {"counter", c.name}});
    p.counters[c.name] = update(prefix + "counters/" + c.name, c, interval_s, *metric);
  }
  for (const auto& c : reading.hw_counters) {
    if (!proto::is_counter_name(c.name)) continue;
    auto& metric = counter(rdma_hw_counter_, {{"device", device}, {"port", port_label}, {"counter", c.name}});
    p.hw_counters[c.name] = update(prefix + "hw_counters/" + c.name, c, interval_s, metric);
  }
  snapshot_.rdma.push_back(std::move(p));
}

void CountersComponent::read_netdev(const std::string& netdev, double interval_s,
                                    std::vector<ReadError>& errors) {
  proto::NetdevCounters n;
  n.netdev = netdev;
  const auto prefix = "netdev/" + netdev + "/";
  for (const auto& c : read_netdev_statistics(config_.sysfs_root, netdev, errors, dirs_)) {
    if (!proto::is_counter_name(c.name)) continue;
    prometheus::Counter* metric = nullptr;
    if (c.name == "rx_bytes" || c.name == "tx_bytes")
      metric = &counter(netdev_bytes_, {{"netdev", netdev}, {"direction", c.name.substr(0, 2)}});
    else if (c.name == "rx_packets" || c.name == "tx_packets")
      metric = &counter(netdev_packets_, {{"netdev", netdev}, {"direction", c.name.substr(0, 2)}});
    else
      metric = &counter(netdev_statistic_, {{"netdev", netdev}, {"counter", c.name}});
    n.statistics[c.name] = update(prefix + "statistics/" + c.name, c, interval_s, *metric);
  }
  if (ethtool_) {
    auto stats = ethtool_(netdev);
    if (!stats) {
      // read_ethtool_stats' reasons start "ethtool <netdev>: ", which the log line already says.
      const auto prefix_said = "ethtool " + netdev + ": ";
      auto reason = stats.error();
      if (reason.starts_with(prefix_said)) reason.erase(0, prefix_said.size());
      errors.push_back({"ethtool", netdev, std::move(reason)});
    } else {
      std::set<std::string> first;  // statistics read for the first time: their metric adds the value
      const auto key_prefix = prefix + "ethtool/";
      for (const auto& [name, value] : *stats) {
        if (!proto::is_counter_name(name) || n.ethtool.count(name) != 0) continue;
        n.ethtool.emplace(name, tracker_.update(key_prefix + name, value, 64, 1, interval_s));
        if (tracker_.last_was_first()) first.insert(name);
      }
      // Only the pause counters become metrics (see the header).
      const auto add = [&](prometheus::Family<prometheus::Counter>& f, const std::string& prio,
                           const char* direction, const std::string& name, double scale) {
        const auto& s = n.ethtool.at(name);
        const auto amount = first.count(name) != 0 ? s.value : s.delta;
        counter(f, {{"netdev", netdev}, {"priority", prio}, {"direction", direction}})
            .Increment(static_cast<double>(amount) * scale);
        return s;
      };
      for (const auto& raw : priority_pause(*stats)) {
        const auto prio = std::to_string(raw.priority);
        proto::PriorityPause p;
        p.priority = raw.priority;
        p.rx_frames = add(pause_frames_, prio, "rx", "rx_prio" + prio + "_pause", 1);
        p.tx_frames = add(pause_frames_, prio, "tx", "tx_prio" + prio + "_pause", 1);
        p.rx_duration_us = add(pause_seconds_, prio, "rx", "rx_prio" + prio + "_pause_duration", 1e-6);
        p.tx_duration_us = add(pause_seconds_, prio, "tx", "tx_prio" + prio + "_pause_duration", 1e-6);
        n.pause.push_back(p);
      }
    }
  }
  snapshot_.netdevs.push_back(std::move(n));
}

void CountersComponent::account(const std::vector<ReadError>& errors) {
  for (const auto& e : errors) {
    read_errors_.Add({{"source", e.source}}).Increment();
    ++snapshot_.read_errors[e.source];
    if (logged_paths_.insert(e.source + ":" + e.path).second)
      HSNS_LOG(warning) << "counters: " << e.source << " " << e.path << ": " << e.reason
                        << " (counted in hsns_counters_read_errors_total; logged once)";
  }
}

void CountersComponent::read(Clock::time_point now) {
  const double interval_s = have_previous_ ? std::chrono::duration<double>(now - last_read_).count() : 0.0;
  const auto resets_before = tracker_.resets();
  const auto wraps_before = tracker_.wraps();
  snapshot_ = proto::CountersSnapshot{};
  snapshot_.ts_ms = unix_ms();
  snapshot_.interval_ms =
      have_previous_ ? static_cast<std::uint64_t>(
                           std::chrono::duration_cast<std::chrono::milliseconds>(now - last_read_).count())
                     : 0;

  std::vector<ReadError> errors;
  const auto targets = counter_targets(discover(config_));
  for (const auto& [device, port] : targets.rdma_ports) read_rdma_port(device, port, interval_s, errors);
  for (const auto& netdev : targets.netdevs) read_netdev(netdev, interval_s, errors);
  tracker_.forget_unseen();
  dirs_.drop_unused();
  account(errors);

  snapshot_.resets = tracker_.resets() - resets_before;
  snapshot_.wraps = tracker_.wraps() - wraps_before;
  discontinuities_.Add({{"kind", "reset"}}).Increment(static_cast<double>(snapshot_.resets));
  discontinuities_.Add({{"kind", "wrap"}}).Increment(static_cast<double>(snapshot_.wraps));
  readings_.Increment();
  have_previous_ = true;
  last_read_ = now;
  next_read_ = now + telemetry_interval(config_);
}

}  // namespace hsns::daemon::counters
