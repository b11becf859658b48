#include "support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;

namespace hsns::testing {
namespace {

// The inherited environment with options.env laid over it, as "NAME=value" strings.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    if (overrides.count(entry.substr(0, entry.find('='))) == 0) out.push_back(entry);
  }
  for (const auto& [name, value] : overrides) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Process::Process(std::vector<std::string> argv, ProcessOptions options) {
  // Everything the child needs is prepared here: after fork() only async-signal-safe calls.
  std::vector<std::string> env = child_environment(options.env);
  std::vector<char*> argp = pointers(argv);
  std::vector<char*> envp = pointers(env);
  const std::string out_path = options.stdout_path.empty() ? "/dev/null" : options.stdout_path.string();
  const std::string err_path = options.stderr_path.string();
  const int flags = O_WRONLY | O_CREAT | (options.append ? O_APPEND : O_TRUNC);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid_ == 0) {
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    if (options.max_open_files > 0) {
      const rlimit rl{options.max_open_files, options.max_open_files};
      if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) ::_exit(126);
    }
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    const int out = ::open(out_path.c_str(), flags, 0644);
    if (out >= 0) ::dup2(out, STDOUT_FILENO);
    const int err = err_path.empty() ? out : ::open(err_path.c_str(), flags, 0644);
    if (err >= 0) ::dup2(err, STDERR_FILENO);
    if (argp[0] != nullptr) ::execvpe(argp[0], argp.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // also here: no race with a kill of the group right after the start
}

Process::~Process() {
  kill();
}

Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(std::exchange(other.status_, std::nullopt)) {}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = std::exchange(other.pid_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

bool Process::reap(bool wait) {
  if (pid_ <= 0) return true;
  siginfo_t info{};
  const int options = WEXITED | WNOWAIT | (wait ? 0 : WNOHANG);
  int rc;
  while ((rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, options)) != 0 && errno == EINTR) {
  }
  if (rc != 0) return false;
  if (info.si_pid == 0) return false;  // still running
  // The exited child still holds its pid (and so its group id): the group cannot be a reused one.
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  status_ = WIFSIGNALED(status) ? ExitStatus{-1, WTERMSIG(status)} : ExitStatus{WEXITSTATUS(status), 0};
  pid_ = -1;
  return true;
}

bool Process::running() {
  return !reap(false);
}

bool Process::alive() const {
  if (pid_ <= 0) return false;
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT | WNOHANG) == 0 &&
         info.si_pid == 0;
}

std::optional<ExitStatus> Process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!reap(false)) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

void Process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

ExitStatus Process::stop(std::chrono::milliseconds grace) {
  signal(SIGTERM);
  if (auto s = wait(grace)) return *s;
  kill();
  return status_.value_or(ExitStatus{});
}

void Process::kill() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);  // in case the child had not yet made its group
  reap(true);
}

bool pid_running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "pid (comm) S ...": the state follows the last ')' (comm may hold parentheses).
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

}  // namespace hsns::testing
