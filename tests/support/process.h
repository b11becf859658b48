// A child process owned by a test: started from argv with extra environment variables and its stdout and
// stderr going to files, waited for with a timeout, signalled, and never left behind.
//
// Contract:
// - The child runs in a process group of its own. Destroying a Process that still runs SIGKILLs that
//   group and reaps the child, so a test that fails half-way (an ASSERT returning early, an exception)
//   leaves no process behind; the child also gets SIGKILL when the thread that started it dies
//   (PR_SET_PDEATHSIG), which covers a crashed test process. Start children from the test's main thread
//   or from a thread that outlives them.
// - Once the child has exited, whatever else is left in its group is SIGKILLed before the child is reaped
//   (a wrapper's descendants cannot outlive it).
// - An argv whose program cannot be executed gives a child that exits with 127 at once.
// - ExitStatus: code when the child exited, signal when a signal ended it; shell() folds both into one
//   number (code, or 128 + signal) as a shell does.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hsns::testing {

struct ExitStatus {
  int code = -1;   // the exit code, -1 when a signal ended the process
  int signal = 0;  // the signal that ended the process, 0 when it exited
  int shell() const { return signal != 0 ? 128 + signal : code; }
  bool operator==(const ExitStatus&) const = default;
};

struct ProcessOptions {
  std::map<std::string, std::string> env;  // set in the child's environment (overrides inherited values)
  std::filesystem::path stdout_path;       // empty: /dev/null
  std::filesystem::path stderr_path;       // empty: the stdout file (both interleaved)
  bool append = true;                      // append to the files, else truncate them
  unsigned long max_open_files = 0;        // the child's RLIMIT_NOFILE; 0: inherited
};

// Options for a child whose stdout and stderr both go (appended) to one log file.
inline ProcessOptions log_to(std::filesystem::path file) {
  ProcessOptions options;
  options.stdout_path = std::move(file);
  return options;
}

class Process {
 public:
  Process() = default;  // no child
  // Starts the child; throws std::system_error when no process can be made.
  explicit Process(std::vector<std::string> argv, ProcessOptions options = {});
  ~Process();
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // True while the child runs (reaps it once it has exited).
  bool running();
  // True while the child runs, without reaping it (a zombie counts as exited).
  bool alive() const;
  // Waits up to timeout for the child to exit; nullopt when it still runs.
  std::optional<ExitStatus> wait(std::chrono::milliseconds timeout);
  void signal(int sig) const;
  // SIGTERM, then up to grace for the child to exit, then SIGKILL.
  ExitStatus stop(std::chrono::milliseconds grace = std::chrono::seconds(20));
  // SIGKILL to the child's group and reap (no-op once reaped).
  void kill();
  // How the child ended, once it has been reaped.
  const std::optional<ExitStatus>& exit_status() const { return status_; }

 private:
  // Reaps the child if it has exited (wait = false) or once it exits (wait = true).
  bool reap(bool wait);

  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

// True while pid names a process that has not exited (a zombie counts as exited), whoever its parent is;
// reaps nothing. For descendants a test does not own as a Process.
bool pid_running(pid_t pid);

}  // namespace hsns::testing
