#include "hsns/proto/flows.h"

#include <arpa/inet.h>

#include <algorithm>
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

namespace {

// The positions in kFlowRowFields of the values read alike.
constexpr std::size_t kRowIfindex = 0, kRowIfname = 1, kRowDirection = 2, kRowSrc = 3, kRowDst = 4,
                      kRowSport = 5, kRowDestQp = 6, kRowPackets = 7, kRowBytes = 8, kRowFirstNs = 9,
                      kRowLastNs = 10, kRowOp = 11, kRowEct = kRowOp + kOpClasses, kRowCe = kRowEct + 1,
                      kRowCnp = kRowCe + 1, kRowNak = kRowCnp + 1, kRowPsnRegressions = kRowNak + kNakKinds,
                      kRowFirstPsn = kRowPsnRegressions + 1, kRowLastPsn = kRowFirstPsn + 1,
                      kRowMaxPsn = kRowLastPsn + 1;
static_assert(kRowMaxPsn + 1 == kFlowRowWidth);

// One row's values, each checked where it is read; findings go to r under "<row>.<field>".
class RowValues {
 public:
  RowValues(FieldReader& r, const std::string& name, const json& row, const FlowRowLayout& layout)
      : r_(r), name_(name), row_(row), layout_(layout) {}

  bool ok() const { return ok_; }
  const json& at(std::size_t field) const { return row_[layout_.column[field]]; }
  void fail(std::size_t field, std::string reason) {
    r_.fail(name_ + "." + kFlowRowFields[field], std::move(reason));
    ok_ = false;
  }
  std::uint64_t unsigned_value(std::size_t field, std::uint64_t max = UINT64_MAX) {
    const json& v = at(field);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= max) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0 &&
        static_cast<std::uint64_t>(v.get<std::int64_t>()) <= max)
      return static_cast<std::uint64_t>(v.get<std::int64_t>());
    fail(field, "must be an integer from 0 to " + std::to_string(max));
    return 0;
  }
  std::int64_t signed_value(std::size_t field) {
    const json& v = at(field);
    if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > kInt64Max))
      return v.get<std::int64_t>();
    fail(field, "must be an integer from " + std::to_string(kInt64Min) + " to " + std::to_string(kInt64Max));
    return 0;
  }
  // An address: 4 or 16 bytes, or its text; the family it has (0 when it is not an address).
  int address(std::size_t field, std::string& text) {
    const json& v = at(field);
    unsigned char bytes[16];
    int family = 0;
    if (v.is_binary() && (v.get_binary().size() == 4 || v.get_binary().size() == 16)) {
      family = v.get_binary().size() == 4 ? 4 : 6;
      std::copy(v.get_binary().begin(), v.get_binary().end(), bytes);
    } else if (v.is_string() && v.get_ref<const std::string&>().size() <= 64) {
      const std::string& t = v.get_ref<const std::string&>();
      if (inet_pton(AF_INET, t.c_str(), bytes) == 1)
        family = 4;
      else if (inet_pton(AF_INET6, t.c_str(), bytes) == 1)
        family = 6;
    }
    if (family == 0) {
      fail(field, "must be an IPv4 or IPv6 address: 4 or 16 bytes, or its text");
      return 0;
    }
    char buf[INET6_ADDRSTRLEN];
    text = inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes, buf, sizeof buf);
    return family;
  }

 private:
  FieldReader& r_;
  const std::string& name_;
  const json& row_;
  const FlowRowLayout& layout_;
  bool ok_ = true;
};

}  // namespace

