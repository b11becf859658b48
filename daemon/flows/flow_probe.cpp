#include "flow_probe.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <unordered_map>

#include "roce_flow.skel.h"

namespace hsns::daemon {

namespace {

constexpr const char* kCounterNames[ROCE_CNT_MAX] = {
    "packets",         "roce",           "non_roce",     "table_full",  "ringbuf_drop",
    "trunc_l2",        "trunc_l3",       "bad_ip",       "ip_fragment", "ipv6_ext",
    "trunc_udp",       "bad_udp_len",    "trunc_bth",    "trunc_aeth",  "unknown_opcode",
    "bad_bth_version", "gre_not_erspan", "trunc_erspan", "erspan",      "vlan_too_deep"};

constexpr std::uint32_t kPsnMask = ROCE_PSN_MASK;

std::string err_text(int rc) {
  return std::strerror(rc < 0 ? -rc : rc);
}

struct KeyHash {
  std::size_t operator()(const roce_flow_key& k) const noexcept {
    std::uint64_t h = 1469598103934665603ULL;
    const auto* p = reinterpret_cast<const unsigned char*>(&k);
    for (std::size_t i = 0; i < sizeof(k); ++i) h = (h ^ p[i]) * 1099511628211ULL;
    return static_cast<std::size_t>(h);
  }
};
struct KeyEq {
  bool operator()(const roce_flow_key& a, const roce_flow_key& b) const noexcept {
    return std::memcmp(&a, &b, sizeof(a)) == 0;
  }
};

bool serial_after(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t d = (a - b) & kPsnMask;
  return d != 0 && d < 0x800000;
}

// Adds `b` (a later or concurrent record of the same flow) into `a`.
void merge(roce_flow_stats& a, const roce_flow_stats& b) {
  a.packets += b.packets;
  a.bytes += b.bytes;
  a.first_ns = a.first_ns == 0 ? b.first_ns : std::min(a.first_ns, b.first_ns);
  a.last_ns = std::max(a.last_ns, b.last_ns);
  for (int i = 0; i < ROCE_OP_CLASSES; ++i) a.op[i] += b.op[i];
  a.ect += b.ect;
  a.ce += b.ce;
  a.cnp += b.cnp;
  for (int i = 0; i < ROCE_NAK_KINDS; ++i) a.nak[i] += b.nak[i];
  a.psn_regressions += b.psn_regressions;
  if (!b.has_psn) return;
  if (!a.has_psn) {
    a.first_psn = b.first_psn;
    a.max_psn = b.max_psn;
    a.last_psn = b.last_psn;
    a.has_psn = 1;
    return;
  }
  if (!serial_after(b.first_psn, a.last_psn)) ++a.psn_regressions;
  if (serial_after(b.max_psn, a.max_psn)) a.max_psn = b.max_psn;
  a.last_psn = b.last_psn;
}

tl::expected<void, std::string> ensure_bpffs() {
  struct statfs fs {};
  if (statfs("/sys/fs/bpf", &fs) == 0 && fs.f_type == BPF_FS_MAGIC) return {};
  if (mount("bpf", "/sys/fs/bpf", "bpf", 0, nullptr) != 0)
    return tl::unexpected("mount bpffs on /sys/fs/bpf: " + err_text(errno));
  return {};
}

tl::expected<void, std::string> mkdirs(const std::string& path) {
  for (std::size_t pos = 1; pos != std::string::npos;) {
    pos = path.find('/', pos + 1);
    const std::string part = path.substr(0, pos);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return tl::unexpected("mkdir " + part + ": " + err_text(errno));
  }
  return {};
}

struct SkelDeleter {
  void operator()(roce_flow* s) const { roce_flow__destroy(s); }
};
struct RingDeleter {
  void operator()(ring_buffer* r) const { ring_buffer__free(r); }
};

class RoceFlowProbe final : public FlowProbe {
 public:
  explicit RoceFlowProbe(FlowProbeConfig config) : config_(std::move(config)) {}
  ~RoceFlowProbe() override { stop(false); }
  RoceFlowProbe(const RoceFlowProbe&) = delete;
  RoceFlowProbe& operator=(const RoceFlowProbe&) = delete;

