// The aggregator's syslog receivers: UDP (one message per datagram) and TCP (RFC 6587, both framings,
// syslog_framing.h), on the aggregator's io_context.
//
// Contract:
// - start() binds the configured endpoints (throws std::system_error when it cannot) and starts receiving;
//   stop() closes the sockets and every connection (call it on the io_context's threads or before run()
//   returns: pending operations end with operation_aborted). Both off: start() does nothing.
// - Each message is parsed (syslog_parser.h) with the receive time and the sender's address, mapped to a
//   device by the DeviceResolver (by HOSTNAME, else the source address; "unknown:<host>" when the topology
//   has no such device: counted, still delivered) and handed to every subscriber, in the order of one
//   socket or connection; subscribers run on I/O threads concurrently and must be thread-safe and brief.
// - Bounds: a datagram or frame longer than max_message_bytes is refused (too_long; a TCP stream cannot
//   be resynchronised after that and is closed); one TCP read buffer of 16 KiB plus one partial frame per
//   connection; a connection silent for tcp_idle_timeout_ms is closed, and so is one whose frame, once
//   begun, is not complete within tcp_frame_timeout_ms (a sender trickling bytes holds no slot).
// - Fair shares of the TCP slots: at most max_connections_per_source from one address (more are closed at
//   accept: source_connection_limit); at max_connections, a newcomer takes the slot of the connection idle
//   the longest (1 s at least) among those that have not delivered a line of a topology device
//   (idle_evicted), else it is closed (connection_limit). A known device's connection is cut only by its
//   own timeouts.
// - Metrics (IngestMetrics, on the aggregator's registry): hsns_syslog_received_total{transport},
//   hsns_syslog_parsed_total{format}, hsns_syslog_malformed_total{reason} (the parser's faults and the
//   framing's), hsns_syslog_unknown_device_total, hsns_syslog_dropped_total{reason} (connection_limit,
//   source_connection_limit, idle_evicted, frame_timeout, buffer_full),
//   hsns_syslog_evicted_total (kept messages removed to make room: log_buffer.h),
//   hsns_ingest_data_time_outside_window_total{source="syslog", direction}; thread-safe.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/log_buffer.h"
#include "ingest/syslog_config.h"
#include "ingest/syslog_parser.h"

namespace hsns::ingest {

class IngestMetrics {
 public:
  explicit IngestMetrics(prometheus::Registry& registry);
  void received(std::string_view transport);
  void parsed(SyslogFormat format);
  void malformed(std::string_view reason);
  void unknown_device();
  void dropped(std::string_view reason);
  // Shared with the other data sources: source is "syslog", "events" or "kpis".
  void outside_window(std::string_view source, TimeVerdict verdict, std::uint64_t n = 1);
  void evicted(std::uint64_t messages);

 private:
  prometheus::Family<prometheus::Counter>& received_;
  prometheus::Family<prometheus::Counter>& parsed_;
  prometheus::Family<prometheus::Counter>& malformed_;
  prometheus::Counter& unknown_device_;
  prometheus::Family<prometheus::Counter>& dropped_;
  prometheus::Family<prometheus::Counter>& outside_window_;
  prometheus::Counter& evicted_;
};

// The topology device a message comes from, nullopt when the topology has none of that name. hostname may
// be empty (a line without one); source is the sender's IP address.
using DeviceResolver =
    std::function<std::optional<std::string>(std::string_view hostname, std::string_view source)>;
using LogSubscriber = std::function<void(const IngestedLog&)>;

class SyslogReceiver {
 public:
  SyslogReceiver(boost::asio::io_context& ioc, SyslogConfig config, DeviceResolver resolver,
                 IngestMetrics& metrics);
  ~SyslogReceiver();
  SyslogReceiver(const SyslogReceiver&) = delete;
  SyslogReceiver& operator=(const SyslogReceiver&) = delete;

  // Before start(): every parsed message goes to each subscriber.
  void subscribe(LogSubscriber subscriber) { subscribers_.push_back(std::move(subscriber)); }

  void start();
  void stop();
  std::optional<boost::asio::ip::udp::endpoint> udp_endpoint() const;
  std::optional<boost::asio::ip::tcp::endpoint> tcp_endpoint() const;
  std::size_t open_connections() const { return connections_.load(); }

  // One message as received (the payload of a datagram or a frame): parse, resolve, deliver. Public for
  // the benchmark, which measures it without sockets. True when it came from a topology device.
  bool ingest(std::string_view payload, std::string_view source, std::string_view transport);

 private:
  class Connection;
  void receive_udp();
  void accept_tcp();
  bool take_slot(const std::string& source);
  bool evict_idlest();
  void release_slot(const std::string& source);

  boost::asio::io_context& ioc_;
  SyslogConfig config_;
  DeviceResolver resolver_;
  IngestMetrics& metrics_;
  std::vector<LogSubscriber> subscribers_;
  std::unique_ptr<boost::asio::ip::udp::socket> udp_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::vector<char> datagram_;
  boost::asio::ip::udp::endpoint sender_;
  std::atomic<std::size_t> connections_{0};
  std::mutex connections_mutex_;  // guards open_
  std::vector<std::weak_ptr<Connection>> open_;
  std::mutex sources_mutex_;  // guards per_source_ (never held with connections_mutex_ the other way round)
  std::map<std::string, std::size_t, std::less<>> per_source_;
};

// Resolves a HOSTNAME through a lookup of device names (for the topology: Topology::find on the cached
// model): the name as sent, else in lower case, else its first label ("leaf01.dc1.example" -> "leaf01").
// The topology has no management addresses, so the source address is used only as the fallback name of an
// unknown device. Thread-safe.
class NameResolver {
 public:
  using Lookup = std::function<bool(std::string_view name, std::string& device)>;
  explicit NameResolver(Lookup lookup) : lookup_(std::move(lookup)) {}
  std::optional<std::string> operator()(std::string_view hostname, std::string_view source) const;

 private:
  Lookup lookup_;
};

}  // namespace hsns::ingest
