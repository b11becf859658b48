// hsnsctl scenario run|judge (scenario.h, docs/scenarios.md): the scenario reader and the replay.
#include "scenario.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "commands.h"
#include "hsns/ip.h"
#include "hsns/time.h"
#include "request.h"

namespace hsnsctl {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::size_t kKpiBatch = 10'000;                        // POST /api/v1/kpis' limit
constexpr std::int64_t kMaxOffsetMs = 400LL * 24 * 3600 * 1000;  // offsets beyond 400 days are typos

std::int64_t offset_field(const json& j, const char* key, const std::string& where, bool required) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) throw usage_error(where + ": \"" + key + "\" is required");
    return -1;
  }
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > kMaxOffsetMs) {
    throw usage_error(where + ": \"" + key + "\" must be an integer of milliseconds from 0 to " +
                      std::to_string(kMaxOffsetMs));
  }
  return it->get<std::int64_t>();
}

std::string string_field(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
    throw usage_error(where + ": \"" + key + "\" must be a non-empty string");
  }
  return it->get<std::string>();
}

void only_keys(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (std::none_of(keys.begin(), keys.end(), [&](const char* want) { return k == want; })) {
      std::string message = where;
      message.append(": unknown key \"").append(k).append("\"");
      throw usage_error(message);
    }
  }
}

// Calls each(json, "file:line") for every non-blank, non-comment line of a JSON-lines file.
void for_each_json_line(const fs::path& file,
                        const std::function<void(const json&, const std::string&)>& each) {
  std::ifstream in(file);
  if (!in) throw usage_error("cannot read " + file.string());
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto where = file.filename().string() + ":" + std::to_string(number);
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw usage_error(where + ": not a JSON object");
    each(j, where);
  }
}

template <class T>
void sort_by_offset(std::vector<T>& items) {
  std::stable_sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.at_ms < b.at_ms; });
}

// A syslog line's source address: only loopback, which is what a scenario may send from (the runner binds
// it).
std::string loopback_source(const std::string& text, const std::string& where) {
  const auto address = hsns::IpAddress::parse(text);
  if (!address) throw usage_error(where + ": \"source\" must be an IP address, got '" + text + "'");
  const bool loopback = address->family() == hsns::IpFamily::v4 ? (address->value() >> 24) == 127
                                                                : address->value() == 1;  // ::1
  if (!loopback) throw usage_error(where + ": \"source\" must be a loopback address, got '" + text + "'");
  return text;
}

// A syslog sender over TCP (RFC 6587 octet counting) or UDP (one datagram per line).
class SyslogSender {
 public:
  SyslogSender(const std::string& url, const std::string& source) {
    std::string rest;
    if (url.starts_with("tcp://")) {
      tcp_ = true;
      rest = url.substr(6);
    } else if (url.starts_with("udp://")) {
      rest = url.substr(6);
    } else {
      throw usage_error("--syslog must be tcp://HOST:PORT or udp://HOST:PORT, got '" + url + "'");
    }
    auto colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw usage_error("--syslog needs HOST:PORT: '" + url + "'");
    std::string host = rest.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const std::string port = rest.substr(colon + 1);
    addrinfo hints{};
    hints.ai_socktype = tcp_ ? SOCK_STREAM : SOCK_DGRAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
      throw usage_error("--syslog: cannot resolve " + rest);
    }
    fd_ = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    bool ok = fd_ >= 0;
    if (ok && !source.empty()) ok = bind_source(source, found->ai_family);
    ok = ok && ::connect(fd_, found->ai_addr, found->ai_addrlen) == 0;
    freeaddrinfo(found);
    if (!ok) {
      throw connection_error("syslog " + url + ": cannot connect" +
                             (source.empty() ? "" : " from " + source));
    }
    url_ = url;
  }
  SyslogSender(const SyslogSender&) = delete;
  SyslogSender& operator=(const SyslogSender&) = delete;
  ~SyslogSender() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Binds the socket to a source address (a device's management address in a scenario) before connecting.
  bool bind_source(const std::string& source, int family) {
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST;
    hints.ai_family = family;
    addrinfo* local = nullptr;
    if (getaddrinfo(source.c_str(), "0", &hints, &local) != 0 || local == nullptr) return false;
    const bool bound = ::bind(fd_, local->ai_addr, local->ai_addrlen) == 0;
    freeaddrinfo(local);
    return bound;
  }

  void send(const std::string& line) {
    std::string frame = tcp_ ? std::to_string(line.size()) + " " + line : line;
    std::size_t done = 0;
    while (done < frame.size()) {
      auto n = ::send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
      if (n < 0) throw connection_error("syslog " + url_ + ": send failed");
      done += static_cast<std::size_t>(n);
      if (!tcp_) break;
    }
  }

 private:
  bool tcp_ = false;
  int fd_ = -1;
  std::string url_;
};

