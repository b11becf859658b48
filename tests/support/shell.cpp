#include "support/shell.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace hsns::testing {
namespace {

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Writes text to fd and closes it. SIGPIPE is blocked on this thread, so a command that exits without
// reading its input makes write() fail with EPIPE instead of killing the test process (a SIGPIPE raised
// by write() is directed at the writing thread and dies with it).
void feed(int fd, const std::string& text) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
  std::size_t off = 0;
  while (off < text.size()) {
    const auto n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const CommandResult& r) {
  return out << "`" << r.command << "` exited with " << r.status << ":\n" << r.output;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string joined;
  for (const auto& a : argv) joined += (joined.empty() ? "" : " ") + a;
  return joined;
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text, Stderr err) {
  CommandResult r;
  r.command = command_line(argv);
  if (argv.empty()) return r;
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return r;
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return r;
  }
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    if (err == Stderr::capture) {
      ::dup2(out_pipe[1], STDERR_FILENO);
    } else {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, STDERR_FILENO);
    }
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (pid < 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    return r;
  }
  std::thread writer(feed, in_pipe[1], std::cref(stdin_text));
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out_pipe[0], buf, sizeof buf)) > 0) r.output.append(buf, static_cast<std::size_t>(n));
  ::close(out_pipe[0]);
  writer.join();
  int status = 0;
  if (::waitpid(pid, &status, 0) == pid) r.status = decode_wait_status(status);
  return r;
}

CommandResult sh(const std::string& command_line, Stderr err) {
  auto r = run_command({"/bin/sh", "-c", command_line}, "", err);
  r.command = command_line;
  return r;
}

std::string must(const std::vector<std::string>& argv) {
  auto r = run_command(argv);
  EXPECT_TRUE(r.ok()) << r;
  return r.output;
}

std::string must(const std::string& command_line) {
  auto r = sh(command_line);
  EXPECT_TRUE(r.ok()) << r;
  return r.output;
}

bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
              std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace hsns::testing
