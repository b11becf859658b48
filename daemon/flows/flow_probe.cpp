#include "flow_probe.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unordered_map>

#include "bpf/bpffs.h"
#include "bpf/kernel_features.h"
#include "bpf/tc_attach.h"
#include "hsns/log.h"
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

// A shared mapping of an mmapable BPF array, unmapped when it goes out of scope. The probe keeps its arrays
// mapped while it runs: mapping the PSN table per harvest cost a page fault for each of its pages a harvest
// touched (about all of them at 10,000 flows), every second; mapped, the pages touched count in the RSS.
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

// The overflow ring buffer read without consuming it: records between the consumer position (advanced
// only by commit, so a batch's ring records stay in the kernel until the batch is written) and the
// producer position. Layout of a BPF ring buffer mapping: the consumer position page (writable), then the
// producer position page and the data pages, mapped twice in a row so that a record is always contiguous.
class RingReader {
 public:
  RingReader() = default;
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;
  ~RingReader() { reset(); }

  tl::expected<void, std::string> map(int fd, std::size_t size) {
    reset();
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    size_ = size;
    void* c = mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (c == MAP_FAILED) return tl::unexpected("mmap ring buffer consumer page: " + err_text(errno));
    cons_ = c;
    void* p = mmap(nullptr, page_ + 2 * size_, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(page_));
    if (p == MAP_FAILED) {
      reset();
      return tl::unexpected("mmap ring buffer data: " + err_text(errno));
    }
    prod_ = p;
    return {};
  }
  void reset() {
    if (cons_ != nullptr) munmap(cons_, page_);
    if (prod_ != nullptr) munmap(prod_, page_ + 2 * size_);
    cons_ = nullptr;
    prod_ = nullptr;
  }
  std::uint64_t consumer() const { return load(cons_); }
  // Calls f(data, len) for each complete record from the consumer position up to `until` (or up to the
  // producer position, stopping at a record still being written); returns the position after the last.
  template <class F>
  std::uint64_t read(std::optional<std::uint64_t> until, F&& f) const {
    std::uint64_t pos = consumer();
    const std::uint64_t end = until ? *until : load(prod_);
    const auto* data = static_cast<const unsigned char*>(prod_) + page_;
    while (pos < end) {
      const auto* hdr = reinterpret_cast<const std::uint32_t*>(data + (pos & (size_ - 1)));
      const std::uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
      if ((len & BPF_RINGBUF_BUSY_BIT) != 0) break;
      const std::uint32_t n = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
      if ((len & BPF_RINGBUF_DISCARD_BIT) == 0)
        f(reinterpret_cast<const unsigned char*>(hdr) + BPF_RINGBUF_HDR_SZ, n);
      pos += (std::uint64_t{n} + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8;
    }
    return pos;
  }
  void consume_to(std::uint64_t pos) const {
    __atomic_store_n(static_cast<unsigned long*>(cons_), static_cast<unsigned long>(pos), __ATOMIC_RELEASE);
  }

 private:
  static std::uint64_t load(void* p) {
    return __atomic_load_n(static_cast<const unsigned long*>(p), __ATOMIC_ACQUIRE);
  }
  std::size_t page_ = 0;
  std::size_t size_ = 0;
  void* cons_ = nullptr;
  void* prod_ = nullptr;
};

struct SkelDeleter {
  void operator()(roce_flow* s) const { roce_flow__destroy(s); }
};

class RoceFlowProbe final : public FlowProbe {
 public:
  explicit RoceFlowProbe(FlowProbeConfig config) : config_(std::move(config)) {}
  ~RoceFlowProbe() override { stop(false); }
  RoceFlowProbe(const RoceFlowProbe&) = delete;
  RoceFlowProbe& operator=(const RoceFlowProbe&) = delete;

