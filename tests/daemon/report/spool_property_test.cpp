// Model-based property test of the report spool (RapidCheck): random sequences of append, peek, ack,
// crash (the object dropped without anything else, then reopened), torn append (a crash in the middle
// of an append's write: the record's file is cut at a random byte inside the record) and torn ack (a crash
// in the middle of an ack's state write: the directory as it was before the ack, the state slot written
// cut at a random byte, or a state file being created left as its temporary file) against an in-memory
// model, with random bounds and segment sizes. After every step: what the spool would send equals the
// model's unacknowledged records in order (a torn ack took effect exactly when its slot reached the disk
// whole); seqs strictly increase and are never reused; acknowledged records never come back; the byte
// bound holds; drops are counted, and a flow batch goes only once no older report is left; no crash or
// torn write is ever reported as corruption.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "spool.h"
#include "spool_files.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
namespace report = hsns::daemon::report;
using hsns::testing::TempDir;
using namespace hsns::testing::spool;
using report::SpoolKind;

struct ModelRecord {
  std::uint64_t seq;
  SpoolKind kind;
  std::uint64_t epoch;
  std::string payload;
};

struct Model {
  std::vector<ModelRecord> waiting;  // appended, not acknowledged, not dropped
  std::uint64_t last_seq = 0;        // highest seq append() returned for a durable record
  std::uint64_t last_flow_epoch = 0;
  int report_drop_steps = 0;  // appends that dropped reports only
  int flow_drop_steps = 0;    // appends that dropped flow batches
  int torn_appends = 0;
  int torn_acks = 0;  // acks a crash undid
};

// The spool's listing against the model, plus the invariants that hold after every step.
void check_against_model(const report::Spool& spool, const Model& model,
                         const report::SpoolOptions& options) {
  const auto all = everything(spool);
  RC_ASSERT(all.size() == model.waiting.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    RC_ASSERT(all[i].seq == model.waiting[i].seq);
    RC_ASSERT(all[i].kind == model.waiting[i].kind);
    RC_ASSERT(all[i].epoch == model.waiting[i].epoch);
    RC_ASSERT(all[i].payload == model.waiting[i].payload);
  }
  const auto st = spool.stats();
  RC_ASSERT(st.disk_bytes <= options.max_bytes);
  RC_ASSERT(st.records == model.waiting.size());
  RC_ASSERT(st.corrupt_records_total == 0U);
  RC_ASSERT(spool.last_seq() == model.last_seq);
  RC_ASSERT(spool.last_flow_epoch() == model.last_flow_epoch);
}

// After an append that returned `seq`: the model takes the new record, and loses what the bound dropped
// (checked against the drop counter and the flow-batches-last rule).
void apply_append(const report::Spool& spool, Model& model, const ModelRecord& added,
                  std::uint64_t drops_before) {
  RC_ASSERT(added.seq > model.last_seq);
  model.waiting.push_back(added);
  const std::uint64_t dropped = spool.stats().drops_total - drops_before;
  if (dropped == 0) return;
  const auto all = everything(spool);
  std::vector<ModelRecord> kept;
  bool flow_dropped = false;
  std::size_t j = 0;
  for (const auto& m : model.waiting) {
    if (j < all.size() && all[j].seq == m.seq) {
      kept.push_back(m);
      ++j;
    } else {
      flow_dropped = flow_dropped || m.kind == SpoolKind::flow_batch;
    }
  }
  (flow_dropped ? model.flow_drop_steps : model.report_drop_steps) += 1;
  RC_ASSERT(j == all.size());  // the spool holds a subsequence of the model
  RC_ASSERT(model.waiting.size() - kept.size() == dropped);
  RC_ASSERT(kept.back().seq == added.seq);  // the new record is never the one dropped
  if (flow_dropped) {
    for (const auto& k : kept) RC_ASSERT(k.kind == SpoolKind::flow_batch || k.seq == added.seq);
  }
  model.waiting = std::move(kept);
}

