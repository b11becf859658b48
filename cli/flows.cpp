// `hsnsctl flows --file PATH [--top N]`: the flow probe's JSON-lines sink (daemon/flows/flow_sink.h) as a
// table of the busiest flows, totals summed over harvest intervals per (host, interface, direction, source,
// destination, UDP source port, destination QP), sorted by bytes. -o json prints the same aggregates.
// Only complete harvest batches count (daemon/flows/flow_sink.h): a `batch` opening marker with epoch E, its
// flow lines (epoch E) and the `counters` closing marker of E. The lines of a batch without its closing
// marker (cut short by a crash, or being written right now) are skipped and reported on the last line, as
// are malformed lines. Files of earlier versions (flow lines without epoch, each harvest closed by a
// counters line) read as before, a harvest without its counters line skipped likewise. A missing file is a
// usage error (exit 64). Reads only the file: no server involved.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "table.h"

namespace hsnsctl {

namespace {

struct FlowsArgs {
  std::string file;
  std::int64_t top = 20;
};

struct Aggregate {
  nlohmann::json key;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ce = 0;
  std::uint64_t ecn = 0;
  std::uint64_t cnp = 0;
  std::uint64_t nak = 0;
  std::uint64_t regressions = 0;
};

void flows_show(Context& ctx, const FlowsArgs& args) {
  std::ifstream in(args.file);
  if (!in) throw usage_error("cannot read " + args.file);
  std::map<std::string, Aggregate> flows;
  std::size_t malformed = 0;
  std::size_t incomplete = 0;  // lines of batches without their closing marker
  // The lines of the batch being read: counted when its closing marker arrives.
  std::vector<nlohmann::json> pending;
  bool open = false;  // an opening marker was read (else: a file of an earlier version)
  std::uint64_t open_epoch = 0;
  std::uint64_t open_records = 0;
  bool broken = false;
  auto add = [&](const nlohmann::json& j) {
    try {
      nlohmann::json key = {{"host", j.value("host", "")},
                            {"ifname", j.value("ifname", "")},
                            {"direction", j.at("direction")},
                            {"src", j.at("src")},
                            {"dst", j.at("dst")},
                            {"sport", j.at("sport")},
                            {"dest_qp", j.at("dest_qp")}};
      auto& a = flows[key.dump()];
      a.key = key;
      a.packets += j.at("packets").get<std::uint64_t>();
      a.bytes += j.at("bytes").get<std::uint64_t>();
      a.ce += j.at("ce").get<std::uint64_t>();
      a.ecn += j.at("ect").get<std::uint64_t>();
      a.cnp += j.at("cnp").get<std::uint64_t>();
      for (const auto& [k, v] : j.at("nak").items()) a.nak += v.get<std::uint64_t>();
      a.regressions += j.at("psn_regressions").get<std::uint64_t>();
    } catch (const nlohmann::json::exception&) {
      ++malformed;
    }
  };
  auto drop = [&] {
    incomplete += pending.size() + (open ? 1 : 0);
    pending.clear();
    open = false;
    broken = false;
  };
  auto epoch_of = [](const nlohmann::json& j) -> std::optional<std::uint64_t> {
    if (j.contains("epoch") && j["epoch"].is_number_unsigned()) return j["epoch"].get<std::uint64_t>();
    return std::nullopt;
  };
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (in.eof()) {  // no newline: a line being written or cut short
      ++incomplete;
      break;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++malformed;
      if (open) broken = true;
      continue;
    }
    const std::string type = j.value("type", "");
    const auto epoch = epoch_of(j);
    if (type == "batch") {
      drop();
      open = true;
      open_epoch = epoch.value_or(0);
      open_records = j.value("records", std::uint64_t{0});
      broken = !epoch;
    } else if (type == "flow") {
      if (open && epoch != open_epoch) broken = true;
      if (!open && epoch) {
        ++incomplete;  // outside its batch
        continue;
      }
      pending.push_back(std::move(j));
    } else if (type == "counters") {
      const bool complete = open ? !broken && epoch == open_epoch && pending.size() == open_records
                                 : !epoch;  // earlier versions: the flow lines since the last counters line
      if (!complete) {
        drop();
        ++incomplete;
        continue;
      }
      for (const auto& f : pending) add(f);
      pending.clear();
      open = false;
    }
  }
  drop();
  std::vector<const Aggregate*> sorted;
  for (const auto& [k, a] : flows) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(), [](const Aggregate* x, const Aggregate* y) {
    return x->bytes != y->bytes ? x->bytes > y->bytes : x->key.dump() < y->key.dump();
  });
  if (args.top > 0 && sorted.size() > static_cast<std::size_t>(args.top))
    sorted.resize(static_cast<std::size_t>(args.top));
  if (ctx.format == OutputFormat::json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto* a : sorted) {
      nlohmann::json r = a->key;
      r["packets"] = a->packets;
      r["bytes"] = a->bytes;
      r["ect"] = a->ecn;
      r["ce"] = a->ce;
      r["cnp"] = a->cnp;
      r["nak"] = a->nak;
      r["psn_regressions"] = a->regressions;
      out.push_back(std::move(r));
    }
    ctx.out << out.dump(2) << '\n';
    return;
  }
  Table t({"HOST", "IFACE", "DIR", "SRC", "DST", "SPORT", "DEST_QP", "PACKETS", "BYTES", "CE", "CNP", "NAK",
           "RETX"});
  for (const auto* a : sorted) {
    t.add_row({a->key["host"].get<std::string>(), a->key["ifname"].get<std::string>(),
               a->key["direction"].get<std::string>(), a->key["src"].get<std::string>(),
               a->key["dst"].get<std::string>(), std::to_string(a->key["sport"].get<int>()),
               std::to_string(a->key["dest_qp"].get<std::uint32_t>()), std::to_string(a->packets),
               std::to_string(a->bytes), std::to_string(a->ce), std::to_string(a->cnp),
               std::to_string(a->nak), std::to_string(a->regressions)});
  }
  t.render(ctx.out);
  if (malformed > 0) ctx.out << "(" << malformed << " malformed line(s) skipped)\n";
  if (incomplete > 0)
    ctx.out << "(" << incomplete << " line(s) of incomplete harvest batches skipped: cut short by a crash or "
            << "being written)\n";
}

}  // namespace

void add_flow_commands(CLI::App& app, std::function<void(Context&)>& action) {
  auto args = std::make_shared<FlowsArgs>();
  auto* sub =
      app.add_subcommand("flows", "RoCEv2 flow records from the flow probe's JSON-lines sink (local file)");
  sub->add_option("--file", args->file, "Sink file (flow_probe.sink of hsnsd.yaml)")->required();
  sub->add_option("--top", args->top, "Show the N flows with the most bytes (0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->callback([&action, args] { action = [args](Context& c) { flows_show(c, *args); }; });
}

}  // namespace hsnsctl
