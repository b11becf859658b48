#include "support/websocket_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

namespace hsns::testing {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace websocket = beast::websocket;

struct WebSocketTestClient::Impl {
  net::io_context ioc;
  websocket::stream<beast::tcp_stream> ws{ioc};
};

WebSocketTestClient::WebSocketTestClient() : impl_(std::make_unique<Impl>()) {}
WebSocketTestClient::~WebSocketTestClient() = default;

int WebSocketTestClient::open(int port, const std::string& target, const std::string& token) {
  beast::error_code ec;
  beast::get_lowest_layer(impl_->ws).socket().connect(
      {net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(port)}, ec);
  if (ec) return 0;
  impl_->ws.set_option(websocket::stream_base::decorator([token](websocket::request_type& req) {
    req.set(beast::http::field::authorization, "Bearer " + token);
  }));
  websocket::response_type response;
  impl_->ws.handshake(response, "127.0.0.1:" + std::to_string(port), target, ec);
  return static_cast<int>(response.result_int());
}

nlohmann::json WebSocketTestClient::next(std::chrono::milliseconds timeout) {
  beast::flat_buffer buffer;
  beast::error_code ec = net::error::would_block;
  beast::get_lowest_layer(impl_->ws).expires_after(timeout);
  impl_->ws.async_read(buffer, [&ec](beast::error_code e, std::size_t) { ec = e; });
  impl_->ioc.restart();
  impl_->ioc.run();
  if (ec) return nullptr;
  return nlohmann::json::parse(beast::buffers_to_string(buffer.data()), nullptr, false);
}

std::pair<int, std::string> WebSocketTestClient::close_reason() const {
  const auto& r = impl_->ws.reason();
  return {static_cast<int>(r.code), std::string(r.reason.data(), r.reason.size())};
}

nlohmann::json WebSocketTestClient::next_change(const std::string& change) {
  for (int i = 0; i < 20; ++i) {
    nlohmann::json m = next();
    if (m.is_null()) return m;
    if (m.value("change", "") == change) return m;
  }
  return nullptr;
}

}  // namespace hsns::testing
