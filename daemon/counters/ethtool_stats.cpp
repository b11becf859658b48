#include "ethtool_stats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <optional>

namespace hsns::daemon::counters {
namespace {

// One SIOCETHTOOL request on `buffer` (the command structure and its trailing data).
bool ethtool_ioctl(int fd, const std::string& netdev, void* buffer) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());  // size checked < IFNAMSIZ by the caller
  ifr.ifr_data = static_cast<char*>(buffer);
  int rc = 0;
  do {
    rc = ::ioctl(fd, SIOCETHTOOL, &ifr);
  } while (rc < 0 && errno == EINTR);
  return rc == 0;
}

// 8-byte aligned storage for a command structure followed by `data_bytes`.
std::vector<std::uint64_t> command_buffer(std::size_t header_bytes, std::size_t data_bytes) {
  return std::vector<std::uint64_t>((header_bytes + data_bytes + 7) / 8, 0);
}

template <typename T>
void put(std::vector<std::uint64_t>& buf, std::size_t offset, T value) {
  std::memcpy(reinterpret_cast<char*>(buf.data()) + offset, &value, sizeof value);
}
template <typename T>
T get(const std::vector<std::uint64_t>& buf, std::size_t offset) {
  T value{};
  std::memcpy(&value, reinterpret_cast<const char*>(buf.data()) + offset, sizeof value);
  return value;
}

std::string failure(const std::string& netdev, const char* step, int error) {
  if (error == ENODEV) return "ethtool " + netdev + ": no such netdev";
  return "ethtool " + netdev + ": " + step + ": " + std::strerror(error);
}

// The number of ETH_SS_STATS strings (0 when the driver has none).
tl::expected<std::uint32_t, std::string> stats_count(int fd, const std::string& netdev) {
  auto buf = command_buffer(offsetof(ethtool_sset_info, data), sizeof(std::uint32_t));
  put<std::uint32_t>(buf, offsetof(ethtool_sset_info, cmd), ETHTOOL_GSSET_INFO);
  put<std::uint64_t>(buf, offsetof(ethtool_sset_info, sset_mask), std::uint64_t{1} << ETH_SS_STATS);
  if (!ethtool_ioctl(fd, netdev, buf.data())) return tl::unexpected(failure(netdev, "GSSET_INFO", errno));
  if (get<std::uint64_t>(buf, offsetof(ethtool_sset_info, sset_mask)) == 0) return 0U;
  return get<std::uint32_t>(buf, offsetof(ethtool_sset_info, data));
}

// nullopt when the driver's count changed since stats_count (ask again).
tl::expected<std::optional<EthtoolStats>, std::string> read_once(int fd, const std::string& netdev,
                                                                 std::uint32_t n) {
  auto names = command_buffer(offsetof(ethtool_gstrings, data), std::size_t{n} * ETH_GSTRING_LEN);
  put<std::uint32_t>(names, offsetof(ethtool_gstrings, cmd), ETHTOOL_GSTRINGS);
  put<std::uint32_t>(names, offsetof(ethtool_gstrings, string_set), ETH_SS_STATS);
  put<std::uint32_t>(names, offsetof(ethtool_gstrings, len), n);
  if (!ethtool_ioctl(fd, netdev, names.data())) return tl::unexpected(failure(netdev, "GSTRINGS", errno));
  if (get<std::uint32_t>(names, offsetof(ethtool_gstrings, len)) != n) return std::nullopt;

  auto values = command_buffer(offsetof(ethtool_stats, data), std::size_t{n} * sizeof(std::uint64_t));
  put<std::uint32_t>(values, offsetof(ethtool_stats, cmd), ETHTOOL_GSTATS);
  put<std::uint32_t>(values, offsetof(ethtool_stats, n_stats), n);
  if (!ethtool_ioctl(fd, netdev, values.data())) return tl::unexpected(failure(netdev, "GSTATS", errno));
  if (get<std::uint32_t>(values, offsetof(ethtool_stats, n_stats)) != n) return std::nullopt;

  EthtoolStats out;
  out.reserve(n);
  const char* strings = reinterpret_cast<const char*>(names.data()) + offsetof(ethtool_gstrings, data);
  for (std::uint32_t i = 0; i < n; ++i) {
    const char* s = strings + std::size_t{i} * ETH_GSTRING_LEN;
    out.emplace_back(std::string(s, ::strnlen(s, ETH_GSTRING_LEN)),
                     get<std::uint64_t>(values, offsetof(ethtool_stats, data) + std::size_t{i} * 8));
  }
  return out;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

tl::expected<EthtoolStats, std::string> read_ethtool_stats(const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ || netdev.find('/') != std::string::npos)
    return tl::unexpected("ethtool " + netdev + ": invalid netdev name");
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return tl::unexpected("ethtool " + netdev + ": socket: " + std::strerror(errno));
  tl::expected<EthtoolStats, std::string> result =
      tl::unexpected("ethtool " + netdev + ": the statistics count kept changing");
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto n = stats_count(fd, netdev);
    if (!n) {
      result = tl::unexpected(n.error());
      break;
    }
    if (*n == 0) {  // lo: the string set is there but empty, and GSTRINGS refuses it
      result = EthtoolStats{};
      break;
    }
    auto once = read_once(fd, netdev, *n);
    if (!once) {
      result = tl::unexpected(once.error());
      break;
    }
    if (*once) {
      result = std::move(**once);
      break;
    }
  }
  ::close(fd);
  return result;
}

std::vector<PriorityPauseRaw> priority_pause(const EthtoolStats& stats) {
  // Bits per priority: which of the four names were found.
  std::array<PriorityPauseRaw, 8> found{};
  std::array<unsigned, 8> have{};
  static constexpr std::array<std::string_view, 4> kSuffixes = {"_pause", "_pause", "_pause_duration",
                                                                "_pause_duration"};
  for (const auto& [name, value] : stats) {
    const std::string_view n(name);
    const bool rx = n.starts_with("rx_prio");
    if (!rx && !n.starts_with("tx_prio")) continue;
    std::string_view rest = n.substr(7);
    if (rest.empty() || rest[0] < '0' || rest[0] > '7') continue;
    const int p = rest[0] - '0';
    rest.remove_prefix(1);
    const std::size_t kind = rest == kSuffixes[0] ? (rx ? 0 : 1) : rest == kSuffixes[2] ? (rx ? 2 : 3) : 4;
    if (kind == 4) continue;
    auto& e = found[static_cast<std::size_t>(p)];
    e.priority = p;
    std::uint64_t* targets[] = {&e.rx_frames, &e.tx_frames, &e.rx_duration_us, &e.tx_duration_us};
    *targets[kind] = value;
    have[static_cast<std::size_t>(p)] |= 1U << kind;
  }
  std::vector<PriorityPauseRaw> out;
  for (std::size_t p = 0; p < found.size(); ++p)
    if (have[p] == 0xF) out.push_back(found[p]);
  return out;
}

tl::expected<EthtoolStats, std::string> parse_ethtool_listing(std::string_view text) {
  EthtoolStats out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++line_no;
    if (line.empty() || line.ends_with("statistics:")) continue;  // "NIC statistics:"
    const auto colon = line.rfind(": ");
    const auto value =
        colon == std::string_view::npos ? std::nullopt : parse_u64(trim(line.substr(colon + 2)));
    if (!value)
      return tl::unexpected("line " + std::to_string(line_no) + ": expected 'name: value', got '" +
                            std::string(line) + "'");
    out.emplace_back(std::string(trim(line.substr(0, colon))), *value);
  }
  return out;
}

}  // namespace hsns::daemon::counters
