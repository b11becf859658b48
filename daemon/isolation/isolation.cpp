#include "isolation.h"

#include <bpf/libbpf.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "isolation_maps.h"

namespace hsns::daemon {
namespace {

constexpr const char* kBpffsRoot = "/sys/fs/bpf";
constexpr const char* kMapNames[] = {"hsns_iso_v4", "hsns_iso_v6", "hsns_iso_ports", "hsns_iso_counters"};

std::string errno_text(int err) {
  return std::strerror(err < 0 ? -err : err);
}

tl::expected<void, std::string> ensure_pin_dir(const std::string& pin_dir) {
  if (pin_dir.rfind(kBpffsRoot, 0) == 0) {
    struct statfs st {};
    if (statfs(kBpffsRoot, &st) != 0 || st.f_type != BPF_FS_MAGIC) {
      if (mount("bpf", kBpffsRoot, "bpf", 0, "mode=0700") != 0) {
        return tl::unexpected(std::string("mounting bpffs at ") + kBpffsRoot + ": " + errno_text(errno));
      }
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(pin_dir, ec);
  if (ec) return tl::unexpected("creating pin dir " + pin_dir + ": " + ec.message());
  struct statfs st {};
  if (statfs(pin_dir.c_str(), &st) != 0 || st.f_type != BPF_FS_MAGIC) {
    return tl::unexpected("pin dir " + pin_dir + " is not on a bpf filesystem");
  }
  return {};
}

bpf_tc_hook egress_hook(std::uint32_t ifindex) {
  bpf_tc_hook hook{};
  hook.sz = sizeof(hook);
  hook.ifindex = static_cast<int>(ifindex);
  hook.attach_point = BPF_TC_EGRESS;
  return hook;
}

bpf_tc_opts filter_opts() {
  bpf_tc_opts opts{};
  opts.sz = sizeof(opts);
  opts.handle = kIsolationTcHandle;
  opts.priority = kIsolationTcPriority;
  return opts;
}

class IsolationManagerImpl final : public IsolationManager {
 public:
  explicit IsolationManagerImpl(std::unique_ptr<IsolationMaps> maps) : maps_(std::move(maps)) {}

  void recover() {
    for (const auto& [ifindex, entry] : maps_->ports()) {
      const std::string name(entry.name);
      if (!name.empty() && if_nametoindex(name.c_str()) == ifindex) {
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
    LibbpfLogCapture log;  // "Exclusivity flag on" for an existing qdisc is not worth a line on stderr
    bpf_tc_hook hook = egress_hook(ifindex);
    bpf_tc_opts query = filter_opts();
    const int queried = bpf_tc_query(&hook, &query);
    if (queried == 0 && query.prog_id == maps_->program_id()) return {};

    const int created = bpf_tc_hook_create(&hook);
    if (created != 0 && created != -EEXIST) {
      return tl::unexpected("creating clsact qdisc on " + netdev + ": " + errno_text(created) + " " +
                            log.text());
    }
    bpf_tc_opts opts = filter_opts();
    opts.prog_fd = maps_->program_fd();
    opts.flags = BPF_TC_F_REPLACE;
    if (int err = bpf_tc_attach(&hook, &opts); err != 0) {
      if (created == 0) destroy_qdisc(ifindex);
      return tl::unexpected("attaching the isolation filter to " + netdev + ": " + errno_text(err) + " " +
                            log.text());
    }
    if (created == 0) {
      port.flags |= HSNS_ISO_PORT_OWNS_QDISC;
    } else if (queried != 0) {
      port.flags &= ~HSNS_ISO_PORT_OWNS_QDISC;  // our filter was gone and the qdisc is someone else's now
    }
    if (auto r = write_port(netdev, port); !r) return r;
    ports_[netdev] = port;
    return {};
  }

  tl::expected<void, std::string> remove(const std::string& netdev) override {
    auto it = ports_.find(netdev);
    if (it == ports_.end()) return {};
    const Port port = it->second;
    ports_.erase(it);
    std::string error;
    LibbpfLogCapture log;
    bpf_tc_hook hook = egress_hook(port.ifindex);
    bpf_tc_opts opts = filter_opts();
    if (int err = bpf_tc_detach(&hook, &opts); err != 0 && err != -ENOENT && err != -ENODEV) {
      error = "detaching the isolation filter from " + netdev + ": " + errno_text(err) + " " + log.text();
    }
    if (port.flags & HSNS_ISO_PORT_OWNS_QDISC) destroy_qdisc(port.ifindex);
    if (auto r = maps_->forget_port(port.ifindex); !r && error.empty()) error = netdev + ": " + r.error();
    if (!error.empty()) return tl::unexpected(error);
    return {};
  }

  void detach_all() override {
    std::vector<std::string> names;
    for (const auto& [name, port] : ports_) names.push_back(name);
    for (const auto& name : names) {
      if (auto r = remove(name); !r) std::fprintf(stderr, "warning: isolation: %s\n", r.error().c_str());
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

  static void destroy_qdisc(std::uint32_t ifindex) {
    bpf_tc_hook hook = egress_hook(ifindex);
    hook.attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS);
    (void)bpf_tc_hook_destroy(&hook);
  }

  std::unique_ptr<IsolationMaps> maps_;
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
    std::fprintf(stderr, "warning: isolation: recreated the pinned maps under %s: %s\n",
                 options.pin_dir.c_str(), maps.error().c_str());
    maps = std::move(fresh);
  }
  auto manager = std::make_unique<IsolationManagerImpl>(std::move(*maps));
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
