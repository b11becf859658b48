#include "inventory.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include "hsns/proto/agent.h"

namespace hsns::daemon {
namespace fs = std::filesystem;
std::optional<std::string> read_sysfs_line(const fs::path& path) {
  // open + read + close into a stack buffer: these attributes are read for every port several times a
  // second, and a std::ifstream costs a buffer allocation and locale setup per file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[4096];
  std::size_t used = 0;
  bool failed = false;
  while (used < sizeof buf) {
    const ssize_t n = ::read(fd, buf + used, sizeof buf - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failed = true;
    if (n <= 0) break;
    const bool has_newline = std::memchr(buf + used, '\n', static_cast<std::size_t>(n)) != nullptr;
    used += static_cast<std::size_t>(n);
    if (has_newline) break;
  }
  ::close(fd);
  if (failed || used == 0) return std::nullopt;
  std::string_view line(buf, used);
  line = line.substr(0, line.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
  return std::string(line);
}

namespace {

// Inventory reads an unreadable attribute as empty.
std::string read_line(const fs::path& p) {
  return read_sysfs_line(p).value_or("");
}

// "4: ACTIVE" -> "ACTIVE"
std::string after_colon(const std::string& s) {
  const auto c = s.find(": ");
  return c == std::string::npos ? s : s.substr(c + 2);
}

// "25 Gb/sec (1X EDR)" -> 25000
long rate_mbps(const std::string& s) {
  try {
    std::size_t used = 0;
    const double gbps = std::stod(s, &used);
    return static_cast<long>(gbps * 1000);
  } catch (const std::exception&) {
    return 0;
  }
}

std::set<std::string> verbs_devices() {
  std::set<std::string> out;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list) return out;
  for (int i = 0; i < n; ++i) out.insert(ibv_get_device_name(list[i]));
  ibv_free_device_list(list);
  return out;
}

RdmaPort read_port(const fs::path& port_dir, const std::string& device) {
  RdmaPort p;
  p.device = device;
  try {
    p.port = std::stoi(port_dir.filename().string());
  } catch (const std::exception&) {
  }
  p.state = after_colon(read_line(port_dir / "state"));
  p.link_layer = read_line(port_dir / "link_layer");
  p.rate_mbps = rate_mbps(read_line(port_dir / "rate"));
  std::error_code ec;
  const auto ndevs = port_dir / "gid_attrs" / "ndevs";
  const auto types = port_dir / "gid_attrs" / "types";
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(ndevs, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end(), [](const fs::path& a, const fs::path& b) {
    return std::atoi(a.filename().c_str()) < std::atoi(b.filename().c_str());
  });
  for (const auto& path : entries) {
    const auto netdev = read_line(path);
    if (!netdev.empty() && p.netdev.empty()) p.netdev = netdev;
    if (read_line(types / path.filename()) == "RoCE v2") {
      const auto gid = read_line(port_dir / "gids" / path.filename());
      if (!gid.empty()) p.rocev2_gids.push_back(gid);
    }
  }
  return p;
}

}  // namespace

Inventory discover(const DaemonConfig& config) {
  Inventory inv;
  const fs::path sys(config.sysfs_root);
  const fs::path ib = sys / "class" / "infiniband";
  std::set<std::string> devices;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(ib, ec)) devices.insert(e.path().filename().string());
  // Ask libibverbs only about the real machine (a fixture root is not what the verbs providers see).
  if (config.sysfs_root == "/sys" && !devices.empty())
    for (const auto& d : verbs_devices()) devices.insert(d);
  for (const auto& d : devices) {
    std::error_code ec2;
    std::vector<fs::path> ports;
    for (const auto& e : fs::directory_iterator(ib / d / "ports", ec2)) ports.push_back(e.path());
    std::sort(ports.begin(), ports.end());
    for (const auto& p : ports) inv.rdma.push_back(read_port(p, d));
  }
  for (const auto& [index, netdev] : config.npus) {
    NpuEntry n;
    n.index = index;
    n.netdev = netdev;
    const fs::path net = sys / "class" / "net" / netdev;
    n.present = fs::exists(net, ec);
    n.mac = n.present ? read_line(net / "address") : "";
    if (n.mac.size() != 17) n.mac = "00:00:00:00:00:00";
    const auto speed = read_line(net / "speed");
    try {
      n.link_speed_mbps = speed.empty() ? 0 : std::max(0L, std::stol(speed));
    } catch (const std::exception&) {
      n.link_speed_mbps = 0;
    }
    for (const auto& r : inv.rdma) {
      if (r.netdev == netdev) {
        n.rdma_device = r.device;
        if (n.link_speed_mbps == 0) n.link_speed_mbps = r.rate_mbps;
      }
    }
    inv.npus.push_back(n);
  }
  return inv;
}

std::string registration_body(const Inventory& inv) {
  proto::HostRegistration reg;
  reg.npus.reserve(inv.npus.size());
  for (const auto& n : inv.npus)
    reg.npus.push_back({n.index, n.netdev, n.mac, n.rdma_device, n.link_speed_mbps});
  return proto::encode(reg);
}

}  // namespace hsns::daemon