std::optional<FlowRowLayout> read_flow_row_layout(FieldReader& r) {
  const auto names = r.strings("fields", true, kFlowRowWidth + 1, 64);
  if (!names) return std::nullopt;
  FlowRowLayout layout;
  std::array<bool, kFlowRowWidth> seen{};
  bool ok = true;
  for (std::size_t i = 0; i < names->size(); ++i) {
    const auto* at = std::find_if(kFlowRowFields.begin(), kFlowRowFields.end(),
                                  [&](const char* f) { return (*names)[i] == f; });
    const std::string element = "fields[" + std::to_string(i) + "]";
    if (at == kFlowRowFields.end()) {
      r.fail(element, "is not a flow row field: '" + (*names)[i] + "'");
      ok = false;
      continue;
    }
    const auto k = static_cast<std::size_t>(at - kFlowRowFields.begin());
    if (seen[k]) {
      r.fail(element, "repeats '" + (*names)[i] + "'");
      ok = false;
      continue;
    }
    seen[k] = true;
    layout.column[k] = i;
  }
  for (std::size_t k = 0; k < kFlowRowWidth; ++k)
    if (!seen[k] && ok) {
      r.fail("fields", std::string("must name '") + kFlowRowFields[k] + "'");
      ok = false;
    }
  if (!ok || !r.ok()) return std::nullopt;
  return layout;
}

std::optional<FlowRecord> read_flow_row(FieldReader& r, const std::string& name, const json& row,
                                        const FlowRowLayout& layout, std::uint64_t epoch) {
  if (!row.is_array() || row.size() != kFlowRowWidth) {
    r.fail(name, "must be an array of " + std::to_string(kFlowRowWidth) + " values (the batch's fields)");
    return std::nullopt;
  }
  RowValues v(r, name, row, layout);
  FlowRecord f;
  f.ifindex = static_cast<std::uint32_t>(v.unsigned_value(kRowIfindex, UINT32_MAX));
  if (const json& ifname = v.at(kRowIfname);
      ifname.is_string() && ifname.get_ref<const std::string&>().size() <= 15)
    f.ifname = ifname.get<std::string>();
  else
    v.fail(kRowIfname, "must be a text of at most 15 bytes");
  f.direction = static_cast<FlowDirection>(v.unsigned_value(kRowDirection, std::size(kDirections) - 1));
  const int src_family = v.address(kRowSrc, f.src);
  const int dst_family = v.address(kRowDst, f.dst);
  if (src_family != 0 && dst_family != 0 && src_family != dst_family)
    v.fail(kRowDst, "must be of the family of src (IPv" + std::to_string(src_family) + ")");
  f.family = src_family;
  f.sport = static_cast<std::uint16_t>(v.unsigned_value(kRowSport, UINT16_MAX));
  f.dest_qp = static_cast<std::uint32_t>(v.unsigned_value(kRowDestQp, UINT32_MAX));
  f.packets = v.unsigned_value(kRowPackets);
  f.bytes = v.unsigned_value(kRowBytes);
  f.first_ns = v.signed_value(kRowFirstNs);
  f.last_ns = v.signed_value(kRowLastNs);
  for (std::size_t i = 0; i < kOpClasses; ++i) f.op[i] = v.unsigned_value(kRowOp + i);
  f.ect = v.unsigned_value(kRowEct);
  f.ce = v.unsigned_value(kRowCe);
  f.cnp = v.unsigned_value(kRowCnp);
  for (std::size_t i = 0; i < kNakKinds; ++i) f.nak[i] = v.unsigned_value(kRowNak + i);
  f.psn_regressions = v.unsigned_value(kRowPsnRegressions);
  const std::size_t nulls = static_cast<std::size_t>(v.at(kRowFirstPsn).is_null()) +
                            static_cast<std::size_t>(v.at(kRowLastPsn).is_null()) +
                            static_cast<std::size_t>(v.at(kRowMaxPsn).is_null());
  if (nulls == 0) {
    const auto first = v.unsigned_value(kRowFirstPsn, UINT32_MAX);
    const auto last = v.unsigned_value(kRowLastPsn, UINT32_MAX);
    const auto max = v.unsigned_value(kRowMaxPsn, UINT32_MAX);
    f.psn = FlowPsn{static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last),
                    static_cast<std::uint32_t>(max)};
  } else if (nulls != 3) {
    v.fail(kRowFirstPsn, "first_psn, last_psn and max_psn must be all null or all set");
  }
  f.epoch = epoch;
  if (!v.ok()) return std::nullopt;
  return f;
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
