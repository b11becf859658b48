// `hsnsctl search`, `hsnsctl schedule` and `hsnsctl jobs`: topology search and topology-aware scheduling
// (docs/rest-api.md, "Topology search and scheduling").
//
//   search   [--request FILE] MODEL PARALLEL [--npus N] [--npus-per-host N] [--hosts H,..] [--exclude H,..]
//            [--max-tier T] [--answers N] [--algorithm A]
//                              POST /api/v1/topology/search; a table of the ranked candidates, then each
//                              candidate's hosts and explanation
//   schedule JOB (--hosts H,.. | --best) [--request FILE] MODEL PARALLEL [--npus-per-host N]
//            [--framework F] [--algorithm A] [--source-ports FIRST-LAST] [--qps-per-pair N] [--out-dir DIR]
//            [--allow-unreachable]
//                              POST /api/v1/schedule; --best first searches with the same model and
//                              parallelism (and --npus-per-host) and schedules on the best candidate.
//                              --allow-unreachable registers the job even when pairs of its route plan
//                              have addresses in different subnets (then a warning counts them).
//                              --out-dir writes the launcher files: hccl.json, hostfile, MultiQpSrcPort.cfg,
//                              torchrun/<host>.env and schedule.json (the whole answer)
//   jobs list | get NAME | delete NAME
//                              GET /api/v1/jobs, GET and DELETE /api/v1/jobs/{name}
// MODEL is --parameters --layers --hidden --heads --seq-len --micro-batch --global-batch [--kv-heads]
// [--dtype-bytes] [--moe-experts] [--moe-top-k]; PARALLEL is --tp --pp --dp --cp --ep --zero-stage
// --sequence-parallel --virtual-stages. A --request FILE (a JSON request body) gives the starting body;
// flags set or replace its fields. The server validates everything; its problem names the field.
// Failures follow output.h.
#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
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
#include "request.h"
#include "table.h"
#include "views.h"

