// JSON-lines sink of flow records: one `{"type":"flow",...}` line per record (flow_record.h) and one
// `{"type":"counters",...}` line per harvest with the probe's cumulative counters.
//
// Contract: open() appends to (creates, mode 0640) the file; write() appends one harvest in ~1 MiB write(2)
// chunks of whole lines, then fdatasync(2)s it; the counters line is last, so a harvest without its
// counters line was cut short by a crash. Errors are values naming the path. One owner thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "flow_record.h"

namespace hsns::daemon {

class FlowSink {
 public:
  static tl::expected<FlowSink, std::string> open(const std::string& path, std::string host);
  FlowSink(FlowSink&& other) noexcept;
  FlowSink& operator=(FlowSink&&) = delete;
  FlowSink(const FlowSink&) = delete;
  FlowSink& operator=(const FlowSink&) = delete;
  ~FlowSink();

  tl::expected<void, std::string> write(const std::vector<FlowRecord>& records,
                                        const std::array<std::uint64_t, ROCE_CNT_MAX>& counters);

 private:
  FlowSink(int fd, std::string path, std::string host);
  int fd_ = -1;
  std::string path_;
  std::string host_;
};

}  // namespace hsns::daemon
