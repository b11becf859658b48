#include "hsns/proto/report.h"

#include <limits>
#include <set>
#include <utility>

#include "hsns/json_fields.h"
#include "names.h"

namespace hsns::proto {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// The path of a finding of a section's reader inside the report: the section's member as prefix.
std::string section_path(std::string_view section, const std::string& field) {
  if (field.empty()) return std::string(section);
  if (field.front() == '[') return std::string(section) + field;
  return std::string(section) + "." + field;
}

// The findings of a section's reader, recorded in r under the section's name.
void fail_under(FieldReader& r, std::string_view section, const Error& e) {
  if (e.fields.empty()) r.fail(section_path(section, e.field()), e.detail);
  for (const auto& f : e.fields) r.fail(section_path(section, f.field), f.reason);
}

// Reads member `name` with the section's own reader; its findings go to r under the section's name.
template <typename T, typename Reader>
std::optional<T> read_section(FieldReader& r, std::string_view name, Reader&& reader) {
  const json* section = r.object(name, false);
  if (section == nullptr) return std::nullopt;
  auto value = reader(*section);
  if (value) return std::move(*value);
  fail_under(r, name, value.error());
  return std::nullopt;
}

// A list section that is present but empty (refused: the section is omitted when empty).
bool empty_list(const json& document, FieldReader& r, std::string_view name) {
  const auto it = document.find(name);
  if (it == document.end() || !it->is_array() || !it->empty()) return false;
  r.known(name);
  r.fail(name, "must not be empty (omit the section when there is nothing to report)");
  return true;
}

// The records of every batch in all, counted before any is read (a report at the limit is refused
// without reading hundreds of thousands of records first).
std::size_t flow_records_in(const json& document) {
  std::size_t total = 0;
  const auto flows = document.find("flows");
  if (flows == document.end() || !flows->is_array()) return 0;
  for (const auto& batch : *flows) {
    if (!batch.is_object()) continue;
    for (const char* form : {"records", "rows"}) {
      const auto records = batch.find(form);
      if (records != batch.end() && records->is_array()) total += records->size();
    }
  }
  return total;
}

void read_flow_batches(const json& document, FieldReader& r, Report& report) {
  if (empty_list(document, r, "flows")) return;
  if (const std::size_t total = flow_records_in(document); total > kMaxReportFlowRecords) {
    r.known("flows");
    r.fail("flows", "holds " + std::to_string(total) + " flow records; at most " +
                        std::to_string(kMaxReportFlowRecords) + " are accepted in one report");
    return;
  }
  r.objects("flows", false, kMaxReportFlowBatches, [&](FieldReader& br, std::size_t index) {
    ReportFlowBatch batch;
    const auto epoch = br.unsigned_integer("epoch", true);
    // Two forms of the records: rows (what hsnsd sends) or one document per record (earlier hsnsd).
    const json& batch_json = (*document.find("flows"))[index];
    const bool rows_form = batch_json.contains("rows");
    const char* member = rows_form ? "rows" : "records";
    std::optional<FlowRowLayout> layout;
    if (rows_form) {
      if (batch_json.contains("records"))
        br.fail("records", "must not be given with rows (one form per batch)");
      layout = read_flow_row_layout(br);
    }
    const json* records = br.array(member, true, kMaxFlowBatchRecords);
    if (records != nullptr && records->empty()) br.fail(member, "must not be empty (omit an empty batch)");
    if (records == nullptr || records->empty() || (rows_form && !layout)) return;
    batch.records.reserve(records->size());
    if (rows_form) {
      for (std::size_t i = 0; i < records->size(); ++i) {
        auto record =
            read_flow_row(br, "rows[" + std::to_string(i) + "]", (*records)[i], *layout, epoch.value_or(0));
        if (record) batch.records.push_back(std::move(*record));
      }
    }
    for (std::size_t i = 0; !rows_form && i < records->size(); ++i) {
      const std::string name = "records[" + std::to_string(i) + "]";
      auto record = read_flow_record((*records)[i]);
      if (!record) {
        fail_under(br, name, record.error());
        continue;
      }
      if (epoch && record->epoch && *record->epoch != *epoch) {
        br.fail(name + ".epoch", "must be the batch's epoch " + std::to_string(*epoch));
        continue;
      }
      batch.records.push_back(std::move(*record));
    }
    if (epoch && br.ok()) {
      batch.epoch = *epoch;
      report.flows.push_back(std::move(batch));
    }
  });
}

void read_ports(const json& document, FieldReader& r, Report& report) {
  if (empty_list(document, r, "ports")) return;
  std::set<std::string, std::less<>> names;
  r.objects("ports", false, kMaxReportPortStates, [&](FieldReader& pr, std::size_t) {
    PortOperState port;
    auto name = pr.string("name", true, detail::kMaxNetdevLength);
    if (name && !detail::valid_netdev(*name)) {
      pr.fail("name", "must be a network interface name (1 to 15 characters, no '/', ':' or spaces)");
      name.reset();
    } else if (name && !names.insert(*name).second) {
      pr.fail("name", "repeats the port '" + *name + "'");
      name.reset();
    }
    const auto state =
        pr.one_of("oper_state", true,
                  {kPortOperStates[0], kPortOperStates[1], kPortOperStates[2], kPortOperStates[3],
                   kPortOperStates[4], kPortOperStates[5], kPortOperStates[6]});
    const auto speed = pr.integer("speed_mbps", false, 1, kMaxPortSpeedMbps);
    if (!name || !state) return;
    port.name = std::move(*name);
    port.oper_state = kPortOperStates[*state];
    if (speed) port.speed_mbps = static_cast<std::uint32_t>(*speed);
    report.ports.push_back(std::move(port));
  });
}

}  // namespace

