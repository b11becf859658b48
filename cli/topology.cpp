// `hsnsctl topology ...`: the aggregator's cluster topology model (docs/rest-api.md, "Topology").
//
//   topology import FILE              PUT /api/v1/topology (a file starting with '{' is sent as JSON,
//                                     anything else as YAML); prints the summary
//   topology generate --hosts N --npus-per-host M [--hosts-per-su K] [--spines S] [--superpods P]
//            [--cores C] [--oversubscription R] [--spine-oversubscription R] [--host-link-gbps G]
//            [--fabric-link-gbps G] [--name NAME]
//                                     POST /api/v1/topology/generate; prints the summary
//   topology show                     GET /api/v1/topology
//   topology export --format F        GET /api/v1/topology/export?format=F; the body as it is, to stdout
//   topology set-state NAME STATE [--npu I]
//                                     PATCH /api/v1/topology/devices/{NAME}
// Failures follow output.h (server problems exit 1, unreadable files are usage errors, exit 64).
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.h"
#include "output.h"
#include "request.h"
#include "table.h"
#include "views.h"

namespace hsnsctl {

namespace {

using nlohmann::json;

struct TopologyArgs {
  std::string file;
  std::string format = "json";
  std::string name;
  std::string state;
  std::int64_t npu = -1;
  // generate: only the options given are sent (the server has the defaults).
  std::int64_t hosts = 0;
  std::int64_t npus_per_host = 0;
  std::int64_t hosts_per_su = 0;
  std::int64_t spines = 0;
  std::int64_t superpods = 0;
  std::int64_t cores = 0;
  double oversubscription = 1;
  double spine_oversubscription = 1;
  double host_link_gbps = 0;
  double fabric_link_gbps = 0;
  std::string topology_name;
  json generate_body = json::object();
};

void show_summary(Context& ctx, const json& s) {
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, s);
    return;
  }
  Table t({"REVISION", "NAME", "HOSTS", "NPUS", "LEAVES", "SPINES", "CORES", "LINKS", "OVERSUB_LEAF",
           "OVERSUB_SPINE", "SOURCE", "UPDATED"});
  const json empty = json::object();
  const auto& sw = s.contains("switches") ? s["switches"] : empty;
  const auto& os = s.contains("oversubscription") ? s["oversubscription"] : empty;
  auto at = [](const json& o, const char* key) { return o.contains(key) ? o[key] : json(); };
  t.add_row({number_text(at(s, "revision")), cell_text(s, "name"), number_text(at(s, "hosts")),
             number_text(at(s, "npus")), number_text(at(sw, "leaf")), number_text(at(sw, "spine")),
             number_text(at(sw, "core")), number_text(at(s, "links")), number_text(at(os, "leaf")),
             number_text(at(os, "spine")), cell_text(s, "source"), cell_text(s, "updated_at")});
  t.render(ctx.out);
  // States that need attention, one line each.
  if (s.contains("states") && s["states"].is_object()) {
    for (const auto& [kind, counts] : s["states"].items()) {
      if (!counts.is_object()) continue;
      std::string line;
      for (const auto& [state, n] : counts.items()) {
        if (state == "healthy" || !n.is_number_integer() || n.get<std::int64_t>() == 0) continue;
        line += (line.empty() ? "" : ", ") + n.dump() + " " + state;
      }
      if (!line.empty()) ctx.out << kind << ": " << line << '\n';
    }
  }
}

void topology_import(Context& ctx, const TopologyArgs& a) {
  const std::string text = read_text_file(a.file);
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool is_json = first != std::string::npos && text[first] == '{';
  auto res =
      request_ok(ctx, "PUT", "/api/v1/topology", text, is_json ? "application/json" : "application/yaml");
  show_summary(ctx, parse_json_answer(res, "PUT /api/v1/topology"));
}

void topology_generate(Context& ctx, const TopologyArgs& a) {
  auto res = request_ok(ctx, "POST", "/api/v1/topology/generate", a.generate_body.dump());
  show_summary(ctx, parse_json_answer(res, "POST /api/v1/topology/generate"));
}

void topology_show(Context& ctx) {
  auto res = request_ok(ctx, "GET", "/api/v1/topology");
  show_summary(ctx, parse_json_answer(res, "GET /api/v1/topology"));
}

void topology_export(Context& ctx, const TopologyArgs& a) {
  auto res = request_ok(ctx, "GET", "/api/v1/topology/export?format=" + hsns::encode_query_value(a.format));
  if (a.format == "json" && ctx.format == OutputFormat::table) {
    print_json(ctx.out, parse_json_answer(res, "GET /api/v1/topology/export"));
    return;
  }
  ctx.out << res.body;
  if (!res.body.empty() && res.body.back() != '\n') ctx.out << '\n';
}

void topology_set_state(Context& ctx, const TopologyArgs& a) {
  if (a.name.empty()) throw usage_error("the device name must not be empty");
  json body = {{"state", a.state}};
  if (a.npu >= 0) body["npu"] = a.npu;
  auto res =
      request_ok(ctx, "PATCH", "/api/v1/topology/devices/" + hsns::encode_path_segment(a.name), body.dump());
  auto answer = parse_json_answer(res, "PATCH /api/v1/topology/devices");
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
    return;
  }
  Table t({"DEVICE", "TIER", "NPU", "STATE", "REVISION"});
  t.add_row({cell_text(answer, "device"), cell_text(answer, "tier"),
             answer.contains("npu") ? number_text(answer["npu"]) : "", cell_text(answer, "state"),
             answer.contains("revision") ? number_text(answer["revision"]) : ""});
  t.render(ctx.out);
}

}  // namespace

