// `hsnsctl diagnose ...`: full-path diagnosis (docs/brain.md "Path diagnosis"):
//   diagnose path SRC DST [--max-paths N]   GET /api/v1/diagnose/path?src=&dst=   (SRC, DST: <host>/<npu>)
//   diagnose job NAME [--max-paths N]       GET /api/v1/diagnose/job/{id}
// Output: the verdict and the route, then a table of the hops (worst first for a job: verdict, pairs crossing
// it, entities, the first reason); -o json prints the server's answer as it is. Errors as every command
// (commands.h): the server's problem document, exit 1.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "request.h"
#include "table.h"

namespace hsnsctl {

namespace {

using nlohmann::json;

struct DiagnoseArgs {
  std::string src;
  std::string dst;
  std::string job;
  std::string max_paths;
};

std::string joined(const json& list, const char* sep) {
  std::string out;
  for (const auto& v : list) {
    if (!out.empty()) out += sep;
    out += v.is_string() ? v.get<std::string>() : v.dump();
  }
  return out;
}

std::string first_reason(const json& hop) {
  const auto reasons = hop.value("reasons", json::array());
  return reasons.empty() ? "" : reasons[0].get<std::string>();
}

std::string max_paths_query(const DiagnoseArgs& a, char lead) {
  return a.max_paths.empty() ? ""
                             : std::string(1, lead) + "max_paths=" + hsns::encode_query_value(a.max_paths);
}

void path(Context& ctx, const DiagnoseArgs& a) {
  const auto answer = call_json(ctx, "GET",
                                "/api/v1/diagnose/path?src=" + hsns::encode_query_value(a.src) +
                                    "&dst=" + hsns::encode_query_value(a.dst) + max_paths_query(a, '&'));
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
    return;
  }
  const auto& route = answer["route"];
  ctx.out << "verdict: " << answer.value("verdict", "") << "\n";
  ctx.out << "route: " << route.value("source", "");
  if (route["job"].is_string()) ctx.out << " (job " << route["job"].get<std::string>() << ")";
  if (!route.value("note", "").empty()) ctx.out << ": " << route.value("note", "");
  ctx.out << "\npaths: " << answer["paths"].size()
          << (answer.value("truncated", false) ? " (more not shown)" : "") << "\n";
  Table t({"VERDICT", "KIND", "ENTITIES", "STATE", "KPIS", "ALARMS", "REASON"});
  for (const auto& h : answer["hops"]) {
    t.add_row({h.value("verdict", ""), h.value("kind", ""), joined(h["entities"], " <-> "),
               h.value("state", ""), std::to_string(h["kpis"].size()), std::to_string(h["alarms"].size()),
               first_reason(h)});
  }
  t.render(ctx.out);
}

void job(Context& ctx, const DiagnoseArgs& a) {
  const auto answer = call_json(
      ctx, "GET", "/api/v1/diagnose/job/" + hsns::encode_path_segment(a.job) + max_paths_query(a, '?'));
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
    return;
  }
  const auto& summary = answer["summary"];
  ctx.out << "job " << answer.value("job", "") << ": " << answer.value("verdict", "") << ", "
          << summary.value("pairs", 0) << " pairs"
          << (summary.value("pairs_truncated", false) ? " (more not diagnosed)" : "") << ", "
          << summary.value("hops", 0) << " hops\n";
  if (!answer["route_plan"].value("used", false))
    ctx.out << "route plan not used: " << answer["route_plan"].value("note", "") << "\n";
  Table t({"VERDICT", "PAIRS", "KIND", "ENTITIES", "REASON"});
  for (const auto& h : answer["hops"]) {
    t.add_row({h.value("verdict", ""), std::to_string(h.value("pairs", 0)), h.value("kind", ""),
               joined(h["entities"], " <-> "), first_reason(h)});
  }
  t.render(ctx.out);
}

}  // namespace

void add_diagnose_commands(CLI::App& app, std::function<void(Context&)>& action) {
  auto args = std::make_shared<DiagnoseArgs>();
  auto* group =
      app.add_subcommand("diagnose", "Full-path diagnosis: every hop with its KPIs, alarms and verdict");
  group->require_subcommand(1);
  const auto on_run = [&action, args](CLI::App* sub, void (*fn)(Context&, const DiagnoseArgs&)) {
    sub->callback([&action, args, fn] { action = [args, fn](Context& c) { fn(c, *args); }; });
  };
  auto* p = group->add_subcommand("path", "Every hop between two NPU ports (GET /api/v1/diagnose/path)");
  p->add_option("SRC", args->src, "Source NPU: <host>/<netdev or index>")->required();
  p->add_option("DST", args->dst, "Destination NPU: <host>/<netdev or index>")->required();
  p->add_option("--max-paths", args->max_paths, "At most this many ECMP candidate paths (server default 64)");
  on_run(p, path);
  auto* j = group->add_subcommand(
      "job", "Every rank pair of a job, its hops worst first (GET /api/v1/diagnose/job/{id})");
  j->add_option("NAME", args->job, "The job's name")->required();
  j->add_option("--max-paths", args->max_paths,
                "At most this many ECMP candidate paths per pair (server default 16)");
  on_run(j, job);
}

}  // namespace hsnsctl
