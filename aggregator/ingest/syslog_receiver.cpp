#include "ingest/syslog_receiver.h"

#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "hsns/log.h"
#include "hsns/time.h"
#include "ingest/syslog_framing.h"

namespace hsns::ingest {

namespace net = boost::asio;
using net::ip::tcp;
using net::ip::udp;

namespace {

constexpr std::size_t kTcpReadBuffer = std::size_t{16} * 1024;

}  // namespace

IngestMetrics::IngestMetrics(prometheus::Registry& registry)
    : received_(prometheus::BuildCounter()
                    .Name("hsns_syslog_received_total")
                    .Help("Syslog messages received and handled, by transport (udp, tcp)")
                    .Register(registry)),
      parsed_(prometheus::BuildCounter()
                  .Name("hsns_syslog_parsed_total")
                  .Help("Syslog messages parsed, by format (rfc5424, rfc3164)")
                  .Register(registry)),
      malformed_(prometheus::BuildCounter()
                     .Name("hsns_syslog_malformed_total")
                     .Help("Syslog messages or TCP streams refused, by reason")
                     .Register(registry)),
      unknown_device_(prometheus::BuildCounter()
                          .Name("hsns_syslog_unknown_device_total")
                          .Help("Parsed syslog messages from a sender that is no topology device")
                          .Register(registry)
                          .Add({})),
      dropped_(prometheus::BuildCounter()
                   .Name("hsns_syslog_dropped_total")
                   .Help("Syslog messages or connections dropped at a bound, by reason")
                   .Register(registry)) {
  for (std::size_t i = 0; i < kSyslogFaultCount; ++i)
    malformed_.Add({{"reason", std::string(fault_name(static_cast<SyslogFault>(i)))}});
}

void IngestMetrics::received(std::string_view transport) {
  received_.Add({{"transport", std::string(transport)}}).Increment();
}
void IngestMetrics::parsed(SyslogFormat format) {
  parsed_.Add({{"format", std::string(to_string(format))}}).Increment();
}
void IngestMetrics::malformed(std::string_view reason) {
  malformed_.Add({{"reason", std::string(reason)}}).Increment();
}
void IngestMetrics::unknown_device() {
  unknown_device_.Increment();
}
void IngestMetrics::dropped(std::string_view reason) {
  dropped_.Add({{"reason", std::string(reason)}}).Increment();
}

std::optional<std::string> NameResolver::operator()(std::string_view hostname,
                                                    std::string_view /*source*/) const {
  if (hostname.empty()) return std::nullopt;
  std::string device;
  if (lookup_(hostname, device)) return device;
  std::string lower(hostname);
  for (auto& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (lower != hostname && lookup_(lower, device)) return device;
  const auto dot = hostname.find('.');
  if (dot != std::string_view::npos && dot > 0) {
    boost::system::error_code ec;
    (void)net::ip::make_address(std::string(hostname), ec);
    if (ec && lookup_(hostname.substr(0, dot), device)) return device;  // an IPv4 address has no labels
  }
  return std::nullopt;
}

// One TCP connection: reads into a fixed buffer, frames, ingests; closed on a framing error, on idle
// timeout, at EOF and by stop().
class SyslogReceiver::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(SyslogReceiver& owner, tcp::socket socket)
      : owner_(owner),
        socket_(std::move(socket)),
        idle_(socket_.get_executor()),
        framer_(owner.config_.max_message_bytes),
        buffer_(kTcpReadBuffer) {
    boost::system::error_code ec;
    const auto remote = socket_.remote_endpoint(ec);
    source_ = ec ? std::string() : remote.address().to_string();
  }

  void start() {
    arm_idle();
    read();
  }
  void close() {
    net::post(socket_.get_executor(), [self = shared_from_this()] {
      boost::system::error_code ec;
      self->socket_.close(ec);
      self->idle_.cancel();
    });
  }

 private:
  void arm_idle() {
    idle_.expires_after(std::chrono::milliseconds(owner_.config_.tcp_idle_timeout_ms));
    idle_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      boost::system::error_code ignored;
      self->socket_.close(ignored);
    });
  }
  void read() {
    socket_.async_read_some(net::buffer(buffer_), [self = shared_from_this()](boost::system::error_code ec,
                                                                              std::size_t n) {
      if (ec) {
        self->idle_.cancel();
        return;
      }
      self->arm_idle();
      auto ok = self->framer_.feed(std::string_view(self->buffer_.data(), n), [&](std::string_view frame) {
        self->owner_.ingest(frame, self->source_, "tcp");
      });
      if (!ok) {
        self->owner_.metrics_.malformed(frame_fault_name(ok.error()));
        HSNS_LOG(debug) << "syslog: closing TCP connection from " << self->source_ << ": "
                        << frame_fault_name(ok.error());
        boost::system::error_code ignored;
        self->socket_.close(ignored);
        self->idle_.cancel();
        return;
      }
      self->read();
    });
  }

 public:
  ~Connection() { --owner_.connections_; }

 private:
  SyslogReceiver& owner_;
  tcp::socket socket_;
  net::steady_timer idle_;
  SyslogStreamFramer framer_;
  std::vector<char> buffer_;
  std::string source_;
};

