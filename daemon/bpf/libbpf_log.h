// libbpf's messages in the daemon's log: one print callback for the whole process (libbpf's callback is
// process-global), installed once, that writes each line through HSNS_LOG with libbpf's level mapped
// (LIBBPF_WARN -> warning, LIBBPF_INFO -> info, LIBBPF_DEBUG -> debug; filtered by the log threshold before
// any formatting).
//
// Contract:
// - route_libbpf_log() installs the callback; idempotent and thread-safe (std::call_once). Every entry
//   point of the attach layer calls it, so a binary that uses the layer never sees libbpf print on its own.
// - LibbpfLogCapture: while one is alive on a thread, libbpf's warnings and infos from that thread go into
//   its text() instead of the log (debug is dropped), so that a caller can put them into its error value,
//   or discard them when the failure is expected (a clsact qdisc that exists already). Captures nest: the
//   innermost one collects. Other threads keep logging.
#pragma once

#include <string>

namespace hsns::daemon::bpf {

void route_libbpf_log();

class LibbpfLogCapture {
 public:
  LibbpfLogCapture();
  ~LibbpfLogCapture();
  LibbpfLogCapture(const LibbpfLogCapture&) = delete;
  LibbpfLogCapture& operator=(const LibbpfLogCapture&) = delete;
  // The captured text (the last 8 KiB), trailing newlines removed.
  std::string text() const;

 private:
  std::string text_;
  LibbpfLogCapture* outer_;
};

}  // namespace hsns::daemon::bpf
