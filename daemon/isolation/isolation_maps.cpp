#include "isolation_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "bpf/kernel_features.h"
#include "bpf/libbpf_log.h"
#include "isolation.skel.h"

namespace hsns::daemon {

using bpf::LibbpfLogCapture;

namespace {

std::string errno_text(int err) {
  return std::strerror(err < 0 ? -err : err);
}

uint128 mask_of(IpFamily family, int length) {
  const int bits = family == IpFamily::v4 ? 32 : 128;
  if (length <= 0) return 0;
  const uint128 all = family == IpFamily::v4 ? uint128{0xFFFFFFFFu} : ~uint128{0};
  return length >= bits ? all : (all << (bits - length)) & all;
}

template <std::size_t N>
void to_bytes(uint128 value, std::uint8_t (&out)[N]) {
  for (std::size_t i = 0; i < N; ++i) out[N - 1 - i] = static_cast<std::uint8_t>(value >> (8 * i));
}

template <std::size_t N>
uint128 from_bytes(const std::uint8_t (&in)[N]) {
  uint128 v = 0;
  for (std::size_t i = 0; i < N; ++i) v = (v << 8) | in[i];
  return v;
}

// Keys compare as raw bytes so that set difference works on them directly.
template <typename Key>
struct KeyLess {
  bool operator()(const Key& a, const Key& b) const { return std::memcmp(&a, &b, sizeof(Key)) < 0; }
};
template <typename Key>
using KeySet = std::set<Key, KeyLess<Key>>;

hsns_iso_v4_key v4_key(std::uint32_t ifindex, const IpPrefix& p) {
  hsns_iso_v4_key k{};
  k.prefixlen = HSNS_ISO_IFINDEX_BITS + static_cast<std::uint32_t>(p.length());
  k.ifindex = ifindex;
  to_bytes(p.network().value() & mask_of(IpFamily::v4, p.length()), k.addr);
  return k;
}

hsns_iso_v6_key v6_key(std::uint32_t ifindex, const IpPrefix& p) {
  hsns_iso_v6_key k{};
  k.prefixlen = HSNS_ISO_IFINDEX_BITS + static_cast<std::uint32_t>(p.length());
  k.ifindex = ifindex;
  to_bytes(p.network().value() & mask_of(IpFamily::v6, p.length()), k.addr);
  return k;
}

template <typename Key>
KeySet<Key> trie_keys(int fd, std::uint32_t ifindex) {
  KeySet<Key> keys;
  Key cur{};
  Key next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    if (next.ifindex == ifindex) keys.insert(next);
    cur = next;
    prev = &cur;
  }
  return keys;
}

template <typename Key>
tl::expected<void, std::string> add_missing(int fd, const KeySet<Key>& want, const KeySet<Key>& have,
                                            const char* family) {
  const std::uint32_t allow = HSNS_ISO_ALLOW;
  for (const Key& k : want) {
    if (have.count(k)) continue;
    if (bpf_map_update_elem(fd, &k, &allow, BPF_ANY) != 0) {
      return tl::unexpected(std::string("adding an ") + family + " prefix: " + errno_text(errno));
    }
  }
  return {};
}

template <typename Key>
tl::expected<void, std::string> delete_stale(int fd, const KeySet<Key>& want, const KeySet<Key>& have,
                                             const char* family) {
  for (const Key& k : have) {
    if (want.count(k)) continue;
    if (bpf_map_delete_elem(fd, &k) != 0 && errno != ENOENT) {
      return tl::unexpected(std::string("deleting an ") + family + " prefix: " + errno_text(errno));
    }
  }
  return {};
}

// One family of a policy: the keys as address/mask pairs (the key's address bytes are already masked),
// or, when there are more than fit, the flag that sends the program to the trie.
template <typename Key, typename Net, std::size_t N>
void fill_family(const KeySet<Key>& keys, IpFamily family, std::uint32_t in_trie, Net (&nets)[N],
                 std::uint32_t& count, std::uint32_t& flags) {
  if (keys.size() > N) {
    flags |= in_trie;
    return;
  }
  for (const Key& k : keys) {
    Net& net = nets[count++];
    decltype(k.addr) mask{};
    to_bytes(mask_of(family, static_cast<int>(k.prefixlen - HSNS_ISO_IFINDEX_BITS)), mask);
    static_assert(sizeof(net.addr) == sizeof(k.addr) && sizeof(net.mask) == sizeof(mask));
    std::memcpy(&net.addr, k.addr, sizeof(net.addr));
    std::memcpy(&net.mask, mask, sizeof(net.mask));
  }
}

// The hot-path policy of a port with counter slot `slot` and these trie keys. Unused entries stay zero,
// so equal policies are equal bytes.
hsns_iso_policy make_policy(std::uint32_t slot, const KeySet<hsns_iso_v4_key>& v4,
                            const KeySet<hsns_iso_v6_key>& v6) {
  hsns_iso_policy pol{};
  pol.slot = slot;
  fill_family(v4, IpFamily::v4, HSNS_ISO_V4_IN_TRIE, pol.v4, pol.n4, pol.flags);
  fill_family(v6, IpFamily::v6, HSNS_ISO_V6_IN_TRIE, pol.v6, pol.n6, pol.flags);
  return pol;
}

bool has_fast_entry(std::uint32_t ifindex) {
  return ifindex < HSNS_ISO_FAST_IFINDEX;
}

// bpftool's generated open. Hidden from clang-tidy's static analyzer, which takes libbpf's
// bpf_object__destroy_skeleton (a system header's function) for one that frees nothing and so reports a
// leak inside the generated error path.
isolation* open_skeleton() {
#ifdef __clang_analyzer__
  return nullptr;
#else
  return isolation__open();
#endif
}

}  // namespace