  tl::expected<void, std::string> open() {
    if (auto r = ensure_bpffs(); !r) return r;
    if (auto r = mkdirs(config_.pin_dir); !r) return r;
    skel_.reset(roce_flow__open());
    if (!skel_) return tl::unexpected("open roce_flow: " + err_text(errno));
    bpf_map__set_max_entries(skel_->maps.roce_flows_a, config_.table_size);
    bpf_map__set_max_entries(skel_->maps.roce_flows_b, config_.table_size);
    bpf_map__set_max_entries(skel_->maps.roce_overflow, config_.ring_buffer_bytes);
    bpf_map__set_max_entries(skel_->maps.roce_psn_last, config_.table_size);
    for (bpf_map* m : pinned_maps()) {
      const std::string path = config_.pin_dir + "/" + bpf_map__name(m);
      if (int rc = bpf_map__set_pin_path(m, path.c_str()); rc != 0)
        return tl::unexpected("pin path " + path + ": " + err_text(rc));
    }
    if (int rc = roce_flow__load(skel_.get()); rc != 0)
      return tl::unexpected("load roce_flow: " + err_text(rc) + " (a table pinned under " + config_.pin_dir +
                            " with another table_size or ring_buffer_bytes is not reused: purge it)");
    rb_.reset(
        ring_buffer__new(bpf_map__fd(skel_->maps.roce_overflow), &RoceFlowProbe::on_event, this, nullptr));
    if (!rb_) return tl::unexpected("ring buffer: " + err_text(errno));
    id_a_ = map_id(bpf_map__fd(skel_->maps.roce_flows_a));
    load_psn_state();
    for (const auto& itf : config_.interfaces) {
      if (auto r = attach(itf); !r) {
        stop(false);
        return r;
      }
    }
    return {};
  }

  tl::expected<std::vector<FlowRecord>, std::string> harvest() override {
    if (!skel_) return tl::unexpected(std::string("flow probe stopped"));
    std::vector<FlowRecord> out;
    out.reserve(last_count_ + last_count_ / 8 + 64);
    // Flip the active table; the update returns once running programs are done with the old one.
    const int outer = bpf_map__fd(skel_->maps.roce_tables);
    std::uint32_t zero = 0;
    std::uint32_t active_id = 0;
    if (bpf_map_lookup_elem(outer, &zero, &active_id) != 0)
      return tl::unexpected("read active table: " + err_text(errno));
    const int fa = bpf_map__fd(skel_->maps.roce_flows_a);
    const int fb = bpf_map__fd(skel_->maps.roce_flows_b);
    const bool a_active = active_id == id_a_;
    const int fd = a_active ? fa : fb;
    int next = a_active ? fb : fa;
    if (bpf_map_update_elem(outer, &zero, &next, BPF_ANY) != 0)
      return tl::unexpected("flip active table: " + err_text(errno));
    constexpr std::uint32_t kBatch = 4096;
    keys_.resize(kBatch);
    vals_.resize(kBatch);
    std::uint32_t in_tok = 0;
    std::uint32_t out_tok = 0;
    bool first = true;
    for (;;) {
      std::uint32_t count = kBatch;
      LIBBPF_OPTS(bpf_map_batch_opts, opts);
      const int rc = bpf_map_lookup_and_delete_batch(fd, first ? nullptr : &in_tok, &out_tok, keys_.data(),
                                                     vals_.data(), &count, &opts);
      const int e = errno;
      for (std::uint32_t i = 0; i < count; ++i) {
        FlowRecord r;
        r.key = keys_[i];
        r.stats = vals_[i];
        out.push_back(std::move(r));
      }
      if (rc != 0) {
        if (e == ENOENT) break;
        return tl::unexpected("lookup_and_delete_batch: " + err_text(e));
      }
      in_tok = out_tok;
      first = false;
    }
    ring_.clear();
    ring_buffer__consume(rb_.get());
    if (!ring_.empty()) {
      std::unordered_map<roce_flow_key, std::size_t, KeyHash, KeyEq> index;
      for (std::size_t i = 0; i < out.size(); ++i) index.emplace(out[i].key, i);
      for (const auto& ev : ring_) {
        auto [it, fresh] = index.emplace(ev.key, out.size());
        if (fresh) {
          FlowRecord r;
          r.key = ev.key;
          r.stats = ev.stats;
          out.push_back(std::move(r));
        } else {
          merge(out[it->second].stats, ev.stats);
        }
      }
    }
    timespec mono{};
    timespec real{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    const std::int64_t offset = (static_cast<std::int64_t>(real.tv_sec) - mono.tv_sec) * 1000000000LL +
                                (static_cast<std::int64_t>(real.tv_nsec) - mono.tv_nsec);
    ++generation_;
    for (auto& r : out) {
      auto& s = r.stats;
      if (s.has_psn) {
        auto [it, fresh] = psn_.try_emplace(r.key, PsnState{s.last_psn, generation_});
        if (!fresh) {
          if (!serial_after(s.first_psn, it->second.last_psn)) ++s.psn_regressions;
          it->second = PsnState{s.last_psn, generation_};
        }
      }
      r.first_unix_ns = static_cast<std::int64_t>(s.first_ns) + offset;
      r.last_unix_ns = static_cast<std::int64_t>(s.last_ns) + offset;
      r.ifname = ifname(r.key.ifindex);
    }
    save_psn_state(out);
    last_count_ = out.size();
    // Forget the PSN state of flows idle for 300 harvests, in memory and in the pinned map.
    if (generation_ % 64 == 0) {
      const int pfd = bpf_map__fd(skel_->maps.roce_psn_last);
      std::erase_if(psn_, [this, pfd](const auto& kv) {
        if (generation_ - kv.second.generation <= 300) return false;
        bpf_map_delete_elem(pfd, &kv.first);
        return true;
      });
    }
    return out;
  }

  std::array<std::uint64_t, ROCE_CNT_MAX> counters() const override {
    std::array<std::uint64_t, ROCE_CNT_MAX> total{};
    if (!skel_) return total;
    const int fd = bpf_map__fd(skel_->maps.roce_counters);
    std::vector<std::uint64_t> per_cpu(static_cast<std::size_t>(libbpf_num_possible_cpus()));
    for (std::uint32_t i = 0; i < ROCE_CNT_MAX; ++i) {
      if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
      for (auto v : per_cpu) total[i] += v;
    }
    total[ROCE_CNT_PACKETS] = 0;
    for (int i = 0; i < ROCE_CNT_MAX; ++i)
      if (roce_counter_is_outcome(i)) total[ROCE_CNT_PACKETS] += total[static_cast<std::size_t>(i)];
    return total;
  }

  std::chrono::milliseconds interval() const override { return config_.interval; }

  void stop(bool purge) override {
    if (!skel_) return;
    const int owner_fd = bpf_map__fd(skel_->maps.roce_qdisc_owner);
    for (const auto& a : attached_) {
      if (a.xdp) {
        bpf_xdp_detach(a.ifindex, 0, nullptr);
        continue;
      }
      for (auto [on, point] : {std::pair{a.ingress, BPF_TC_INGRESS}, std::pair{a.egress, BPF_TC_EGRESS}}) {
        if (!on) continue;
        LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = a.ifindex, .attach_point = point);
        LIBBPF_OPTS(bpf_tc_opts, opts, .handle = kRoceTcHandle, .priority = kRoceTcPriority);
        bpf_tc_detach(&hook, &opts);
      }
      auto idx = static_cast<std::uint32_t>(a.ifindex);
      std::uint32_t flag = 0;
      if (bpf_map_lookup_elem(owner_fd, &idx, &flag) == 0) {
        LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = a.ifindex,
                    .attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
        bpf_tc_hook_destroy(&hook);
        bpf_map_delete_elem(owner_fd, &idx);
      }
    }
    attached_.clear();
    rb_.reset();
    if (purge) {
      for (bpf_map* m : pinned_maps()) bpf_map__unpin(m, nullptr);
      rmdir(config_.pin_dir.c_str());
    }
    skel_.reset();
  }

