#include "isolation.h"

#include <net/if.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "bpf/bpffs.h"
#include "bpf/tc_attach.h"
#include "hsns/log.h"
#include "isolation_maps.h"

namespace hsns::daemon {
namespace {

constexpr const char* kMapNames[] = {"hsns_iso_fast", "hsns_iso_v4", "hsns_iso_v6", "hsns_iso_ports",
                                     "hsns_iso_counters"};
constexpr bpf::TcUser kUser = bpf::TcUser::isolation;

std::string errno_text(int err) {
  return std::strerror(err < 0 ? -err : err);
}

tl::expected<void, std::string> ensure_pin_dir(const std::string& pin_dir) {
  if (auto r = bpf::ensure_pin_dir(pin_dir); !r) return tl::unexpected(r.error().message());
  return {};
}

class IsolationManagerImpl final : public IsolationManager {
 public:
  IsolationManagerImpl(std::unique_ptr<IsolationMaps> maps, bpf::TcAttach tc)
      : maps_(std::move(maps)), tc_(std::move(tc)) {}

  void recover() {
    for (auto [ifindex, entry] : maps_->ports()) {
      const std::string name(entry.name);
      if (!name.empty() && if_nametoindex(name.c_str()) == ifindex) {
        if (entry.flags & HSNS_ISO_PORT_OWNS_QDISC) {
          // Made by a version before the attach layer: hand the ownership over to its registry.
          if (auto r = tc_.adopt_created(static_cast<int>(ifindex), kUser); !r) {
            HSNS_LOG(warning) << "isolation: " << name << ": " << r.error().message();
          }
          entry.flags &= ~HSNS_ISO_PORT_OWNS_QDISC;
          (void)maps_->set_port(ifindex, entry);
        }
        ports_[name] = Port{ifindex, entry.flags};
      } else {
        // The netdev is gone (its filter and qdisc went with it); do not let a reused ifindex inherit it.
        (void)maps_->forget_port(ifindex);
      }
    }
  }

  tl::expected<void, std::string> apply(const std::string& netdev,
                                        const std::vector<IpPrefix>& allowed) override {
    if (netdev.empty() || netdev.size() >= IF_NAMESIZE)
      return tl::unexpected("invalid netdev name '" + netdev + "'");
    const std::uint32_t ifindex = if_nametoindex(netdev.c_str());
    if (ifindex == 0) return tl::unexpected("netdev " + netdev + " not found: " + errno_text(errno));

    auto it = ports_.find(netdev);
    if (it != ports_.end() && it->second.ifindex != ifindex) {
      // Recreated netdev: the old one took its filter and qdisc with it.
      (void)maps_->forget_port(it->second.ifindex);
      ports_.erase(it);
      it = ports_.end();
    }
    if (it == ports_.end()) {
      for (auto other = ports_.begin(); other != ports_.end(); ++other) {
        if (other->second.ifindex == ifindex) {  // renamed netdev: same port, new name
          Port moved = other->second;
          ports_.erase(other);
          it = ports_.emplace(netdev, moved).first;
          break;
        }
      }
    }
    Port port = it != ports_.end() ? it->second : Port{ifindex, 0};

    if (auto r = maps_->set_prefixes(ifindex, allowed); !r) return tl::unexpected(netdev + ": " + r.error());
    if (auto r = write_port(netdev, port); !r) return r;
    ports_[netdev] = port;

    // Attach unless our program already sits in our slot: a prefix change is a map update only, while a
    // filter or qdisc deleted by hand is restored, and a previous instance's program is replaced.
    const int index = static_cast<int>(ifindex);
    if (tc_.filter_prog_id(index, kUser, bpf::TcHook::egress) == maps_->program_id()) return {};
    if (auto r = tc_.attach(index, kUser, bpf::TcHook::egress, maps_->program_fd()); !r) {
      return tl::unexpected(netdev + ": " + r.error().message());
    }
    return {};
  }

