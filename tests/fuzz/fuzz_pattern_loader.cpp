// The fault-pattern loader and matcher (lib/brain/patterns.h): any bytes as one pattern file. Checks: no
// crash, no read past the input, bounded time and memory (every regular expression is RE2: linear in its
// input); a refused file names its place ("<file>:<line>:<column>: ..." or a size limit); an accepted library
// has unique, non-empty ids, and a matcher over it fed log lines and KPI observations derived from the input
// never holds more states than its cap and clears no more faults than it raised.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "brain/patterns.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hsns::brain;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<PatternSource> files{{"fuzz.yaml", text}};
  const auto library = parse_pattern_library(files);
  if (!library) {
    const auto& e = library.error();
    if (e.kind == hsns::Error::Kind::invalid && e.message().find("fuzz.yaml:") == std::string::npos &&
        e.message().find("RE2's memory") == std::string::npos) {
      __builtin_trap();
    }
    return 0;
  }
  std::set<std::string, std::less<>> ids;
  for (const Pattern& p : library->patterns()) {
    if (p.id.empty() || !ids.insert(p.id).second || library->find(p.id) != &p) __builtin_trap();
  }
  constexpr std::size_t kCap = 8;
  PatternMatcher matcher(
      *library, [](std::string_view e) -> std::optional<std::string> { return "peer/" + std::string(e); },
      {.max_states = kCap});
  std::vector<FaultMatch> out;
  // Lines of the input itself as messages and entities, with the shipped library's typical texts besides.
  const std::string_view input(text);
  static const char* const kLines[] = {"Port Ethernet8 oper state set from up to down",
                                       "%ADJCHANGE: neighbor 10.0.0.1(spine01) in vrf default Down",
                                       "port e1 down", "port e1 up"};
  static const char* const kMetrics[] = {"rx_power_dbm", "rx_prio3_pause", "symbol_error", "m"};
  std::int64_t t_ms = 0;
  for (std::size_t i = 0, start = 0; i < 32 && start <= input.size(); ++i) {
    const std::size_t end = std::min(input.find('\n', start), input.size());
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    t_ms += 7'000;
    const std::string entity = "leaf" + std::to_string(i % 5) + "/p" + std::to_string(i % 3);
    const hsns::brain::LogField fields[] = {{"meta.sequenceId", "42"}};
    matcher.observe(LogEvent{.entity = entity,
                             .timestamp_ms = t_ms,
                             .message = line,
                             .app = "orchagent",
                             .hostname = "leaf1",
                             .severity = static_cast<int>(i % 8),
                             .fields = fields},
                    out);
    matcher.observe(LogEvent{.entity = entity, .timestamp_ms = t_ms, .message = kLines[i % 4]}, out);
    AnomalyEvent verdict;
    verdict.kind = static_cast<AnomalyKind>(i % kAnomalyKinds);
    verdict.state = i % 3 == 0 ? EventState::cleared : EventState::raised;
    matcher.observe(KpiObservation{entity, kMetrics[i % 4], t_ms, static_cast<double>(line.size()) - 10.0,
                                   std::span(&verdict, 1)},
                    out);
    if (matcher.state_count() > kCap) __builtin_trap();
  }
  if (matcher.stats().cleared > matcher.stats().raised) __builtin_trap();
  return 0;
}
