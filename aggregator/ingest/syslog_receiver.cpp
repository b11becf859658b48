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
// A connection must have been silent this long to give its slot to a newcomer.
constexpr std::int64_t kMinIdleToEvictMs = 1000;

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
                   .Register(registry)),
      outside_window_(prometheus::BuildCounter()
                          .Name("hsns_ingest_data_time_outside_window_total")
                          .Help("Log lines, events and KPI samples dated outside the window around their "
                                "receive time, by source and direction (lines and events take their receive "
                                "time; samples in the future are refused)")
                          .Register(registry)),
      evicted_(prometheus::BuildCounter()
                   .Name("hsns_syslog_evicted_total")
                   .Help("Kept log messages and events removed to make room (bytes, devices, per device)")
                   .Register(registry)
                   .Add({})) {
  for (const char* source : {"syslog", "events", "kpis"}) {
    for (const char* direction : {"future", "past"})
      outside_window_.Add({{"source", source}, {"direction", direction}});
  }
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
void IngestMetrics::outside_window(std::string_view source, TimeVerdict verdict, std::uint64_t n) {
  if (verdict == TimeVerdict::inside || n == 0) return;
  outside_window_.Add({{"source", std::string(source)}, {"direction", to_string(verdict)}})
      .Increment(static_cast<double>(n));
}
void IngestMetrics::evicted(std::uint64_t messages) {
  evicted_.Increment(static_cast<double>(messages));
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
// timeout, when a frame begun is not complete within the frame timeout (a sender trickling bytes holds no
// slot), at EOF, when the receiver needs its slot for a newcomer (the longest idle goes), and by stop().
class SyslogReceiver::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(SyslogReceiver& owner, tcp::socket socket, std::string source)
      : owner_(owner),
        socket_(std::move(socket)),
        idle_(socket_.get_executor()),
        frame_deadline_(socket_.get_executor()),
        framer_(owner.config_.max_message_bytes),
        buffer_(kTcpReadBuffer),
        source_(std::move(source)),
        last_activity_ms_(steady_ms()) {}

  void start() {
    arm_idle();
    read();
  }
  void close() {
    net::post(socket_.get_executor(), [self = shared_from_this()] { self->shut(); });
  }
  const std::string& source() const { return source_; }
  std::int64_t idle_ms() const { return steady_ms() - last_activity_ms_.load(); }
  // Has delivered a line of a topology device: never evicted for a newcomer.
  bool from_known_device() const { return from_known_device_.load(); }

  ~Connection() { owner_.release_slot(source_); }

 private:
  static std::int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void shut() {
    boost::system::error_code ignored;
    socket_.close(ignored);
    idle_.cancel();
    frame_deadline_.cancel();
  }
  void arm_idle() {
    idle_.expires_after(std::chrono::milliseconds(owner_.config_.tcp_idle_timeout_ms));
    idle_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      self->shut();
    });
  }
  // Armed when a frame begins, not moved by the bytes that follow: the whole frame must arrive in time.
  void watch_frame() {
    if (framer_.buffered() == 0) {
      if (frame_armed_) frame_deadline_.cancel();
      frame_armed_ = false;
      return;
    }
    if (frame_armed_) return;
    frame_armed_ = true;
    frame_deadline_.expires_after(std::chrono::milliseconds(owner_.config_.tcp_frame_timeout_ms));
    frame_deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      self->owner_.metrics_.dropped("frame_timeout");
      HSNS_LOG(debug) << "syslog: closing TCP connection from " << self->source_
                      << ": a frame was not complete in time";
      self->shut();
    });
  }
  void read() {
    socket_.async_read_some(net::buffer(buffer_), [self = shared_from_this()](boost::system::error_code ec,
                                                                              std::size_t n) {
      if (ec) {
        self->shut();
        return;
      }
      self->last_activity_ms_ = steady_ms();
      self->arm_idle();
      auto ok = self->framer_.feed(std::string_view(self->buffer_.data(), n), [&](std::string_view frame) {
        if (self->owner_.ingest(frame, self->source_, "tcp")) self->from_known_device_ = true;
      });
      if (!ok) {
        self->owner_.metrics_.malformed(frame_fault_name(ok.error()));
        HSNS_LOG(debug) << "syslog: closing TCP connection from " << self->source_ << ": "
                        << frame_fault_name(ok.error());
        self->shut();
        return;
      }
      self->watch_frame();
      self->read();
    });
  }

  SyslogReceiver& owner_;
  tcp::socket socket_;
  net::steady_timer idle_;
  net::steady_timer frame_deadline_;
  bool frame_armed_ = false;
  SyslogStreamFramer framer_;
  std::vector<char> buffer_;
  std::string source_;
  std::atomic<std::int64_t> last_activity_ms_;
  std::atomic<bool> from_known_device_{false};
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

