// The aggregator's SNMP poller: per configured switch and interval, a GETBULK walk of IF-MIB (ifXTable:
// ifName, ifHCInOctets, ifHCOutOctets, ifCounterDiscontinuityTime; ifTable: ifOperStatus, in/out errors
// and discards) plus sysUpTime, turned into KPI samples (snmp_counters.h) for a KpiSink.
//
// Contract:
// - One thread of its own runs every switch with net-snmp's single-session API, asynchronously: each
//   switch has its own session (socket) and at most one request in flight; one select() waits on all of
//   them. A switch that does not answer costs its own timeout only: the others are polled meanwhile. The
//   HTTP I/O threads never run SNMP. start() starts the thread (the first poll of every switch at once),
//   stop() ends it within ~100 ms plus what the sink's append takes (also on destruction).
// - net-snmp is initialised once per process (no configuration or persistent files read or written, its
//   log lines go to HSNS_LOG) and every call into it holds one process-wide lock, as the library is built
//   without its own locking; the lock is never held across select().
// - SNMPv3 (authPriv): the engine ID is discovered asynchronously (an unauthenticated probe, RFC 3414 4),
//   then the session is opened with it, so opening never blocks; net-snmp resynchronises the engine time
//   on a notInTimeWindow report by itself. A v3 switch is probed again after any failure.
// - A poll fails, counted by reason, with: timeout (no answer after the retries, or the walk still not
//   done when the next poll is due), send (net-snmp refused to send), open (no session), auth (an SNMPv3
//   report: unknown user, wrong digest, ...; or an answer our keys do not authenticate or decrypt),
//   error_status (an error-status in the response), malformed (no sysUpTime first, no progress, an OID that
//   did not increase). After a failure the switch's session is closed and the next poll is at its
//   interval; the previous successful poll stays the baseline (an agent restart meanwhile is seen then).
// - Bounds: at most config.max_switches switches (config check), config.max_interfaces rows per switch
//   (more are not walked: counter event interfaces_truncated), GETBULK of config.bulk_rows rows
//   (snmp.max_repetitions).
// - The switch name is resolved as a topology device (DeviceResolver, thread-safe) at every poll; one the
//   topology does not have is polled all the same under its configured name and counted
//   (hsns_snmp_unknown_device_total). Samples go to the sink on the poller's thread after each walk; the
//   sink must be thread-safe with respect to its other users; a refusal is counted.
// - Metrics (SnmpMetrics): hsns_snmp_polls_total{switch}, hsns_snmp_poll_failures_total{switch,reason},
//   hsns_snmp_last_success_timestamp_seconds{switch}, hsns_snmp_interfaces{switch},
//   hsns_snmp_samples_total{switch}, hsns_snmp_counter_events_total{switch,event} (agent_restart,
//   counter_reset, counter_wrap, discontinuity, interfaces_truncated),
//   hsns_snmp_unknown_device_total{switch}, hsns_snmp_sink_errors_total{switch}. The switch label is a
//   configured name (bounded by max_switches).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ingest/snmp_config.h"
#include "ingest/snmp_counters.h"
#include "ingest/syslog_receiver.h"

// net-snmp's session and PDU (net-snmp/types.h), kept out of this header.
struct snmp_session;
struct snmp_pdu;

namespace hsns::ingest {

// Where the poller's samples go (the KPI store at merge; a test's recorder). false: refused (counted).
class KpiSink {
 public:
  virtual ~KpiSink() = default;
  virtual bool append(std::span<const KpiSample> samples) = 0;
};

// The KPI store as the poller's sink (what hsns-aggregator uses): a batch the store refuses or cannot
// take is logged (the store's detail) and answered false, which the poller counts as a sink error.
class StoreKpiSink final : public KpiSink {
 public:
  explicit StoreKpiSink(store::KpiSink& store) : store_(store) {}
  bool append(std::span<const KpiSample> samples) override;

 private:
  store::KpiSink& store_;
};

// The latest value of each (entity, metric), at most `capacity` series (a new series beyond it is refused):
// an in-memory sink (tests, benchmarks). Thread-safe.
class LatestKpiSamples : public KpiSink {
 public:
  explicit LatestKpiSamples(std::size_t capacity = 1 << 20) : capacity_(capacity) {}
  bool append(std::span<const KpiSample> samples) override;
  std::optional<KpiSample> latest(std::string_view entity, std::string_view metric) const;
  std::size_t size() const;

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, KpiSample, std::less<>> latest_;
};

class SnmpMetrics {
 public:
  explicit SnmpMetrics(prometheus::Registry& registry);
  void poll_started(const std::string& name);
  void poll_failed(const std::string& name, std::string_view reason);
  void poll_succeeded(const std::string& name, double unix_seconds, std::size_t interfaces);
  void samples(const std::string& name, std::size_t count);
  void counter_event(const std::string& name, std::string_view event, std::size_t count = 1);
  void unknown_device(const std::string& name);
  void sink_error(const std::string& name);

 private:
  prometheus::Family<prometheus::Counter>& polls_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Family<prometheus::Gauge>& last_success_;
  prometheus::Family<prometheus::Gauge>& interfaces_;
  prometheus::Family<prometheus::Counter>& samples_;
  prometheus::Family<prometheus::Counter>& events_;
  prometheus::Family<prometheus::Counter>& unknown_device_;
  prometheus::Family<prometheus::Counter>& sink_errors_;
};

// What a switch's polls came to so far (for tests and, later, the API).
struct SnmpSwitchStatus {
  std::uint64_t polls = 0;
  std::uint64_t successes = 0;
  std::uint64_t failures = 0;
  std::string last_failure;                  // the reason of the latest failure
  std::string device;                        // the entity prefix of the latest poll
  std::optional<SnmpPoll> last;              // the latest successful walk
  std::optional<CounterEvents> last_events;  // what derive_samples counted on it
  double last_walk_ms = 0;                   // from the walk's first request to its last answer
};

class SnmpPoller {
 public:
  SnmpPoller(SnmpConfig config, DeviceResolver resolver, KpiSink& sink, SnmpMetrics& metrics);
  ~SnmpPoller();
  SnmpPoller(const SnmpPoller&) = delete;
  SnmpPoller& operator=(const SnmpPoller&) = delete;

  void start();  // no switches configured: does nothing
  void stop();
  std::optional<SnmpSwitchStatus> status(std::string_view name) const;

 private:
  struct Agent;
  void run();
  void begin_poll(Agent& a, bool after_probe);
  void deliver();
  void send_next(Agent& a);
  void fail(Agent& a, std::string_view reason);
  void finish(Agent& a);
  static int on_pdu(int operation, ::snmp_session* session, int reqid, ::snmp_pdu* pdu, void* magic);
  void on_probe_answer(Agent& a, int operation, ::snmp_pdu* pdu);
  void on_walk_answer(Agent& a, int operation, ::snmp_pdu* pdu);
  void publish(const Agent& a);

  SnmpConfig config_;
  DeviceResolver resolver_;
  KpiSink& sink_;
  SnmpMetrics& metrics_;
  std::vector<std::unique_ptr<Agent>> agents_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex status_mutex_;
  std::vector<SnmpSwitchStatus> status_;  // by agent index
};

}  // namespace hsns::ingest