void add_topology_commands(CLI::App& app, std::function<void(Context&)>& action) {
  auto a = std::make_shared<TopologyArgs>();
  auto* topology = app.add_subcommand("topology", "The cluster topology model (tiers, links, device state)");
  topology->require_subcommand(1);
  auto set = [&action, a](CLI::App* sub, void (*fn)(Context&, const TopologyArgs&)) {
    sub->callback([&action, a, fn] { action = [a, fn](Context& c) { fn(c, *a); }; });
  };

  auto* imp =
      topology->add_subcommand("import", "Import a YAML or JSON topology file (PUT /api/v1/topology)");
  imp->add_option("FILE", a->file, "Topology file (schema: docs/topology.md)")->required();
  set(imp, topology_import);

  auto* gen = topology->add_subcommand(
      "generate", "Generate a rail-optimised Clos cluster (POST /api/v1/topology/generate)");
  auto* hosts = gen->add_option("--hosts", a->hosts, "Hosts")->required()->check(CLI::PositiveNumber);
  auto* npus = gen->add_option("--npus-per-host", a->npus_per_host, "NPUs (rails) per host")
                   ->required()
                   ->check(CLI::PositiveNumber);
  auto* per_su =
      gen->add_option("--hosts-per-su", a->hosts_per_su, "Hosts per scalable unit (server default 32)")
          ->check(CLI::PositiveNumber);
  auto* spines = gen->add_option("--spines", a->spines, "Spines per super-pod plane (server default 8)")
                     ->check(CLI::NonNegativeNumber);
  auto* pods = gen->add_option("--superpods", a->superpods, "Super-pods (server default 1)")
                   ->check(CLI::PositiveNumber);
  auto* cores = gen->add_option("--cores", a->cores, "Core switches (needed with several super-pods)")
                    ->check(CLI::NonNegativeNumber);
  auto* over =
      gen->add_option("--oversubscription", a->oversubscription, "Leaf oversubscription (e.g. 2 for 2:1)")
          ->check(CLI::PositiveNumber);
  auto* sover =
      gen->add_option("--spine-oversubscription", a->spine_oversubscription, "Spine oversubscription")
          ->check(CLI::PositiveNumber);
  auto* hg = gen->add_option("--host-link-gbps", a->host_link_gbps, "NPU port speed (server default 400)")
                 ->check(CLI::PositiveNumber);
  auto* fg = gen->add_option("--fabric-link-gbps", a->fabric_link_gbps,
                             "Speed of parallel fabric links (default: one link of the exact capacity)")
                 ->check(CLI::NonNegativeNumber);
  auto* name = gen->add_option("--name", a->topology_name, "Topology name");
  gen->callback([&action, a, hosts, npus, per_su, spines, pods, cores, over, sover, hg, fg, name] {
    json& b = a->generate_body;
    b = json::object();
    if (hosts->count() > 0) b["hosts"] = a->hosts;
    if (npus->count() > 0) b["npus_per_host"] = a->npus_per_host;
    if (per_su->count() > 0) b["hosts_per_su"] = a->hosts_per_su;
    if (spines->count() > 0) b["spines_per_plane"] = a->spines;
    if (pods->count() > 0) b["superpods"] = a->superpods;
    if (cores->count() > 0) b["cores"] = a->cores;
    if (over->count() > 0) b["leaf_oversubscription"] = a->oversubscription;
    if (sover->count() > 0) b["spine_oversubscription"] = a->spine_oversubscription;
    if (hg->count() > 0) b["host_link_gbps"] = a->host_link_gbps;
    if (fg->count() > 0) b["fabric_link_gbps"] = a->fabric_link_gbps;
    if (name->count() > 0) b["name"] = a->topology_name;
    action = [a](Context& c) { topology_generate(c, *a); };
  });

  auto* show = topology->add_subcommand("show", "Summary of the current topology (GET /api/v1/topology)");
  show->callback([&action] { action = [](Context& c) { topology_show(c); }; });

  auto* exp = topology->add_subcommand("export", "Export for schedulers (GET /api/v1/topology/export)");
  exp->add_option("--format", a->format, "json, slurm-tree, slurm-block, volcano, kueue, node-labels or yaml")
      ->check(CLI::IsMember({"json", "slurm-tree", "slurm-block", "volcano", "kueue", "node-labels", "yaml"}))
      ->capture_default_str();
  set(exp, topology_export);

  auto* st =
      topology->add_subcommand("set-state", "Set a device's state (PATCH /api/v1/topology/devices/{name})");
  st->add_option("NAME", a->name, "Host or switch name")->required();
  st->add_option("STATE", a->state, "healthy, sub-health, isolated or allocated")
      ->required()
      ->check(CLI::IsMember({"healthy", "sub-health", "isolated", "allocated"}));
  st->add_option("--npu", a->npu, "NPU index on the host (sets the NPU's state)")
      ->check(CLI::NonNegativeNumber);
  set(st, topology_set_state);
}

}  // namespace hsnsctl