std::size_t Report::flow_records() const {
  std::size_t n = 0;
  for (const auto& b : flows) n += b.records.size();
  return n;
}

Result<Report> read_report(const json& document) {
  FieldReader r(document);
  Report report;
  const auto seq = r.unsigned_integer("seq", true);
  if (seq && *seq == 0) r.fail("seq", "must be >= 1");
  const auto ts_ms = r.integer("ts_ms", true, 0, kInt64Max);
  report.counters = read_section<CountersSnapshot>(r, "counters", read_counters_snapshot);
  report.qp = read_section<QpInventory>(r, "qp", read_qp_inventory);
  report.optics = read_section<OpticsReport>(r, "optics", read_optics_report);
  report.lldp = read_section<LldpNeighbors>(r, "lldp", read_lldp_neighbors);
  read_flow_batches(document, r, report);
  read_ports(document, r, report);
  if (auto e = r.finish_error()) return tl::unexpected(std::move(*e));
  report.seq = *seq;
  report.ts_ms = *ts_ms;
  return report;
}

json to_json(const Report& report) {
  json j = {{"seq", report.seq}, {"ts_ms", report.ts_ms}};
  if (report.counters) j["counters"] = to_json(*report.counters);
  if (report.qp) j["qp"] = to_json(*report.qp);
  if (report.optics) j["optics"] = to_json(*report.optics);
  if (report.lldp) j["lldp"] = to_json(*report.lldp);
  if (!report.flows.empty()) {
    json flows = json::array();
    for (const auto& b : report.flows) {
      json records = json::array();
      for (const auto& f : b.records) records.push_back(to_json(f));
      flows.push_back({{"epoch", b.epoch}, {"records", std::move(records)}});
    }
    j["flows"] = std::move(flows);
  }
  if (!report.ports.empty()) {
    json ports = json::array();
    for (const auto& p : report.ports) {
      json port = {{"name", p.name}, {"oper_state", p.oper_state}};
      if (p.speed_mbps) port["speed_mbps"] = *p.speed_mbps;
      ports.push_back(std::move(port));
    }
    j["ports"] = std::move(ports);
  }
  return j;
}

}  // namespace hsns::proto
