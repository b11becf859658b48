// hsns::log: the one logger of hsnsd, hsns-aggregator and hsnsctl.
//
// Contract:
// - One line per message on stderr, written with a single write(2), so lines from threads never mix.
// - Under systemd (stderr is the journal stream named by $JOURNAL_STREAM) each line starts with the
//   sd-daemon priority prefix "<N>" that journald turns into the entry's priority; on a terminal or a file
//   it starts with "<program>: <level>: ". Either way the message follows unchanged.
// - Messages below the threshold (init/set_level; default info) cost one comparison and no formatting.
// - Thread-safe; init() is meant to be called once at the start of main.
//
// Use: HSNS_LOG(warning) << "cannot read " << path << ": " << why;  or  log::write(Level::info, text).
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace hsns::log {

enum class Level { error = 3, warning = 4, notice = 5, info = 6, debug = 7 };

void init(std::string_view program, Level threshold = Level::info);
void set_level(Level threshold);
bool enabled(Level level);
void write(Level level, std::string_view message);

// Parses "error", "warning", "notice", "info", "debug" (for configuration files and flags).
bool parse_level(std::string_view text, Level& out);

// Collects one message and writes it when destroyed (the end of the full expression).
class Line {
 public:
  explicit Line(Level level) : level_(level) {}
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;
  ~Line() { write(level_, out_.str()); }
  template <typename T>
  Line& operator<<(const T& value) {
    out_ << value;
    return *this;
  }

 private:
  Level level_;
  std::ostringstream out_;
};

// Gives the ?: of HSNS_LOG a void branch; & binds looser than <<, so the whole message is built first.
struct Voidify {
  void operator&(const Line&) const {}
};

}  // namespace hsns::log

// HSNS_LOG(info) << ...; the stream expression is not evaluated when the level is filtered out. An
// expression, not an if statement, so that `if (x) HSNS_LOG(info) << ...; else ...` means what it says.
// Not parenthesised: the caller's `<< ...` must bind to the Line inside it.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define HSNS_LOG(level)                            \
  !::hsns::log::enabled(::hsns::log::Level::level) \
      ? (void)0                                    \
      : ::hsns::log::Voidify() & ::hsns::log::Line(::hsns::log::Level::level)
// NOLINTEND(bugprone-macro-parentheses)
