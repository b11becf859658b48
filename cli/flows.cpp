// `hsnsctl flows --file PATH [--top N]`: the flow probe's JSON-lines sink (daemon/flows/flow_sink.h) as a
// table of the busiest flows, totals summed over harvest intervals per (host, interface, direction, source,
// destination, UDP source port, destination QP), sorted by bytes. -o json prints the same aggregates.
// Only complete harvest batches count (daemon/flows/flow_sink.h): a `batch` opening marker with epoch E, its
// flow lines (epoch E) and the `counters` closing marker of E. The lines of a batch without its closing
// marker (cut short by a crash, or being written right now) are skipped and reported on the last line, as
// are malformed lines. Files of earlier versions (flow lines without epoch, each harvest closed by a
// counters line) read as before, a harvest without its counters line skipped likewise. The framing and the
// flow lines are read by the wire contract's readers (hsns/proto/flows.h, shared with hsnsd's sink): a flow
// line the contract refuses counts as malformed. A missing file is a usage error (exit 64). Reads only the
// file: no server involved.
#include "hsns/proto/flows.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
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
  std::ifstream in(args.file, std::ios::binary);
  if (!in) throw usage_error("cannot read " + args.file);
  std::stringstream text;
  text << in.rdbuf();
  std::map<std::string, Aggregate> flows;
  std::size_t malformed = 0;
  std::size_t incomplete = 0;  // lines of batches without their closing marker
  const auto batches = hsns::proto::read_sink_batches(text.str(), &incomplete, &malformed);
  for (const auto& batch : batches) {
    for (const auto& line : batch.flows) {
      const auto f = hsns::proto::read_flow_record(line);
      if (!f) {
        ++malformed;
        continue;
      }
      nlohmann::json key = {
          {"host", f->host},      {"ifname", f->ifname}, {"direction", to_string(f->direction)},
          {"src", f->src},        {"dst", f->dst},       {"sport", f->sport},
          {"dest_qp", f->dest_qp}};
      auto& a = flows[key.dump()];
      a.key = key;
      a.packets += f->packets;
      a.bytes += f->bytes;
      a.ce += f->ce;
      a.ecn += f->ect;
      a.cnp += f->cnp;
      for (const auto n : f->nak) a.nak += n;
      a.regressions += f->psn_regressions;
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
