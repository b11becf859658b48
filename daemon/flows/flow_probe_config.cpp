#include "flow_probe_config.h"

#include <yaml-cpp/yaml.h>

#include <set>

namespace hsns::daemon {

namespace {

using Result = tl::expected<FlowProbeConfig, std::string>;

tl::expected<std::int64_t, std::string> integer(const YAML::Node& n, const std::string& where,
                                                std::int64_t lo, std::int64_t hi) {
  if (!n.IsScalar()) return tl::unexpected(where + ": expected an integer");
  std::int64_t v = 0;
  try {
    v = n.as<std::int64_t>();
  } catch (const YAML::Exception&) {
    return tl::unexpected(where + ": expected an integer");
  }
  if (v < lo || v > hi)
    return tl::unexpected(where + ": must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return v;
}

tl::expected<std::string, std::string> text(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) return tl::unexpected(where + ": expected a string");
  return n.as<std::string>();
}

tl::expected<bool, std::string> boolean(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) return tl::unexpected(where + ": expected true or false");
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    return tl::unexpected(where + ": expected true or false");
  }
}

// A mapping key as text. YAML allows a mapping or a sequence as a key ("{a: 1}: x"), which names no setting.
tl::expected<std::string, std::string> key_text(const YAML::Node& key, const std::string& where) {
  if (!key.IsScalar()) return tl::unexpected(where + ": a key must be a plain name, not a mapping or list");
  return key.Scalar();
}

tl::expected<FlowProbeInterface, std::string> parse_interface(const YAML::Node& n, const std::string& where) {
  if (!n.IsMap()) return tl::unexpected(where + ": expected a mapping");
  FlowProbeInterface i;
  std::string direction = "both";
  for (const auto& kv : n) {
    const auto name = key_text(kv.first, where);
    if (!name) return tl::unexpected(name.error());
    const std::string& key = *name;
    std::string at = where;
    at += '.';
    at += key;
    if (key == "name") {
      auto v = text(kv.second, at);
      if (!v) return tl::unexpected(v.error());
      i.name = *v;
    } else if (key == "attach") {
      auto v = text(kv.second, at);
      if (!v) return tl::unexpected(v.error());
      if (*v == "tc")
        i.attach = AttachMode::tc;
      else if (*v == "xdp")
        i.attach = AttachMode::xdp;
      else
        return tl::unexpected(at + ": expected tc or xdp");
    } else if (key == "direction") {
      auto v = text(kv.second, at);
      if (!v) return tl::unexpected(v.error());
      if (*v != "ingress" && *v != "egress" && *v != "both")
        return tl::unexpected(at + ": expected ingress, egress or both");
      direction = *v;
    } else if (key == "mirror") {
      auto v = boolean(kv.second, at);
      if (!v) return tl::unexpected(v.error());
      i.mirror = *v;
    } else {
      return tl::unexpected(at + ": unknown key");
    }
  }
  if (i.name.empty() || i.name.size() >= 16)
    return tl::unexpected(where + ".name: required, 1..15 characters");
  i.ingress = direction != "egress";
  i.egress = direction != "ingress";
  if (i.attach == AttachMode::xdp && direction != "both" && direction != "ingress")
    return tl::unexpected(where + ".direction: xdp sees ingress only");
  if (i.attach == AttachMode::xdp) i.egress = false;
  if (i.mirror && !i.ingress) return tl::unexpected(where + ".mirror: mirror decapsulation is ingress only");
  if (i.mirror) i.egress = false;
  return i;
}

}  // namespace

tl::expected<FlowProbeConfig, std::string> parse_flow_probe_config(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return tl::unexpected(std::string("flow_probe: invalid YAML: ") + e.what());
  }
  if (root.IsMap() && root["flow_probe"]) root = root["flow_probe"];
  if (!root.IsMap()) return tl::unexpected(std::string("flow_probe: expected a mapping"));
  FlowProbeConfig c;
  for (const auto& kv : root) {
    const auto name = key_text(kv.first, "flow_probe");
    if (!name) return tl::unexpected(name.error());
    const std::string& key = *name;
    const std::string at = "flow_probe." + key;
    if (key == "interval_ms") {
      auto v = integer(kv.second, at, 100, 3600000);
      if (!v) return tl::unexpected(v.error());
      c.interval = std::chrono::milliseconds(*v);
    } else if (key == "table_size") {
      auto v = integer(kv.second, at, 1024, 4194304);
      if (!v) return tl::unexpected(v.error());
      c.table_size = static_cast<std::uint32_t>(*v);
    } else if (key == "ring_buffer_bytes") {
      auto v = integer(kv.second, at, 4096, 1 << 30);
      if (!v) return tl::unexpected(v.error());
      if ((*v & (*v - 1)) != 0) return tl::unexpected(at + ": must be a power of two");
      c.ring_buffer_bytes = static_cast<std::uint32_t>(*v);
    } else if (key == "pin_dir") {
      auto v = text(kv.second, at);
      if (!v) return tl::unexpected(v.error());
      if (v->rfind("/sys/fs/bpf/", 0) != 0) return tl::unexpected(at + ": must be under /sys/fs/bpf/");
      c.pin_dir = *v;
    } else if (key == "sink") {
      auto v = text(kv.second, at);
      if (!v) return tl::unexpected(v.error());
      c.sink = *v;
    } else if (key == "interfaces") {
      if (!kv.second.IsSequence()) return tl::unexpected(at + ": expected a list");
      std::set<std::string> seen;
      for (std::size_t i = 0; i < kv.second.size(); ++i) {
        auto itf = parse_interface(kv.second[i], at + "[" + std::to_string(i) + "]");
        if (!itf) return tl::unexpected(itf.error());
        if (!seen.insert(itf->name).second)
          return tl::unexpected(at + "[" + std::to_string(i) + "].name: duplicate interface " + itf->name);
        c.interfaces.push_back(*itf);
      }
    } else {
      return tl::unexpected(at + ": unknown key");
    }
  }
  return c;
}

}  // namespace hsns::daemon