namespace hsnsctl {

namespace {

using nlohmann::json;

// Flags that set one integer (or boolean) field of the request body, only when given.
struct FieldFlag {
  const char* flag;
  const char* object;  // "model", "parallel" or "" (top level)
  const char* field;
  const char* help;
  std::int64_t value = 0;
  CLI::Option* option = nullptr;
};

struct JobSpecArgs {
  std::string request_file;
  std::vector<FieldFlag> fields;
  bool sequence_parallel = false;
  CLI::Option* sequence_parallel_option = nullptr;
  std::string algorithm;
};

struct SearchArgs {
  JobSpecArgs spec;
  std::vector<std::string> hosts;
  std::vector<std::string> exclude;
  std::string max_tier;
};

struct ScheduleArgs {
  JobSpecArgs spec;
  std::string job;
  std::vector<std::string> hosts;
  bool best = false;
  std::string framework;
  std::string source_ports;
  std::string out_dir;
  bool allow_unreachable = false;
};

std::vector<FieldFlag> model_and_parallel_flags() {
  return {
      {"--parameters", "model", "parameters", "Model parameters (e.g. 7000000000)"},
      {"--layers", "model", "layers", "Transformer layers"},
      {"--hidden", "model", "hidden", "Hidden size"},
      {"--heads", "model", "heads", "Attention heads"},
      {"--kv-heads", "model", "kv_heads", "Key/value heads (GQA; 0 = heads)"},
      {"--seq-len", "model", "seq_len", "Sequence length"},
      {"--micro-batch", "model", "micro_batch", "Micro-batch size"},
      {"--global-batch", "model", "global_batch", "Global batch size"},
      {"--dtype-bytes", "model", "dtype_bytes", "Bytes per element (2 = bf16/fp16)"},
      {"--moe-experts", "model", "moe_experts", "MoE experts (0 = dense)"},
      {"--moe-top-k", "model", "moe_top_k", "MoE experts per token"},
      {"--tp", "parallel", "tp", "Tensor-parallel size"},
      {"--pp", "parallel", "pp", "Pipeline-parallel size"},
      {"--dp", "parallel", "dp", "Data-parallel size"},
      {"--cp", "parallel", "cp", "Context-parallel size"},
      {"--ep", "parallel", "ep", "Expert-parallel size"},
      {"--zero-stage", "parallel", "zero_stage", "ZeRO stage (0-3)"},
      {"--virtual-stages", "parallel", "virtual_stages", "Interleaved pipeline stages per rank"},
      {"--npus-per-host", "", "npus_per_host", "NPUs to use per host (0 = the server's default)"},
  };
}

// Binds the options; `extra` adds top-level integer fields of the command. Options point into
// spec.fields, which must not grow afterwards.
void add_job_spec_options(CLI::App* sub, JobSpecArgs& spec, const std::vector<FieldFlag>& extra) {
  sub->add_option("--request", spec.request_file, "JSON request body to start from (flags override it)");
  spec.fields = model_and_parallel_flags();
  spec.fields.insert(spec.fields.end(), extra.begin(), extra.end());
  for (auto& f : spec.fields) {
    f.option = sub->add_option(f.flag, f.value, f.help)
                   ->check(CLI::NonNegativeNumber)
                   ->group("Model and parallelism");
  }
  spec.sequence_parallel_option =
      sub->add_flag("--sequence-parallel", spec.sequence_parallel, "Megatron sequence parallelism with TP")
          ->group("Model and parallelism");
  sub->add_option("--algorithm", spec.algorithm, "Collective algorithm")
      ->check(CLI::IsMember({"auto", "ring", "halving-doubling", "tree", "hierarchical"}));
}

json object_from_file(const std::string& path) {
  if (path.empty()) return json::object();
  auto doc = json::parse(read_text_file(path), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw usage_error(path + " is not a JSON object");
  return doc;
}

json& member_object(json& body, const char* name) {
  if (!body.contains(name) || !body[name].is_object()) body[name] = json::object();
  return body[name];
}

// The request body: the --request file, then every flag given.
json job_spec_body(const JobSpecArgs& spec) {
  json body = object_from_file(spec.request_file);
  for (const auto& f : spec.fields) {
    if (f.option->count() == 0) continue;
    json& target = std::string_view(f.object).empty() ? body : member_object(body, f.object);
    target[f.field] = f.value;
  }
  if (spec.sequence_parallel_option->count() > 0) {
    member_object(body, "parallel")["sequence_parallel"] = spec.sequence_parallel;
  }
  if (!spec.algorithm.empty()) body["algorithm"] = spec.algorithm;
  return body;
}

json search_body(const SearchArgs& a) {
  json body = job_spec_body(a.spec);
  if (!a.hosts.empty()) member_object(body, "resources")["hosts"] = a.hosts;
  if (!a.exclude.empty()) member_object(body, "constraints")["exclude_hosts"] = a.exclude;
  if (!a.max_tier.empty()) member_object(body, "constraints")["max_tier"] = a.max_tier;
  return body;
}

const json& field(const json& object, const char* key) {
  static const json null_value;
  return object.is_object() && object.contains(key) ? object[key] : null_value;
}

std::string milliseconds(const json& seconds) {
  if (!seconds.is_number()) return "";
  return number_text(json(std::round(seconds.get<double>() * 1e6) / 1e3));
}

std::string joined(const json& names) {
  std::string text;
  if (!names.is_array()) return text;
  for (const auto& n : names) {
    const auto& name = n.is_object() ? field(n, "name") : n;
    if (!name.is_string()) continue;
    text += (text.empty() ? "" : ",") + name.get<std::string>();
  }
  return text;
}

void show_search(Context& ctx, const json& answer) {
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
    return;
  }
  Table t({"RANK", "TOTAL_MS", "TP_MS", "PP_MS", "DP_MS", "EP_MS", "CP_MS", "DP_SPAN", "PP_SPAN", "JOB_SPAN",
           "STRANDED", "HOSTS"});
  const auto& candidates = field(answer, "candidates");
  if (candidates.is_array()) {
    for (const auto& c : candidates) {
      const auto& dims = field(c, "dimension_seconds");
      const auto& span = field(c, "span");
      t.add_row({number_text(field(c, "rank")), milliseconds(field(c, "total_seconds")),
                 milliseconds(field(dims, "tp")), milliseconds(field(dims, "pp")),
                 milliseconds(field(dims, "dp")), milliseconds(field(dims, "ep")),
                 milliseconds(field(dims, "cp")), cell_text(span, "dp"), cell_text(span, "pp"),
                 cell_text(c, "job_span"),
                 number_text(field(field(c, "fragmentation"), "stranded_free_npus")),
                 field(c, "hosts").is_array() ? std::to_string(field(c, "hosts").size()) : ""});
    }
  }
  t.render(ctx.out);
  if (candidates.is_array()) {
    for (const auto& c : candidates) {
      const std::string rank = "#" + number_text(field(c, "rank"));
      ctx.out << rank << " hosts: " << joined(field(c, "hosts")) << '\n';
      if (field(c, "explanation").is_string())
        ctx.out << rank << " why: " << cell_text(c, "explanation") << '\n';
    }
  }
}

void search(Context& ctx, const SearchArgs& a) {
  show_search(ctx, call_json(ctx, "POST", "/api/v1/topology/search", search_body(a).dump()));
}

// "FIRST-LAST" -> {"first", "last"}.
json port_range(const std::string& text) {
  const auto dash = text.find('-');
  auto number = [&](const std::string& part) -> std::int64_t {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 5) {
      throw usage_error("--source-ports: expected FIRST-LAST (e.g. 49152-65535), got '" + text + "'");
    }
    return std::stoll(part);
  };
  if (dash == std::string::npos) number("");
  return {{"first", number(text.substr(0, dash))}, {"last", number(text.substr(dash + 1))}};
}

void write_file(const std::filesystem::path& path, const std::string& text, Context& ctx) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw failure("cannot write " + path.string());
  if (ctx.format == OutputFormat::table) ctx.out << "wrote " << path.string() << '\n';
}

