#include "hsns/proto/flows.h"

#include <arpa/inet.h>

#include <iterator>
#include <limits>
#include <type_traits>

#include "hsns/json_fields.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

constexpr const char* kDirections[] = {"ingress", "egress", "xdp"};
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

bool valid_address(int family, const std::string& text) {
  unsigned char buf[16];
  return inet_pton(family == 4 ? AF_INET : AF_INET6, text.c_str(), buf) == 1;
}

// The counters of one named-member object (op, nak): every name required, nothing else.
template <std::size_t N>
void read_named_counts(FieldReader& r, std::string_view name, const std::array<const char*, N>& names,
                       std::array<std::uint64_t, N>& out, bool& ok) {
  const auto* obj = r.object(name, true);
  if (!obj) {
    ok = false;
    return;
  }
  FieldReader c = r.child(*obj, r.field_path(name));
  for (std::size_t i = 0; i < N; ++i) {
    if (auto v = c.unsigned_integer(names[i], true))
      out[i] = *v;
    else
      ok = false;
  }
  c.report_unknown();
}

std::optional<FlowRecord> read_flow_fields(FieldReader& r) {
  FlowRecord f;
  bool ok = true;
  auto need = [&ok](auto v, auto& out) {
    if (v)
      out = static_cast<std::remove_reference_t<decltype(out)>>(*v);
    else
      ok = false;
  };
  if (!r.one_of("type", true, {"flow"})) ok = false;
  f.host = r.string("host", false, 253).value_or("");
  need(r.unsigned_integer("ifindex", true, UINT32_MAX), f.ifindex);
  f.ifname = r.string("ifname", false, 15).value_or("");
  if (auto d = r.one_of("direction", true, {kDirections[0], kDirections[1], kDirections[2]}))
    f.direction = static_cast<FlowDirection>(*d);
  else
    ok = false;
  auto family = r.integer("family", true, 4, 6);
  if (family && *family == 5) {
    r.fail("family", "must be 4 or 6");
    family.reset();
  }
  if (family)
    f.family = static_cast<int>(*family);
  else
    ok = false;
  // An address of the record's family (not checked further when the family itself is bad).
  auto address = [&](std::string_view name, std::string& out) {
    auto text = r.string(name, true, 64);
    if (!text) {
      ok = false;
    } else if (family && !valid_address(f.family, *text)) {
      r.fail(name, "must be an IPv" + std::to_string(f.family) + " address");
      ok = false;
    } else {
      out = std::move(*text);
    }
  };
  address("src", f.src);
  address("dst", f.dst);
  need(r.unsigned_integer("sport", true, UINT16_MAX), f.sport);
  need(r.unsigned_integer("dest_qp", true, UINT32_MAX), f.dest_qp);
  need(r.unsigned_integer("packets", true), f.packets);
  need(r.unsigned_integer("bytes", true), f.bytes);
  f.first_ns = r.integer("first_ns", false, kInt64Min, kInt64Max).value_or(0);
  f.last_ns = r.integer("last_ns", false, kInt64Min, kInt64Max).value_or(0);
  read_named_counts(r, "op", kOpClassNames, f.op, ok);
  need(r.unsigned_integer("ect", true), f.ect);
  need(r.unsigned_integer("ce", true), f.ce);
  need(r.unsigned_integer("cnp", true), f.cnp);
  read_named_counts(r, "nak", kNakNames, f.nak, ok);
  need(r.unsigned_integer("psn_regressions", true), f.psn_regressions);
  const auto first_psn = r.unsigned_integer("first_psn", false, UINT32_MAX);
  const auto last_psn = r.unsigned_integer("last_psn", false, UINT32_MAX);
  if (const auto max_psn = r.unsigned_integer("max_psn", false, UINT32_MAX)) {
    f.psn = FlowPsn{static_cast<std::uint32_t>(first_psn.value_or(0)),
                    static_cast<std::uint32_t>(last_psn.value_or(0)), static_cast<std::uint32_t>(*max_psn)};
  }
  f.epoch = r.unsigned_integer("epoch", false);
  if (!ok) return std::nullopt;
  return f;
}

}  // namespace

const char* to_string(FlowDirection d) {
  const auto i = static_cast<std::size_t>(d);
  return i < std::size(kDirections) ? kDirections[i] : "?";
}

Result<FlowRecord> read_flow_record(const json& document) {
  FieldReader r(document);
  auto record = read_flow_fields(r);
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  return std::move(*record);
}

json to_json(const FlowRecord& f) {
  json j;
  j["type"] = "flow";
  j["host"] = f.host;
  j["ifindex"] = f.ifindex;
  j["ifname"] = f.ifname;
  j["direction"] = to_string(f.direction);
  j["family"] = f.family;
  j["src"] = f.src;
  j["dst"] = f.dst;
  j["sport"] = f.sport;
  j["dest_qp"] = f.dest_qp;
  j["packets"] = f.packets;
  j["bytes"] = f.bytes;
  j["first_ns"] = f.first_ns;
  j["last_ns"] = f.last_ns;
  for (std::size_t i = 0; i < kOpClasses; ++i) j["op"][kOpClassNames[i]] = f.op[i];
  j["ect"] = f.ect;
  j["ce"] = f.ce;
  j["cnp"] = f.cnp;
  for (std::size_t i = 0; i < kNakKinds; ++i) j["nak"][kNakNames[i]] = f.nak[i];
  j["psn_regressions"] = f.psn_regressions;
  if (f.psn) {
    j["first_psn"] = f.psn->first;
    j["last_psn"] = f.psn->last;
    j["max_psn"] = f.psn->max;
  }
  if (f.epoch) j["epoch"] = *f.epoch;
  return j;
}