tl::expected<std::unique_ptr<IsolationMaps>, std::string> IsolationMaps::load(const std::string& pin_dir) {
  LibbpfLogCapture log;
  isolation* skel = open_skeleton();
  if (skel == nullptr) {
    return tl::unexpected("opening the isolation program failed: " + errno_text(errno) + "; " + log.text());
  }
  std::unique_ptr<IsolationMaps> self(new IsolationMaps(skel));
  if (auto r = bpf::require_kernel_features(skel->obj, "the isolation program"); !r) {
    return tl::unexpected(r.error().message());
  }
  if (!pin_dir.empty()) {
    for (bpf_map* m : {skel->maps.hsns_iso_fast, skel->maps.hsns_iso_v4, skel->maps.hsns_iso_v6,
                       skel->maps.hsns_iso_ports, skel->maps.hsns_iso_counters}) {
      const std::string path = pin_dir + "/" + bpf_map__name(m);
      if (int err = bpf_map__set_pin_path(m, path.c_str()); err != 0) {
        return tl::unexpected("setting pin path " + path + ": " + errno_text(err));
      }
    }
  }
  if (int err = isolation__load(skel); err != 0) {
    return tl::unexpected("loading the isolation program failed (" + errno_text(err) +
                          (pin_dir.empty() ? "" : "; pinned maps under " + pin_dir + " may be incompatible") +
                          "): " + log.text());
  }
  // Pinned maps of a version without hsns_iso_fast (or left half updated by a crash): derive the hot-path
  // policies from the ports and tries before the program is attached anywhere.
  if (!pin_dir.empty()) {
    if (auto r = self->reconcile_policies(); !r) return tl::unexpected(r.error());
  }
  return self;
}

IsolationMaps::~IsolationMaps() {
  isolation__destroy(skel_);
}

int IsolationMaps::program_fd() const {
  return bpf_program__fd(skel_->progs.hsns_isolation_egress);
}

std::uint32_t IsolationMaps::program_id() const {
  bpf_prog_info info{};
  std::uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(program_fd(), &info, &len) != 0) return 0;
  return info.id;
}

tl::expected<void, std::string> IsolationMaps::set_prefixes(std::uint32_t ifindex,
                                                            const std::vector<IpPrefix>& allowed) {
  KeySet<hsns_iso_v4_key> want4;
  KeySet<hsns_iso_v6_key> want6;
  for (const IpPrefix& p : allowed) {
    const int max = p.family() == IpFamily::v4 ? 32 : 128;
    if (p.length() < 0 || p.length() > max) {
      return tl::unexpected("prefix " + p.to_string() + " has an invalid length");
    }
    if (p.family() == IpFamily::v4) {
      want4.insert(v4_key(ifindex, p));
    } else {
      want6.insert(v6_key(ifindex, p));
    }
  }
  const int fd4 = bpf_map__fd(skel_->maps.hsns_iso_v4);
  const int fd6 = bpf_map__fd(skel_->maps.hsns_iso_v6);
  const auto have4 = trie_keys<hsns_iso_v4_key>(fd4, ifindex);
  const auto have6 = trie_keys<hsns_iso_v6_key>(fd6, ifindex);
  // New entries, then the new policy (whose trie families see old and new entries for a moment), then
  // the stale entries: a packet both policies allow is never dropped on the way.
  if (auto r = add_missing(fd4, want4, have4, "IPv4"); !r) return r;
  if (auto r = add_missing(fd6, want6, have6, "IPv6"); !r) return r;
  hsns_iso_port port{};
  if (has_fast_entry(ifindex) &&
      bpf_map_lookup_elem(bpf_map__fd(skel_->maps.hsns_iso_ports), &ifindex, &port) == 0) {
    if (auto r = publish_policy(ifindex, make_policy(port.slot, want4, want6)); !r) return r;
  }
  if (auto r = delete_stale(fd4, want4, have4, "IPv4"); !r) return r;
  return delete_stale(fd6, want6, have6, "IPv6");
}