// A slot for a connection from `source`: refused beyond the per-source cap; at the total cap the open
// connection idle the longest (at least kMinIdleToEvict) is closed for it, else the newcomer is refused.
bool SyslogReceiver::take_slot(const std::string& source) {
  {
    const std::lock_guard lock(sources_mutex_);
    const auto it = per_source_.find(source);
    if (it != per_source_.end() && it->second >= config_.max_connections_per_source) {
      metrics_.dropped("source_connection_limit");
      return false;
    }
  }
  if (connections_.load() >= config_.max_connections && !evict_idlest()) {
    metrics_.dropped("connection_limit");
    return false;
  }
  {
    const std::lock_guard lock(sources_mutex_);
    ++per_source_[source];
  }
  ++connections_;
  return true;
}

bool SyslogReceiver::evict_idlest() {
  // Copied out under the lock and released after it: a connection's destructor takes sources_mutex_.
  std::vector<std::shared_ptr<Connection>> alive;
  {
    const std::lock_guard lock(connections_mutex_);
    for (const auto& weak : open_) {
      if (auto c = weak.lock()) alive.push_back(std::move(c));
    }
  }
  Connection* idlest = nullptr;
  std::int64_t longest = kMinIdleToEvictMs - 1;
  for (const auto& c : alive) {
    if (c->from_known_device()) continue;
    if (const auto idle = c->idle_ms(); idle > longest) {
      longest = idle;
      idlest = c.get();
    }
  }
  if (idlest == nullptr) return false;
  metrics_.dropped("idle_evicted");
  idlest->close();
  // Its slot is free once its close has run; until then the newcomer makes one more than the cap.
  return true;
}

void SyslogReceiver::release_slot(const std::string& source) {
  const std::lock_guard lock(sources_mutex_);
  if (const auto it = per_source_.find(source); it != per_source_.end() && --it->second == 0)
    per_source_.erase(it);
  --connections_;
}

void SyslogReceiver::accept_tcp() {
  acceptor_->async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
    if (!ec) {
      boost::system::error_code remote_ec;
      const auto remote = socket.remote_endpoint(remote_ec);
      std::string source = remote_ec ? std::string() : remote.address().to_string();
      if (!take_slot(source)) {
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        auto connection = std::make_shared<Connection>(*this, std::move(socket), std::move(source));
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

bool SyslogReceiver::ingest(std::string_view payload, std::string_view source, std::string_view transport) {
  // Counted once handled (refused, or parsed and handed to the subscribers): a sender that reads the counter
  // knows that its lines have reached the brain (hsnsctl scenario run orders its streams so).
  const SyslogContext context{unix_now_ms(), source, SyslogLimits{.max_line = config_.max_message_bytes}};
  auto parsed = parse_syslog(payload, context);
  if (!parsed) {
    metrics_.malformed(fault_name(parsed.error().fault));
    HSNS_LOG(debug) << "syslog: from " << source << ": " << parsed.error().detail;
    metrics_.received(transport);
    return false;
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
  return log.known_device;
}

}  // namespace hsns::ingest