ModelRecord generate_record(Model& model) {
  const bool flow = *rc::gen::inRange(0, 3) == 0;
  const auto size = *rc::gen::inRange<std::size_t>(0, 400);
  std::string payload = *rc::gen::container<std::string>(size, rc::gen::arbitrary<char>());
  // The flow probe's epochs only grow.
  const std::uint64_t epoch = flow ? model.last_flow_epoch + *rc::gen::inRange<std::uint64_t>(1, 3) : 0;
  return {0, flow ? SpoolKind::flow_batch : SpoolKind::telemetry_report, epoch, std::move(payload)};
}

// Every file of a directory: name -> bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().filename().string()] = read_file(e.path());
  return out;
}

void restore(const fs::path& dir, const std::map<std::string, std::string>& files) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) fs::remove(e.path());
  for (const auto& [name, bytes] : files) write_file(dir / name, bytes);
}

// Puts back the directory as it was before an ack (`before`), with that ack's state write torn at a
// random byte (`after`: the files the ack left). Returns whether the ack took effect all the same (what it
// wrote reached the disk whole, or it wrote nothing).
bool tear_state_write(const fs::path& dir, const std::map<std::string, std::string>& before,
                      const std::map<std::string, std::string>& after) {
  restore(dir, before);
  const auto old = before.find("state");
  const auto now = after.find("state");
  if (now == after.end()) return true;  // nothing written yet (an ack of nothing)
  if (old == before.end()) {
    // The file was being created: whole under its name after the rename, else only the temporary file.
    if (*rc::gen::arbitrary<bool>()) {
      write_file(dir / "state", now->second);
      return true;
    }
    write_file(dir / "state.tmp",
               now->second.substr(0, *rc::gen::inRange<std::size_t>(0, now->second.size() + 1)));
    return false;
  }
  RC_ASSERT(old->second.size() == now->second.size());
  for (const std::uint64_t at : kStateSlotOffset) {
    if (old->second.compare(at, kStateSlotSize, now->second, at, kStateSlotSize) == 0) continue;
    // The slot's first `cut` bytes are new, the rest as before.
    const auto cut = *rc::gen::inRange<std::uint64_t>(0, kStateSlotSize + 1);
    std::string torn = old->second;
    torn.replace(at, cut, now->second, at, cut);
    write_file(dir / "state", torn);
    return torn == now->second;
  }
  return true;  // nothing written (an ack at or below the acknowledged seq)
}

std::unique_ptr<report::Spool> reopen(const report::SpoolOptions& options) {
  auto s = report::Spool::open(options);
  RC_ASSERT(s.has_value());
  return std::move(*s);
}

