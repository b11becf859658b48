// `hsnsctl flows --file PATH [--top N]`: the flow probe's JSON-lines sink (daemon/flows/flow_sink.h) as a
// table of the busiest flows, totals summed over harvest intervals per (host, interface, direction, source,
// destination, UDP source port, destination QP), sorted by bytes. -o json prints the same aggregates.
// Lines that are not flow records (counters lines) are skipped; malformed lines are counted and reported
// on the last line. A missing file is a usage error (exit 64). Reads only the file: no server involved.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
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
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++malformed;
      continue;
    }
    if (j.value("type", "") != "flow") continue;
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
  }
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