 private:
  std::array<bpf_map*, 7> pinned_maps() const {
    return {skel_->maps.roce_flows_a,  skel_->maps.roce_flows_b,  skel_->maps.roce_tables,
            skel_->maps.roce_overflow, skel_->maps.roce_counters, skel_->maps.roce_qdisc_owner,
            skel_->maps.roce_psn_last};
  }

  static std::uint32_t map_id(int fd) {
    bpf_map_info info{};
    std::uint32_t len = sizeof(info);
    return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.id : 0;
  }

  // PSN state left by a previous process (pinned), so a restart keeps cross-harvest regression checks.
  void load_psn_state() {
    const int fd = bpf_map__fd(skel_->maps.roce_psn_last);
    roce_flow_key key{};
    roce_flow_key next{};
    const roce_flow_key* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      std::uint32_t psn = 0;
      if (bpf_map_lookup_elem(fd, &next, &psn) == 0) psn_[next] = PsnState{psn, 0};
      key = next;
      prev = &key;
    }
  }

  // Writes the last PSN of the flows of this harvest to the pinned map (one syscall per 4096 flows).
  void save_psn_state(const std::vector<FlowRecord>& records) {
    psn_keys_.clear();
    psn_vals_.clear();
    for (const auto& r : records) {
      if (!r.stats.has_psn) continue;
      psn_keys_.push_back(r.key);
      psn_vals_.push_back(r.stats.last_psn);
    }
    const int fd = bpf_map__fd(skel_->maps.roce_psn_last);
    for (std::size_t off = 0; off < psn_keys_.size(); off += 4096) {
      auto n = static_cast<std::uint32_t>(std::min<std::size_t>(4096, psn_keys_.size() - off));
      LIBBPF_OPTS(bpf_map_batch_opts, opts);
      bpf_map_update_batch(fd, psn_keys_.data() + off, psn_vals_.data() + off, &n, &opts);
    }
  }

