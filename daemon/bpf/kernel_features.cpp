#include "kernel_features.h"

#include <bpf/libbpf.h>

#include <map>
#include <mutex>
#include <utility>

#include "hsns/log.h"
#include "libbpf_log.h"

namespace hsns::daemon::bpf {
namespace {

enum class Kind { prog, map };

// Every value of libbpf's two type enums lies below this bound, so converting a number below it to the enum
// is defined behaviour (C++ allows an unfixed enum the values of its smallest bit-field); the numbers above
// the highest enumerator this <linux/bpf.h> names are not probed (see the contract).
constexpr int kTypeNumberBound = 64;
static_assert(BPF_MAP_TYPE_USER_RINGBUF < kTypeNumberBound && BPF_PROG_TYPE_SYSCALL < kTypeNumberBound);

// libbpf's name of the type; nullptr for a number it does not name.
const char* type_name(Kind kind, int type) {
  if (type < 0 || type >= kTypeNumberBound) return nullptr;
  return kind == Kind::prog ? libbpf_bpf_prog_type_str(static_cast<bpf_prog_type>(type))
                            : libbpf_bpf_map_type_str(static_cast<bpf_map_type>(type));
}

// 1 supported, 0 not, < 0 undecided; cached per (kind, type). Only for types libbpf names.
int probe(Kind kind, int type) {
  static std::mutex mutex;
  static std::map<std::pair<Kind, int>, int> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find({kind, type});
  if (it != cache.end()) return it->second;
  LibbpfLogCapture quiet;  // a probe's own load failure is the answer, not a message
  const int r = kind == Kind::prog ? libbpf_probe_bpf_prog_type(static_cast<bpf_prog_type>(type), nullptr)
                                   : libbpf_probe_bpf_map_type(static_cast<bpf_map_type>(type), nullptr);
  cache.emplace(std::pair{kind, type}, r);
  return r;
}

Result<void> require(Kind kind, int type, const std::string& what) {
  const char* name = type_name(kind, type);
  const std::string label = std::string(kind == Kind::prog ? "BPF program type " : "BPF map type ") +
                            (name != nullptr ? std::string(name) : std::to_string(type));
  const int r = name != nullptr ? probe(kind, type) : -1;
  if (r == 0) {
    return tl::unexpected(
        Error::unavailable(what + " needs " + label + ", which this kernel does not support"));
  }
  if (r < 0) {
    HSNS_LOG(debug) << "cannot probe " << label << " (error " << r << "); the load will tell";
  }
  return {};
}

}  // namespace

Result<void> require_prog_type(int type, const std::string& what) {
  route_libbpf_log();
  return require(Kind::prog, type, what);
}

Result<void> require_map_type(int type, const std::string& what) {
  route_libbpf_log();
  return require(Kind::map, type, what);
}

Result<void> require_kernel_features(const bpf_object* obj, const std::string& what) {
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, obj) {
    if (auto r = require_prog_type(bpf_program__type(prog), what); !r) return r;
  }
  const bpf_map* map = nullptr;
  bpf_object__for_each_map(map, obj) {
    if (auto r = require_map_type(bpf_map__type(map), what); !r) return r;
  }
  return {};
}

}  // namespace hsns::daemon::bpf
