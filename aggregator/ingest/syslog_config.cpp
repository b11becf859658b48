#include "ingest/syslog_config.h"

#include <boost/asio/ip/address.hpp>
#include <stdexcept>

#include "yaml_fields.h"

namespace hsns::ingest {
namespace {}  // namespace

tl::expected<ListenEndpoint, std::string> parse_listen_endpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return tl::unexpected("'" + text + "' is not address:port");
  std::string address = text.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(address, ec);
  if (ec) return tl::unexpected("'" + address + "' is not an IP address");
  const std::string port_text = text.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    return tl::unexpected("'" + port_text + "' is not a port (0..65535)");
  }
  const int port = std::stoi(port_text);
  if (port > 65535) return tl::unexpected("'" + port_text + "' is not a port (0..65535)");
  return ListenEndpoint{address, static_cast<std::uint16_t>(port)};
}

void apply_syslog_yaml(const YAML::Node& node, SyslogConfig& c) {
  if (!node.IsMap()) throw std::runtime_error("syslog: must be a map");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string where = "syslog." + key;
    if (key == "udp_listen" || key == "tcp_listen") {
      auto endpoint = parse_listen_endpoint(v.as<std::string>());
      if (!endpoint) throw std::runtime_error(where + ": " + endpoint.error());
      (key == "udp_listen" ? c.udp : c.tcp) = *endpoint;
    } else if (key == "max_message_bytes") {
      c.max_message_bytes = yaml_fields::read_size(v, where, 480, 65'535);  // RFC 5424: at least 480
    } else if (key == "max_connections") {
      c.max_connections = yaml_fields::read_size(v, where, 1, 100'000);
    } else if (key == "messages_per_device") {
      c.messages_per_device = yaml_fields::read_size(v, where, 1, 1'000'000);
    } else if (key == "max_devices") {
      c.max_devices = yaml_fields::read_size(v, where, 1, 1'000'000);
    } else if (key == "max_connections_per_source") {
      c.max_connections_per_source = yaml_fields::read_size(v, where, 1, 100'000);
    } else if (key == "buffer_bytes") {
      c.buffer_bytes = yaml_fields::read_size(v, where, 1 << 20, 1LL << 40);
    } else if (key == "unknown_devices") {
      c.unknown_devices = yaml_fields::read_size(v, where, 0, 1'000'000);
    } else if (key == "unknown_buffer_bytes") {
      c.unknown_buffer_bytes = yaml_fields::read_size(v, where, 0, 1LL << 40);
    } else if (key == "tcp_idle_timeout_ms") {
      c.tcp_idle_timeout_ms = yaml_fields::read_size(v, where, 1000, 86'400'000);
    } else if (key == "tcp_frame_timeout_ms") {
      c.tcp_frame_timeout_ms = yaml_fields::read_size(v, where, 100, 86'400'000);
    } else {
      throw std::runtime_error("unknown key '" + where + "'");
    }
  }
}

}  // namespace hsns::ingest
