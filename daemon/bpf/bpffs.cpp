#include "bpffs.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "libbpf_log.h"

namespace hsns::daemon::bpf {
namespace {

std::string errno_text(int err) {
  return std::strerror(err < 0 ? -err : err);
}

bool under(const std::string& path, const std::string& dir) {
  return path == dir || (path.rfind(dir, 0) == 0 && path.size() > dir.size() && path[dir.size()] == '/');
}

}  // namespace

bool is_bpffs(const std::string& path) {
  struct statfs st {};
  return statfs(path.c_str(), &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

Result<void> ensure_bpffs(const std::string& mount_point) {
  route_libbpf_log();
  if (is_bpffs(mount_point)) return {};
  if (mount("bpf", mount_point.c_str(), "bpf", 0, "mode=0700") != 0) {
    const int err = errno;
    if (err == EBUSY && is_bpffs(mount_point)) return {};  // another process mounted it just now
    return tl::unexpected(Error::unavailable("mounting bpffs at " + mount_point + ": " + errno_text(err)));
  }
  return {};
}

Result<void> ensure_pin_dir(const std::string& pin_dir) {
  if (pin_dir.empty()) return tl::unexpected(Error::invalid("pin_dir", "is empty"));
  if (under(pin_dir, kBpffsMount)) {
    if (auto r = ensure_bpffs(kBpffsMount); !r) return r;
  }
  std::error_code ec;
  std::filesystem::create_directories(pin_dir, ec);
  if (ec) return tl::unexpected(Error::unavailable("creating pin dir " + pin_dir + ": " + ec.message()));
  if (!is_bpffs(pin_dir)) {
    return tl::unexpected(Error::invalid("pin_dir", pin_dir + " is not on a bpf filesystem"));
  }
  return {};
}

Result<std::string> bpffs_root(const std::string& path) {
  struct stat st {};
  if (!is_bpffs(path) || stat(path.c_str(), &st) != 0) {
    return tl::unexpected(Error::unavailable(path + " is not on a bpf filesystem"));
  }
  std::filesystem::path dir = std::filesystem::absolute(path).lexically_normal();
  while (dir.has_relative_path()) {
    const std::filesystem::path parent = dir.parent_path();
    struct stat up {};
    if (stat(parent.c_str(), &up) != 0 || up.st_dev != st.st_dev || !is_bpffs(parent.string())) break;
    dir = parent;
  }
  std::string out = dir.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace hsns::daemon::bpf