  tl::expected<void, std::string> open() {
    if (auto r = bpf::ensure_pin_dir(config_.pin_dir); !r) return tl::unexpected(r.error().message());
    auto tc = bpf::TcAttach::open(config_.pin_dir);
    if (!tc) return tl::unexpected(tc.error().message());
    tc_ = std::move(*tc);
    skel_.reset(roce_flow__open());
    if (!skel_) return tl::unexpected("open roce_flow: " + err_text(errno));
    if (auto r = bpf::require_kernel_features(skel_->obj, "the RoCE flow probe"); !r)
      return tl::unexpected(r.error().message());
    slots_ = roce_table_slots(config_.table_size);
    bpf_map__set_max_entries(skel_->maps.roce_flows_a, slots_);
    bpf_map__set_max_entries(skel_->maps.roce_flows_b, slots_);
    // The outer map's inner-map template must have the tables' size (array inner maps are checked
    // against it); libbpf 1.1 cannot resize its own template, so pass one of the right size.
    const int tmpl = create_flow_table_template(slots_);
    if (tmpl < 0) return tl::unexpected("inner map template: " + err_text(-tmpl));
    bpf_map__set_inner_map_fd(skel_->maps.roce_tables, tmpl);
    bpf_map__set_max_entries(skel_->maps.roce_overflow, config_.ring_buffer_bytes);
    bpf_map__set_max_entries(skel_->maps.roce_psn_last, slots_);
    bpf_map__set_max_entries(skel_->maps.roce_clear_list, slots_);
    bpf_map__set_max_entries(skel_->maps.roce_occupied, (slots_ + 63) / 64);
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
    if (auto r = ring_.map(bpf_map__fd(skel_->maps.roce_overflow), config_.ring_buffer_bytes); !r) return r;
    if (auto r = harvest_out_.map(bpf_map__fd(skel_->maps.roce_harvest_out),
                                  std::size_t{ROCE_HARVEST_OUT} * sizeof(roce_flow_slot));
        !r)
      return r;
    if (auto r = clear_list_.map(bpf_map__fd(skel_->maps.roce_clear_list),
                                 std::size_t{slots_} * sizeof(std::uint64_t));
        !r)
      return r;
    if (auto r = psn_map_.map(bpf_map__fd(skel_->maps.roce_psn_last),
                              std::size_t{slots_} * sizeof(roce_psn_entry));
        !r)
      return r;
    id_a_ = map_id(bpf_map__fd(skel_->maps.roce_flows_a));
    if (auto r = load_psn_state(); !r) return r;
    if (auto r = calibrate_clock(); !r) return r;
    for (const auto& itf : config_.interfaces) {
      if (auto r = attach(itf); !r) {
        stop(false);
        return r;
      }
    }
    return {};
  }

  tl::expected<void, std::string> recover(std::optional<std::uint64_t> sink_last_epoch) override {
    if (!skel_) return tl::unexpected(std::string("flow probe stopped"));
    auto st = read_state();
    if (!st) return tl::unexpected(st.error());
    if (st->epoch > st->committed) {
      // Pending: already in the sink (or nowhere to write it, or its commit got past the PSN state,
      // which only happens after the write): finish the commit without emitting it again.
      if (sink_last_epoch && *sink_last_epoch != st->epoch && st->phase < ROCE_PHASE_PSN_APPLIED) return {};
      FlowBatch b;
      b.epoch = st->epoch;
      if (st->phase < ROCE_PHASE_PSN_APPLIED) {
        auto again = harvest();  // the same batch, rebuilt from the table and the ring buffer
        if (!again) return tl::unexpected(again.error());
        b = std::move(*again);
      }
      recovering_ = true;
      auto c = commit(b);
      recovering_ = false;
      return c;
    }
    if (sink_last_epoch && *sink_last_epoch > st->epoch) {
      st->epoch = *sink_last_epoch;
      st->committed = *sink_last_epoch;
      return write_state(*st);
    }
    return {};
  }

