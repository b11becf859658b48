#include "sysfs_counters.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "counter_delta.h"

namespace hsns::daemon::counters {
namespace fs = std::filesystem;

const std::vector<RecognisedCounter> kRecognisedRdmaCounters = {
    {"port_xmit_data", "traffic", "bytes sent (the kernel's 4-byte words, times 4)"},
    {"port_rcv_data", "traffic", "bytes received (the kernel's 4-byte words, times 4)"},
    {"port_xmit_packets", "traffic", "packets sent"},
    {"port_rcv_packets", "traffic", "packets received"},
    {"np_ecn_marked_roce_packets", "congestion", "RoCE packets received with ECN CE (notification point)"},
    {"np_cnp_sent", "congestion", "CNPs sent in answer to CE-marked packets (notification point)"},
    {"rp_cnp_handled", "congestion", "CNPs received and acted on by the sender (reaction point)"},
    {"out_of_sequence", "loss", "packets received out of sequence (responder)"},
    {"packet_seq_err", "loss", "NAK sequence errors received (requester)"},
    {"local_ack_timeout_err", "loss", "ACK timeouts: the requester retransmitted"},
    {"implied_nak_seq_err", "loss", "read or atomic responses implying a lost packet (requester)"},
    {"duplicate_request", "loss", "duplicate requests received: the peer retransmitted"},
    {"rnr_nak_retry_err", "starvation", "RNR NAK retries exceeded: the receiver had no buffer posted"},
    {"out_of_buffer", "starvation", "packets dropped for lack of a posted receive WQE"},
    {"symbol_error", "link", "physical layer symbol errors (saturating)"},
    {"link_downed", "link", "times the link went down (saturating)"},
};

const RecognisedCounter* recognised_rdma_counter(std::string_view name) {
  const auto it = std::find_if(kRecognisedRdmaCounters.begin(), kRecognisedRdmaCounters.end(),
                               [name](const RecognisedCounter& c) { return c.name == name; });
  return it == kRecognisedRdmaCounters.end() ? nullptr : &*it;
}

tl::expected<std::uint64_t, std::string> read_counter_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(std::string(std::strerror(errno)));
  std::array<char, 64> buf{};
  ssize_t n = 0;
  do {
    n = ::read(fd, buf.data(), buf.size());
  } while (n < 0 && errno == EINTR);
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) return tl::unexpected(std::string(std::strerror(read_errno)));
  std::string_view text(buf.data(), static_cast<std::size_t>(n));
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    return tl::unexpected("not an unsigned number: '" + std::string(text.substr(0, 32)) + "'");
  return value;
}

namespace {

// Every regular file of `dir`, sorted by name; absent directories give nothing (errors only when
// `required`).
std::vector<CounterReading> read_directory(const fs::path& dir, const std::string& source, bool required,
                                           bool rdma_pma, std::vector<ReadError>& errors) {
  std::vector<CounterReading> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (required) errors.push_back({source, dir.string(), "no such directory"});
    return out;
  }
  fs::directory_iterator it(dir, ec);
  if (ec) {
    errors.push_back({source, dir.string(), ec.message()});
    return out;
  }
  for (const auto& entry : it) {
    const auto name = entry.path().filename().string();
    if (!rdma_pma && name == "lifespan") continue;  // hw_counters' cache lifetime, not a counter
    if (!entry.is_regular_file(ec)) continue;
    auto value = read_counter_file(entry.path().string());
    if (!value) {
      errors.push_back({source, entry.path().string(), value.error()});
      continue;
    }
    CounterReading r{name, *value, 64, 1};
    if (rdma_pma) {
      r.width = counter_width(name);
      if (name == "port_xmit_data" || name == "port_rcv_data") r.scale = 4;
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace

RdmaPortReading read_rdma_port(const std::string& sysfs_root, const std::string& device, int port,
                               std::vector<ReadError>& errors) {
  RdmaPortReading r{device, port, {}, {}};
  const fs::path dir =
      fs::path(sysfs_root) / "class" / "infiniband" / device / "ports" / std::to_string(port);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    errors.push_back({"rdma_counters", dir.string(), "no such port"});
    return r;
  }
  r.counters = read_directory(dir / "counters", "rdma_counters", false, true, errors);
  r.hw_counters = read_directory(dir / "hw_counters", "rdma_hw_counters", false, false, errors);
  return r;
}

std::vector<CounterReading> read_netdev_statistics(const std::string& sysfs_root, const std::string& netdev,
                                                   std::vector<ReadError>& errors) {
  return read_directory(fs::path(sysfs_root) / "class" / "net" / netdev / "statistics", "netdev_statistics",
                        true, false, errors);
}

}  // namespace hsns::daemon::counters
