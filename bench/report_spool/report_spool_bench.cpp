// Report spool benchmark: what durability costs beside the least a durable append can cost.
//   hsns_bench_report_spool [DIR] [BATCHES] [SMALL_RECORDS] [SMALL_BYTES]   (defaults: 64 1000 512)
// In DIR (default: a fresh directory under $TMPDIR or /var/tmp; it should be on the disk hsnsd's state
// directory lives on), for each workload: Spool::append of every record (write + fdatasync each) beside
// the same-run baseline, plain write(2) + fdatasync(2) of the same payload bytes appended to one file, and
// a peek+ack pass draining the spool. Five rounds, alternating (the disk may be
// shared and noisy); prints the median's records/s and MB/s
// and the ratio of the spool's time to the baseline's.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../bench_timing.h"
#include "hsns/unique_fd.h"
#include "spool.h"

namespace {

namespace fs = std::filesystem;
namespace report = hsns::daemon::report;
using hsns::bench::Clock;
using hsns::bench::ms_since;

struct Figure {
  double ms = 0;
  std::size_t records = 0;
  std::size_t bytes = 0;
  double per_s() const { return static_cast<double>(records) * 1e3 / ms; }
  double mb_s() const { return static_cast<double>(bytes) / 1e6 * 1e3 / ms; }
};

Figure baseline(const fs::path& file, const std::vector<std::string>& payloads) {
  hsns::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0640));
  if (fd.get() < 0) {
    std::perror("open baseline file");
    std::exit(1);
  }
  Figure f;
  const auto t0 = Clock::now();
  for (const auto& p : payloads) {
    if (::write(fd.get(), p.data(), p.size()) != static_cast<ssize_t>(p.size()) ||
        ::fdatasync(fd.get()) != 0) {
      std::perror("baseline write");
      std::exit(1);
    }
    ++f.records;
    f.bytes += p.size();
  }
  f.ms = ms_since(t0);
  fs::remove(file);
  return f;
}

struct SpoolFigures {
  Figure append;
  Figure drain;
};

SpoolFigures spool_run(const fs::path& dir, const std::vector<std::string>& payloads,
                       report::SpoolKind kind) {
  report::SpoolOptions o;
  o.dir = dir.string();
  o.max_bytes = 4ULL << 30;
  auto spool = report::Spool::open(o);
  if (!spool) {
    std::fprintf(stderr, "open %s: %s\n", o.dir.c_str(), spool.error().message().c_str());
    std::exit(1);
  }
  SpoolFigures out;
  const auto t0 = Clock::now();
  std::uint64_t epoch = 0;
  for (const auto& p : payloads) {
    auto r = (*spool)->append(kind, kind == report::SpoolKind::flow_batch ? ++epoch : 0, p);
    if (!r) {
      std::fprintf(stderr, "append: %s\n", r.error().message().c_str());
      std::exit(1);
    }
    ++out.append.records;
    out.append.bytes += p.size();
  }
  out.append.ms = ms_since(t0);
  // Drain in batches of up to 4 MB of payload, one ack each (as a reporter would).
  const auto t1 = Clock::now();
  for (;;) {
    auto batch = (*spool)->peek(4ULL << 20);
    if (!batch || batch->empty()) break;
    for (const auto& r : *batch) out.drain.bytes += r.payload.size();
    out.drain.records += batch->size();
    if (!(*spool)->ack(batch->back().seq)) break;
  }
  out.drain.ms = ms_since(t1);
  spool->reset();
  fs::remove_all(dir);
  return out;
}

// The median run by time.
template <typename T, typename Ms>
T median_of(std::vector<T> runs, Ms ms) {
  std::sort(runs.begin(), runs.end(), [&](const T& a, const T& b) { return ms(a) < ms(b); });
  return runs[runs.size() / 2];
}

// Five rounds, baseline and spool alternating so that neither always runs on a colder or warmer disk.
void report_line(const char* name, const std::vector<std::string>& payloads, const fs::path& root,
                 report::SpoolKind kind) {
  std::vector<Figure> bases;
  std::vector<SpoolFigures> spools;
  for (int round = 0; round < 5; ++round) {
    bases.push_back(baseline(root / "baseline.bin", payloads));
    spools.push_back(spool_run(root / "spool", payloads, kind));
  }
  const Figure base = median_of(bases, [](const Figure& f) { return f.ms; });
  const SpoolFigures s = median_of(spools, [](const SpoolFigures& f) { return f.append.ms; });
  std::printf("%s: %zu records, %.1f MB (median of 5 rounds)\n", name, payloads.size(),
              static_cast<double>(base.bytes) / 1e6);
  std::printf("  spool append      %9.0f records/s %8.1f MB/s\n", s.append.per_s(), s.append.mb_s());
  std::printf("  baseline          %9.0f records/s %8.1f MB/s   (write + fdatasync, one file)\n",
              base.per_s(), base.mb_s());
  std::printf("  spool / baseline  %9.2f x time\n", s.append.ms / base.ms);
  std::printf("  drain (peek+ack)  %9.0f records/s %8.1f MB/s\n", s.drain.per_s(), s.drain.mb_s());
}

std::vector<std::string> payloads(std::size_t n, std::size_t size) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string p(size, '\0');
    for (std::size_t k = 0; k < size; ++k) p[k] = static_cast<char>((i * 131 + k * 7) & 0xff);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root;
  if (argc > 1) {
    root = argv[1];
    fs::create_directories(root);
  } else {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/var/tmp") + "/hsns-bench-spool-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    root = pattern;
  }
  const std::size_t batches = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 64;
  const std::size_t small = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
  const std::size_t small_bytes = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 512;
  std::printf("report spool benchmark in %s\n", root.c_str());
  report_line("1 MB flow batches", payloads(batches, 1 << 20), root, report::SpoolKind::flow_batch);
  report_line("small telemetry reports", payloads(small, small_bytes), root,
              report::SpoolKind::telemetry_report);
  if (argc <= 1) fs::remove_all(root);
  return 0;
}
