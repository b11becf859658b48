// Running commands from tests: argv without a shell (run_command) or a command line through /bin/sh (sh),
// with the exit status and the output captured.
//
// Contract:
// - A CommandResult names its command: streaming one (`EXPECT_EQ(r.status, 0) << r;`) prints the command
//   line, its status and its output, so a failure says which command failed and why.
// - status is the exit code, 128 + the signal when a signal ended the command, 127 when it could not be
//   started (as the shell reports it) and -1 when no process could be made (pipe or fork failed).
// - The command's standard input is stdin_text (empty: end of file at once); its stdout and stderr are
//   captured interleaved, or stdout alone with Stderr::discard. Descriptors of the test process are not
//   inherited (every descriptor this library opens is close-on-exec).
// - must() runs the command and records a non-fatal GoogleTest failure naming it when it fails; it
//   returns the output either way, so tests can go on and report more.
// - wait_for() polls a condition until it holds or the timeout passes (no fixed sleeps in tests).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace hsns::testing {

struct CommandResult {
  std::string command;  // the command line as run, for messages
  int status = -1;
  std::string output;
  bool ok() const { return status == 0; }
};

// "`ip netns add x` exited with 1:\n<output>"
std::ostream& operator<<(std::ostream& out, const CommandResult& r);

enum class Stderr { capture, discard };

CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text = "",
                          Stderr err = Stderr::capture);
CommandResult sh(const std::string& command_line, Stderr err = Stderr::capture);

std::string must(const std::vector<std::string>& argv);
std::string must(const std::string& command_line);

bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
              std::chrono::milliseconds poll = std::chrono::milliseconds(20));

// The whole file, or "" when it cannot be read (a file a process has not written yet reads as empty).
std::string read_file(const std::filesystem::path& path);

// The words of argv joined by spaces, for messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace hsns::testing