// The launcher files of a Schedule answer, under dir.
void write_launcher_files(Context& ctx, const json& schedule, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir / "torchrun", ec);
  if (ec) throw failure("cannot create " + (dir / "torchrun").string() + ": " + ec.message());
  write_file(dir / "schedule.json", schedule.dump(2) + "\n", ctx);
  if (field(schedule, "hccl_json").is_object())
    write_file(dir / "hccl.json", schedule["hccl_json"].dump(2) + "\n", ctx);
  if (field(schedule, "hostfile").is_string())
    write_file(dir / "hostfile", schedule["hostfile"].get<std::string>(), ctx);
  const auto& cfg = field(field(schedule, "route_plan"), "multiqp_cfg");
  if (cfg.is_string()) write_file(dir / "MultiQpSrcPort.cfg", cfg.get<std::string>(), ctx);
  const auto& envs = field(schedule, "torchrun");
  if (envs.is_array()) {
    for (const auto& e : envs) {
      const auto& host = field(e, "host");
      const auto& env = field(e, "env");
      if (!host.is_string() || !env.is_string()) continue;
      const std::string name = host.get<std::string>();
      if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
        throw failure("the server answered an unusable host name '" + name + "' in torchrun");
      }
      write_file(dir / "torchrun" / (name + ".env"), env.get<std::string>(), ctx);
    }
  }
}

std::string spans_text(const json& spans) {
  std::string text;
  if (!spans.is_object()) return text;
  for (const auto& [dim, tier] : spans.items()) {
    if (tier.is_string()) text += (text.empty() ? "" : ", ") + dim + " " + tier.get<std::string>();
  }
  return text;
}