SyslogReceiver::SyslogReceiver(net::io_context& ioc, SyslogConfig config, DeviceResolver resolver,
                               IngestMetrics& metrics)
    : ioc_(ioc), config_(std::move(config)), resolver_(std::move(resolver)), metrics_(metrics) {}

SyslogReceiver::~SyslogReceiver() = default;

void SyslogReceiver::start() {
  if (config_.udp) {
    const udp::endpoint at(net::ip::make_address(config_.udp->address), config_.udp->port);
    udp_ = std::make_unique<udp::socket>(ioc_);
    udp_->open(at.protocol());
    udp_->set_option(udp::socket::reuse_address(true));
    udp_->bind(at);
    // One byte more than the limit tells a datagram that was cut from one of exactly the limit.
    datagram_.resize(config_.max_message_bytes + 1);
    receive_udp();
  }
  if (config_.tcp) {
    const tcp::endpoint at(net::ip::make_address(config_.tcp->address), config_.tcp->port);
    acceptor_ = std::make_unique<tcp::acceptor>(ioc_);
    acceptor_->open(at.protocol());
    acceptor_->set_option(tcp::acceptor::reuse_address(true));
    acceptor_->bind(at);
    acceptor_->listen();
    accept_tcp();
  }
}

void SyslogReceiver::stop() {
  boost::system::error_code ec;
  if (udp_) udp_->close(ec);
  if (acceptor_) acceptor_->close(ec);
  const std::lock_guard lock(connections_mutex_);
  for (auto& weak : open_) {
    if (auto c = weak.lock()) c->close();
  }
  open_.clear();
}

std::optional<udp::endpoint> SyslogReceiver::udp_endpoint() const {
  if (!udp_) return std::nullopt;
  return udp_->local_endpoint();
}

std::optional<tcp::endpoint> SyslogReceiver::tcp_endpoint() const {
  if (!acceptor_) return std::nullopt;
  return acceptor_->local_endpoint();
}

void SyslogReceiver::receive_udp() {
  udp_->async_receive_from(
      net::buffer(datagram_), sender_, [this](boost::system::error_code ec, std::size_t n) {
        if (ec == net::error::operation_aborted || !udp_->is_open()) return;
        if (!ec) ingest(std::string_view(datagram_.data(), n), sender_.address().to_string(), "udp");
        receive_udp();
      });
}

void SyslogReceiver::accept_tcp() {
  acceptor_->async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
    if (!ec) {
      if (connections_.load() >= config_.max_connections) {
        metrics_.dropped("connection_limit");
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        ++connections_;
        auto connection = std::make_shared<Connection>(*this, std::move(socket));
        {
          const std::lock_guard lock(connections_mutex_);
          std::erase_if(open_, [](const std::weak_ptr<Connection>& w) { return w.expired(); });
          open_.push_back(connection);
        }
        connection->start();
      }
    }
    accept_tcp();
  });
}

void SyslogReceiver::ingest(std::string_view payload, std::string_view source, std::string_view transport) {
  // Counted once handled (refused, or parsed and handed to the subscribers): a sender that reads the counter
  // knows that its lines have reached the brain (hsnsctl scenario run orders its streams so).
  const SyslogContext context{unix_now_ms(), source, SyslogLimits{.max_line = config_.max_message_bytes}};
  auto parsed = parse_syslog(payload, context);
  if (!parsed) {
    metrics_.malformed(fault_name(parsed.error().fault));
    HSNS_LOG(debug) << "syslog: from " << source << ": " << parsed.error().detail;
    metrics_.received(transport);
    return;
  }
  metrics_.parsed(parsed->format);
  IngestedLog log;
  log.received_ms = context.receive_time_ms;
  if (auto device = resolver_ ? resolver_(parsed->hostname, source) : std::nullopt) {
    log.device = std::move(*device);
    log.known_device = true;
  } else {
    log.device = "unknown:" + (parsed->hostname.empty() ? std::string(source) : parsed->hostname);
    metrics_.unknown_device();
  }
  log.message = std::move(*parsed);
  for (const auto& subscriber : subscribers_) subscriber(log);
  metrics_.received(transport);
}

}  // namespace hsns::ingest
