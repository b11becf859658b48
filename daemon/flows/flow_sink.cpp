#include "flow_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "flow_probe.h"

namespace hsns::daemon {

FlowSink::FlowSink(int fd, std::string path, std::string host)
    : fd_(fd), path_(std::move(path)), host_(std::move(host)) {}

FlowSink::FlowSink(FlowSink&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), host_(std::move(other.host_)) {
  other.fd_ = -1;
}

FlowSink::~FlowSink() {
  if (fd_ >= 0) close(fd_);
}

tl::expected<FlowSink, std::string> FlowSink::open(const std::string& path, std::string host) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) return tl::unexpected("open " + path + ": " + std::strerror(errno));
  return FlowSink(fd, path, std::move(host));
}

tl::expected<void, std::string> FlowSink::write(const std::vector<FlowRecord>& records,
                                                const std::array<std::uint64_t, ROCE_CNT_MAX>& counters) {
  // Written in chunks of about 1 MiB so that 100,000 records do not need one 60 MB buffer.
  constexpr std::size_t kChunk = 1 << 20;
  std::string buf;
  buf.reserve(kChunk + 4096);
  auto flush = [&]() -> tl::expected<void, std::string> {
    std::size_t off = 0;
    while (off < buf.size()) {
      const ssize_t n = ::write(fd_, buf.data() + off, buf.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        return tl::unexpected("write " + path_ + ": " + std::strerror(errno));
      }
      off += static_cast<std::size_t>(n);
    }
    buf.clear();
    return {};
  };
  for (const auto& r : records) {
    buf += to_json(r, host_).dump();
    buf += '\n';
    if (buf.size() >= kChunk) {
      if (auto f = flush(); !f) return f;
    }
  }
  nlohmann::json c;
  c["type"] = "counters";
  c["host"] = host_;
  c["ts_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  c["records"] = records.size();
  for (int i = 0; i < ROCE_CNT_MAX; ++i)
    c["counters"][counter_name(i)] = counters[static_cast<std::size_t>(i)];
  buf += c.dump();
  buf += '\n';
  if (auto f = flush(); !f) return f;
  if (fdatasync(fd_) != 0) return tl::unexpected("fdatasync " + path_ + ": " + std::strerror(errno));
  return {};
}

}  // namespace hsns::daemon