void show_schedule(Context& ctx, const json& s) {
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, s);
    return;
  }
  const auto& placement = field(s, "placement");
  const auto& route = field(s, "route_plan");
  const auto& predicted = field(route, "predicted_seconds");
  const auto& load = field(route, "max_uplink_load");
  ctx.out << "job " << cell_text(s, "job_name") << ": " << number_text(field(s, "world_size")) << " ranks on "
          << (field(placement, "hosts").is_array() ? field(placement, "hosts").size() : 0) << " hosts ("
          << cell_text(s, "framework") << ", " << cell_text(s, "algorithm") << "), rank table v"
          << cell_text(s, "rank_table_version") << '\n';
  ctx.out << "widest span: " << spans_text(field(placement, "widest_span")) << '\n';
  if (field(route, "modelled") == true) {
    ctx.out << "predicted communication (ms): planned " << milliseconds(field(predicted, "planned"))
            << ", ECMP random " << milliseconds(field(predicted, "ecmp_mean")) << " (mean; "
            << milliseconds(field(predicted, "ecmp_min")) << "-" << milliseconds(field(predicted, "ecmp_max"))
            << "), non-blocking " << milliseconds(field(predicted, "non_blocking")) << '\n';
    ctx.out << "highest uplink load (flows): planned " << number_text(field(load, "planned"))
            << ", ECMP mean " << number_text(field(load, "ecmp_mean")) << ", lower bound "
            << number_text(field(load, "lower_bound")) << '\n';
  } else {
    ctx.out << "route plan: no spine layer to plan over (source ports assigned, times not modelled)\n";
  }
  if (const auto& unreachable = field(route, "unreachable_pairs");
      unreachable.is_number_integer() && unreachable.get<std::int64_t>() > 0) {
    ctx.out << "warning: " << number_text(unreachable) << " of the route plan's "
            << (field(route, "pairs").is_array() ? field(route, "pairs").size() : 0)
            << " NPU pairs have addresses in different subnets and cannot reach each other\n";
  }
  Table t({"NODE_RANK", "HOST", "NPUS", "SCALABLE_UNIT", "SUPERPOD"});
  if (field(placement, "hosts").is_array()) {
    for (const auto& h : placement["hosts"]) {
      std::string npus;
      if (field(h, "npus").is_array()) {
        for (const auto& n : h["npus"]) npus += (npus.empty() ? "" : ",") + number_text(n);
      }
      t.add_row({number_text(field(h, "node_rank")), cell_text(h, "name"), npus,
                 number_text(field(h, "scalable_unit")), number_text(field(h, "superpod"))});
    }
  }
  t.render(ctx.out);
}

void schedule(Context& ctx, const ScheduleArgs& a) {
  json body = job_spec_body(a.spec);
  body["job_name"] = a.job;
  if (!a.framework.empty()) body["framework"] = a.framework;
  if (!a.source_ports.empty()) body["source_ports"] = port_range(a.source_ports);
  if (a.allow_unreachable) body["allow_unreachable"] = true;
  if (a.best) {
    json query = {{"model", field(body, "model")}, {"parallel", field(body, "parallel")}, {"answers", 1}};
    for (const char* key : {"npus_per_host", "algorithm"}) {
      if (body.contains(key)) query[key] = body[key];
    }
    auto found = call_json(ctx, "POST", "/api/v1/topology/search", query.dump());
    const auto& candidates = field(found, "candidates");
    if (!candidates.is_array() || candidates.empty()) throw failure("topology search found no candidate");
    json hosts = json::array();
    for (const auto& h : field(candidates[0], "hosts")) hosts.push_back(field(h, "name"));
    body["hosts"] = hosts;
  } else if (!a.hosts.empty()) {
    body["hosts"] = a.hosts;
  }
  if (!body.contains("hosts")) throw usage_error("give --hosts, --best, or hosts in the --request file");
  auto answer = call_json(ctx, "POST", "/api/v1/schedule", body.dump());
  if (!a.out_dir.empty()) write_launcher_files(ctx, answer, a.out_dir);
  show_schedule(ctx, answer);
}

void jobs_list(Context& ctx) {
  auto answer = call_json(ctx, "GET", "/api/v1/jobs");
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
    return;
  }
  Table t({"NAME", "NPUS", "HOSTS", "FRAMEWORK", "ALGORITHM", "REVISION", "CREATED"});
  for (const auto& j : list_items(answer)) {
    t.add_row({cell_text(j, "name"), number_text(field(j, "npus")),
               field(j, "hosts").is_array() ? std::to_string(j["hosts"].size()) : "",
               cell_text(j, "framework"), cell_text(j, "algorithm"),
               number_text(field(j, "topology_revision")), cell_text(j, "created_at")});
  }
  t.render(ctx.out);
}