// Syslog lines travel on their own sockets and the samples, reports and jobs over HTTP: a line sent just
// before a batch of samples could reach the brain after them, and the brain would see the scenario out of
// order (a port's "up" line after the samples that follow it). Before each HTTP request that follows syslog
// lines, the runner waits until the aggregator has handled as many lines as were sent
// (hsns_syslog_received_total on /metrics, counted once a line is handled). A server without the counter,
// or lines that never arrive (UDP), end the waiting after kSyslogWait, for the rest of the run.
class SyslogBarrier {
 public:
  explicit SyslogBarrier(Context& ctx) : ctx_(ctx) {
    const auto handled = read_handled();
    if (handled) {
      base_ = *handled;
    } else {
      off_ = true;
    }
  }

  void sent() { ++sent_; }

  void wait() {
    if (off_ || confirmed_ == sent_) return;
    constexpr auto kSyslogWait = std::chrono::seconds(5);
    const auto deadline = std::chrono::steady_clock::now() + kSyslogWait;
    for (;;) {
      const auto handled = read_handled();
      if (handled && *handled >= base_ + static_cast<double>(sent_)) {
        confirmed_ = sent_;
        return;
      }
      if (!handled || std::chrono::steady_clock::now() > deadline) {
        off_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

 private:
  // The sum of hsns_syslog_received_total over its transports; nullopt without the route or the counter.
  std::optional<double> read_handled() {
    auto res = send_request(ctx_, "GET", "/metrics");
    if (res.status != 200) return std::nullopt;
    constexpr std::string_view kName = "hsns_syslog_received_total";
    std::optional<double> sum;
    std::istringstream lines(res.body);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with(kName) || line.size() <= kName.size()) continue;
      if (line[kName.size()] != '{' && line[kName.size()] != ' ') continue;
      const auto space = line.rfind(' ');
      sum = sum.value_or(0) + std::strtod(line.c_str() + space + 1, nullptr);
    }
    return sum;
  }

  Context& ctx_;
  double base_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t confirmed_ = 0;
  bool off_ = false;
};

struct RunOptions {
  double speed = 1;  // 0: as fast as possible
  std::string base;  // RFC 3339 or Unix ms; "" = now - duration - 1 min
  std::string syslog;
  double settle_seconds = 2;  // when GET /api/v1/brain/status is missing
  double idle_timeout_seconds = 120;
  bool judge = false;
  std::string result_file;  // judge: a saved run output instead of the server's state
};

std::int64_t parse_base(const std::string& text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::stoll(text);
  }
  std::tm tm{};
  int ms = 0;
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) throw usage_error("--base must be Unix milliseconds or YYYY-MM-DDTHH:MM:SS[.mmm]Z");
  if (*end == '.') {
    ++end;
    int digits = 0;
    while (*end >= '0' && *end <= '9') {
      if (digits++ < 3) ms = ms * 10 + (*end - '0');
      ++end;
    }
    while (digits++ < 3) ms *= 10;
  }
  if (std::string_view(end) != "Z") throw usage_error("--base must be UTC (end with Z)");
  return static_cast<std::int64_t>(timegm(&tm)) * 1000 + ms;
}

// Sum of each numeric member of the KPI push answers (accepted, duplicate, late, ...).
void add_counts(json& total, const json& answer) {
  if (!answer.is_object()) return;
  for (const auto& [k, v] : answer.items()) {
    if (v.is_number_integer()) total[k] = total.value(k, std::int64_t{0}) + v.get<std::int64_t>();
  }
}

// Brain status fields that must be zero when the queue is empty, and the counters that must stop moving.
bool is_queue_key(const std::string& k) {
  static const std::array<const char*, 8> keys = {"queue",      "queued",  "queue_depth", "queue_length",
                                                  "queue_size", "pending", "backlog",     "depth"};
  return std::any_of(keys.begin(), keys.end(), [&](const char* q) { return k == q; });
}