  tl::expected<FlowBatch, std::string> harvest() override {
    if (!skel_) return tl::unexpected(std::string("flow probe stopped"));
    FlowBatch batch;
    auto& out = batch.records;
    // Exactly the last count (+64): 100,000 records stay under glibc's largest mmap threshold (32 MiB), so
    // the buffer is recycled from the heap instead of being mapped and faulted in on every harvest. The first
    // harvest reserves the table's capacity (untouched pages cost no memory) instead of growing by copies.
    out.reserve(first_harvest_ ? std::size_t{config_.table_size} + 64 : last_count_ + 64);
    first_harvest_ = false;
    auto st = read_state();
    if (!st) return tl::unexpected(st.error());
    const int outer = bpf_map__fd(skel_->maps.roce_tables);
    std::uint32_t zero = 0;
    std::uint32_t active_id = 0;
    if (bpf_map_lookup_elem(outer, &zero, &active_id) != 0)
      return tl::unexpected("read active table: " + err_text(errno));
    const std::uint32_t inactive = active_id == id_a_ ? 1 : 0;
    if (st->epoch > st->committed) {
      // Epoch still pending (not written, or the process died before its commit): the same batch again.
      // The tables were not flipped since, the inactive table and the ring buffer still hold its records.
      if (st->table != inactive + 1)
        return tl::unexpected("pending epoch " + std::to_string(st->epoch) + " is not on the inactive table");
      batch.epoch = st->epoch;
      if (auto r = copy_table(inactive, out); !r) return tl::unexpected(r.error());
      read_ring(st->ring_end);  // up to where the pending batch ended
      listed_epoch_ = batch.epoch;
    } else {
      std::uint32_t target = inactive;
      // A table not known to be empty can hold counts of a process that died between its flip and the
      // record of its epoch: harvest it first, without flipping (no program writes it).
      if (st->clean != inactive + 1) {
        if (auto r = copy_table(inactive, out); !r) return tl::unexpected(r.error());
      }
      if (out.empty()) {
        // Flip the active table; the update returns once running programs are done with the old one.
        const int next = bpf_map__fd(inactive == 0 ? skel_->maps.roce_flows_a : skel_->maps.roce_flows_b);
        if (bpf_map_update_elem(outer, &zero, &next, BPF_ANY) != 0)
          return tl::unexpected("flip active table: " + err_text(errno));
        flow_test_crash_point("after-flip");
        target = inactive ^ 1;
        batch.caught_up = true;
        if (auto r = copy_table(target, out); !r) return tl::unexpected(r.error());
      }
      const std::uint64_t ring_end = read_ring(std::nullopt);
      st->epoch += 1;
      st->table = target + 1;
      st->phase = ROCE_PHASE_DRAINED;
      st->ring_end = ring_end;
      st->clean = 0;
      if (auto r = write_state(*st); !r) return tl::unexpected(r.error());
      batch.epoch = st->epoch;
      listed_epoch_ = batch.epoch;
    }
    if (auto r = finish_records(batch, st->phase < ROCE_PHASE_PSN_APPLIED); !r)
      return tl::unexpected(r.error());
    last_count_ = out.size();
    return batch;
  }

  tl::expected<void, std::string> commit(const FlowBatch& batch) override {
    if (!skel_) return tl::unexpected(std::string("flow probe stopped"));
    auto st = read_state();
    if (!st) return tl::unexpected(st.error());
    if (st->epoch <= st->committed || batch.epoch != st->epoch)
      return tl::unexpected("commit: epoch " + std::to_string(batch.epoch) + " is not pending");
    if (!batch.records.empty() && !recovering_) flow_test_crash_point("before-commit");
    if (st->phase < ROCE_PHASE_PSN_APPLIED) {
      auto* psn = psn_map_.as<roce_psn_entry>();
      const bool sweep = st->epoch % 64 == 0 || psn_count_ >= std::size_t{slots_} / 4 * 3;
      // The sweep moves entries: the slots found by harvest() are then looked up again.
      if (sweep) expire_psn_state(psn, st->epoch);
      const bool use_index =
          !sweep && psn_index_epoch_ == batch.epoch && psn_index_.size() == batch.records.size();
      const auto gen = static_cast<std::uint32_t>(st->epoch);
      for (std::size_t i = 0; i < batch.records.size(); ++i) {
        const auto& r = batch.records[i];
        if (!r.stats.has_psn) continue;
        if (use_index && psn_index_[i] != kPsnNew) {
          psn[psn_index_[i]].last_psn = r.stats.last_psn;
          psn[psn_index_[i]].generation = gen;
        } else {
          store_psn(psn, r.key, r.stats.last_psn, gen);
        }
      }
      st->phase = ROCE_PHASE_PSN_APPLIED;
      if (auto r = write_state(*st); !r) return r;
    }
    if (!batch.records.empty() && !recovering_) flow_test_crash_point("mid-commit");
    psn_index_.clear();
    ring_.consume_to(st->ring_end);
    const std::uint32_t table = st->table - 1;
    roce_harvest_ctx hctx{};
    hctx.table = table;
    // The slots this process copied for the batch, when it did (not after a restart): cleared one by one
    // instead of walking the whole table.
    const bool listed = listed_epoch_ == st->epoch && listed_table_ == table;
    hctx.listed = listed ? listed_count_ : 0;
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &hctx, .ctx_size_in = sizeof(hctx));
    const int clear_fd = bpf_program__fd(listed ? skel_->progs.roce_clear_listed : skel_->progs.roce_clear);
    if (bpf_prog_test_run_opts(clear_fd, &opts) != 0)
      return tl::unexpected("clear harvested table: " + err_text(errno));
    if (hctx.start < slots_) return tl::unexpected(std::string("clear harvested table: incomplete"));
    listed_epoch_ = 0;
    st->committed = st->epoch;
    st->table = 0;
    st->phase = 0;
    st->clean = table + 1;
    return write_state(*st);
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
    for (const auto& a : attached_) {
      auto r = a.xdp ? bpf::xdp_detach(a.ifindex, a.xdp_fd) : tc_->detach(a.ifindex, kUser);
      if (!r) {
        HSNS_LOG(warning) << "flow probe: " << r.error().message();
      }
    }
    attached_.clear();
    ring_.reset();
    psn_map_.reset();
    clear_list_.reset();
    harvest_out_.reset();
    if (purge) {
      for (bpf_map* m : pinned_maps()) bpf_map__unpin(m, nullptr);
      rmdir(config_.pin_dir.c_str());
    }
    skel_.reset();
  }