void jobs_get(Context& ctx, const std::string& name) {
  auto job = call_json(ctx, "GET", "/api/v1/jobs/" + hsns::encode_path_segment(name));
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, job);
    return;
  }
  ctx.out << "job " << cell_text(job, "name") << ": " << number_text(field(job, "npus")) << " NPUs on "
          << joined(field(job, "hosts")) << " (" << cell_text(job, "framework") << ", "
          << cell_text(job, "algorithm") << "), created " << cell_text(job, "created_at") << '\n';
  Table t({"RANK", "HOST", "NPU", "IP"});
  if (field(job, "ranks").is_array()) {
    for (const auto& r : job["ranks"]) {
      t.add_row({number_text(field(r, "rank")), cell_text(r, "host"), number_text(field(r, "npu")),
                 cell_text(r, "ip")});
    }
  }
  t.render(ctx.out);
}

void jobs_delete(Context& ctx, const std::string& name) {
  call_json(ctx, "DELETE", "/api/v1/jobs/" + hsns::encode_path_segment(name));
  if (ctx.format == OutputFormat::table) ctx.out << "deleted job " << name << " (its NPUs are free)\n";
}

}  // namespace

void add_scheduling_commands(CLI::App& app, std::function<void(Context&)>& action) {
  auto s = std::make_shared<SearchArgs>();
  auto* search_cmd =
      app.add_subcommand("search", "Rank host sets for a training job (POST /api/v1/topology/search)");
  add_job_spec_options(search_cmd, s->spec,
                       {{"--npus", "", "npus", "NPUs the job needs (0 = tp x pp x dp x cp)"},
                        {"--answers", "", "answers", "How many candidates (server default 3)"}});
  search_cmd->add_option("--hosts", s->hosts, "Choose only among these hosts (comma-separated)")
      ->delimiter(',');
  search_cmd->add_option("--exclude", s->exclude, "Never choose these hosts (comma-separated)")
      ->delimiter(',');
  search_cmd->add_option("--max-tier", s->max_tier, "Highest tier the job may span")
      ->check(CLI::IsMember({"host", "leaf", "spine", "core"}));
  search_cmd->callback([&action, s] { action = [s](Context& c) { search(c, *s); }; });

  auto a = std::make_shared<ScheduleArgs>();
  auto* sched =
      app.add_subcommand("schedule", "Place a job on hosts and register it (POST /api/v1/schedule)");
  sched->add_option("JOB", a->job, "Job name")->required();
  add_job_spec_options(sched, a->spec,
                       {{"--qps-per-pair", "", "qps_per_pair", "Queue pairs (flows) per NPU pair"}});
  auto* hosts = sched->add_option("--hosts", a->hosts, "The job's hosts (comma-separated)")->delimiter(',');
  sched->add_flag("--best", a->best, "Search first and use the best candidate's hosts")->excludes(hosts);
  sched->add_option("--framework", a->framework, "Rank-order convention")
      ->check(CLI::IsMember({"pytorch", "megatron", "deepspeed", "mindspore"}));
  sched->add_option("--source-ports", a->source_ports, "UDP source-port range to plan in, FIRST-LAST");
  sched->add_option("--out-dir", a->out_dir,
                    "Write hccl.json, hostfile, MultiQpSrcPort.cfg and torchrun envs here");
  sched->add_flag("--allow-unreachable", a->allow_unreachable,
                  "Register the job even when NPU pairs of its route plan share no subnet");
  sched->callback([&action, a] { action = [a](Context& c) { schedule(c, *a); }; });

  auto name = std::make_shared<std::string>();
  auto* jobs = app.add_subcommand("jobs", "Registered jobs (GET/DELETE /api/v1/jobs)");
  jobs->require_subcommand(1);
  jobs->add_subcommand("list", "List registered jobs")->callback([&action] {
    action = [](Context& c) { jobs_list(c); };
  });
  auto* get = jobs->add_subcommand("get", "Show one job with its ranks");
  get->add_option("NAME", *name, "Job name")->required();
  get->callback([&action, name] { action = [name](Context& c) { jobs_get(c, *name); }; });
  auto* del = jobs->add_subcommand("delete", "Delete a job and release its NPUs");
  del->add_option("NAME", *name, "Job name")->required();
  del->callback([&action, name] { action = [name](Context& c) { jobs_delete(c, *name); }; });
}

}  // namespace hsnsctl