Result<FlowBatch> read_flow_batch(const json& document) {
  FieldReader r(document);
  FlowBatch batch;
  auto host = r.string("host", true, 253);
  auto epoch = r.unsigned_integer("epoch", true);
  auto ts_ms = r.integer("ts_ms", true, 0, kInt64Max);
  r.objects("records", true, kMaxFlowBatchRecords, [&batch](FieldReader& fr, std::size_t) {
    if (auto f = read_flow_fields(fr)) batch.records.push_back(std::move(*f));
  });
  if (const auto* counters = r.object("counters", true)) {
    FieldReader cr = r.child(*counters, "counters");
    if (counters->size() > kMaxFlowCounters)
      r.fail("counters", "must have at most " + std::to_string(kMaxFlowCounters) + " members");
    else
      for (const auto& [name, value] : counters->items()) {
        if (name.empty() || name.size() > 64) {
          cr.fail(name, "is not a counter name (1 to 64 characters)");
          cr.known(name);
          continue;
        }
        if (auto v = cr.unsigned_integer(name, true)) batch.counters[name] = *v;
      }
    cr.report_unknown();
  }
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  batch.host = std::move(*host);
  batch.epoch = *epoch;
  batch.ts_ms = *ts_ms;
  return batch;
}

json to_json(const FlowBatch& b) {
  json records = json::array();
  for (const auto& f : b.records) records.push_back(to_json(f));
  json counters = json::object();
  for (const auto& [name, value] : b.counters) counters[name] = value;
  return json{{"host", b.host},
              {"epoch", b.epoch},
              {"ts_ms", b.ts_ms},
              {"records", std::move(records)},
              {"counters", std::move(counters)}};
}

std::vector<SinkBatch> read_sink_batches(std::string_view text, std::size_t* ignored_lines,
                                         std::size_t* malformed_lines) {
  std::vector<SinkBatch> out;
  std::size_t ignored = 0;
  std::size_t malformed = 0;
  std::optional<SinkBatch> open;  // the batch whose opening marker was read
  std::size_t open_lines = 0;     // lines of it so far (marker included)
  std::uint64_t open_records = 0;
  bool open_broken = false;
  std::vector<json> legacy;  // flow lines without epoch outside a batch (earlier versions)
  const auto drop_open = [&] {
    if (open) ignored += open_lines;
    open.reset();
    open_lines = 0;
  };
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string_view::npos;
       start = nl + 1, nl = text.find('\n', start)) {
    if (nl == start) continue;
    auto parsed = parse_json_strict(text.substr(start, nl - start));
    if (!parsed || !parsed->is_object()) {
      ++malformed;
      if (open) open_broken = true;
      continue;
    }
    json j = std::move(*parsed);
    const auto type_it = j.find("type");
    const std::string type = type_it != j.end() && type_it->is_string() ? type_it->get<std::string>() : "";
    const auto epoch_it = j.find("epoch");
    const bool has_epoch = epoch_it != j.end() && epoch_it->is_number_unsigned();
    const std::uint64_t epoch = has_epoch ? epoch_it->get<std::uint64_t>() : 0;
    const auto records_of = [](const json& line) {
      const auto it = line.find("records");
      return it != line.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : std::uint64_t{0};
    };
    if (type == "batch") {
      drop_open();
      ignored += legacy.size();
      legacy.clear();
      open.emplace();
      open->epoch = epoch;
      open_lines = 1;
      open_records = records_of(j);
      open_broken = !has_epoch;
    } else if (type == "flow") {
      if (open) {
        ++open_lines;
        if (!has_epoch || epoch != open->epoch) open_broken = true;
        open->flows.push_back(std::move(j));
      } else if (!has_epoch) {
        legacy.push_back(std::move(j));
      } else {
        ++ignored;  // a flow line outside its batch (e.g. the rest of a batch cut by a rotation)
      }
    } else if (type == "counters") {
      if (open) {
        if (!open_broken && has_epoch && epoch == open->epoch && open->flows.size() == open_records &&
            records_of(j) == open_records) {
          open->counters = std::move(j);
          out.push_back(std::move(*open));
          open.reset();
          open_lines = 0;
        } else {
          ++open_lines;
          drop_open();
        }
      } else if (!has_epoch) {
        SinkBatch b;
        b.flows = std::move(legacy);
        b.counters = std::move(j);
        legacy.clear();
        out.push_back(std::move(b));
      } else {
        ++ignored;
      }
    }
  }
  if (start < text.size()) ++ignored;  // a partial last line
  drop_open();
  ignored += legacy.size();
  if (ignored_lines != nullptr) *ignored_lines = ignored;
  if (malformed_lines != nullptr) *malformed_lines = malformed;
  return out;
}

}  // namespace hsns::proto