tl::expected<void, std::string> IsolationMaps::publish_policy(std::uint32_t ifindex,
                                                              const hsns_iso_policy& pol) {
  if (auto now = fast_policy(ifindex); now && std::memcmp(&*now, &pol, sizeof(pol)) == 0) return {};
  // A fresh inner map swapped in whole: the program never sees a policy half written.
  const int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "hsns_iso_policy", sizeof(std::uint32_t),
                                   sizeof(hsns_iso_policy), 1, nullptr);
  if (inner < 0)
    return tl::unexpected("creating the policy map of port " + std::to_string(ifindex) + ": " +
                          errno_text(errno));
  const std::uint32_t zero = 0;
  std::string error;
  if (bpf_map_update_elem(inner, &zero, &pol, BPF_ANY) != 0) {
    error = "writing the policy of port " + std::to_string(ifindex) + ": " + errno_text(errno);
  } else if (bpf_map_update_elem(bpf_map__fd(skel_->maps.hsns_iso_fast), &ifindex, &inner, BPF_ANY) != 0) {
    error = "publishing the policy of port " + std::to_string(ifindex) + ": " + errno_text(errno);
  }
  close(inner);  // the outer map holds it now
  if (!error.empty()) return tl::unexpected(error);
  return {};
}

tl::expected<void, std::string> IsolationMaps::unpublish_policy(std::uint32_t ifindex) {
  if (!has_fast_entry(ifindex)) return {};
  if (bpf_map_delete_elem(bpf_map__fd(skel_->maps.hsns_iso_fast), &ifindex) != 0 && errno != ENOENT) {
    return tl::unexpected("withdrawing the policy of port " + std::to_string(ifindex) + ": " +
                          errno_text(errno));
  }
  return {};
}

tl::expected<void, std::string> IsolationMaps::republish_policy(std::uint32_t ifindex, std::uint32_t slot) {
  if (!has_fast_entry(ifindex)) return {};
  return publish_policy(
      ifindex, make_policy(slot, trie_keys<hsns_iso_v4_key>(bpf_map__fd(skel_->maps.hsns_iso_v4), ifindex),
                           trie_keys<hsns_iso_v6_key>(bpf_map__fd(skel_->maps.hsns_iso_v6), ifindex)));
}

std::optional<hsns_iso_policy> IsolationMaps::fast_policy(std::uint32_t ifindex) const {
  if (!has_fast_entry(ifindex)) return std::nullopt;
  std::uint32_t id = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.hsns_iso_fast), &ifindex, &id) != 0) return std::nullopt;
  const int inner = bpf_map_get_fd_by_id(id);
  if (inner < 0) return std::nullopt;
  hsns_iso_policy pol{};
  const std::uint32_t zero = 0;
  const bool ok = bpf_map_lookup_elem(inner, &zero, &pol) == 0;
  close(inner);
  if (!ok) return std::nullopt;
  return pol;
}

tl::expected<void, std::string> IsolationMaps::reconcile_policies() {
  const auto enforced = ports();
  for (const auto& [ifindex, port] : enforced) {
    if (auto r = republish_policy(ifindex, port.slot); !r) return r;
  }
  const int fd = bpf_map__fd(skel_->maps.hsns_iso_fast);
  for (std::uint32_t ifindex = 0; ifindex < HSNS_ISO_FAST_IFINDEX; ++ifindex) {
    std::uint32_t id = 0;
    if (enforced.count(ifindex) == 0 && bpf_map_lookup_elem(fd, &ifindex, &id) == 0) {
      if (auto r = unpublish_policy(ifindex); !r) return r;
    }
  }
  return {};
}

