#include "sysfs_counters.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

namespace {

// One unsigned decimal number and an optional newline read from `fd`, which is closed.
tl::expected<std::uint64_t, std::string> read_counter_fd(int fd) {
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

}  // namespace

tl::expected<std::uint64_t, std::string> read_counter_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(std::string(std::strerror(errno)));
  return read_counter_fd(fd);
}

CounterDirectories::~CounterDirectories() {
  for (auto& [path, dir] : dirs_) ::close(dir.fd);
}

CounterDirectories::Dir* CounterDirectories::open(const std::string& path, int* error) {
  *error = 0;
  struct stat st {};
  const auto it = dirs_.find(path);
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    if (it != dirs_.end()) {
      ::close(it->second.fd);
      dirs_.erase(it);
    }
    return nullptr;
  }
  if (it != dirs_.end()) {
    if (it->second.dev == st.st_dev && it->second.ino == st.st_ino) {
      it->second.used = true;
      return &it->second;
    }
    ::close(it->second.fd);  // another directory at the same path now
    dirs_.erase(it);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    *error = errno;
    return nullptr;
  }
  if (::fstat(fd, &st) != 0) {
    *error = errno;
    ::close(fd);
    return nullptr;
  }
  Dir& d = dirs_[path];
  d = Dir{fd, static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino), true};
  return &d;
}

void CounterDirectories::drop_unused() {
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (!it->second.used) {
      ::close(it->second.fd);
      it = dirs_.erase(it);
      continue;
    }
    it->second.used = false;
    ++it;
  }
}

namespace {

CounterReading make_reading(std::string name, std::uint64_t value, bool rdma_pma) {
  CounterReading r{std::move(name), value, 64, 1};
  if (rdma_pma) {
    r.width = counter_width(r.name);
    if (r.name == "port_xmit_data" || r.name == "port_rcv_data") r.scale = 4;
  }
  return r;
}

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
    out.push_back(make_reading(name, *value, rdma_pma));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// The same through a directory held open: listed with getdents64 on its descriptor, files opened with
// openat (no path lookup per file).
std::vector<CounterReading> read_directory(const fs::path& dir, const std::string& source, bool required,
                                           bool rdma_pma, std::vector<ReadError>& errors,
                                           CounterDirectories& dirs) {
  std::vector<CounterReading> out;
  const std::string path = dir.string();
  int error = 0;
  CounterDirectories::Dir* d = dirs.open(path, &error);
  if (d == nullptr) {
    // As the path reader: a directory that cannot be listed is an error whether or not it is required.
    if (error != 0) {
      errors.push_back({source, path, std::error_code(error, std::generic_category()).message()});
    } else if (required) {
      errors.push_back({source, path, "no such directory"});
    }
    return out;
  }
  if (::lseek(d->fd, 0, SEEK_SET) != 0) {
    errors.push_back({source, path, std::strerror(errno)});
    return out;
  }
  alignas(8) std::array<char, 16384> buf;
  for (;;) {
    const long n = ::syscall(SYS_getdents64, d->fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      errors.push_back({source, path, std::strerror(errno)});
      break;
    }
    if (n == 0) break;
    for (long off = 0; off < n;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name (NUL-terminated).
      const char* rec = buf.data() + off;
      unsigned short reclen = 0;
      std::memcpy(&reclen, rec + 16, sizeof reclen);
      const auto type = static_cast<unsigned char>(rec[18]);
      const char* name = rec + 19;
      off += reclen;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      if (!rdma_pma && std::strcmp(name, "lifespan") == 0) continue;  // not a counter (see above)
      if (type != DT_REG) {
        // A directory or a device is not a counter; a link (or a file system without types) counts by
        // what it is, as directory_iterator's is_regular_file() does.
        if (type != DT_LNK && type != DT_UNKNOWN) continue;
        struct stat st {};
        if (::fstatat(d->fd, name, &st, 0) != 0 || !S_ISREG(st.st_mode)) continue;
      }
      const int fd = ::openat(d->fd, name, O_RDONLY | O_CLOEXEC);
      tl::expected<std::uint64_t, std::string> value = tl::unexpected(std::string());
      if (fd < 0) {
        value = tl::unexpected(std::string(std::strerror(errno)));
      } else {
        value = read_counter_fd(fd);
      }
      if (!value) {
        errors.push_back({source, (dir / name).string(), value.error()});
        continue;
      }
      out.push_back(make_reading(name, *value, rdma_pma));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace

namespace {

RdmaPortReading rdma_port(const std::string& sysfs_root, const std::string& device, int port,
                          std::vector<ReadError>& errors, CounterDirectories* dirs) {
  RdmaPortReading r{device, port, {}, {}};
  const fs::path dir =
      fs::path(sysfs_root) / "class" / "infiniband" / device / "ports" / std::to_string(port);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    errors.push_back({"rdma_counters", dir.string(), "no such port"});
    return r;
  }
  if (dirs != nullptr) {
    r.counters = read_directory(dir / "counters", "rdma_counters", false, true, errors, *dirs);
    r.hw_counters = read_directory(dir / "hw_counters", "rdma_hw_counters", false, false, errors, *dirs);
  } else {
    r.counters = read_directory(dir / "counters", "rdma_counters", false, true, errors);
    r.hw_counters = read_directory(dir / "hw_counters", "rdma_hw_counters", false, false, errors);
  }
  return r;
}

fs::path statistics_dir(const std::string& sysfs_root, const std::string& netdev) {
  return fs::path(sysfs_root) / "class" / "net" / netdev / "statistics";
}

}  // namespace

RdmaPortReading read_rdma_port(const std::string& sysfs_root, const std::string& device, int port,
                               std::vector<ReadError>& errors) {
  return rdma_port(sysfs_root, device, port, errors, nullptr);
}

RdmaPortReading read_rdma_port(const std::string& sysfs_root, const std::string& device, int port,
                               std::vector<ReadError>& errors, CounterDirectories& dirs) {
  return rdma_port(sysfs_root, device, port, errors, &dirs);
}

std::vector<CounterReading> read_netdev_statistics(const std::string& sysfs_root, const std::string& netdev,
                                                   std::vector<ReadError>& errors) {
  return read_directory(statistics_dir(sysfs_root, netdev), "netdev_statistics", true, false, errors);
}

std::vector<CounterReading> read_netdev_statistics(const std::string& sysfs_root, const std::string& netdev,
                                                   std::vector<ReadError>& errors, CounterDirectories& dirs) {
  return read_directory(statistics_dir(sysfs_root, netdev), "netdev_statistics", true, false, errors, dirs);
}

}  // namespace hsns::daemon::counters