bool is_counter_key(const std::string& k) {
  static const std::array<const char*, 10> parts = {"processed", "received", "events",  "samples",  "lines",
                                                    "matches",   "faults",   "dropped", "accepted", "alarms"};
  return std::any_of(parts.begin(), parts.end(),
                     [&](const char* p) { return k.find(p) != std::string::npos; });
}

// Walks the status: false when a queue field is non-zero or "idle" is false; collects the counters.
bool status_quiet(const json& j, const std::string& key, json& counters) {
  bool quiet = true;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) quiet = status_quiet(v, k, counters) && quiet;
  } else if (j.is_array()) {
    for (const auto& v : j) quiet = status_quiet(v, key, counters) && quiet;
  } else if (j.is_number()) {
    if (is_queue_key(key) && j.get<double>() != 0) quiet = false;
    if (is_counter_key(key) || is_queue_key(key)) counters.push_back({key, j});
  } else if (j.is_boolean() && key == "idle") {
    quiet = j.get<bool>();
  }
  return quiet;
}

// Waits until the brain has consumed everything sent: its queue empty and its counters unchanged over two
// polls 200 ms apart; without the status route, a fixed settle time.
json wait_for_brain(Context& ctx, const RunOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  const auto deadline =
      started + std::chrono::milliseconds(static_cast<std::int64_t>(o.idle_timeout_seconds * 1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // lines still in the receiver's socket
  json previous;
  json last_status = nullptr;
  for (;;) {
    auto res = send_request(ctx, "GET", "/api/v1/brain/status");
    if (res.status == 404) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(static_cast<std::int64_t>(o.settle_seconds * 1000)));
      return {{"idle", nullptr},
              {"method", "settle"},
              {"waited_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count()}};
    }
    if (res.status < 200 || res.status > 299) throw server_error(ctx, res);
    last_status = parse_json_answer(res, "GET /api/v1/brain/status");
    json counters = json::array();
    const bool quiet = status_quiet(last_status, "", counters);
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
            .count();
    if (quiet && counters == previous) {
      return {{"idle", true}, {"method", "status"}, {"waited_ms", waited}, {"status", last_status}};
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return {{"idle", false}, {"method", "status"}, {"waited_ms", waited}, {"status", last_status}};
    }
    previous = quiet ? counters : json();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Every incident (state=all), following the pages.
json fetch_incidents(Context& ctx) {
  json items = json::array();
  for (std::int64_t offset = 0;;) {
    auto page =
        call_json(ctx, "GET", "/api/v1/incidents?state=all&limit=500&offset=" + std::to_string(offset));
    if (!page.is_object() || !page.contains("items") || !page["items"].is_array()) {
      throw failure("GET /api/v1/incidents: the answer has no \"items\" list");
    }
    for (auto& i : page["items"]) items.push_back(std::move(i));
    const auto got = page["items"].size();
    offset += static_cast<std::int64_t>(got);
    if (got == 0 || offset >= page.value("total", std::int64_t{0})) break;
  }
  return items;
}

// The number of alarms (every state); nullopt when the alarm route is missing.
std::optional<std::int64_t> fetch_alarm_total(Context& ctx) {
  for (const char* target : {"/api/v1/alarms?state=all&limit=1", "/api/v1/alarms?limit=1"}) {
    auto res = send_request(ctx, "GET", target);
    if (res.status == 404) return std::nullopt;
    if (res.status == 400) continue;  // no "all" filter: fall back to the default listing
    if (res.status < 200 || res.status > 299) throw server_error(ctx, res);
    auto page = parse_json_answer(res, "GET /api/v1/alarms");
    if (page.is_object() && page.contains("total") && page["total"].is_number_integer()) {
      return page["total"].get<std::int64_t>();
    }
    throw failure("GET /api/v1/alarms: the answer has no integer \"total\"");
  }
  return std::nullopt;
}

json rewrite_report_times(json report, std::int64_t base_ms) {
  if (report.is_object()) {
    for (auto& [k, v] : report.items()) {
      if (k == "ts_ms" && v.is_number_integer()) {
        v = base_ms + v.get<std::int64_t>();
      } else {
        v = rewrite_report_times(std::move(v), base_ms);
      }
    }
  } else if (report.is_array()) {
    for (auto& v : report) v = rewrite_report_times(std::move(v), base_ms);
  }
  return report;
}

void set_up(Context& ctx, const Scenario& s) {
  switch (s.topology_source) {
    case TopologySource::none:
      break;
    case TopologySource::import_json:
      request_ok(ctx, "PUT", "/api/v1/topology", s.topology_body);
      break;
    case TopologySource::import_yaml:
      request_ok(ctx, "PUT", "/api/v1/topology", s.topology_body, "application/yaml");
      break;
    case TopologySource::generate:
      request_ok(ctx, "POST", "/api/v1/topology/generate", s.topology_body);
      break;
  }
  // A schedule needs an address for every NPU it places: each job's hosts are registered with the NPUs the
  // job uses (npus_per_host, lowest indices; 1 when 0) and given ports in one subnet, once per host.
  std::string subnet_id;
  std::set<std::string> addressed;
  int mac = 0;
  std::vector<const json*> bodies;
  for (const auto& job : s.jobs) bodies.push_back(&job);
  for (const auto& event : s.job_events) {
    if (event.release.empty()) bodies.push_back(&event.schedule);
  }
  for (const json* body : bodies) {
    const json& job = *body;
    const auto npus = std::max<std::int64_t>(1, job.value("npus_per_host", std::int64_t{0}));
    if (!job.contains("hosts") || !job["hosts"].is_array()) continue;  // the schedule route names the error
    for (const auto& h : job["hosts"]) {
      if (!h.is_string() || addressed.contains(h.get<std::string>())) continue;
      const auto host = h.get<std::string>();
      addressed.insert(host);
      if (subnet_id.empty()) {
        auto subnet = call_json(ctx, "POST", "/api/v1/subnets",
                                json{{"name", "scenario-rdma"}, {"cidr", "10.0.0.0/8"}}.dump());
        subnet_id = subnet.value("id", std::string());
      }
      json list = json::array();
      for (std::int64_t i = 0; i < npus; ++i, ++mac) {
        char text[24];
        std::snprintf(text, sizeof text, "02:5c:%02x:%02x:%02x:%02x", (mac >> 24) & 0xff, (mac >> 16) & 0xff,
                      (mac >> 8) & 0xff, mac & 0xff);
        list.push_back({{"index", i}, {"netdev", "eth" + std::to_string(i)}, {"mac", text}});
      }
      request_ok(ctx, "PUT", "/api/v1/hosts/" + host, json{{"npus", list}}.dump());
      for (std::int64_t i = 0; i < npus; ++i) {
        request_ok(ctx, "POST", "/api/v1/ports",
                   json{{"subnet_id", subnet_id}, {"host", host}, {"npu", i}}.dump());
      }
    }
  }
  for (const auto& job : s.jobs) request_ok(ctx, "POST", "/api/v1/schedule", job.dump());
}

json replay(Context& ctx, const Scenario& s, const RunOptions& o) {
  if (!s.syslog.empty() && o.syslog.empty()) {
    throw usage_error(s.name +
                      " has syslog lines: give --syslog tcp://HOST:PORT (the aggregator's "
                      "syslog.tcp_listen) or udp://HOST:PORT");
  }
  const std::int64_t base_ms =
      o.base.empty() ? (hsns::unix_now_ms() / 1000) * 1000 - s.duration_ms - 60'000 : parse_base(o.base);
  set_up(ctx, s);
  std::map<std::string, std::unique_ptr<SyslogSender>> senders;  // by source address ("" = the default)
  auto sender = [&](const std::string& source) -> SyslogSender& {
    auto& slot = senders[source];
    if (!slot) slot = std::make_unique<SyslogSender>(o.syslog, source);
    return *slot;
  };

  // One timeline over the streams: (offset, kind, index), stable so equal offsets keep kpis, syslog,
  // reports order.
  struct Item {
    std::int64_t at_ms;
    int kind;
    std::size_t index;
  };
  std::vector<Item> items;
  items.reserve(s.kpis.size() + s.syslog.size() + s.reports.size() + s.job_events.size());
  for (std::size_t i = 0; i < s.kpis.size(); ++i) items.push_back({s.kpis[i].at_ms, 0, i});
  for (std::size_t i = 0; i < s.syslog.size(); ++i) items.push_back({s.syslog[i].at_ms, 1, i});
  for (std::size_t i = 0; i < s.reports.size(); ++i) items.push_back({s.reports[i].at_ms, 2, i});
  for (std::size_t i = 0; i < s.job_events.size(); ++i) items.push_back({s.job_events[i].at_ms, 3, i});
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.at_ms < b.at_ms; });

  json kpi_counts = json::object();
  std::size_t batches = 0;
  json batch = json::array();
  SyslogBarrier syslog_barrier(ctx);
  auto flush = [&] {
    if (batch.empty()) return;
    syslog_barrier.wait();
    auto res = request_ok(ctx, "POST", "/api/v1/kpis", json{{"samples", std::move(batch)}}.dump());
    add_counts(kpi_counts, parse_json_answer(res, "POST /api/v1/kpis"));
    ++batches;
    batch = json::array();
  };
  const auto start = std::chrono::steady_clock::now();
  for (const auto& item : items) {
    if (o.speed > 0) {
      const auto due = start + std::chrono::microseconds(static_cast<std::int64_t>(
                                   static_cast<double>(item.at_ms) * 1000.0 / o.speed));
      if (due > std::chrono::steady_clock::now()) {
        flush();
        std::this_thread::sleep_until(due);
      }
    }
    if (item.kind == 0) {
      const auto& k = s.kpis[item.index];
      batch.push_back(
          {{"entity", k.entity}, {"metric", k.metric}, {"ts", base_ms + k.ts_ms}, {"value", k.value}});
      if (batch.size() >= kKpiBatch) flush();
    } else if (item.kind == 1) {
      flush();
      const auto& l = s.syslog[item.index];
      const auto rendered = render_syslog_line(l.line, base_ms + l.at_ms);
      try {
        sender(l.source).send(rendered);
      } catch (const CliError&) {
        // The receiver closes a connection idle longer than its timeout (a device that spoke long ago):
        // connect again, once.
        senders.erase(l.source);
        sender(l.source).send(rendered);
      }
      syslog_barrier.sent();
    } else if (item.kind == 3) {
      // The brain dates a job's start and end by its event clock: let it catch up with what was sent.
      flush();
      syslog_barrier.wait();
      wait_for_brain(ctx, o);
      const auto& j = s.job_events[item.index];
      if (j.release.empty()) {
        request_ok(ctx, "POST", "/api/v1/schedule", j.schedule.dump());
      } else {
        request_ok(ctx, "DELETE", "/api/v1/jobs/" + j.release);
      }
    } else {
      flush();
      syslog_barrier.wait();
      const auto& r = s.reports[item.index];
      request_ok(ctx, "POST", "/api/v1/agents/" + r.host + "/reports",
                 rewrite_report_times(r.report, base_ms).dump());
    }
  }
  flush();
  syslog_barrier.wait();
  const auto replay_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();

  json out = {{"scenario", s.name},
              {"class", s.expect.scenario_class},
              {"base_ms", base_ms},
              {"base", format_time_ms(base_ms)},
              {"duration_ms", s.duration_ms},
              {"speed", o.speed},
              {"replay_ms", replay_ms},
              {"sent",
               {{"jobs", s.jobs.size()},
                {"job_events", s.job_events.size()},
                {"kpi_samples", s.kpis.size()},
                {"kpi_batches", batches},
                {"syslog_lines", s.syslog.size()},
                {"reports", s.reports.size()}}},
              {"kpi_result", kpi_counts}};
  out["brain"] = wait_for_brain(ctx, o);
  return out;
}

// Adds incidents and the alarm count to `out`; with `judge`, the verdict.
void collect(Context& ctx, const Scenario& s, json& out, bool with_verdict) {
  auto res = send_request(ctx, "GET", "/api/v1/incidents?state=all&limit=1");
  if (res.status == 404) {
    out["incidents"] = nullptr;
    out["error"] = "GET /api/v1/incidents: 404 (this aggregator has no incident API)";
    return;
  }
  out["incidents"] = fetch_incidents(ctx);
  auto alarms = fetch_alarm_total(ctx);
  out["alarms_total"] = alarms ? json(*alarms) : json(nullptr);
  if (with_verdict) out["verdict"] = judge(s.expect, out["incidents"], alarms);
}

// 0 when the run fetched incidents (and, judged, passed); 1 otherwise. The JSON is printed either way.
void finish(Context& ctx, const json& out) {
  print_json(ctx.out, out);
  if (out.contains("error")) throw failure(out["error"].get<std::string>());
  if (out.contains("verdict") && !out["verdict"].value("pass", false)) {
    throw failure(out.value("scenario", std::string()) + ": the verdict failed (see \"verdict\")");
  }
}

void run_command(Context& ctx, const std::string& dir, const RunOptions& o) {
  if (!(o.speed >= 0) || !std::isfinite(o.speed)) throw usage_error("--speed must be a finite number >= 0");
  auto s = load_scenario(dir);
  auto out = replay(ctx, s, o);
  collect(ctx, s, out, o.judge);
  finish(ctx, out);
}

void judge_command(Context& ctx, const std::string& dir, const RunOptions& o) {
  auto s = load_scenario(dir);
  json out;
  if (!o.result_file.empty()) {
    out = json::parse(read_text_file(o.result_file), nullptr, false);
    if (out.is_discarded() || !out.is_object() || !out.contains("incidents") ||
        !out["incidents"].is_array()) {
      throw usage_error(o.result_file +
                        ": not the JSON output of 'hsnsctl scenario run' (no \"incidents\" list)");
    }
    std::optional<std::int64_t> alarms;
    if (out.contains("alarms_total") && out["alarms_total"].is_number_integer()) {
      alarms = out["alarms_total"].get<std::int64_t>();
    }
    out["verdict"] = judge(s.expect, out["incidents"], alarms);
  } else {
    out = {{"scenario", s.name}, {"class", s.expect.scenario_class}};
    collect(ctx, s, out, true);
  }
  finish(ctx, out);
}

}  // namespace

Scenario load_scenario(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw usage_error(dir.string() + " is not a scenario directory");
  Scenario s;
  s.dir = dir;
  s.name = fs::weakly_canonical(dir, ec).filename().string();
  if (s.name.empty()) s.name = dir.filename().string();

  const std::array<std::pair<const char*, TopologySource>, 3> topologies = {
      std::pair{"topology.json", TopologySource::import_json},
      std::pair{"topology.yaml", TopologySource::import_yaml},
      std::pair{"generate.json", TopologySource::generate}};
  for (const auto& [file, source] : topologies) {
    if (!fs::exists(dir / file)) continue;
    if (s.topology_source != TopologySource::none) {
      throw usage_error(s.name + ": give one of topology.json, topology.yaml and generate.json");
    }
    s.topology_source = source;
    s.topology_body = read_text_file((dir / file).string());
    if (source != TopologySource::import_yaml &&
        json::parse(s.topology_body, nullptr, false).is_discarded()) {
      throw usage_error(std::string(file) + ": not JSON");
    }
  }
  if (fs::exists(dir / "jobs.json")) {
    auto jobs = json::parse(read_text_file((dir / "jobs.json").string()), nullptr, false);
    if (jobs.is_discarded() || !jobs.is_array())
      throw usage_error("jobs.json: must be a JSON array of schedule requests");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (!jobs[i].is_object()) throw usage_error("jobs.json: [" + std::to_string(i) + "] must be an object");
      s.jobs.push_back(jobs[i]);
    }
  }
  if (fs::exists(dir / "jobs.jsonl")) {
    for_each_json_line(dir / "jobs.jsonl", [&](const json& j, const std::string& where) {
      only_keys(j, {"at_ms", "schedule", "release"}, where);
      ScenarioJobEvent event;
      event.at_ms = offset_field(j, "at_ms", where, true);
      if (j.contains("schedule") == j.contains("release"))
        throw usage_error(where + ": give one of \"schedule\" and \"release\"");
      if (j.contains("schedule")) {
        if (!j["schedule"].is_object()) throw usage_error(where + ": \"schedule\" must be an object");
        event.schedule = j["schedule"];
      } else {
        event.release = string_field(j, "release", where);
      }
      s.job_events.push_back(std::move(event));
    });
  }
  if (fs::exists(dir / "kpis.jsonl")) {
    for_each_json_line(dir / "kpis.jsonl", [&](const json& j, const std::string& where) {
      only_keys(j, {"at_ms", "ts_ms", "entity", "metric", "value"}, where);
      ScenarioKpi k;
      k.at_ms = offset_field(j, "at_ms", where, true);
      k.ts_ms = offset_field(j, "ts_ms", where, false);
      if (k.ts_ms < 0) k.ts_ms = k.at_ms;
      k.entity = string_field(j, "entity", where);
      k.metric = string_field(j, "metric", where);
      auto v = j.find("value");
      if (v == j.end() || !v->is_number() || !std::isfinite(v->get<double>())) {
        throw usage_error(where + ": \"value\" must be a finite number");
      }
      k.value = v->get<double>();
      s.kpis.push_back(std::move(k));
    });
  }
  if (fs::exists(dir / "syslog.jsonl")) {
    for_each_json_line(dir / "syslog.jsonl", [&](const json& j, const std::string& where) {
      only_keys(j, {"at_ms", "line", "source"}, where);
      ScenarioSyslog line{offset_field(j, "at_ms", where, true), string_field(j, "line", where), {}};
      if (j.contains("source")) line.source = loopback_source(string_field(j, "source", where), where);
      s.syslog.push_back(std::move(line));
    });
  }
  if (fs::exists(dir / "reports.jsonl")) {
    for_each_json_line(dir / "reports.jsonl", [&](const json& j, const std::string& where) {
      only_keys(j, {"at_ms", "host", "report"}, where);
      auto r = j.find("report");
      if (r == j.end() || !r->is_object()) throw usage_error(where + ": \"report\" must be an object");
      s.reports.push_back({offset_field(j, "at_ms", where, true), string_field(j, "host", where), *r});
    });
  }
  if (!fs::exists(dir / "expect.yaml")) throw usage_error(s.name + ": expect.yaml is missing");
  s.expect = parse_expectation(read_text_file((dir / "expect.yaml").string()), "expect.yaml");
  sort_by_offset(s.kpis);
  sort_by_offset(s.syslog);
  sort_by_offset(s.reports);
  sort_by_offset(s.job_events);
  for (const auto& k : s.kpis) s.duration_ms = std::max({s.duration_ms, k.at_ms, k.ts_ms});
  if (!s.syslog.empty()) s.duration_ms = std::max(s.duration_ms, s.syslog.back().at_ms);
  if (!s.reports.empty()) s.duration_ms = std::max(s.duration_ms, s.reports.back().at_ms);
  if (!s.job_events.empty()) s.duration_ms = std::max(s.duration_ms, s.job_events.back().at_ms);
  return s;
}