tl::expected<std::vector<IpPrefix>, std::string> IsolationMaps::prefixes(std::uint32_t ifindex) const {
  std::vector<IpPrefix> out;
  for (const auto& k : trie_keys<hsns_iso_v4_key>(bpf_map__fd(skel_->maps.hsns_iso_v4), ifindex)) {
    out.emplace_back(IpAddress(IpFamily::v4, from_bytes(k.addr)),
                     static_cast<int>(k.prefixlen - HSNS_ISO_IFINDEX_BITS));
  }
  for (const auto& k : trie_keys<hsns_iso_v6_key>(bpf_map__fd(skel_->maps.hsns_iso_v6), ifindex)) {
    out.emplace_back(IpAddress(IpFamily::v6, from_bytes(k.addr)),
                     static_cast<int>(k.prefixlen - HSNS_ISO_IFINDEX_BITS));
  }
  std::sort(out.begin(), out.end(), [](const IpPrefix& a, const IpPrefix& b) {
    return a.network() != b.network() ? a.network() < b.network() : a.length() < b.length();
  });
  return out;
}

tl::expected<void, std::string> IsolationMaps::set_port(std::uint32_t ifindex, const hsns_iso_port& port) {
  const int fd = bpf_map__fd(skel_->maps.hsns_iso_ports);
  hsns_iso_port entry = port;
  hsns_iso_port existing{};
  if (bpf_map_lookup_elem(fd, &ifindex, &existing) == 0) {
    entry.slot = existing.slot;
  } else {
    std::set<std::uint32_t> used;
    for (const auto& [index, p] : ports()) used.insert(p.slot);
    entry.slot = 0;
    while (used.count(entry.slot)) ++entry.slot;
    if (entry.slot >= HSNS_ISO_MAX_PORTS) {
      return tl::unexpected("more than " + std::to_string(HSNS_ISO_MAX_PORTS) + " isolated ports");
    }
    if (auto r = zero_counters(entry.slot); !r) return r;
  }
  if (bpf_map_update_elem(fd, &ifindex, &entry, BPF_ANY) != 0) {
    return tl::unexpected("enabling port " + std::to_string(ifindex) + ": " + errno_text(errno));
  }
  return republish_policy(ifindex, entry.slot);
}

tl::expected<void, std::string> IsolationMaps::zero_counters(std::uint32_t slot) {
  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return tl::unexpected(std::string("cannot count possible CPUs"));
  const std::vector<hsns_iso_counters> zero(static_cast<std::size_t>(ncpu));
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.hsns_iso_counters), &slot, zero.data(), BPF_ANY) != 0) {
    return tl::unexpected("zeroing counter slot " + std::to_string(slot) + ": " + errno_text(errno));
  }
  return {};
}

std::map<std::uint32_t, hsns_iso_port> IsolationMaps::ports() const {
  std::map<std::uint32_t, hsns_iso_port> out;
  const int fd = bpf_map__fd(skel_->maps.hsns_iso_ports);
  std::uint32_t cur = 0;
  std::uint32_t next = 0;
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    hsns_iso_port port{};
    if (bpf_map_lookup_elem(fd, &next, &port) == 0) {
      port.name[sizeof(port.name) - 1] = '\0';
      out[next] = port;
    }
    cur = next;
    prev = &cur;
  }
  return out;
}

tl::expected<void, std::string> IsolationMaps::forget_port(std::uint32_t ifindex) {
  const int fd = bpf_map__fd(skel_->maps.hsns_iso_ports);
  hsns_iso_port existing{};
  const bool had_port = bpf_map_lookup_elem(fd, &ifindex, &existing) == 0;
  // Policy and port entry first: the program stops enforcing before the prefixes disappear.
  if (auto r = unpublish_policy(ifindex); !r) return r;
  if (had_port && bpf_map_delete_elem(fd, &ifindex) != 0 && errno != ENOENT) {
    return tl::unexpected("disabling port " + std::to_string(ifindex) + ": " + errno_text(errno));
  }
  if (auto r = set_prefixes(ifindex, {}); !r) return r;
  if (had_port) return zero_counters(existing.slot);
  return {};
}

IsolationCounters IsolationMaps::counters(std::uint32_t ifindex) const {
  IsolationCounters sum;
  hsns_iso_port port{};
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.hsns_iso_ports), &ifindex, &port) != 0) return sum;
  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return sum;
  std::vector<hsns_iso_counters> per_cpu(static_cast<std::size_t>(ncpu));
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.hsns_iso_counters), &port.slot, per_cpu.data()) != 0) {
    return sum;
  }
  for (const auto& c : per_cpu) {
    sum.dropped_packets += c.dropped_packets;
    sum.dropped_bytes += c.dropped_bytes;
    sum.passed_packets += c.passed_packets;
  }
  return sum;
}

}  // namespace hsns::daemon