  tl::expected<void, std::string> remove(const std::string& netdev) override {
    auto it = ports_.find(netdev);
    if (it == ports_.end()) return {};
    const Port port = it->second;
    ports_.erase(it);
    std::string error;
    if (auto r = tc_.detach(static_cast<int>(port.ifindex), kUser); !r)
      error = netdev + ": " + r.error().message();
    if (auto r = maps_->forget_port(port.ifindex); !r && error.empty()) error = netdev + ": " + r.error();
    if (!error.empty()) return tl::unexpected(error);
    return {};
  }

  void detach_all() override {
    std::vector<std::string> names;
    for (const auto& [name, port] : ports_) names.push_back(name);
    for (const auto& name : names) {
      if (auto r = remove(name); !r) {
        HSNS_LOG(warning) << "isolation: " << r.error();
      }
    }
  }

  std::vector<PortDropCounters> counters() const override {
    std::vector<PortDropCounters> out;
    for (const auto& [name, port] : ports_) {
      const IsolationCounters c = maps_->counters(port.ifindex);
      out.push_back(PortDropCounters{name, static_cast<int>(port.ifindex), c.dropped_packets, c.dropped_bytes,
                                     c.passed_packets});
    }
    return out;
  }

  std::vector<std::string> attached() const override {
    std::vector<std::string> out;
    for (const auto& [name, port] : ports_) out.push_back(name);
    return out;
  }

 private:
  struct Port {
    std::uint32_t ifindex = 0;
    std::uint32_t flags = 0;
  };

  tl::expected<void, std::string> write_port(const std::string& netdev, const Port& port) {
    hsns_iso_port entry{};
    entry.flags = port.flags;
    std::memcpy(entry.name, netdev.c_str(), netdev.size());
    if (auto r = maps_->set_port(port.ifindex, entry); !r) return tl::unexpected(netdev + ": " + r.error());
    return {};
  }

  std::unique_ptr<IsolationMaps> maps_;
  bpf::TcAttach tc_;
  std::map<std::string, Port> ports_;
};

}  // namespace

tl::expected<std::unique_ptr<IsolationManager>, std::string> IsolationManager::create(
    const IsolationOptions& options) {
  if (options.pin_dir.empty()) return tl::unexpected(std::string("isolation pin_dir is empty"));
  if (auto r = ensure_pin_dir(options.pin_dir); !r) return tl::unexpected(r.error());
  auto maps = IsolationMaps::load(options.pin_dir);
  if (!maps) {
    // Pins left by an incompatible version (changed map layout): start over with fresh maps. Filters of
    // the old program keep enforcing the old policy until apply() replaces them.
    if (auto r = remove_pins(options.pin_dir); !r) return tl::unexpected(maps.error() + "; " + r.error());
    if (auto r = ensure_pin_dir(options.pin_dir); !r) return tl::unexpected(r.error());
    auto fresh = IsolationMaps::load(options.pin_dir);
    if (!fresh) return tl::unexpected(fresh.error());
    HSNS_LOG(warning) << "isolation: recreated the pinned maps under " << options.pin_dir << ": "
                      << maps.error();
    maps = std::move(fresh);
  }
  auto tc = bpf::TcAttach::open(options.pin_dir);
  if (!tc) return tl::unexpected(tc.error().message());
  auto manager = std::make_unique<IsolationManagerImpl>(std::move(*maps), std::move(*tc));
  manager->recover();
  return manager;
}

tl::expected<void, std::string> IsolationManager::remove_pins(const std::string& pin_dir) {
  for (const char* name : kMapNames) {
    const std::string path = pin_dir + "/" + name;
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return tl::unexpected("unlinking " + path + ": " + errno_text(errno));
    }
  }
  if (rmdir(pin_dir.c_str()) != 0 && errno != ENOENT) {
    return tl::unexpected("removing " + pin_dir + ": " + errno_text(errno));
  }
  return {};
}

}  // namespace hsns::daemon