void add_scenario_commands(CLI::App& app, std::function<void(Context&)>& action) {
  auto options = std::make_shared<RunOptions>();
  auto dir = std::make_shared<std::string>();
  auto* group = app.add_subcommand("scenario", "Replay and judge brain scenarios (docs/scenarios.md)");
  group->require_subcommand(1);

  auto* run = group->add_subcommand(
      "run", "Replay a scenario directory against the aggregator and print its incidents as JSON");
  run->add_option("DIR", *dir, "Scenario directory")->required();
  run->add_option("--speed", options->speed, "Replay speed: N times real time; 0 = as fast as possible")
      ->capture_default_str();
  run->add_option("--base", options->base,
                  "Event time of offset 0: Unix ms or RFC 3339 UTC (default: now - duration - 1 min)");
  run->add_option(
      "--syslog", options->syslog,
      "The aggregator's syslog receiver, tcp://HOST:PORT or udp://HOST:PORT (needed for syslog lines)");
  run->add_option("--settle", options->settle_seconds,
                  "Seconds to wait after the replay when the aggregator has no GET /api/v1/brain/status")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  run->add_option("--idle-timeout", options->idle_timeout_seconds,
                  "At most this many seconds waiting for the brain")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  run->add_flag("--judge", options->judge,
                "Also judge the incidents against expect.yaml (exit 1 if it fails)");
  run->callback(
      [&action, options, dir] { action = [options, dir](Context& c) { run_command(c, *dir, *options); }; });

  auto* judge_cmd = group->add_subcommand(
      "judge", "Compare the aggregator's incidents (or a saved run output) with the scenario's expect.yaml");
  judge_cmd->add_option("DIR", *dir, "Scenario directory")->required();
  judge_cmd->add_option("--result", options->result_file,
                        "The JSON printed by 'scenario run' (no server needed)");
  judge_cmd->callback(
      [&action, options, dir] { action = [options, dir](Context& c) { judge_command(c, *dir, *options); }; });
}

}  // namespace hsnsctl
