// libFuzzer target over what hsnsd reads back from its spool directory after a crash, a full disk or a
// hostile edit (daemon/report/spool.h): segment files and the state file, damaged in place.
//
// Each input starts from a real spool: three reports and a two-part flow batch appended by Spool itself
// (so the fuzzer mutates valid structure), then the input damages one file of it:
//   byte 0 % 3 picks the file (0 the report segment, 1 the flow segment, 2 the state file), bytes 1..2
//   the offset (modulo the file's size + 1) where the rest of the input is written over the file; when
//   byte 0 & 4 is set the file is cut at that offset first.
// Then the spool is opened again, read, appended to and acknowledged.
// Invariants (a violation is __builtin_trap()): open() never fails on content (only on the directory);
// peek() answers records in increasing seq order, none above last_seq(), none at or below acked_seq(),
// each of a known kind; every payload read on demand either verifies and equals what peek() read or is an
// error; a new append gets a seq above every earlier one; ack of that seq leaves nothing unacknowledged.
// Memory is bounded by the spool's own bounds (ctest runs this under -rss_limit_mb).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "spool.h"

namespace {

namespace fs = std::filesystem;
using hsns::daemon::report::Spool;
using hsns::daemon::report::SpoolKind;
using hsns::daemon::report::SpoolOptions;
using hsns::daemon::report::SpoolParts;
using hsns::daemon::report::SpoolSink;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// One directory per process on tmpfs where there is one, so that fdatasync costs nothing.
const fs::path& work_dir() {
  static const fs::path dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    auto d = base / ("hsns-fuzz-spool-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

SpoolOptions options() {
  SpoolOptions o;
  o.dir = work_dir().string();
  o.max_bytes = std::uint64_t{1} << 20;
  o.segment_bytes = std::uint64_t{64} << 10;
  o.max_record_bytes = std::uint64_t{256} << 10;
  o.now_ms = [] { return std::int64_t{1'796'000'000'000}; };
  return o;
}

// A spool as hsnsd leaves it: reports and a flow batch of two parts, the first report acknowledged.
void build_spool() {
  fs::remove_all(work_dir());
  fs::create_directories(work_dir());
  auto spool = Spool::open(options());
  check(spool.has_value());
  for (const char* payload : {"report one", "report two, a little longer", "report three"})
    check((*spool)->append(SpoolKind::telemetry_report, 0, payload).has_value());
  SpoolParts parts;
  parts.count = 2;
  parts.size = [](std::uint64_t, std::size_t part) -> std::uint64_t { return part == 0 ? 5 : 7; };
  parts.write = [](std::uint64_t, std::size_t part, SpoolSink& sink) {
    return sink.write(part == 0 ? std::string_view("flows") : std::string_view("batch 2"));
  };
  check((*spool)->append_parts(SpoolKind::flow_batch, 1, parts).has_value());
  check((*spool)->ack(1).has_value());
}

fs::path file_of(std::uint8_t selector) {
  const std::string_view prefix = selector % 3 == 0 ? "report-" : selector % 3 == 1 ? "flow-" : "state";
  for (const auto& entry : fs::directory_iterator(work_dir())) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return entry.path();
  }
  return work_dir() / std::string(prefix);
}

void damage(const std::uint8_t* data, std::size_t size) {
  const auto path = file_of(data[0]);
  std::error_code ec;
  const auto length = fs::exists(path, ec) ? fs::file_size(path, ec) : 0;
  const std::size_t offset = (std::size_t{data[1]} << 8 | data[2]) % (length + 1);
  if ((data[0] & 4) != 0) fs::resize_file(path, offset, ec);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!f) return;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(reinterpret_cast<const char*>(data + 3), static_cast<std::streamsize>(size - 3));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  build_spool();
  damage(data, size);
  auto reopened = Spool::open(options());
  check(reopened.has_value());  // content is skipped and counted, never an error
  auto& spool = **reopened;
  const auto records = spool.peek(std::uint64_t{1} << 20);
  const auto entries = spool.peek_payloads(std::uint64_t{1} << 20);
  check(records.has_value() == entries.has_value());
  if (records) {
    check(records->size() == entries->size());
    std::uint64_t previous = spool.acked_seq();
    for (std::size_t i = 0; i < records->size(); ++i) {
      const auto& r = (*records)[i];
      check(r.seq > previous && r.seq <= spool.last_seq());
      check(r.kind == SpoolKind::telemetry_report || r.kind == SpoolKind::flow_batch);
      check((*entries)[i].seq == r.seq);
      if (auto payload = (*entries)[i].payload.read_all()) check(*payload == r.payload);
      previous = r.seq;
    }
  }
  const auto before = spool.last_seq();
  auto seq = spool.append(SpoolKind::telemetry_report, 0, "after the damage");
  if (seq) {
    check(*seq > before);
    check(spool.ack(*seq).has_value());
    check(spool.stats().records == 0);
  }
  return 0;
}
