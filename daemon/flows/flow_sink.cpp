#include "flow_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

namespace hsns::daemon {

namespace {

constexpr std::string_view kCountersType = "\"type\":\"counters\"";

tl::expected<std::string, std::string> read_at(int fd, std::uint64_t offset, std::size_t len,
                                               const std::string& path) {
  std::string buf(len, '\0');
  std::size_t got = 0;
  while (got < len) {
    const ssize_t n = pread(fd, buf.data() + got, len - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected("read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  buf.resize(got);
  return buf;
}

// End offset (just past its newline) and epoch of the last complete counters line of the file, or nullopt
// when there is none. Reads backwards from the end in 1 MiB chunks; *tail receives the bytes after it.
tl::expected<std::optional<std::pair<std::uint64_t, std::uint64_t>>, std::string> last_closing_marker(
    int fd, std::uint64_t size, const std::string& path, std::string* tail) {
  constexpr std::uint64_t kChunk = 1 << 20;
  std::string text;  // the file's bytes [pos, size)
  std::uint64_t pos = size;
  std::size_t search_end = std::string::npos;  // markers at or after this index of text were rejected
  for (;;) {
    if (pos > 0) {
      const std::uint64_t n = std::min(kChunk, pos);
      auto chunk = read_at(fd, pos - n, static_cast<std::size_t>(n), path);
      if (!chunk) return tl::unexpected(chunk.error());
      pos -= n;
      if (search_end != std::string::npos) search_end += chunk->size();
      text.insert(0, *chunk);
    }
    for (std::size_t at = text.rfind(kCountersType, search_end); at != std::string::npos;
         at = at == 0 ? std::string::npos : text.rfind(kCountersType, at - 1)) {
      const std::size_t nl_before = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
      if (nl_before == std::string::npos && pos > 0) break;  // the line starts before text: read more
      search_end = at == 0 ? std::string::npos : at - 1;
      const std::size_t start = nl_before == std::string::npos ? 0 : nl_before + 1;
      const std::size_t end = text.find('\n', at);
      if (end == std::string::npos) continue;  // a torn last line
      const auto j = nlohmann::json::parse(text.substr(start, end - start), nullptr, false);
      if (!j.is_object() || j.value("type", "") != "counters") continue;
      std::uint64_t epoch = 0;
      if (j.contains("epoch") && j["epoch"].is_number_unsigned()) epoch = j["epoch"].get<std::uint64_t>();
      *tail = text.substr(end + 1);
      return std::optional<std::pair<std::uint64_t, std::uint64_t>>(std::pair{pos + end + 1, epoch});
    }
    if (pos == 0) {
      *tail = text;
      return std::optional<std::pair<std::uint64_t, std::uint64_t>>();
    }
    if (search_end == std::string::npos) search_end = text.size();
  }
}

}  // namespace

FlowSink::FlowSink(int fd, std::string path, std::string host)
    : fd_(fd), path_(std::move(path)), host_(std::move(host)) {}

FlowSink::FlowSink(FlowSink&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      host_(std::move(other.host_)),
      last_epoch_(other.last_epoch_),
      truncated_(other.truncated_) {
  other.fd_ = -1;
}

FlowSink::~FlowSink() {
  if (fd_ >= 0) close(fd_);
}

tl::expected<FlowSink, std::string> FlowSink::open(const std::string& path, std::string host) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) return tl::unexpected("open " + path + ": " + std::strerror(errno));
  FlowSink sink(fd, path, std::move(host));
  const off_t size = lseek(fd, 0, SEEK_END);
  if (size < 0) return tl::unexpected("seek " + path + ": " + std::strerror(errno));
  if (size == 0) return sink;
  std::string tail;
  auto marker = last_closing_marker(fd, static_cast<std::uint64_t>(size), path, &tail);
  if (!marker) return tl::unexpected(marker.error());
  const std::uint64_t keep = *marker ? (*marker)->first : 0;
  if (*marker) sink.last_epoch_ = (*marker)->second;
  if (keep == static_cast<std::uint64_t>(size)) return sink;
  // What follows the last complete batch may only be a torn batch: batch and flow lines, and at most a
  // partial last line. Anything else is not ours to cut.
  std::size_t line_start = 0;
  for (std::size_t nl = tail.find('\n'); nl != std::string::npos; nl = tail.find('\n', line_start)) {
    const std::string_view line(tail.data() + line_start, nl - line_start);
    if (line.find("\"type\":\"flow\"") == std::string_view::npos &&
        line.find("\"type\":\"batch\"") == std::string_view::npos)
      return tl::unexpected("sink " + path + ": unexpected line after the last complete batch (byte " +
                            std::to_string(keep + line_start) + "); not truncated");
    line_start = nl + 1;
  }
  if (ftruncate(fd, static_cast<off_t>(keep)) != 0)
    return tl::unexpected("truncate torn batch of " + path + ": " + std::strerror(errno));
  if (fdatasync(fd) != 0) return tl::unexpected("fdatasync " + path + ": " + std::strerror(errno));
  sink.truncated_ = static_cast<std::uint64_t>(size) - keep;
  return sink;
}

tl::expected<void, std::string> FlowSink::write(const FlowBatch& batch,
                                                const std::array<std::uint64_t, ROCE_CNT_MAX>& counters) {
  // Written in chunks of about 1 MiB so that 100,000 records do not need one 60 MB buffer.
  constexpr std::size_t kChunk = 1 << 20;
  const auto& records = batch.records;
  const bool crash_test = !records.empty() && std::getenv("HSNS_TEST_CRASH_AFTER_DRAIN") != nullptr &&
                          std::string_view(std::getenv("HSNS_TEST_CRASH_AFTER_DRAIN")) == "partial-write";
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
  nlohmann::json open_marker;
  open_marker["type"] = "batch";
  open_marker["host"] = host_;
  open_marker["epoch"] = batch.epoch;
  open_marker["records"] = records.size();
  buf += open_marker.dump();
  buf += '\n';
  proto::FlowRecord contract;  // reused: its strings keep their capacity
  for (std::size_t i = 0; i < records.size(); ++i) {
    fill_contract(records[i], host_, contract);
    contract.epoch = batch.epoch;
    if (crash_test && i == (records.size() + 1) / 2) {
      std::string half;
      append_flow_record_json(half, contract);
      buf.append(half, 0, half.size() / 2);  // half of a line, no newline
      (void)flush();
      flow_test_crash_point("partial-write");
    }
    append_flow_record_json(buf, contract);
    buf += '\n';
    if (buf.size() >= kChunk) {
      if (auto f = flush(); !f) return f;
    }
  }
  nlohmann::json c;
  c["type"] = "counters";
  c["host"] = host_;
  c["epoch"] = batch.epoch;
  c["ts_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  c["records"] = records.size();
  for (int i = 0; i < ROCE_CNT_MAX; ++i)
    c["counters"][counter_name(i)] = counters[static_cast<std::size_t>(i)];
  if (crash_test && records.size() == 1) {
    const std::string line = c.dump();
    buf.append(line, 0, line.size() / 2);
    (void)flush();
    flow_test_crash_point("partial-write");
  }
  buf += c.dump();
  buf += '\n';
  if (auto f = flush(); !f) return f;
  if (fdatasync(fd_) != 0) return tl::unexpected("fdatasync " + path_ + ": " + std::strerror(errno));
  last_epoch_ = batch.epoch;
  return {};
}

}  // namespace hsns::daemon
