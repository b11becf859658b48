#include "fuzz_aggregator.h"

#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "api/agents/routes.h"
#include "api/alarms/routes.h"
#include "api/network/routes.h"
#include "api/scheduling/routes.h"
#include "api/topology/routes.h"
#include "hsns/time.h"
#include "metrics.h"
#include "services/topology_cache.h"
#include "store/factory.h"

namespace hsns::fuzz {
namespace {

namespace fs = std::filesystem;
namespace net = boost::asio;

std::string& temp_dir() {
  static std::string dir;
  return dir;
}

void remove_temp_dir() {
  std::error_code ignored;
  if (!temp_dir().empty()) fs::remove_all(temp_dir(), ignored);
}

std::string make_temp_dir() {
  const bool shm = ::access("/dev/shm", W_OK) == 0;
  std::string pattern = std::string(shm ? "/dev/shm" : "/tmp") + "/hsns-fuzz-XXXXXX";
  require(::mkdtemp(pattern.data()) != nullptr);
  temp_dir() = pattern;
  std::atexit(remove_temp_dir);
  return pattern;
}

}  // namespace

http::ServerLimits fuzz_server_limits() {
  http::ServerLimits limits;
  limits.idle_timeout = std::chrono::milliseconds(1000);
  limits.read_timeout = std::chrono::milliseconds(1000);
  return limits;
}

struct FuzzAggregator::State {
  std::unique_ptr<store::Stores> stores;
  Metrics metrics;
  std::optional<AggregatorService> service;
  std::optional<alarms::AlarmService> alarms;  // the alarm routes over an empty engine (no faults come in)
  net::io_context ioc{1};
  std::optional<http::HttpServer> server;
  std::optional<std::thread> io;
};

FuzzAggregator::FuzzAggregator() : state_(new State) {
  auto stores = store::open_stores({make_temp_dir() + "/aggregator.db", 2});
  require(stores.has_value());
  state_->stores = std::move(*stores);
  auto& backend = *state_->stores;
  state_->service.emplace(state_->metrics, std::nullopt, [] { return std::optional<std::string>(); });
  auto& router = state_->service->router();
  network::register_network_routes(router, backend.network());
  network::register_agent_routes(router, backend.network(), backend.agents());
  auto topology = std::make_shared<services::TopologyCache>(backend.topology());
  topology_api::register_topology_routes(router, topology);
  scheduling_api::register_scheduling_routes(router, topology, backend.jobs(), backend.network());
  state_->alarms.emplace(backend.alarms(), state_->metrics.registry());
  require(state_->alarms->load(unix_now_ms()).has_value());
  alarms_api::register_alarm_routes(router, *state_->alarms, state_->service->hub());
  state_->service->set_ready(true);
}

FuzzAggregator& FuzzAggregator::instance() {
  static FuzzAggregator* aggregator = new FuzzAggregator;
  return *aggregator;
}

AggregatorService& FuzzAggregator::service() {
  return *state_->service;
}

http::Response FuzzAggregator::handle(http::Request request) {
  auto promise = std::make_shared<std::promise<http::Response>>();
  auto answer = promise->get_future();
  state_->service->handle(std::move(request),
                          [promise](http::Response res) { promise->set_value(std::move(res)); });
  require(answer.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  return answer.get();
}

http::HttpServer& FuzzAggregator::server() {
  if (!state_->server) {
    auto* service = &*state_->service;
    state_->server.emplace(state_->ioc, nullptr, fuzz_server_limits(),
                           [service](http::Request&& req, const http::Peer& peer, http::Respond respond) {
                             service->handle(std::move(req), peer, std::move(respond));
                           });
    state_->server->set_upgrade_handler(
        [service](const http::Request& req, const http::Peer& peer) { return service->upgrade(req, peer); });
    state_->server->listen({net::ip::make_address("127.0.0.1"), 0});
    state_->server->start();
    state_->io.emplace([ioc = &state_->ioc] {
      auto work = net::make_work_guard(*ioc);
      ioc->run();
    });
  }
  return *state_->server;
}

std::uint16_t FuzzAggregator::port() {
  return server().local_endpoint().port();
}

void check_response(unsigned status, std::string_view type, std::string_view body, bool head) {
  require(status >= 100 && status <= 599);
  require(status < 500 || status == 503 || status == 501);
  if (head) return;
  if (type == "application/problem+json") {
    const auto doc = nlohmann::json::parse(body, nullptr, false);
    require(doc.is_object());
    require(doc.contains("status") && doc["status"] == status);
    require(doc.contains("title") && doc["title"].is_string());
  } else if (status >= 200 && status < 300 && type == "application/json") {
    require(!nlohmann::json::parse(body, nullptr, false).is_discarded());
  }
}

void check_response(const http::Response& response, bool head) {
  check_response(response.result_int(), response[http::bhttp::field::content_type], response.body().view(),
                 head);
}

void check_response(const http::bhttp::response<http::bhttp::string_body>& response, bool head) {
  check_response(response.result_int(), response[http::bhttp::field::content_type], response.body(), head);
}

}  // namespace hsns::fuzz
