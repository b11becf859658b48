#include "tc_attach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "bpffs.h"
#include "hsns/unique_fd.h"
#include "libbpf_log.h"

namespace hsns::daemon::bpf {
namespace {

constexpr std::uint32_t kRegistryEntries = 4096;

struct RegistryKey {
  std::uint64_t netns_cookie = 0;
  std::uint32_t ifindex = 0;
  std::uint32_t pad = 0;
};
static_assert(sizeof(RegistryKey) == 16 && sizeof(QdiscRecord) == 8);

std::string errno_text(int err) {
  return std::strerror(err < 0 ? -err : err);
}

using Fd = UniqueFd;

// Exclusive for the lifetime of the object: serialises the read-decide-write of a registry record and the
// qdisc operation it decides, across threads (each lock is its own open file description) and processes.
Result<Fd> lock_root(const std::string& root) {
  Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return tl::unexpected(Error::unavailable("opening " + root + ": " + errno_text(errno)));
  while (flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR)
      return tl::unexpected(Error::unavailable("locking " + root + ": " + errno_text(errno)));
  }
  return fd;
}

Result<std::uint64_t> netns_cookie() {
  Fd s(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  std::uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  if (s.get() < 0 || getsockopt(s.get(), SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) != 0) {
    return tl::unexpected(Error::unavailable("network namespace cookie: " + errno_text(errno)));
  }
  return cookie;
}

Result<RegistryKey> key_of(int ifindex) {
  auto cookie = netns_cookie();
  if (!cookie) return tl::unexpected(cookie.error());
  RegistryKey key;
  key.netns_cookie = *cookie;
  key.ifindex = static_cast<std::uint32_t>(ifindex);
  return key;
}

// The registry key of ifindex in the calling thread's namespace, with the root locked for as long as the
// result lives.
struct LockedRecord {
  RegistryKey key;
  Fd lock;
};
Result<LockedRecord> lock_record(const std::string& root, int ifindex) {
  auto key = key_of(ifindex);
  if (!key) return tl::unexpected(key.error());
  auto lock = lock_root(root);
  if (!lock) return tl::unexpected(lock.error());
  return LockedRecord{*key, std::move(*lock)};
}

// The pinned registry, or an invalid Fd when it is not pinned and create is false.
Result<Fd> open_registry(const std::string& path, bool create) {
  Fd fd(bpf_obj_get(path.c_str()));
  if (fd.get() < 0) {
    if (errno != ENOENT)
      return tl::unexpected(Error::unavailable("opening " + path + ": " + errno_text(errno)));
    if (!create) return Fd();
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
    Fd created(bpf_map_create(BPF_MAP_TYPE_HASH, "hsns_clsact", sizeof(RegistryKey), sizeof(QdiscRecord),
                              kRegistryEntries, &opts));
    if (created.get() < 0)
      return tl::unexpected(Error::unavailable("creating the qdisc registry: " + errno_text(errno)));
    if (bpf_obj_pin(created.get(), path.c_str()) != 0)
      return tl::unexpected(Error::unavailable("pinning " + path + ": " + errno_text(errno)));
    return created;
  }
  bpf_map_info info{};
  std::uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0 || info.type != BPF_MAP_TYPE_HASH ||
      info.key_size != sizeof(RegistryKey) || info.value_size != sizeof(QdiscRecord)) {
    return tl::unexpected(Error::unavailable(path + " is not an hsns qdisc registry (remove it)"));
  }
  return fd;
}

std::optional<QdiscRecord> lookup(const Fd& registry, const RegistryKey& key) {
  QdiscRecord r;
  if (registry.get() < 0 || bpf_map_lookup_elem(registry.get(), &key, &r) != 0) return std::nullopt;
  return r;
}

Result<void> store(const Fd& registry, const RegistryKey& key, const std::optional<QdiscRecord>& r) {
  if (registry.get() < 0) return {};
  if (r) {
    if (bpf_map_update_elem(registry.get(), &key, &*r, BPF_ANY) != 0)
      return tl::unexpected(Error::unavailable("writing the qdisc registry: " + errno_text(errno)));
  } else if (bpf_map_delete_elem(registry.get(), &key) != 0 && errno != ENOENT) {
    return tl::unexpected(Error::unavailable("writing the qdisc registry: " + errno_text(errno)));
  }
  return {};
}

bpf_tc_hook make_hook(int ifindex, bpf_tc_attach_point point) {
  bpf_tc_hook hook{};
  hook.sz = sizeof(hook);
  hook.ifindex = ifindex;
  hook.attach_point = point;
  return hook;
}

bpf_tc_attach_point point_of(TcHook hook) {
  return hook == TcHook::ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
}

bpf_tc_opts slot_opts(TcUser user) {
  bpf_tc_opts opts{};
  opts.sz = sizeof(opts);
  opts.handle = tc_slot(user).handle;
  opts.priority = tc_slot(user).priority;
  return opts;
}

std::uint32_t query(int ifindex, TcUser user, TcHook hook) {
  LibbpfLogCapture quiet;  // "no such filter" is an answer here
  bpf_tc_hook h = make_hook(ifindex, point_of(hook));
  bpf_tc_opts opts = slot_opts(user);
  return bpf_tc_query(&h, &opts) == 0 ? opts.prog_id : 0;
}

// The users whose filters are on ifindex's clsact qdisc now.
std::uint32_t users_present(int ifindex) {
  std::uint32_t present = 0;
  for (TcUser user : kTcUsers) {
    if (query(ifindex, user, TcHook::ingress) != 0 || query(ifindex, user, TcHook::egress) != 0)
      present |= bit(user);
  }
  return present;
}

void destroy_qdisc(int ifindex) {
  LibbpfLogCapture quiet;  // the netdev may be gone with it
  bpf_tc_hook hook = make_hook(ifindex, static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
  (void)bpf_tc_hook_destroy(&hook);
}

// Drops the records of this namespace's netdevs that no longer exist: a netdev deleted while attached
// takes its qdisc along, and its ifindex is not handed out again soon (a new one gets a fresh record).
void prune_gone_netdevs(const Fd& registry, std::uint64_t cookie) {
  if (registry.get() < 0) return;
  std::vector<RegistryKey> gone;
  RegistryKey key;
  const RegistryKey* prev = nullptr;
  while (bpf_map_get_next_key(registry.get(), prev, &key) == 0) {
    char name[IF_NAMESIZE];
    if (key.netns_cookie == cookie && if_indextoname(key.ifindex, name) == nullptr) gone.push_back(key);
    prev = &key;
  }
  for (const RegistryKey& k : gone) bpf_map_delete_elem(registry.get(), &k);
}

// The registry goes with its last record ("stop both, nothing left behind").
void unpin_if_empty(const Fd& registry, const std::string& path) {
  RegistryKey any;
  if (registry.get() >= 0 && bpf_map_get_next_key(registry.get(), nullptr, &any) != 0 && errno == ENOENT)
    unlink(path.c_str());
}

std::string where(int ifindex, TcUser user) {
  return std::string(tc_user_name(user)) + " on ifindex " + std::to_string(ifindex);
}

}  // namespace

Result<TcAttach> TcAttach::open(const std::string& pin_dir) {
  route_libbpf_log();
  auto root = bpffs_root(pin_dir);
  if (!root) return tl::unexpected(root.error());
  return TcAttach(*root, (*root == "/" ? "" : *root) + "/" + kQdiscRegistryName);
}

Result<void> TcAttach::attach(int ifindex, TcUser user, TcHook hook, int prog_fd) const {
  auto locked = lock_record(root_, ifindex);
  if (!locked) return tl::unexpected(locked.error());
  const RegistryKey* key = &locked->key;

  int created = 0;
  {
    LibbpfLogCapture log;  // "Exclusivity flag on" for an existing qdisc is expected, not worth a line
    bpf_tc_hook both = make_hook(ifindex, static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
    created = bpf_tc_hook_create(&both);
    if (created != 0 && created != -EEXIST) {
      return tl::unexpected(Error::unavailable("creating the clsact qdisc for " + where(ifindex, user) +
                                               ": " + errno_text(created) + " " + log.text()));
    }
  }
  auto registry = open_registry(registry_, true);
  if (!registry) {
    if (created == 0) destroy_qdisc(ifindex);
    return tl::unexpected(registry.error());
  }
  prune_gone_netdevs(*registry, key->netns_cookie);
  const QdiscRecord held = after_hold(lookup(*registry, *key), user, created == 0, users_present(ifindex));
  if (auto r = store(*registry, *key, held); !r) {
    if (created == 0) destroy_qdisc(ifindex);
    return r;
  }

  LibbpfLogCapture log;
  bpf_tc_hook h = make_hook(ifindex, point_of(hook));
  bpf_tc_opts opts = slot_opts(user);
  opts.prog_fd = prog_fd;
  opts.flags = BPF_TC_F_REPLACE;
  if (int err = bpf_tc_attach(&h, &opts); err != 0) {
    if (created == 0) {  // a qdisc made for this attach only
      destroy_qdisc(ifindex);
      (void)store(*registry, *key, std::nullopt);
      unpin_if_empty(*registry, registry_);
    }
    return tl::unexpected(Error::unavailable("attaching the " + where(ifindex, user) + ": " +
                                             errno_text(err) + " " + log.text()));
  }
  return {};
}

Result<void> TcAttach::detach(int ifindex, TcUser user) const {
  auto locked = lock_record(root_, ifindex);
  if (!locked) return tl::unexpected(locked.error());
  const RegistryKey* key = &locked->key;
  auto registry = open_registry(registry_, false);
  if (!registry) return tl::unexpected(registry.error());

  const std::optional<QdiscRecord> before = lookup(*registry, *key);
  const std::uint32_t present = users_present(ifindex);
  std::string error;
  for (TcHook hook : {TcHook::ingress, TcHook::egress}) {
    if (query(ifindex, user, hook) == 0) continue;
    LibbpfLogCapture log;
    bpf_tc_hook h = make_hook(ifindex, point_of(hook));
    bpf_tc_opts opts = slot_opts(user);
    if (int err = bpf_tc_detach(&h, &opts); err != 0 && query(ifindex, user, hook) != 0) {
      error += "detaching the " + where(ifindex, user) + ": " + errno_text(err) + " " + log.text() + "; ";
    }
  }
  if (!error.empty()) return tl::unexpected(Error::unavailable(error.substr(0, error.size() - 2)));

  const ReleaseDecision d = after_release(before, user, present);
  if (auto r = store(*registry, *key, d.after); !r) return r;
  if (d.delete_qdisc) destroy_qdisc(ifindex);
  prune_gone_netdevs(*registry, key->netns_cookie);
  unpin_if_empty(*registry, registry_);
  return {};
}

std::uint32_t TcAttach::filter_prog_id(int ifindex, TcUser user, TcHook hook) const {
  return query(ifindex, user, hook);
}

Result<void> TcAttach::adopt_created(int ifindex, TcUser user) const {
  auto locked = lock_record(root_, ifindex);
  if (!locked) return tl::unexpected(locked.error());
  const RegistryKey* key = &locked->key;
  if ((users_present(ifindex) & bit(user)) == 0) return {};
  auto registry = open_registry(registry_, true);
  if (!registry) return tl::unexpected(registry.error());
  if (lookup(*registry, *key)) return {};
  return store(*registry, *key, QdiscRecord{bit(user), kQdiscCreatedByHsns});
}

Result<std::optional<QdiscRecord>> TcAttach::record(int ifindex) const {
  auto locked = lock_record(root_, ifindex);
  if (!locked) return tl::unexpected(locked.error());
  const RegistryKey* key = &locked->key;
  auto registry = open_registry(registry_, false);
  if (!registry) return tl::unexpected(registry.error());
  return lookup(*registry, *key);
}

Result<void> xdp_attach(int ifindex, int prog_fd) {
  LibbpfLogCapture log;
  if (int err = bpf_xdp_attach(ifindex, prog_fd, 0, nullptr); err != 0) {
    return tl::unexpected(Error::unavailable("attaching XDP to ifindex " + std::to_string(ifindex) + ": " +
                                             errno_text(err) + " " + log.text()));
  }
  return {};
}

Result<void> xdp_detach(int ifindex, int prog_fd) {
  LibbpfLogCapture log;
  LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = prog_fd);
  const int err = bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE, &opts);
  // EEXIST: another program replaced ours (not ours to remove); ENODEV: the netdev is gone.
  if (err != 0 && err != -EEXIST && err != -ENODEV && err != -ENOENT) {
    return tl::unexpected(Error::unavailable("detaching XDP from ifindex " + std::to_string(ifindex) + ": " +
                                             errno_text(err) + " " + log.text()));
  }
  return {};
}

}  // namespace hsns::daemon::bpf