RC_GTEST_PROP(SpoolModel, MatchesTheModelThroughCrashesTornWritesAndRestarts, ()) {
  TempDir tmp{"hsns-spool-prop"};
  report::SpoolOptions options;
  options.dir = (tmp / "spool").string();
  options.max_bytes = *rc::gen::inRange<std::uint64_t>(600, 4096);
  options.segment_bytes = *rc::gen::inRange<std::uint64_t>(128, 4096);
  auto spool = reopen(options);
  Model model;

  const int steps = *rc::gen::inRange(1, 80);
  for (int step = 0; step < steps; ++step) {
    switch (*rc::gen::weightedElement<int>({{6, 0}, {2, 1}, {2, 2}, {1, 3}, {1, 4}, {1, 5}})) {
      case 0: {  // append
        ModelRecord rec = generate_record(model);
        const std::uint64_t drops = spool->stats().drops_total;
        auto seq = spool->append(rec.kind, rec.epoch, rec.payload);
        RC_ASSERT(seq.has_value());
        rec.seq = *seq;
        apply_append(*spool, model, rec, drops);
        model.last_seq = rec.seq;
        if (rec.kind == SpoolKind::flow_batch) model.last_flow_epoch = rec.epoch;
        break;
      }
      case 1: {  // peek a batch
        const auto budget = *rc::gen::inRange<std::uint64_t>(0, 2000);
        auto batch = spool->peek(budget);
        RC_ASSERT(batch.has_value());
        RC_ASSERT(batch->size() <= model.waiting.size());
        RC_ASSERT(batch->empty() == model.waiting.empty());
        std::uint64_t bytes = 0;
        for (std::size_t i = 0; i < batch->size(); ++i) {
          RC_ASSERT((*batch)[i].seq == model.waiting[i].seq);
          bytes += (*batch)[i].payload.size();
        }
        RC_ASSERT(batch->size() <= 1 || bytes <= budget);
        if (batch->size() < model.waiting.size() && !batch->empty()) {
          RC_ASSERT(bytes + model.waiting[batch->size()].payload.size() > budget);
        }
        break;
      }
      case 2: {  // ack a prefix of what is waiting (or everything there ever was)
        std::uint64_t seq = model.last_seq;
        if (!model.waiting.empty()) {
          seq = model.waiting[*rc::gen::inRange<std::size_t>(0, model.waiting.size())].seq;
        }
        RC_ASSERT(spool->ack(seq).has_value());
        std::erase_if(model.waiting, [seq](const ModelRecord& r) { return r.seq <= seq; });
        break;
      }
      case 3: {  // crash and restart
        spool.reset();
        spool = reopen(options);
        break;
      }
      case 4: {  // crash in the middle of an append's write, then restart
        ModelRecord rec = generate_record(model);
        const auto before = segment_sizes(tmp / "spool");
        const std::uint64_t drops = spool->stats().drops_total;
        auto seq = spool->append(rec.kind, rec.epoch, rec.payload);
        RC_ASSERT(seq.has_value());
        rec.seq = *seq;
        // The bound's drops happened before the write and stay; the torn record itself never counts.
        apply_append(*spool, model, rec, drops);
        model.waiting.pop_back();
        ++model.torn_appends;
        spool.reset();
        std::string torn;
        for (const auto& [name, size] : segment_sizes(tmp / "spool")) {
          const auto it = before.find(name);
          if (it == before.end() || it->second != size) torn = name;
        }
        RC_ASSERT(!torn.empty());
        // Cut inside the record; a segment the append created may also lose (part of) its header.
        const std::uint64_t frame = kRecordHeader + rec.payload.size();
        const std::uint64_t size = before.contains(torn)
                                       ? before.at(torn) + *rc::gen::inRange<std::uint64_t>(0, frame)
                                       : *rc::gen::inRange<std::uint64_t>(0, kSegmentHeader + frame);
        fs::resize_file(tmp / "spool" / torn, size);
        spool = reopen(options);
        break;
      }
      case 5: {  // crash in the middle of an ack's state write, then restart
        std::uint64_t seq = model.last_seq;
        if (!model.waiting.empty()) {
          seq = model.waiting[*rc::gen::inRange<std::size_t>(0, model.waiting.size())].seq;
        }
        const fs::path dir = tmp / "spool";
        const auto before = snapshot(dir);
        RC_ASSERT(spool->ack(seq).has_value());
        spool.reset();
        // The segments the ack deleted come back: the crash came before (they go after the state write).
        if (tear_state_write(dir, before, snapshot(dir))) {
          std::erase_if(model.waiting, [seq](const ModelRecord& r) { return r.seq <= seq; });
        } else {
          ++model.torn_acks;
        }
        spool = reopen(options);
        break;
      }
      default:
        RC_FAIL("unknown step");
    }
    check_against_model(*spool, model, options);
  }
  RC_CLASSIFY(model.report_drop_steps > 0, "reports dropped");
  RC_CLASSIFY(model.flow_drop_steps > 0, "flow batches dropped");
  RC_CLASSIFY(model.torn_appends > 0, "torn append");
  RC_CLASSIFY(model.torn_acks > 0, "torn ack");
  // A clean ack of everything and a restart: nothing comes back, and seq carries on.
  RC_ASSERT(spool->ack(model.last_seq).has_value());
  spool.reset();
  spool = reopen(options);
  RC_ASSERT(everything(*spool).empty());
  auto next = spool->append(SpoolKind::telemetry_report, 0, "after");
  RC_ASSERT(next.has_value());
  RC_ASSERT(*next == model.last_seq + 1);
}

}  // namespace
