#include "flow_probe.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
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

std::uint64_t key_digest(const roce_flow_key& k) {
  std::uint64_t w[6];
  static_assert(sizeof(w) == sizeof(k));
  std::memcpy(w, &k, sizeof(k));
  return roce_digest_words(w[0], w[1], w[2], w[3], w[4], w[5]);
}

bool same_key(const roce_flow_key& a, const roce_flow_key& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

// A shared mapping of an mmapable BPF array, unmapped when it goes out of scope (a mapped array counts in
// the process RSS while it is mapped: the PSN table is mapped only while a harvest runs).
class ArrayMapping {
 public:
  ArrayMapping() = default;
  ArrayMapping(const ArrayMapping&) = delete;
  ArrayMapping& operator=(const ArrayMapping&) = delete;
  ~ArrayMapping() { reset(); }

  tl::expected<void, std::string> map(int fd, std::size_t bytes) {
    reset();
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    len_ = (bytes + page - 1) / page * page;
    void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      len_ = 0;
      return tl::unexpected("mmap BPF array: " + err_text(errno));
    }
    addr_ = p;
    return {};
  }
  void reset() {
    if (addr_ != nullptr) munmap(addr_, len_);
    addr_ = nullptr;
    len_ = 0;
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(addr_);
  }

 private:
  void* addr_ = nullptr;
  std::size_t len_ = 0;
};

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
    slots_ = roce_table_slots(config_.table_size);
    bpf_map__set_max_entries(skel_->maps.roce_flows_a, slots_);
    bpf_map__set_max_entries(skel_->maps.roce_flows_b, slots_);
    // The outer map's inner-map template must have the tables' size (array inner maps are checked
    // against it); libbpf 1.1 cannot resize its own template, so pass one of the right size.
    LIBBPF_OPTS(bpf_map_create_opts, tmpl_opts, .map_flags = BPF_F_MMAPABLE);
    const int tmpl = bpf_map_create(BPF_MAP_TYPE_ARRAY, "roce_tmpl", sizeof(std::uint32_t),
                                    sizeof(roce_flow_slot), slots_, &tmpl_opts);
    if (tmpl < 0) return tl::unexpected("inner map template: " + err_text(errno));
    bpf_map__set_inner_map_fd(skel_->maps.roce_tables, tmpl);
    bpf_map__set_max_entries(skel_->maps.roce_overflow, config_.ring_buffer_bytes);
    bpf_map__set_max_entries(skel_->maps.roce_psn_last, slots_);
    skel_->rodata->roce_slot_mask = slots_ - 1;
    for (bpf_map* m : pinned_maps()) {
      const std::string path = config_.pin_dir + "/" + bpf_map__name(m);
      if (int rc = bpf_map__set_pin_path(m, path.c_str()); rc != 0)
        return tl::unexpected("pin path " + path + ": " + err_text(rc));
    }
    const int rc_load = roce_flow__load(skel_.get());
    close(tmpl);
    if (int rc = rc_load; rc != 0)
      return tl::unexpected("load roce_flow: " + err_text(rc) + " (a table pinned under " + config_.pin_dir +
                            " with another table_size, ring_buffer_bytes or layout is not reused: purge it)");
    rb_.reset(
        ring_buffer__new(bpf_map__fd(skel_->maps.roce_overflow), &RoceFlowProbe::on_event, this, nullptr));
    if (!rb_) return tl::unexpected("ring buffer: " + err_text(errno));
    if (auto r = harvest_out_.map(bpf_map__fd(skel_->maps.roce_harvest_out),
                                  std::size_t{ROCE_HARVEST_OUT} * sizeof(roce_flow_slot));
        !r)
      return r;
    id_a_ = map_id(bpf_map__fd(skel_->maps.roce_flows_a));
    if (auto r = load_psn_state(); !r) return r;
    start_generation_ = generation_;
    if (auto r = calibrate_clock(); !r) return r;
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
    // Exactly the last count (+64): 100,000 records stay under glibc's largest mmap threshold (32 MiB), so
    // the buffer is recycled from the heap instead of being mapped and faulted in on every harvest. The first
    // harvest reserves the table's capacity (untouched pages cost no memory) instead of growing by copies.
    out.reserve(generation_ == start_generation_ ? std::size_t{config_.table_size} + 64 : last_count_ + 64);
    // Flip the active table; the update returns once running programs are done with the old one.
    const int outer = bpf_map__fd(skel_->maps.roce_tables);
    std::uint32_t zero = 0;
    std::uint32_t active_id = 0;
    if (bpf_map_lookup_elem(outer, &zero, &active_id) != 0)
      return tl::unexpected("read active table: " + err_text(errno));
    const int fa = bpf_map__fd(skel_->maps.roce_flows_a);
    const int fb = bpf_map__fd(skel_->maps.roce_flows_b);
    const bool a_active = active_id == id_a_;
    int next = a_active ? fb : fa;
    if (bpf_map_update_elem(outer, &zero, &next, BPF_ANY) != 0)
      return tl::unexpected("flip active table: " + err_text(errno));
    // The previous table has no writer now: each roce_harvest run copies up to ROCE_HARVEST_OUT of its
    // claimed slots (in slot order) to roce_harvest_out, mapped here, and clears them.
    const auto* staged = harvest_out_.as<roce_flow_slot>();
    roce_harvest_ctx hctx{};
    hctx.table = a_active ? 0 : 1;
    while (hctx.start < slots_) {
      LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &hctx, .ctx_size_in = sizeof(hctx));
      const std::uint32_t before = hctx.start;
      if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.roce_harvest), &opts) != 0)
        return tl::unexpected("harvest run: " + err_text(errno));
      for (std::uint32_t i = 0; i < hctx.records && i < ROCE_HARVEST_OUT; ++i) {
        FlowRecord& r = out.emplace_back();
        std::memcpy(&r.key, &staged[i].key, sizeof(r.key));
        roce_slot_stats(&staged[i], &r.stats);
      }
      if (hctx.start == before && hctx.records == 0)
        return tl::unexpected(std::string("harvest run makes no progress"));
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
    // Program timestamps are jiffies: convert them to CLOCK_MONOTONIC_COARSE ns against a reading taken
    // now (every record was written before it), then to Unix ns.
    const auto now = clock_sample();
    if (!now) return tl::unexpected(now.error());
    const auto to_mono_ns = [&](std::uint64_t jiffies) {
      const auto ticks = static_cast<std::int64_t>(now->jiffies - jiffies);
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(now->coarse_ns) -
                                        static_cast<std::int64_t>(static_cast<double>(ticks) * tick_ns_));
    };
    timespec mono{};
    timespec real{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    const std::int64_t offset = (static_cast<std::int64_t>(real.tv_sec) - mono.tv_sec) * 1000000000LL +
                                (static_cast<std::int64_t>(real.tv_nsec) - mono.tv_nsec);
    ++generation_;
    ArrayMapping pm;
    if (auto r = pm.map(bpf_map__fd(skel_->maps.roce_psn_last), std::size_t{slots_} * sizeof(roce_psn_entry));
        !r)
      return tl::unexpected(r.error());
    auto* psn = pm.as<roce_psn_entry>();
    // A table that fills up is swept early; if it is still 3/4 full, new flows go untracked.
    if (psn_count_ >= slots_ / 4 * 3) expire_psn_state(psn);
    std::uint32_t name_index = 0;
    const std::string* name = nullptr;
    for (auto& r : out) {
      auto& s = r.stats;
      s.first_ns = to_mono_ns(s.first_ns);
      s.last_ns = to_mono_ns(s.last_ns);
      if (s.has_psn) track_psn(psn, r.key, s);
      r.first_unix_ns = static_cast<std::int64_t>(s.first_ns) + offset;
      r.last_unix_ns = static_cast<std::int64_t>(s.last_ns) + offset;
      if (name == nullptr || name_index != r.key.ifindex) {  // usually one interface: look up on change
        name_index = r.key.ifindex;
        name = &ifname(name_index);
      }
      r.ifname = *name;
    }
    last_count_ = out.size();
    // Forget the PSN state of flows idle for 300 harvests.
    if (generation_ % 64 == 0) expire_psn_state(psn);
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
    harvest_out_.reset();
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

  // One (jiffies, coarse ns) reading through the roce_tc_clock program.
  tl::expected<roce_clock_sample, std::string> clock_sample() {
    std::array<unsigned char, 64> frame{};  // tc test runs need at least an Ethernet header
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(), .data_size_in = frame.size(), .repeat = 1);
    if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.roce_tc_clock), &opts) != 0)
      return tl::unexpected("read clock: " + err_text(errno));
    roce_clock_sample c{};
    std::memcpy(&c, &skel_->bss->roce_clock, sizeof(c));
    return c;
  }

  // The tick length: the coarse clock advances on the tick that advances jiffies, so two readings taken
  // right after two tick edges give it; snapped to the usual CONFIG_HZ values.
  tl::expected<void, std::string> calibrate_clock() {
    auto edge = [this](std::uint64_t after) -> tl::expected<roce_clock_sample, std::string> {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      for (;;) {
        auto c = clock_sample();
        if (!c || c->jiffies != after) return c;
        if (std::chrono::steady_clock::now() > deadline)
          return tl::unexpected(std::string("jiffies stand still"));
      }
    };
    auto a = clock_sample();
    if (!a) return tl::unexpected(a.error());
    auto e1 = edge(a->jiffies);
    if (!e1) return tl::unexpected("calibrate clock: " + e1.error());
    auto e2 = edge(e1->jiffies);
    if (!e2) return tl::unexpected("calibrate clock: " + e2.error());
    tick_ns_ =
        static_cast<double>(e2->coarse_ns - e1->coarse_ns) / static_cast<double>(e2->jiffies - e1->jiffies);
    for (const double hz : {100.0, 250.0, 300.0, 1000.0, 24.0, 32.0, 48.0, 64.0, 128.0, 200.0, 256.0, 500.0,
                            512.0, 1024.0, 1200.0}) {
      const double t = 1e9 / hz;
      if (tick_ns_ > t * 0.95 && tick_ns_ < t * 1.05) {
        tick_ns_ = t;
        break;
      }
    }
    return {};
  }

  // PSN state left by a previous process (the pinned table): count the entries and continue its harvest
  // numbering, so a restart keeps cross-harvest regression checks and idle expiry.
  tl::expected<void, std::string> load_psn_state() {
    ArrayMapping pm;
    if (auto r = pm.map(bpf_map__fd(skel_->maps.roce_psn_last), std::size_t{slots_} * sizeof(roce_psn_entry));
        !r)
      return r;
    const auto* e = pm.as<roce_psn_entry>();
    psn_count_ = 0;
    generation_ = 0;
    for (std::uint32_t i = 0; i < slots_; ++i) {
      if (e[i].key.family == 0) continue;
      ++psn_count_;
      generation_ = std::max<std::uint64_t>(generation_, e[i].generation);
    }
    return {};
  }

  // Checks a record against the flow's last PSN of an earlier harvest (a go-back-N straddling the harvest
  // is one regression) and stores its last PSN. Linear probing from the key's digest, as in the kernel.
  void track_psn(roce_psn_entry* table, const roce_flow_key& key, roce_flow_stats& s) {
    const std::uint32_t mask = slots_ - 1;
    const auto gen = static_cast<std::uint32_t>(generation_);
    for (std::uint32_t i = static_cast<std::uint32_t>(key_digest(key)) & mask, n = 0; n < slots_;
         ++n, i = (i + 1) & mask) {
      roce_psn_entry& e = table[i];
      if (e.key.family == 0) {
        if (psn_count_ >= slots_ / 4 * 3) return;
        e.key = key;
        e.last_psn = s.last_psn;
        e.generation = gen;
        ++psn_count_;
        return;
      }
      if (!same_key(e.key, key)) continue;
      if (!serial_after(s.first_psn, e.last_psn)) ++s.psn_regressions;
      e.last_psn = s.last_psn;
      e.generation = gen;
      return;
    }
  }

  // Drops entries idle for more than 300 harvests and re-inserts the rest (open addressing has no cheap
  // single deletion).
  void expire_psn_state(roce_psn_entry* table) {
    std::vector<roce_psn_entry> keep;
    keep.reserve(psn_count_);
    for (std::uint32_t i = 0; i < slots_; ++i) {
      if (table[i].key.family == 0) continue;
      if (generation_ - table[i].generation <= 300) keep.push_back(table[i]);
    }
    std::memset(static_cast<void*>(table), 0, std::size_t{slots_} * sizeof(roce_psn_entry));
    const std::uint32_t mask = slots_ - 1;
    for (const auto& k : keep) {
      std::uint32_t i = static_cast<std::uint32_t>(key_digest(k.key)) & mask;
      while (table[i].key.family != 0) i = (i + 1) & mask;
      table[i] = k;
    }
    psn_count_ = keep.size();
  }

  struct Attached {
    int ifindex = 0;
    bool xdp = false;
    bool ingress = false;
    bool egress = false;
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
  ArrayMapping harvest_out_;  // roce_harvest_out (1 MiB), mapped while the probe runs
  std::vector<Attached> attached_;
  std::vector<roce_overflow_event> ring_;
  std::unordered_map<std::uint32_t, std::string> names_;
  std::uint32_t slots_ = 0;
  double tick_ns_ = 4e6;
  std::size_t psn_count_ = 0;
  std::uint64_t generation_ = 0;
  std::uint64_t start_generation_ = 0;  // generation_ when this process started
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