 private:
  std::array<bpf_map*, 8> pinned_maps() const {
    return {skel_->maps.roce_flows_a,  skel_->maps.roce_flows_b,  skel_->maps.roce_tables,
            skel_->maps.roce_overflow, skel_->maps.roce_counters, skel_->maps.roce_qdisc_owner,
            skel_->maps.roce_psn_last, skel_->maps.roce_epoch};
  }

  static constexpr std::uint32_t kPsnNew = 0xFFFFFFFFu;

  tl::expected<roce_epoch_state, std::string> read_state() const {
    roce_epoch_state st{};
    std::uint32_t zero = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.roce_epoch), &zero, &st) != 0)
      return tl::unexpected("read epoch state: " + err_text(errno));
    return st;
  }

  // One syscall: a process killed around it leaves either the old or the new state.
  tl::expected<void, std::string> write_state(const roce_epoch_state& st) const {
    std::uint32_t zero = 0;
    if (bpf_map_update_elem(bpf_map__fd(skel_->maps.roce_epoch), &zero, &st, BPF_ANY) != 0)
      return tl::unexpected("write epoch state: " + err_text(errno));
    return {};
  }

  // roce_harvest over table `table` (no program writes it): every claimed slot, in slot order, through the
  // staging array; the published ones become records (first_ns/last_ns still jiffies).
  tl::expected<void, std::string> copy_table(std::uint32_t table, std::vector<FlowRecord>& out) {
    const auto* staged = harvest_out_.as<roce_flow_slot>();
    auto* list = clear_list_.as<std::uint64_t>();
    // The list names this table's copies from here on (harvest() records the batch's epoch once known).
    listed_epoch_ = 0;
    listed_table_ = table;
    listed_count_ = 0;
    roce_harvest_ctx hctx{};
    hctx.table = table;
    hctx.walk = walks_[table] % kWholeTableWalkEvery == 0 ? ROCE_WALK_TABLE : ROCE_WALK_OCCUPIED;
    ++walks_[table];
    while (hctx.start < slots_) {
      LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &hctx, .ctx_size_in = sizeof(hctx));
      const std::uint32_t before = hctx.start;
      if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.roce_harvest), &opts) != 0)
        return tl::unexpected("harvest run: " + err_text(errno));
      for (std::uint32_t i = 0; i < hctx.records && i < ROCE_HARVEST_OUT; ++i) {
        // Every copy is a claimed slot for the commit to clear (at most one copy per slot).
        if (listed_count_ < slots_) list[listed_count_++] = staged[i].slot;
        if (staged[i].ready == 0) continue;  // claimed, never published (no counts): cleared by the commit
        FlowRecord& r = out.emplace_back();
        std::memcpy(&r.key, &staged[i].key, sizeof(r.key));
        roce_slot_stats(&staged[i], &r.stats);
      }
      if (hctx.start == before && hctx.records == 0)
        return tl::unexpected(std::string("harvest run makes no progress"));
    }
    return {};
  }

  // The ring buffer's records from the consumer position up to `until` (or what is there now) into
  // ring_events_; returns the end position.
  std::uint64_t read_ring(std::optional<std::uint64_t> until) {
    ring_events_.clear();
    return ring_.read(until, [this](const unsigned char* data, std::uint32_t len) {
      if (len < sizeof(roce_overflow_event)) return;
      roce_overflow_event ev{};
      std::memcpy(&ev, data, sizeof(ev));
      ring_events_.push_back(ev);
    });
  }

  // Merges the ring buffer's records into the batch, converts timestamps, checks PSNs across batches
  // (read-only: the PSN state is advanced by commit) and names interfaces.
  tl::expected<void, std::string> finish_records(FlowBatch& batch, bool check_psn) {
    auto& out = batch.records;
    if (!ring_events_.empty()) {
      std::unordered_map<roce_flow_key, std::size_t, KeyHash, KeyEq> index;
      for (std::size_t i = 0; i < out.size(); ++i) index.emplace(out[i].key, i);
      for (const auto& ev : ring_events_) {
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
    const auto* psn = psn_map_.as<const roce_psn_entry>();
    psn_index_.assign(out.size(), kPsnNew);
    psn_index_epoch_ = batch.epoch;
    const auto gen = static_cast<std::uint32_t>(batch.epoch);
    std::uint32_t name_index = 0;
    const std::string* name = nullptr;
    for (std::size_t n = 0; n < out.size(); ++n) {
      auto& r = out[n];
      auto& s = r.stats;
      s.first_ns = to_mono_ns(s.first_ns);
      s.last_ns = to_mono_ns(s.last_ns);
      if (s.has_psn && check_psn) psn_index_[n] = check_psn_state(psn, r.key, s, gen);
      r.first_unix_ns = static_cast<std::int64_t>(s.first_ns) + offset;
      r.last_unix_ns = static_cast<std::int64_t>(s.last_ns) + offset;
      if (name == nullptr || name_index != r.key.ifindex) {  // usually one interface: look up on change
        name_index = r.key.ifindex;
        name = &ifname(name_index);
      }
      r.ifname = *name;
    }
    return {};
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

  // PSN state left by a previous process (the pinned table): count the entries. Maps of a version without
  // the epoch map start their epochs after the PSN table's highest harvest number (idle expiry goes on).
  tl::expected<void, std::string> load_psn_state() {
    const auto* e = psn_map_.as<roce_psn_entry>();
    psn_count_ = 0;
    std::uint64_t generation = 0;
    for (std::uint32_t i = 0; i < slots_; ++i) {
      if (e[i].key.family == 0) continue;
      ++psn_count_;
      generation = std::max<std::uint64_t>(generation, e[i].generation);
    }
    auto st = read_state();
    if (!st) return tl::unexpected(st.error());
    if (st->epoch == 0 && st->committed == 0 && generation > 0) {
      st->epoch = generation;
      st->committed = generation;
      return write_state(*st);
    }
    return {};
  }

  // Checks a record against the flow's last PSN of the previous committed batch (a go-back-N straddling
  // the harvest is one regression); returns the flow's slot in the PSN table, or kPsnNew. An entry already
  // advanced by this epoch (a commit that died half-way) is not checked again.
  std::uint32_t check_psn_state(const roce_psn_entry* table, const roce_flow_key& key, roce_flow_stats& s,
                                std::uint32_t gen) const {
    const std::uint32_t mask = slots_ - 1;
    for (std::uint32_t i = static_cast<std::uint32_t>(key_digest(key)) & mask, n = 0; n < slots_;
         ++n, i = (i + 1) & mask) {
      const roce_psn_entry& e = table[i];
      if (e.key.family == 0) return kPsnNew;
      if (!same_key(e.key, key)) continue;
      if (e.generation != gen && !serial_after(s.first_psn, e.last_psn)) ++s.psn_regressions;
      return i;
    }
    return kPsnNew;
  }

  // Stores a flow's last PSN (linear probing from the key's digest, as in the kernel). A table 3/4 full
  // takes no new flow (they go untracked).
  void store_psn(roce_psn_entry* table, const roce_flow_key& key, std::uint32_t last_psn, std::uint32_t gen) {
    const std::uint32_t mask = slots_ - 1;
    for (std::uint32_t i = static_cast<std::uint32_t>(key_digest(key)) & mask, n = 0; n < slots_;
         ++n, i = (i + 1) & mask) {
      roce_psn_entry& e = table[i];
      if (e.key.family == 0) {
        if (psn_count_ >= std::size_t{slots_} / 4 * 3) return;
        e.key = key;
        e.last_psn = last_psn;
        e.generation = gen;
        ++psn_count_;
        return;
      }
      if (!same_key(e.key, key)) continue;
      e.last_psn = last_psn;
      e.generation = gen;
      return;
    }
  }

  // Drops entries idle for more than 300 epochs, in place: deletion with backward shift (the entries after
  // the hole that may move back into it do, in probe order). A process killed in the middle leaves at worst
  // an entry twice in its probe sequence, where lookups find the first copy; the stale one ages out.
  void expire_psn_state(roce_psn_entry* table, std::uint64_t epoch) {
    const std::uint32_t mask = slots_ - 1;
    const auto idle = [&](const roce_psn_entry& e) {
      return e.key.family != 0 && epoch - e.generation > 300;
    };
    for (std::uint32_t i = 0; i < slots_; ++i) {
      while (idle(table[i])) {
        std::uint32_t hole = i;
        for (std::uint32_t j = (hole + 1) & mask;; j = (j + 1) & mask) {
          if (table[j].key.family == 0 || j == i) break;
          const std::uint32_t home = static_cast<std::uint32_t>(key_digest(table[j].key)) & mask;
          // table[j] may move to the hole when its home is not cyclically within (hole, j].
          const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
          if (stays) continue;
          table[hole] = table[j];  // both have a non-zero family: no byte of the copy frees the slot
          hole = j;
        }
        table[hole].key.family = 0;  // one byte: the slot is free
        --psn_count_;
      }
    }
  }

  struct Attached {
    int ifindex = 0;
    bool xdp = false;
    bool ingress = false;
    bool egress = false;
    int xdp_fd = -1;  // the XDP program attached (detached only while it is still the one there)
  };

  tl::expected<void, std::string> attach(const FlowProbeInterface& itf) {
    const int ifindex = static_cast<int>(if_nametoindex(itf.name.c_str()));
    if (ifindex == 0) return tl::unexpected("interface " + itf.name + ": " + err_text(errno));
    Attached a{ifindex, itf.attach == AttachMode::xdp, itf.ingress, itf.egress, -1};
    if (a.xdp) {
      bpf_program* p = itf.mirror ? skel_->progs.roce_xdp_mirror : skel_->progs.roce_xdp_plain;
      a.xdp_fd = bpf_program__fd(p);
      if (auto r = bpf::xdp_attach(ifindex, a.xdp_fd); !r)
        return tl::unexpected(itf.name + ": " + r.error().message());
      attached_.push_back(a);
      return {};
    }
    adopt_legacy_qdisc(ifindex);
    attached_.push_back(a);  // from here stop() cleans up
    if (a.ingress) {
      bpf_program* p = itf.mirror ? skel_->progs.roce_tc_ingress_mirror : skel_->progs.roce_tc_ingress;
      if (auto r = tc_->attach(ifindex, kUser, bpf::TcHook::ingress, bpf_program__fd(p)); !r)
        return tl::unexpected("tc ingress attach " + itf.name + ": " + r.error().message());
    }
    if (a.egress) {
      const int fd = bpf_program__fd(skel_->progs.roce_tc_egress);
      if (auto r = tc_->attach(ifindex, kUser, bpf::TcHook::egress, fd); !r)
        return tl::unexpected("tc egress attach " + itf.name + ": " + r.error().message());
    }
    return {};
  }

  // A version before the attach layer recorded the qdiscs it made in roce_qdisc_owner (by ifindex): hand
  // that over to the layer's registry, where it counts together with isolation.
  void adopt_legacy_qdisc(int ifindex) {
    const int owner_fd = bpf_map__fd(skel_->maps.roce_qdisc_owner);
    auto idx = static_cast<std::uint32_t>(ifindex);
    std::uint32_t flag = 0;
    if (bpf_map_lookup_elem(owner_fd, &idx, &flag) != 0) return;
    if (auto r = tc_->adopt_created(ifindex, kUser); !r) {
      HSNS_LOG(warning) << "flow probe: " << r.error().message();
    }
    bpf_map_delete_elem(owner_fd, &idx);
  }

  const std::string& ifname(std::uint32_t ifindex) {
    auto it = names_.find(ifindex);
    if (it != names_.end()) return it->second;
    char buf[IF_NAMESIZE] = {};
    std::string n = if_indextoname(ifindex, buf) != nullptr ? buf : std::to_string(ifindex);
    return names_.emplace(ifindex, std::move(n)).first->second;
  }

  static constexpr bpf::TcUser kUser = bpf::TcUser::flow_probe;

  FlowProbeConfig config_;
  std::optional<bpf::TcAttach> tc_;  // set by open()
  std::unique_ptr<roce_flow, SkelDeleter> skel_;
  RingReader ring_;                 // roce_overflow, read without consuming (commit consumes)
  ArrayMapping harvest_out_;        // roce_harvest_out (1 MiB), mapped while the probe runs
  ArrayMapping psn_map_;            // roce_psn_last, mapped while the probe runs (not per harvest: no faults)
  ArrayMapping clear_list_;         // roce_clear_list, mapped while the probe runs
  std::uint32_t listed_table_ = 0;  // clear_list_ holds the listed_count_ copies of this table ...
  std::uint32_t listed_count_ = 0;
  std::uint64_t listed_epoch_ = 0;        // ... harvested as this epoch (0: the list is not a batch's)
  std::vector<std::uint32_t> psn_index_;  // per record of the last harvest: its PSN table slot or kPsnNew
  // Copies of each table by this process. A table is read whole at its first copy (a program of an earlier
  // process may have claimed slots without setting their occupancy bits, which are not pinned) and at every
  // kWholeTableWalkEvery-th after (a program some other process left attached); otherwise only the slots
  // the occupancy bits name: about the flows, not the 131,072 slots of a 65,536-flow table.
  static constexpr std::uint64_t kWholeTableWalkEvery = 64;
  std::array<std::uint64_t, 2> walks_{};
  std::uint64_t psn_index_epoch_ = 0;  // the epoch psn_index_ belongs to
  bool recovering_ = false;
  bool first_harvest_ = true;
  std::vector<Attached> attached_;
  std::vector<roce_overflow_event> ring_events_;
  std::unordered_map<std::uint32_t, std::string> names_;
  std::uint32_t slots_ = 0;
  double tick_ns_ = 4e6;
  std::size_t psn_count_ = 0;
  std::size_t last_count_ = 0;
  std::uint32_t id_a_ = 0;
};

}  // namespace

void flow_test_crash_point(const char* point) {
  const char* v = std::getenv("HSNS_TEST_CRASH_AFTER_DRAIN");
  if (v != nullptr && std::strcmp(v, point) == 0) kill(getpid(), SIGKILL);
}

const char* counter_name(int c) {
  return c >= 0 && c < ROCE_CNT_MAX ? kCounterNames[c] : "?";
}

int create_flow_table_template(std::uint32_t slots) {
  btf* layout = btf__new_empty();
  if (layout == nullptr) return -errno;
  const int key = btf__add_int(layout, "unsigned int", sizeof(std::uint32_t), 0);
  const int value = btf__add_struct(layout, "roce_flow_slot", sizeof(roce_flow_slot));
  int fd = key > 0 && value > 0 ? btf__load_into_kernel(layout) : -EINVAL;
  if (fd == 0) {
    LIBBPF_OPTS(bpf_map_create_opts, opts, .btf_fd = static_cast<__u32>(btf__fd(layout)),
                .btf_key_type_id = static_cast<__u32>(key), .btf_value_type_id = static_cast<__u32>(value),
                .map_flags = BPF_F_MMAPABLE);
    fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "roce_tmpl", sizeof(std::uint32_t), sizeof(roce_flow_slot), slots,
                        &opts);
    if (fd < 0) fd = -errno;
  }
  btf__free(layout);  // the map keeps its own reference to the loaded BTF
  return fd;
}

tl::expected<std::unique_ptr<FlowProbe>, std::string> FlowProbe::start(const FlowProbeConfig& config) {
  auto probe = std::make_unique<RoceFlowProbe>(config);
  if (auto r = probe->open(); !r) return tl::unexpected(r.error());
  return std::unique_ptr<FlowProbe>(std::move(probe));
}

}  // namespace hsns::daemon
