#include "ingest/snmp_config.h"

#include <boost/asio/ip/address.hpp>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "yaml_fields.h"

namespace hsns::ingest {
namespace {

using yaml_fields::read_text;

// Printable ASCII without space or '/': the name starts every entity id ("<name>/<ifName>").
bool is_switch_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (const char c : name) {
    if (c <= ' ' || c > '~' || c == '/') return false;
  }
  return true;
}

SnmpAuthProtocol read_auth_protocol(const std::string& text, const std::string& where) {
  if (text == "SHA" || text == "SHA-1") return SnmpAuthProtocol::sha;
  if (text == "SHA-256") return SnmpAuthProtocol::sha256;
  if (text == "SHA-512") return SnmpAuthProtocol::sha512;
  throw std::runtime_error(where + ": '" + text + "' is not one of SHA, SHA-256, SHA-512");
}

std::string read_password(const YAML::Node& n, const std::string& where) {
  auto text = read_text(n, where);
  if (text.size() < 8) throw std::runtime_error(where + ": must be at least 8 characters (RFC 3414)");
  return text;
}

SnmpSwitchConfig read_switch(const YAML::Node& node, const std::string& at) {
  if (!node.IsMap()) throw std::runtime_error(at + ": must be a map");
  SnmpSwitchConfig s;
  bool has_name = false;
  bool has_address = false;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string where = std::string(at).append(".").append(key);
    if (key == "name") {
      s.name = read_text(v, where);
      if (!is_switch_name(s.name)) {
        throw std::runtime_error(where + ": '" + s.name +
                                 "' is not 1..128 printable characters without space or '/'");
      }
      has_name = true;
    } else if (key == "address") {
      s.address = read_text(v, where);
      boost::system::error_code ec;
      (void)boost::asio::ip::make_address(s.address, ec);
      if (ec) throw std::runtime_error(where + ": '" + s.address + "' is not an IP address");
      has_address = true;
    } else if (key == "port") {
      s.port = static_cast<std::uint16_t>(yaml_fields::read_integer(v, where, 1, 65535));
    } else if (key == "version") {
      const auto text = read_text(v, where);
      if (text == "2c") {
        s.version = SnmpVersion::v2c;
      } else if (text == "3") {
        s.version = SnmpVersion::v3;
      } else {
        throw std::runtime_error(std::string(where).append(": '").append(text).append("' is not 2c or 3"));
      }
    } else if (key == "community") {
      s.credentials.community = read_text(v, where);
    } else if (key == "credentials_file") {
      s.credentials_file = read_text(v, where);
    } else if (key == "interval_ms") {
      s.interval = std::chrono::milliseconds(yaml_fields::read_integer(v, where, 100, 86'400'000));
    } else if (key == "timeout_ms") {
      s.timeout = std::chrono::milliseconds(yaml_fields::read_integer(v, where, 10, 60'000));
    } else if (key == "retries") {
      s.retries = static_cast<int>(yaml_fields::read_integer(v, where, 0, 10));
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
  if (!has_name) throw std::runtime_error(at + ".name: is required");
  if (!has_address) throw std::runtime_error(at + ".address: is required");
  if (!s.credentials_file.empty()) {
    if (!s.credentials.community.empty()) {
      throw std::runtime_error(at + ".community: give the community inline or in credentials_file, not both");
    }
    s.credentials = read_snmp_credentials(s.credentials_file, at + ".credentials_file");
  }
  if (s.version == SnmpVersion::v2c && s.credentials.community.empty()) {
    throw std::runtime_error(at + ".community: SNMPv2c needs a community (inline or in credentials_file)");
  }
  if (s.version == SnmpVersion::v3 && s.credentials.user.empty()) {
    throw std::runtime_error(at +
                             ".credentials_file: SNMPv3 needs a credentials file with user, "
                             "auth_password and priv_password");
  }
  // Each request and its retries must end before the next poll is due (timeouts double per retry).
  const auto worst = s.timeout * ((1LL << (s.retries + 1)) - 1);
  if (worst > s.interval) {
    throw std::runtime_error(at + ".timeout_ms: with " + std::to_string(s.retries) +
                             " retries a request may take " + std::to_string(worst.count()) +
                             " ms, longer than interval_ms (" + std::to_string(s.interval.count()) + ")");
  }
  return s;
}

}  // namespace

SnmpCredentials read_snmp_credentials(const std::string& path, const std::string& where) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(where + ": cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(where + ": '" + path + "' is not YAML: " + e.what());
  }
  if (!root.IsMap()) throw std::runtime_error(where + ": '" + path + "' must be a YAML map");
  SnmpCredentials c;
  bool has_auth = false;
  bool has_priv = false;
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string field = std::string(where).append(" (").append(path).append(").").append(key);
    if (key == "community") {
      c.community = read_text(v, field);
      if (c.community.empty()) throw std::runtime_error(field + ": must not be empty");
    } else if (key == "user") {
      c.user = read_text(v, field);
      if (c.user.empty() || c.user.size() > 32)
        throw std::runtime_error(field + ": must be 1..32 characters");
    } else if (key == "auth_protocol") {
      c.auth_protocol = read_auth_protocol(read_text(v, field), field);
    } else if (key == "auth_password") {
      c.auth_password = read_password(v, field);
      has_auth = true;
    } else if (key == "priv_protocol") {
      const auto proto = read_text(v, field);
      if (proto != "AES" && proto != "AES-128") {
        throw std::runtime_error(std::string(field).append(": '").append(proto).append("' is not AES"));
      }
      c.priv_protocol = SnmpPrivProtocol::aes;
    } else if (key == "priv_password") {
      c.priv_password = read_password(v, field);
      has_priv = true;
    } else {
      throw std::runtime_error("unknown key '" + field + "'");
    }
  }
  if (!c.user.empty() && (!has_auth || !has_priv)) {
    throw std::runtime_error(where + " (" + path + ")." + (has_auth ? "priv_password" : "auth_password") +
                             ": SNMPv3 polls with authPriv only, both passwords are required");
  }
  if (c.user.empty() && c.community.empty()) {
    throw std::runtime_error(where + " (" + path + "): holds neither community nor user");
  }
  return c;
}

void apply_snmp_yaml(const YAML::Node& node, SnmpConfig& c) {
  if (!node.IsMap()) throw std::runtime_error("snmp: must be a map");
  std::optional<YAML::Node> list;  // read after the loop
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string where = "snmp." + key;
    if (key == "max_switches") {
      c.max_switches = yaml_fields::read_size(v, where, 1, 4096);
    } else if (key == "max_interfaces") {
      c.max_interfaces = yaml_fields::read_size(v, where, 1, 65'536);
    } else if (key == "max_repetitions") {
      c.bulk_rows = static_cast<int>(yaml_fields::read_integer(v, where, 1, 100));
    } else if (key == "switches") {
      if (!v.IsSequence()) throw std::runtime_error(where + ": must be a list of switches");
      list.emplace(v);
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
  if (!list) return;
  const YAML::Node& switches = *list;
  // After the loop: max_switches may come after the list.
  if (switches.size() > c.max_switches) {
    throw std::runtime_error("snmp.switches: " + std::to_string(switches.size()) + " switches, more than " +
                             "snmp.max_switches (" + std::to_string(c.max_switches) + ")");
  }
  std::vector<SnmpSwitchConfig> read;
  std::set<std::string> names;
  for (std::size_t i = 0; i < switches.size(); ++i) {
    const std::string at = "snmp.switches[" + std::to_string(i) + "]";
    auto s = read_switch(switches[i], at);
    if (!names.insert(s.name).second) {
      throw std::runtime_error(at + ".name: '" + s.name + "' is configured twice");
    }
    read.push_back(std::move(s));
  }
  c.switches = std::move(read);
}

}  // namespace hsns::ingest
