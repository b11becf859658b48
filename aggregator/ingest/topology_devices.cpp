#include "ingest/topology_devices.h"

#include <chrono>
#include <mutex>
#include <optional>

#include "services/refresh_gate.h"

namespace hsns::ingest {
namespace {

// The model as last read: read again from the cache as soon as its change mark moved (a log line right
// after an import maps to the new devices), else at most once a second.
class TopologySource {
 public:
  explicit TopologySource(std::shared_ptr<services::TopologyCache> cache) : cache_(std::move(cache)) {}

  std::shared_ptr<const topology::Topology> model() {
    const std::lock_guard lock(mutex_);
    if (gate_.due(cache_->change_mark(), std::chrono::steady_clock::now())) {
      auto snapshot = cache_->current();
      model_ = snapshot ? snapshot->topology : nullptr;
    }
    return model_;
  }

 private:
  std::shared_ptr<services::TopologyCache> cache_;
  std::mutex mutex_;
  services::RefreshGate<std::int64_t> gate_{std::chrono::seconds(1)};
  std::shared_ptr<const topology::Topology> model_;
};

}  // namespace

DeviceResolver topology_device_resolver(std::shared_ptr<services::TopologyCache> cache) {
  auto source = std::make_shared<TopologySource>(std::move(cache));
  return [source](std::string_view hostname, std::string_view address) -> std::optional<std::string> {
    const auto model = source->model();
    if (!model) return std::nullopt;
    const NameResolver by_name([&model](std::string_view name, std::string& device) {
      const auto id = model->find(name);
      if (!id) return false;
      device.assign(name);
      return true;
    });
    if (auto device = by_name(hostname, address)) return device;
    // No hostname (NX-OS's default header) or one the topology does not know: the sender's management
    // address (an IPv4 sender on a dual-stack socket arrives as ::ffff:a.b.c.d).
    std::string_view sender = address;
    if (sender.starts_with("::ffff:") && sender.find('.') != std::string_view::npos) sender.remove_prefix(7);
    if (const auto id = model->find_by_management_address(sender)) return model->node(*id).name;
    return std::nullopt;
  };
}

LogSubscriber keep_in(LogBuffer& buffer, IngestMetrics& metrics) {
  return [&buffer, &metrics](const IngestedLog& log) {
    const auto added = buffer.add(log);
    if (!added.stored) metrics.dropped("buffer_full");
    metrics.outside_window("syslog", added.time);
    metrics.evicted(added.evicted);
  };
}

}  // namespace hsns::ingest
