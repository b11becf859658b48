// `hsnsctl telemetry ...`: host telemetry as the aggregator stored it from hsnsd's report batches
// (docs/cli.md "Telemetry", docs/rest-api.md "Telemetry"):
//   telemetry flows [--host H] [--port ID] [--job NAME] [--since T] [--until T]   GET /api/v1/flows
//   telemetry counters HOST [--port P] [--counter C] [--since T] [--until T]     GET
//   /api/v1/hosts/{h}/counters telemetry optics HOST [--netdev N] GET .../optics telemetry lldp HOST
//   [--netdev N]                                             GET .../lldp telemetry qps HOST GET .../qps
// Every command takes --limit and --offset (one page of the server's answer). Output: a table, then a
// "(more: --offset N)" line when the server has a next page; -o json prints the server's answer as it is.
// Errors as every command (commands.h): the server's problem document, exit 1.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "output.h"
#include "request.h"
#include "table.h"

namespace hsnsctl {

namespace {

using nlohmann::json;

struct TelemetryArgs {
  std::string host;
  std::string port;
  std::string job;
  std::string counter;
  std::string netdev;
  std::string since;
  std::string until;
  std::string limit;
  std::string offset;
};

// "?a=1&b=2" of the non-empty values, percent-encoded.
std::string query_string(const std::vector<std::pair<const char*, const std::string*>>& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (value->empty()) continue;
    out += out.empty() ? '?' : '&';
    out += name;
    out += '=';
    out += hsns::encode_query_value(*value);
  }
  return out;
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return number_text(v);
}

// "comm/pid@host" of a QP owner; "" when none.
std::string process_text(const json& owner) {
  if (!owner.is_object()) return "";
  std::string out = owner.value("comm", "");
  if (owner.contains("pid") && !owner["pid"].is_null()) out += "/" + text_of(owner["pid"]);
  return out + "@" + owner.value("host", "");
}

void show_page(Context& ctx, const json& answer, const std::vector<std::string>& header,
               const std::function<std::vector<std::string>(const json&)>& row) {
  if (ctx.format == OutputFormat::json) {
    print_json(ctx.out, answer);
    return;
  }
  Table t(header);
  for (const auto& item : answer.value("items", json::array())) t.add_row(row(item));
  t.render(ctx.out);
  if (answer.contains("next_offset") && !answer["next_offset"].is_null())
    ctx.out << "(more: --offset " << text_of(answer["next_offset"]) << ")\n";
}

std::string host_path(const TelemetryArgs& a, const char* what) {
  return "/api/v1/hosts/" + hsns::encode_path_segment(a.host) + "/" + what;
}

void flows(Context& ctx, const TelemetryArgs& a) {
  const auto answer = call_json(ctx, "GET",
                                "/api/v1/flows" + query_string({{"host", &a.host},
                                                                {"port", &a.port},
                                                                {"job", &a.job},
                                                                {"since", &a.since},
                                                                {"until", &a.until},
                                                                {"limit", &a.limit},
                                                                {"offset", &a.offset}}));
  show_page(ctx, answer,
            {"HOST", "SRC", "SRC_QP", "DST", "DST_QP", "PACKETS", "BYTES", "FWD_BYTES", "REV_BYTES",
             "SRC_PROCESS", "DST_PROCESS"},
            [](const json& f) -> std::vector<std::string> {
              const json& reverse = f["reverse"];
              return {text_of(f["host"]),
                      text_of(f["src"]),
                      text_of(f["src_qp"]),
                      text_of(f["dst"]),
                      text_of(f["dst_qp"]),
                      text_of(f["packets"]),
                      text_of(f["bytes"]),
                      text_of(f["forward"]["bytes"]),
                      reverse.is_object() ? text_of(reverse["bytes"]) : "",
                      process_text(f["src_process"]),
                      process_text(f["dst_process"])};
            });
}

void counters(Context& ctx, const TelemetryArgs& a) {
  const auto answer = call_json(ctx, "GET",
                                host_path(a, "counters") + query_string({{"port", &a.port},
                                                                         {"counter", &a.counter},
                                                                         {"since", &a.since},
                                                                         {"until", &a.until},
                                                                         {"limit", &a.limit},
                                                                         {"offset", &a.offset}}));
  show_page(ctx, answer, {"PORT", "SOURCE", "COUNTER", "VALUE", "DELTA", "RATE", "TIME"},
            [](const json& c) -> std::vector<std::string> {
              return {text_of(c["port"]),  text_of(c["source"]), text_of(c["counter"]), text_of(c["value"]),
                      text_of(c["delta"]), text_of(c["rate"]),   text_of(c["time"])};
            });
}

// The names of the alarm and warning flags that are set, "temperature.high_alarm,lane1.rx_power.low_warning".
std::string raised_flags(const json& module) {
  std::string out;
  const auto add = [&out](const std::string& prefix, const json& flags) {
    if (!flags.is_object()) return;
    for (const auto& [measure, levels] : flags.items()) {
      for (const auto& [level, set] : levels.items()) {
        if (!set.is_boolean() || !set.get<bool>()) continue;
        if (!out.empty()) out += ',';
        out += prefix;
        out += measure;
        out += '.';
        out += level;
      }
    }
  };
  add("", module.value("flags", json()));
  for (const auto& lane : module.value("lanes", json::array()))
    add("lane" + text_of(lane["lane"]) + ".", lane.value("flags", json()));
  return out;
}

void optics(Context& ctx, const TelemetryArgs& a) {
  const auto answer =
      call_json(ctx, "GET",
                host_path(a, "optics") +
                    query_string({{"netdev", &a.netdev}, {"limit", &a.limit}, {"offset", &a.offset}}));
  show_page(ctx, answer,
            {"NETDEV", "STATUS", "VENDOR", "SERIAL", "TEMP_C", "VOLTS", "LANES", "FLAGS", "TIME"},
            [](const json& m) -> std::vector<std::string> {
              return {text_of(m["netdev"]),
                      text_of(m["status"]),
                      m.value("vendor", ""),
                      m.value("serial", ""),
                      text_of(m.value("temperature_celsius", json())),
                      text_of(m.value("voltage_volts", json())),
                      std::to_string(m.value("lanes", json::array()).size()),
                      raised_flags(m),
                      text_of(m["time"])};
            });
}

void lldp(Context& ctx, const TelemetryArgs& a) {
  const auto answer =
      call_json(ctx, "GET",
                host_path(a, "lldp") +
                    query_string({{"netdev", &a.netdev}, {"limit", &a.limit}, {"offset", &a.offset}}));
  show_page(ctx, answer, {"NETDEV", "SYSTEM", "PORT_ID", "CHASSIS_ID", "TTL_S", "TIME"},
            [](const json& n) -> std::vector<std::string> {
              return {text_of(n["netdev"]),     n.value("system_name", ""), text_of(n["port_id"]),
                      text_of(n["chassis_id"]), text_of(n["ttl_s"]),        text_of(n["time"])};
            });
}

void qps(Context& ctx, const TelemetryArgs& a) {
  const auto answer =
      call_json(ctx, "GET", host_path(a, "qps") + query_string({{"limit", &a.limit}, {"offset", &a.offset}}));
  show_page(ctx, answer,
            {"DEVICE", "PORT", "LQPN", "RQPN", "TYPE", "STATE", "PID", "COMM", "SRC", "DST", "SPORT"},
            [](const json& q) -> std::vector<std::string> {
              return {text_of(q["device"]),
                      text_of(q["port"]),
                      text_of(q["lqpn"]),
                      text_of(q.value("rqpn", json())),
                      text_of(q["type"]),
                      text_of(q["state"]),
                      text_of(q.value("pid", json())),
                      text_of(q["comm"]),
                      q.value("src", ""),
                      q.value("dst", ""),
                      text_of(q.value("sport", json()))};
            });
}

void paging_options(CLI::App* sub, TelemetryArgs& a) {
  sub->add_option("--limit", a.limit, "Rows per page (server default 1000, at most 10000)");
  sub->add_option("--offset", a.offset, "Rows to skip (the \"more\" line names the next page's)");
}

void range_options(CLI::App* sub, TelemetryArgs& a) {
  sub->add_option("--since", a.since, "From this time on (RFC 3339, e.g. 2026-12-02T05:00:00Z)");
  sub->add_option("--until", a.until, "Before this time (RFC 3339)");
}

}  // namespace

