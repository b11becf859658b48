// JSON-lines sink of flow records. One harvest batch (FlowBatch, epoch E) is written as
//   {"type":"batch","host":...,"epoch":E,"records":N}          opening marker
//   {"type":"flow",...,"epoch":E}                              N lines, one per record (flow_record.h)
//   {"type":"counters","host":...,"epoch":E,"records":N,"ts_ms":...,"counters":{...}}   closing marker
// A batch counts only when it is complete: its opening marker, N flow lines of its epoch and its closing
// marker, in that order (proto::read_sink_batches: hsnsctl flows, tests). Files of earlier versions (flow
// lines without epoch, then a counters line) are read as complete batches of epoch 0.
//
// Contract:
// - open() appends to (creates, mode 0640) the file. A tail after the last closing marker is a batch a
//   crash cut short: open() truncates it (after checking that it holds only batch/flow lines and at most a
//   partial last line; anything else is an error and the file is left alone) and last_epoch() returns the
//   epoch of the last complete batch (0: none, or a file of an earlier version). The flow probe re-emits a
//   batch that is not in the sink (FlowProbe::recover).
// - write() appends one batch in ~1 MiB write(2) chunks of whole lines, then fdatasync(2)s it; only then
//   may the caller commit the batch (FlowProbe::commit). A failed write leaves a torn batch that readers
//   ignore and the next open() truncates; the probe returns the same batch again.
// - Test-only hook: HSNS_TEST_CRASH_AFTER_DRAIN=partial-write makes write() of a non-empty batch SIGKILL
//   its own process after the opening marker, half of the flow lines and half of the next line.
// - Errors are values naming the path. One owner thread.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "flow_probe.h"
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

  // Epoch of the last complete batch in the file (updated by write()).
  std::uint64_t last_epoch() const { return last_epoch_; }
  // Bytes truncated by open() (a torn batch).
  std::uint64_t truncated_bytes() const { return truncated_; }

  tl::expected<void, std::string> write(const FlowBatch& batch,
                                        const std::array<std::uint64_t, ROCE_CNT_MAX>& counters);

 private:
  FlowSink(int fd, std::string path, std::string host);
  int fd_ = -1;
  std::string path_;
  std::string host_;
  std::uint64_t last_epoch_ = 0;
  std::uint64_t truncated_ = 0;
};

// The reader of the sink's framing is the wire contract's (hsns/proto/flows.h), shared with hsnsctl.
using proto::read_sink_batches;
using proto::SinkBatch;

}  // namespace hsns::daemon
