#include "hsns/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace hsns::log {

namespace {

std::atomic<int> g_threshold{static_cast<int>(Level::info)};
std::atomic<bool> g_journal{false};
std::mutex g_program_mutex;
std::string g_program = "hsns";

// $JOURNAL_STREAM is "<device>:<inode>" of the journal socket systemd connected stderr to; it is only
// trusted when stderr is still that very file (a child may inherit the variable with stderr redirected).
bool stderr_is_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(env, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::error:
      return "error";
    case Level::warning:
      return "warning";
    case Level::notice:
      return "notice";
    case Level::info:
      return "info";
    case Level::debug:
      return "debug";
  }
  return "info";
}

}  // namespace

void init(std::string_view program, Level threshold) {
  {
    std::lock_guard lock(g_program_mutex);
    g_program = std::string(program);
  }
  g_journal = stderr_is_journal();
  set_level(threshold);
}

void set_level(Level threshold) {
  g_threshold = static_cast<int>(threshold);
}

bool enabled(Level level) {
  return static_cast<int>(level) <= g_threshold.load(std::memory_order_relaxed);
}

bool parse_level(std::string_view text, Level& out) {
  for (auto l : {Level::error, Level::warning, Level::notice, Level::info, Level::debug}) {
    if (text == level_name(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

void write(Level level, std::string_view message) {
  if (!enabled(level)) return;
  std::string line;
  if (g_journal) {
    line = "<" + std::to_string(static_cast<int>(level)) + ">";
  } else {
    std::lock_guard lock(g_program_mutex);
    line = g_program + ": " + level_name(level) + ": ";
  }
  line.append(message);
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  // One write per line; a short write (pipe full) continues where it stopped.
  std::string_view rest = line;
  while (!rest.empty()) {
    const auto n = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace hsns::log