void add_telemetry_commands(CLI::App& app, std::function<void(Context&)>& action) {
  auto args = std::make_shared<TelemetryArgs>();
  auto* group = app.add_subcommand("telemetry", "Host telemetry stored from hsnsd's reports");
  group->require_subcommand(1);
  const auto on_run = [&action, args](CLI::App* sub, void (*fn)(Context&, const TelemetryArgs&)) {
    sub->callback([&action, args, fn] { action = [args, fn](Context& c) { fn(c, *args); }; });
  };

  auto* f =
      group->add_subcommand("flows", "RoCEv2 flows, both directions of a QP pair joined (GET /api/v1/flows)");
  f->add_option("--host", args->host, "Only flows reported by this host");
  f->add_option("--port", args->port, "Only flows from or to this port's address (a port id)");
  f->add_option("--job", args->job, "Only flows from or to the addresses of this job's NPUs");
  range_options(f, *args);
  paging_options(f, *args);
  on_run(f, flows);

  auto* c = group->add_subcommand("counters",
                                  "Port counters: the newest snapshot, or a series with --since/--until");
  c->add_option("HOST", args->host, "Host name")->required();
  c->add_option("--port", args->port, "Only this port (device/port or netdev)");
  c->add_option("--counter", args->counter, "Only this counter");
  range_options(c, *args);
  paging_options(c, *args);
  on_run(c, counters);

  auto* o = group->add_subcommand("optics", "Optical module diagnostics (GET /api/v1/hosts/{host}/optics)");
  o->add_option("HOST", args->host, "Host name")->required();
  o->add_option("--netdev", args->netdev, "Only this port's module");
  paging_options(o, *args);
  on_run(o, optics);

  auto* l = group->add_subcommand("lldp", "LLDP neighbours (GET /api/v1/hosts/{host}/lldp)");
  l->add_option("HOST", args->host, "Host name")->required();
  l->add_option("--netdev", args->netdev, "Only this port's neighbours");
  paging_options(l, *args);
  on_run(l, lldp);

  auto* q = group->add_subcommand("qps", "RDMA queue pairs (GET /api/v1/hosts/{host}/qps)");
  q->add_option("HOST", args->host, "Host name")->required();
  paging_options(q, *args);
  on_run(q, qps);
}

}  // namespace hsnsctl
