#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>

#include "topology/export.h"

namespace hsns::topology {
namespace {

// Plain when nothing can read it as anything but this string (no number, boolean or null look-alike, no
// YAML indicator); double-quoted with JSON escapes (valid YAML) otherwise.
void scalar(std::string& out, std::string_view text) {
  static constexpr std::array<std::string_view, 11> kReserved = {"true", "false", "null", "yes", "no", "on",
                                                                 "off",  "y",     "n",    "~",   ""};
  bool plain = !text.empty() && std::isalpha(static_cast<unsigned char>(text[0]));
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == '/')) plain = false;
  }
  if (plain) {
    std::string lower(text);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::find(kReserved.begin(), kReserved.end(), lower) != kReserved.end()) plain = false;
  }
  if (plain) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void number(std::string& out, double value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);  // shortest text that reads back exactly
  out.append(buf, ec == std::errc() ? end : buf);
}

void field(std::string& out, bool& first, std::string_view key) {
  out += first ? "{" : ", ";
  first = false;
  out += key;
  out += ": ";
}

void link_numbers(std::string& out, bool& first, const Link& link, std::string_view state_key) {
  field(out, first, "bandwidth_gbps");
  number(out, link.bandwidth_gbps);
  field(out, first, "latency_us");
  number(out, link.latency_us);
  if (link.state != DeviceState::kHealthy) {
    field(out, first, state_key);
    out += to_string(link.state);
  }
}

}  // namespace

// Written by hand rather than with yaml-cpp's emitter, which is some fifty times slower: a topology at the
// size limits is a 20+ MB document, and this runs on a GET.
std::string export_topology_yaml(const Topology& topology) {
  std::string out = "version: 1\n";
  if (!topology.name().empty()) {
    out += "name: ";
    scalar(out, topology.name());
    out += "\n";
  }
  out += "switches:";
  bool any = false;
  for (Tier tier : {Tier::kCore, Tier::kSpine, Tier::kLeaf}) {
    for (NodeId id : topology.switches(tier)) {
      const Node& sw = topology.node(id);
      out += "\n  - ";
      bool first = true;
      field(out, first, "name");
      scalar(out, sw.name);
      field(out, first, "tier");
      out += to_string(tier);
      if (sw.state != DeviceState::kHealthy) {
        field(out, first, "state");
        out += to_string(sw.state);
      }
      if (!sw.management_address.empty()) {
        field(out, first, "management_address");
        scalar(out, sw.management_address);
      }
      out += "}";
      any = true;
    }
  }
  out += any ? "\nhosts:" : " []\nhosts:";
  for (NodeId id : topology.hosts()) {
    const Node& host = topology.node(id);
    out += "\n  - name: ";
    scalar(out, host.name);
    if (host.state != DeviceState::kHealthy) {
      out += "\n    state: ";
      out += to_string(host.state);
    }
    out += host.npus.empty() ? "\n    npus: []" : "\n    npus:";
    for (const Npu& npu : host.npus) {
      out += "\n      - ";
      bool first = true;
      field(out, first, "index");
      out += std::to_string(npu.index);
      field(out, first, "port");
      scalar(out, npu.port);
      if (npu.state != DeviceState::kHealthy) {
        field(out, first, "state");
        out += to_string(npu.state);
      }
      if (npu.link != kNoLink) {
        const Link& link = topology.link(npu.link);
        field(out, first, "leaf");
        scalar(out, topology.node(link.upper).name);
        if (!link.upper_port.empty()) {
          field(out, first, "leaf_port");
          scalar(out, link.upper_port);
        }
        link_numbers(out, first, link, "link_state");
      }
      out += "}";
    }
  }
  if (topology.hosts().empty()) out += " []";
  out += "\nlinks:";
  any = false;
  for (const Link& link : topology.links()) {
    if (topology.node(link.lower).tier == Tier::kHost) continue;
    out += "\n  - ";
    bool first = true;
    field(out, first, "lower");
    scalar(out, topology.node(link.lower).name);
    field(out, first, "upper");
    scalar(out, topology.node(link.upper).name);
    if (!link.lower_port.empty()) {
      field(out, first, "lower_port");
      scalar(out, link.lower_port);
    }
    if (!link.upper_port.empty()) {
      field(out, first, "upper_port");
      scalar(out, link.upper_port);
    }
    link_numbers(out, first, link, "state");
    out += "}";
    any = true;
  }
  out += any ? "\n" : " []\n";
  return out;
}

nlohmann::json export_topology_document(const Topology& topology) {
  using nlohmann::json;
  // The same keys as export_topology_yaml, so both read back to the same model.
  auto numbers_and_state_of = [](json& out, const Link& link, const char* state_key) {
    out["bandwidth_gbps"] = link.bandwidth_gbps;
    out["latency_us"] = link.latency_us;
    if (link.state != DeviceState::kHealthy) out[state_key] = std::string(to_string(link.state));
  };
  auto state_of = [](json& out, DeviceState s) {
    if (s != DeviceState::kHealthy) out["state"] = std::string(to_string(s));
  };
  json doc = json::object();
  doc["version"] = 1;
  if (!topology.name().empty()) doc["name"] = topology.name();
  json switches = json::array();
  for (Tier tier : {Tier::kCore, Tier::kSpine, Tier::kLeaf}) {
    for (NodeId id : topology.switches(tier)) {
      const Node& sw = topology.node(id);
      json item = {{"name", sw.name}, {"tier", std::string(to_string(tier))}};
      state_of(item, sw.state);
      if (!sw.management_address.empty()) item["management_address"] = sw.management_address;
      switches.push_back(std::move(item));
    }
  }
  doc["switches"] = std::move(switches);
  json hosts = json::array();
  for (NodeId id : topology.hosts()) {
    const Node& host = topology.node(id);
    json item = {{"name", host.name}};
    state_of(item, host.state);
    json npus = json::array();
    for (const Npu& npu : host.npus) {
      json n = {{"index", npu.index}, {"port", npu.port}};
      state_of(n, npu.state);
      if (npu.link != kNoLink) {
        const Link& link = topology.link(npu.link);
        n["leaf"] = topology.node(link.upper).name;
        if (!link.upper_port.empty()) n["leaf_port"] = link.upper_port;
        numbers_and_state_of(n, link, "link_state");
      }
      npus.push_back(std::move(n));
    }
    item["npus"] = std::move(npus);
    hosts.push_back(std::move(item));
  }
  doc["hosts"] = std::move(hosts);
  json links = json::array();
  for (const Link& link : topology.links()) {
    if (topology.node(link.lower).tier == Tier::kHost) continue;
    json item = {{"lower", topology.node(link.lower).name}, {"upper", topology.node(link.upper).name}};
    if (!link.lower_port.empty()) item["lower_port"] = link.lower_port;
    if (!link.upper_port.empty()) item["upper_port"] = link.upper_port;
    numbers_and_state_of(item, link, "state");
    links.push_back(std::move(item));
  }
  doc["links"] = std::move(links);
  return doc;
}

}  // namespace hsns::topology
