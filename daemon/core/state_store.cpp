#include "state_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hsns/unique_fd.h"

namespace hsns::daemon {
namespace {

using json = nlohmann::json;

using Fd = UniqueFd;

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace

std::string state_to_json(const PersistentState& s) {
  json owned = json::object();
  for (const auto& [netdev, port] : s.owned) {
    owned[netdev] = {{"npu", port.npu}, {"addresses", port.addresses}};
  }
  json doc = {{"version", 1}, {"etag", s.etag}, {"owned", owned}};
  doc["desired"] = s.desired_json.empty() ? json(nullptr) : json::parse(s.desired_json, nullptr, false);
  return doc.dump(2) + "\n";
}

tl::expected<PersistentState, std::string> state_from_json(const std::string& text) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return tl::unexpected(std::string("not a JSON object"));
  try {
    if (doc.at("version").get<int>() != 1) return tl::unexpected(std::string("unsupported version"));
    PersistentState s;
    s.etag = doc.at("etag").get<std::string>();
    const auto& desired = doc.at("desired");
    if (!desired.is_null()) {
      if (!desired.is_object()) return tl::unexpected(std::string("desired: not an object"));
      s.desired_json = desired.dump();
    }
    for (const auto& [netdev, port] : doc.at("owned").items()) {
      OwnedPort o;
      o.npu = port.at("npu").get<int>();
      for (const auto& a : port.at("addresses")) o.addresses.insert(a.get<std::string>());
      s.owned[netdev] = std::move(o);
    }
    return s;
  } catch (const json::exception& e) {
    return tl::unexpected(std::string(e.what()));
  }
}

StateStore::StateStore(std::string state_dir) : dir_(std::move(state_dir)) {}

tl::expected<LoadResult, std::string> StateStore::load() const {
  LoadResult out;
  std::error_code ec;
  if (!std::filesystem::exists(path(), ec)) return out;
  std::ifstream in(path());
  if (!in) return tl::unexpected(errno_text("cannot read " + path()));
  std::stringstream ss;
  ss << in.rdbuf();
  auto parsed = state_from_json(ss.str());
  if (parsed) {
    out.state = std::move(*parsed);
    return out;
  }
  const auto stamp =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::string aside = path() + ".corrupt-" + std::to_string(stamp);
  std::filesystem::rename(path(), aside, ec);
  if (ec)
    return tl::unexpected("state file " + path() + " is corrupt (" + parsed.error() +
                          ") and cannot be set aside: " + ec.message());
  out.set_aside = aside;
  return out;
}

tl::expected<void, std::string> StateStore::write_atomic(const std::string& name, const std::string& content,
                                                         bool durable) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  const std::string final_path = dir_ + "/" + name;
  const std::string tmp = final_path + ".tmp-" + std::to_string(::getpid());
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640));
    if (fd.get() < 0) return tl::unexpected(errno_text("cannot create " + tmp));
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const auto err = errno_text("cannot write " + tmp);
        ::unlink(tmp.c_str());
        return tl::unexpected(err);
      }
      done += static_cast<std::size_t>(n);
    }
    if ((durable && ::fsync(fd.get()) != 0) || ::close(fd.release()) != 0) {
      const auto err = errno_text("cannot sync " + tmp);
      ::unlink(tmp.c_str());
      return tl::unexpected(err);
    }
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    const auto err = errno_text("cannot rename " + tmp);
    ::unlink(tmp.c_str());
    return tl::unexpected(err);
  }
  if (!durable) return {};
  Fd dirfd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dirfd.get() >= 0) ::fsync(dirfd.get());
  return {};
}

tl::expected<void, std::string> StateStore::save(const PersistentState& state) const {
  return write_atomic("state.json", state_to_json(state));
}

}  // namespace hsns::daemon