  struct Attached {
    int ifindex = 0;
    bool xdp = false;
    bool ingress = false;
    bool egress = false;
  };
  struct PsnState {
    std::uint32_t last_psn;
    std::uint64_t generation;
  };

  static int on_event(void* ctx, void* data, size_t size) {
    auto* self = static_cast<RoceFlowProbe*>(ctx);
    if (size >= sizeof(roce_overflow_event)) {
      roce_overflow_event ev{};
      std::memcpy(&ev, data, sizeof(ev));
      self->ring_.push_back(ev);
    }
    return 0;
  }

  tl::expected<void, std::string> attach(const FlowProbeInterface& itf) {
    const int ifindex = static_cast<int>(if_nametoindex(itf.name.c_str()));
    if (ifindex == 0) return tl::unexpected("interface " + itf.name + ": " + err_text(errno));
    Attached a{ifindex, itf.attach == AttachMode::xdp, itf.ingress, itf.egress};
    if (a.xdp) {
      bpf_program* p = itf.mirror ? skel_->progs.roce_xdp_mirror : skel_->progs.roce_xdp_plain;
      if (int rc = bpf_xdp_attach(ifindex, bpf_program__fd(p), 0, nullptr); rc != 0)
        return tl::unexpected("xdp attach " + itf.name + ": " + err_text(rc));
      attached_.push_back(a);
      return {};
    }
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
                .attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
    const int hc = bpf_tc_hook_create(&hook);
    if (hc == 0) {
      auto idx = static_cast<std::uint32_t>(ifindex);
      const std::uint32_t one = 1;
      bpf_map_update_elem(bpf_map__fd(skel_->maps.roce_qdisc_owner), &idx, &one, BPF_ANY);
    } else if (hc != -EEXIST) {
      return tl::unexpected("clsact on " + itf.name + ": " + err_text(hc));
    }
    attached_.push_back(a);  // from here stop() cleans up
    if (a.ingress) {
      bpf_program* p = itf.mirror ? skel_->progs.roce_tc_ingress_mirror : skel_->progs.roce_tc_ingress;
      hook.attach_point = BPF_TC_INGRESS;
      LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = bpf_program__fd(p), .flags = BPF_TC_F_REPLACE,
                  .handle = kRoceTcHandle, .priority = kRoceTcPriority);
      if (int rc = bpf_tc_attach(&hook, &opts); rc != 0)
        return tl::unexpected("tc ingress attach " + itf.name + ": " + err_text(rc));
    }
    if (a.egress) {
      hook.attach_point = BPF_TC_EGRESS;
      LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = bpf_program__fd(skel_->progs.roce_tc_egress),
                  .flags = BPF_TC_F_REPLACE, .handle = kRoceTcHandle, .priority = kRoceTcPriority);
      if (int rc = bpf_tc_attach(&hook, &opts); rc != 0)
        return tl::unexpected("tc egress attach " + itf.name + ": " + err_text(rc));
    }
    return {};
  }

  const std::string& ifname(std::uint32_t ifindex) {
    auto it = names_.find(ifindex);
    if (it != names_.end()) return it->second;
    char buf[IF_NAMESIZE] = {};
    std::string n = if_indextoname(ifindex, buf) != nullptr ? buf : std::to_string(ifindex);
    return names_.emplace(ifindex, std::move(n)).first->second;
  }

  FlowProbeConfig config_;
  std::unique_ptr<roce_flow, SkelDeleter> skel_;
  std::unique_ptr<ring_buffer, RingDeleter> rb_;
  std::vector<Attached> attached_;
  std::vector<roce_flow_key> keys_;
  std::vector<roce_flow_stats> vals_;
  std::vector<roce_overflow_event> ring_;
  std::unordered_map<roce_flow_key, PsnState, KeyHash, KeyEq> psn_;
  std::unordered_map<std::uint32_t, std::string> names_;
  std::vector<roce_flow_key> psn_keys_;
  std::vector<std::uint32_t> psn_vals_;
  std::uint64_t generation_ = 0;
  std::size_t last_count_ = 0;
  std::uint32_t id_a_ = 0;
};

}  // namespace

const char* counter_name(int c) {
  return c >= 0 && c < ROCE_CNT_MAX ? kCounterNames[c] : "?";
}

tl::expected<std::unique_ptr<FlowProbe>, std::string> FlowProbe::start(const FlowProbeConfig& config) {
  auto probe = std::make_unique<RoceFlowProbe>(config);
  if (auto r = probe->open(); !r) return tl::unexpected(r.error());
  return std::unique_ptr<FlowProbe>(std::move(probe));
}

}  // namespace hsns::daemon
