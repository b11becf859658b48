#include "ingest/snmp_poller.h"

// clang-format off: net-snmp's headers must come in this order.
#include <net-snmp/library/large_fd_set.h>
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
// clang-format on

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "hsns/log.h"
#include "hsns/time.h"

namespace hsns::ingest {
namespace {

using Clock = std::chrono::steady_clock;
using OidVector = std::vector<oid>;

// Every call into net-snmp holds it: the library is built without locking of its own (NETSNMP_REENTRANT
// off), and its USM user list, engine-time cache and request ids are process-wide.
std::mutex& library_mutex() {
  static std::mutex m;
  return m;
}

// While init_snmp() runs: it parses the MIB files it finds, whose complaints concern no numeric OID.
std::atomic<bool> g_starting{false};

int log_from_library(int /*major*/, int /*minor*/, void* server_arg, void* /*client_arg*/) {
  if (g_starting) return 0;
  const auto* message = static_cast<const snmp_log_message*>(server_arg);
  if (message == nullptr || message->msg == nullptr) return 0;
  std::string_view text(message->msg);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (message->priority <= LOG_WARNING) {
    HSNS_LOG(warning) << "net-snmp: " << text;
  } else {
    HSNS_LOG(debug) << "net-snmp: " << text;
  }
  return 0;
}

void init_library() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Numeric OIDs only: no configuration, MIB or persistent files of this machine are read or written.
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
    netsnmp_ds_set_int(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_MIB_WARNINGS, 0);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_MIB_ERRORS, 0);
    snmp_disable_stderrlog();
    snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING, log_from_library, nullptr);
    snmp_enable_calllog();
    g_starting = true;
    init_snmp("hsns-aggregator");
    g_starting = false;
  });
}

enum class Field : std::uint8_t {
  name,
  in_octets,
  out_octets,
  discontinuity,
  oper_status,
  in_discards,
  in_errors,
  out_discards,
  out_errors
};

struct ColumnSpec {
  Field field;
  OidVector oid;
};

const std::array<ColumnSpec, 9>& column_specs() {
  static const std::array<ColumnSpec, 9> specs{{
      {Field::name, {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1}},
      {Field::in_octets, {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6}},
      {Field::out_octets, {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 10}},
      {Field::discontinuity, {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 19}},
      {Field::oper_status, {1, 3, 6, 1, 2, 1, 2, 2, 1, 8}},
      {Field::in_discards, {1, 3, 6, 1, 2, 1, 2, 2, 1, 13}},
      {Field::in_errors, {1, 3, 6, 1, 2, 1, 2, 2, 1, 14}},
      {Field::out_discards, {1, 3, 6, 1, 2, 1, 2, 2, 1, 19}},
      {Field::out_errors, {1, 3, 6, 1, 2, 1, 2, 2, 1, 20}},
  }};
  return specs;
}

const OidVector kSysUpTime{1, 3, 6, 1, 2, 1, 1, 3};
const OidVector kSysUpTimeInstance{1, 3, 6, 1, 2, 1, 1, 3, 0};
// usmStatsNotInTimeWindows.0: the report net-snmp answers by resending with the engine's time.
const OidVector kNotInTimeWindow{1, 3, 6, 1, 6, 3, 15, 1, 1, 2, 0};

bool starts_with(const oid* name, std::size_t length, const OidVector& prefix) {
  return length >= prefix.size() && std::equal(prefix.begin(), prefix.end(), name);
}

std::int64_t steady_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// Stores one varbind's value in the interface; false when its type is not the column's.
bool store_value(Field field, const netsnmp_variable_list& vb, SnmpInterface& row) {
  const auto u32 = [&vb] { return static_cast<std::uint32_t>(*vb.val.integer); };
  switch (field) {
    case Field::name:
      if (vb.type != ASN_OCTET_STR) return false;
      row.name.assign(reinterpret_cast<const char*>(vb.val.string), vb.val_len);
      return true;
    case Field::in_octets:
    case Field::out_octets: {
      if (vb.type != ASN_COUNTER64) return false;
      const auto value = (static_cast<std::uint64_t>(vb.val.counter64->high) << 32) |
                         static_cast<std::uint32_t>(vb.val.counter64->low);
      (field == Field::in_octets ? row.in_octets : row.out_octets) = value;
      return true;
    }
    case Field::discontinuity:
      if (vb.type != ASN_TIMETICKS) return false;
      row.discontinuity_time = u32();
      return true;
    case Field::oper_status:
      if (vb.type != ASN_INTEGER) return false;
      row.oper_status = static_cast<std::int32_t>(*vb.val.integer);
      return true;
    case Field::in_discards:
    case Field::in_errors:
    case Field::out_discards:
    case Field::out_errors:
      if (vb.type != ASN_COUNTER) return false;
      (field == Field::in_discards  ? row.in_discards
       : field == Field::in_errors  ? row.in_errors
       : field == Field::out_errors ? row.out_errors
                                    : row.out_discards) = u32();
      return true;
  }
  return false;
}

std::string peer_name(const SnmpSwitchConfig& s) {
  const bool v6 = s.address.find(':') != std::string::npos;
  return (v6 ? "udp6:[" + s.address + "]" : "udp:" + s.address) + ":" + std::to_string(s.port);
}

}  // namespace

// ---- latest samples ----------------------------------------------------------------------------------

bool StoreKpiSink::append(std::span<const KpiSample> samples) {
  auto stored = store_.append(samples);
  if (!stored)
    HSNS_LOG(warning) << "snmp: the KPI store did not take " << samples.size()
                      << " samples: " << stored.error().message();
  return stored.has_value();
}

bool LatestKpiSamples::append(std::span<const KpiSample> samples) {
  const std::lock_guard lock(mutex_);
  bool all = true;
  for (const auto& sample : samples) {
    auto key = std::make_pair(sample.entity, sample.metric);
    auto it = latest_.find(key);
    if (it == latest_.end()) {
      if (latest_.size() >= capacity_) {
        all = false;
        continue;
      }
      latest_.emplace(std::move(key), sample);
    } else if (sample.ts_ms >= it->second.ts_ms) {
      it->second = sample;
    }
  }
  return all;
}

std::optional<KpiSample> LatestKpiSamples::latest(std::string_view entity, std::string_view metric) const {
  const std::lock_guard lock(mutex_);
  const auto it = latest_.find(std::make_pair(std::string(entity), std::string(metric)));
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

std::size_t LatestKpiSamples::size() const {
  const std::lock_guard lock(mutex_);
  return latest_.size();
}

// ---- metrics ---------------------------------------------------------------------------------------

SnmpMetrics::SnmpMetrics(prometheus::Registry& registry)
    : polls_(prometheus::BuildCounter()
                 .Name("hsns_snmp_polls_total")
                 .Help("SNMP polls started, per switch")
                 .Register(registry)),
      failures_(prometheus::BuildCounter()
                    .Name("hsns_snmp_poll_failures_total")
                    .Help("SNMP polls that failed, per switch and reason")
                    .Register(registry)),
      last_success_(prometheus::BuildGauge()
                        .Name("hsns_snmp_last_success_timestamp_seconds")
                        .Help("Unix time of the switch's last complete walk")
                        .Register(registry)),
      interfaces_(prometheus::BuildGauge()
                      .Name("hsns_snmp_interfaces")
                      .Help("Interfaces the switch's last complete walk read")
                      .Register(registry)),
      samples_(prometheus::BuildCounter()
                   .Name("hsns_snmp_samples_total")
                   .Help("KPI samples derived from the switch's polls")
                   .Register(registry)),
      events_(prometheus::BuildCounter()
                  .Name("hsns_snmp_counter_events_total")
                  .Help("Agent restarts, counter resets, wraps and discontinuities, truncated walks")
                  .Register(registry)),
      unknown_device_(prometheus::BuildCounter()
                          .Name("hsns_snmp_unknown_device_total")
                          .Help("Polls of a switch the topology has no device of that name for")
                          .Register(registry)),
      sink_errors_(prometheus::BuildCounter()
                       .Name("hsns_snmp_sink_errors_total")
                       .Help("Sample batches the KPI sink refused")
                       .Register(registry)) {}

void SnmpMetrics::poll_started(const std::string& name) {
  polls_.Add({{"switch", name}}).Increment();
}
void SnmpMetrics::poll_failed(const std::string& name, std::string_view reason) {
  failures_.Add({{"switch", name}, {"reason", std::string(reason)}}).Increment();
}
void SnmpMetrics::poll_succeeded(const std::string& name, double unix_seconds, std::size_t interfaces) {
  last_success_.Add({{"switch", name}}).Set(unix_seconds);
  interfaces_.Add({{"switch", name}}).Set(static_cast<double>(interfaces));
}
void SnmpMetrics::samples(const std::string& name, std::size_t count) {
  samples_.Add({{"switch", name}}).Increment(static_cast<double>(count));
}
void SnmpMetrics::counter_event(const std::string& name, std::string_view event, std::size_t count) {
  if (count == 0) return;
  events_.Add({{"switch", name}, {"event", std::string(event)}}).Increment(static_cast<double>(count));
}
void SnmpMetrics::unknown_device(const std::string& name) {
  unknown_device_.Add({{"switch", name}}).Increment();
}
void SnmpMetrics::sink_error(const std::string& name) {
  sink_errors_.Add({{"switch", name}}).Increment();
}

// ---- poller ----------------------------------------------------------------------------------------

struct SnmpPoller::Agent {
  enum class Phase : std::uint8_t { idle, probing, walking };
  struct Column {
    Field field;
    const OidVector* prefix;
    OidVector last;  // where the next request continues
  };

  SnmpPoller* poller = nullptr;
  std::size_t index = 0;
  SnmpSwitchConfig config;
  void* session = nullptr;  // net-snmp single-session handle
  void* probe = nullptr;    // SNMPv3 engine ID discovery session
  std::vector<u_char> engine_id;
  Phase phase = Phase::idle;
  Clock::time_point next_due;
  Clock::time_point deadline;  // the poll must be done by then (the next poll's time)
  bool send_pending = false;   // the walk goes on with another request
  bool open_pending = false;   // the probe found the engine ID: open the session and walk
  bool close_pending = false;  // a failure: close the sessions (never inside a callback)
  bool first_request = true;
  Clock::time_point walk_started;
  double walk_ms = 0;
  std::string device;
  std::vector<Column> columns;
  SnmpPoll current;
  std::optional<SnmpPoll> previous;
  std::optional<CounterEvents> events;
  std::vector<KpiSample> outbox;  // handed to the sink outside the library lock
};

SnmpPoller::SnmpPoller(SnmpConfig config, DeviceResolver resolver, KpiSink& sink, SnmpMetrics& metrics)
    : config_(std::move(config)), resolver_(std::move(resolver)), sink_(sink), metrics_(metrics) {
  for (std::size_t i = 0; i < config_.switches.size(); ++i) {
    auto a = std::make_unique<Agent>();
    a->poller = this;
    a->index = i;
    a->config = config_.switches[i];
    a->device = a->config.name;
    agents_.push_back(std::move(a));
  }
  status_.resize(agents_.size());
}

SnmpPoller::~SnmpPoller() {
  stop();
}

void SnmpPoller::start() {
  if (agents_.empty() || thread_.joinable()) return;
  init_library();
  const auto now = Clock::now();
  for (auto& a : agents_) a->next_due = now;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void SnmpPoller::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::optional<SnmpSwitchStatus> SnmpPoller::status(std::string_view name) const {
  const std::lock_guard lock(status_mutex_);
  for (const auto& a : agents_) {
    if (a->config.name == name) return status_[a->index];
  }
  return std::nullopt;
}

int SnmpPoller::on_pdu(int operation, ::snmp_session* /*session*/, int /*reqid*/, ::snmp_pdu* pdu,
                       void* magic) {
  // A retransmission (after a timeout) and a connection (stream transports) are no answer.
  if (operation == NETSNMP_CALLBACK_OP_RESEND || operation == NETSNMP_CALLBACK_OP_CONNECT) return 1;
  auto& a = *static_cast<Agent*>(magic);
  if (a.phase == Agent::Phase::probing) {
    a.poller->on_probe_answer(a, operation, pdu);
  } else if (a.phase == Agent::Phase::walking) {
    a.poller->on_walk_answer(a, operation, pdu);
  }
  return 1;
}

void SnmpPoller::run() {
  netsnmp_large_fd_set fds;
  netsnmp_large_fd_set_init(&fds, FD_SETSIZE);
  while (!stop_) {
    const auto now = Clock::now();
    auto wait = std::chrono::milliseconds(100);
    {
      const std::lock_guard lock(library_mutex());
      for (auto& agent : agents_) {
        Agent& a = *agent;
        if (a.phase != Agent::Phase::idle && now >= a.deadline) fail(a, "timeout");
        if (a.close_pending) {
          if (a.session != nullptr) snmp_sess_close(a.session);
          if (a.probe != nullptr) snmp_sess_close(a.probe);
          a.session = a.probe = nullptr;
          a.close_pending = false;
        }
        if (now >= a.next_due) {  // idle: a poll still running at this time failed just above
          begin_poll(a, false);
          a.next_due += a.config.interval;
          if (a.next_due < now) a.next_due = now + a.config.interval;  // the thread was held up: no burst
          a.deadline = a.next_due;  // the walk must be done when the next poll is due
        }
        if (a.open_pending) {
          a.open_pending = false;
          begin_poll(a, true);
        }
        if (a.send_pending) send_next(a);
        wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(a.next_due - now));
      }
    }
    int max_fd = 0;
    int block = 0;  // so that net-snmp only shortens the wait to its next retransmission
    timeval tv{0, static_cast<suseconds_t>(std::max<std::int64_t>(wait.count(), 1) * 1000)};
    NETSNMP_LARGE_FD_ZERO(&fds);
    {
      const std::lock_guard lock(library_mutex());
      for (auto& a : agents_) {
        for (void* s : {a->session, a->probe}) {
          if (s != nullptr) snmp_sess_select_info2(s, &max_fd, &fds, &tv, &block);
        }
      }
    }
    const int ready = netsnmp_large_fd_set_select(max_fd, &fds, nullptr, nullptr, &tv);
    {
      const std::lock_guard lock(library_mutex());
      for (auto& a : agents_) {
        for (void* s : {a->session, a->probe}) {
          if (s == nullptr) continue;
          if (ready > 0) snmp_sess_read2(s, &fds);
          snmp_sess_timeout(s);  // retransmits, or calls back with TIMED_OUT after the retries
        }
      }
    }
    deliver();
  }
  const std::lock_guard lock(library_mutex());
  for (auto& a : agents_) {
    if (a->session != nullptr) snmp_sess_close(a->session);
    if (a->probe != nullptr) snmp_sess_close(a->probe);
    a->session = a->probe = nullptr;
  }
  netsnmp_large_fd_set_cleanup(&fds);
}

namespace {

// A session for the switch; v3 with the engine ID found by the probe (or, probe = true, the probe's own
// unauthenticated session). nullptr when net-snmp refuses (logged).
void* open_session(const SnmpSwitchConfig& s, const std::vector<u_char>& engine_id, bool probe,
                   netsnmp_callback callback, void* magic) {
  netsnmp_session session;
  snmp_sess_init(&session);
  std::string peer = peer_name(s);
  session.peername = peer.data();
  session.timeout = static_cast<long>(s.timeout.count()) * 1000;
  session.retries = s.retries;
  session.callback = callback;
  session.callback_magic = magic;
  std::string community = s.credentials.community;
  std::string user = s.credentials.user;
  std::vector<u_char> engine = engine_id;
  if (s.version == SnmpVersion::v2c) {
    session.version = SNMP_VERSION_2c;
    session.community = reinterpret_cast<u_char*>(community.data());
    session.community_len = community.size();
  } else if (probe) {
    session.version = SNMP_VERSION_3;
    session.flags |= SNMP_FLAGS_DONT_PROBE;
    session.securityModel = SNMP_SEC_MODEL_USM;
    session.securityLevel = SNMP_SEC_LEVEL_NOAUTH;
    session.securityName = user.data();  // not sent: the probe PDU names no user
    session.securityNameLen = 0;
  } else {
    session.version = SNMP_VERSION_3;
    session.securityModel = SNMP_SEC_MODEL_USM;
    session.securityLevel = SNMP_SEC_LEVEL_AUTHPRIV;
    session.securityName = user.data();
    session.securityNameLen = user.size();
    session.securityEngineID = engine.data();
    session.securityEngineIDLen = engine.size();
    session.contextEngineID = engine.data();
    session.contextEngineIDLen = engine.size();
    switch (s.credentials.auth_protocol) {
      case SnmpAuthProtocol::sha:
        session.securityAuthProto = usmHMACSHA1AuthProtocol;
        session.securityAuthProtoLen = OID_LENGTH(usmHMACSHA1AuthProtocol);
        break;
      case SnmpAuthProtocol::sha256:
        session.securityAuthProto = usmHMAC192SHA256AuthProtocol;
        session.securityAuthProtoLen = OID_LENGTH(usmHMAC192SHA256AuthProtocol);
        break;
      case SnmpAuthProtocol::sha512:
        session.securityAuthProto = usmHMAC384SHA512AuthProtocol;
        session.securityAuthProtoLen = OID_LENGTH(usmHMAC384SHA512AuthProtocol);
        break;
    }
    session.securityPrivProto = usmAESPrivProtocol;
    session.securityPrivProtoLen = OID_LENGTH(usmAESPrivProtocol);
    auto& auth = s.credentials.auth_password;
    auto& priv = s.credentials.priv_password;
    session.securityAuthKeyLen = USM_AUTH_KU_LEN;
    session.securityPrivKeyLen = USM_PRIV_KU_LEN;
    // Ku from the passwords (RFC 3414 A.2); net-snmp localises both with the engine ID at open.
    if (generate_Ku(session.securityAuthProto, static_cast<u_int>(session.securityAuthProtoLen),
                    reinterpret_cast<const u_char*>(auth.data()), auth.size(), session.securityAuthKey,
                    &session.securityAuthKeyLen) != SNMPERR_SUCCESS ||
        generate_Ku(session.securityAuthProto, static_cast<u_int>(session.securityAuthProtoLen),
                    reinterpret_cast<const u_char*>(priv.data()), priv.size(), session.securityPrivKey,
                    &session.securityPrivKeyLen) != SNMPERR_SUCCESS) {
      HSNS_LOG(warning) << "snmp " << s.name << ": cannot derive the SNMPv3 keys";
      return nullptr;
    }
  }
  void* handle = snmp_sess_open(&session);  // copies every buffer given above
  if (handle == nullptr) {
    HSNS_LOG(warning) << "snmp " << s.name << ": cannot open a session to " << peer << ": "
                      << snmp_api_errstring(session.s_snmp_errno);
  }
  return handle;
}

}  // namespace

void SnmpPoller::begin_poll(Agent& a, bool after_probe) {
  if (!after_probe) {  // the walk after an engine ID probe belongs to the probe's poll
    metrics_.poll_started(a.config.name);
    const std::lock_guard lock(status_mutex_);
    ++status_[a.index].polls;
  }
  if (a.config.version == SnmpVersion::v3 && a.engine_id.empty()) {
    a.probe = a.probe != nullptr ? a.probe : open_session(a.config, {}, true, &SnmpPoller::on_pdu, &a);
    if (a.probe == nullptr) return fail(a, "open");
    netsnmp_pdu* pdu = snmp_pdu_create(SNMP_MSG_GET);
    pdu->securityModel = SNMP_SEC_MODEL_USM;
    pdu->securityLevel = SNMP_SEC_LEVEL_NOAUTH;
    pdu->flags |= UCD_MSG_FLAG_FORCE_PDU_COPY;
    // The empty user of RFC 3414 4: net-snmp refuses a PDU without a name (freed with the PDU).
    pdu->securityName = static_cast<char*>(calloc(1, 1));
    pdu->securityNameLen = 0;
    a.phase = Agent::Phase::probing;
    if (snmp_sess_async_send(a.probe, pdu, &SnmpPoller::on_pdu, &a) == 0) {
      snmp_free_pdu(pdu);
      if (a.phase != Agent::Phase::idle) fail(a, "send");  // unless the callback said so already
    }
    return;
  }
  if (a.session == nullptr) a.session = open_session(a.config, a.engine_id, false, &SnmpPoller::on_pdu, &a);
  if (a.session == nullptr) return fail(a, "open");
  auto device = resolver_ ? resolver_(a.config.name, a.config.address) : std::nullopt;
  if (!device) metrics_.unknown_device(a.config.name);
  a.device = device ? *device : a.config.name;
  a.columns.clear();
  for (const auto& spec : column_specs()) a.columns.push_back({spec.field, &spec.oid, spec.oid});
  a.current = SnmpPoll{};
  a.first_request = true;
  a.phase = Agent::Phase::walking;
  a.walk_started = Clock::now();
  send_next(a);
}

void SnmpPoller::send_next(Agent& a) {
  a.send_pending = false;
  netsnmp_pdu* pdu = snmp_pdu_create(SNMP_MSG_GETBULK);
  pdu->non_repeaters = a.first_request ? 1 : 0;
  pdu->max_repetitions = config_.bulk_rows;  // net-snmp macros: errindex
  if (a.first_request) snmp_add_null_var(pdu, kSysUpTime.data(), kSysUpTime.size());
  for (const auto& c : a.columns) snmp_add_null_var(pdu, c.last.data(), c.last.size());
  if (snmp_sess_async_send(a.session, pdu, &SnmpPoller::on_pdu, &a) == 0) {
    snmp_free_pdu(pdu);
    if (a.phase != Agent::Phase::idle) fail(a, "send");  // unless the callback said so already
  }
}

namespace {

// Why a request got no usable answer, from the callback's operation (never RECEIVED_MESSAGE).
std::string_view failure_of(int operation) {
  switch (operation) {
    case NETSNMP_CALLBACK_OP_TIMED_OUT:
      return "timeout";
    case NETSNMP_CALLBACK_OP_SEC_ERROR:
      return "auth";  // the answer did not authenticate or decrypt with our keys
    default:
      return "send";
  }
}

}  // namespace

void SnmpPoller::on_probe_answer(Agent& a, int operation, ::snmp_pdu* pdu) {
  // The answer is a usmStatsUnknownEngineIDs report, which net-snmp hands over as a security error.
  const bool answered =
      operation == NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE || operation == NETSNMP_CALLBACK_OP_SEC_ERROR;
  if (!answered) return fail(a, failure_of(operation));
  if (pdu == nullptr || pdu->securityEngineIDLen == 0) return fail(a, "auth");
  a.engine_id.assign(pdu->securityEngineID, pdu->securityEngineID + pdu->securityEngineIDLen);
  a.close_pending = true;  // the probe session; the loop opens the real one next
  a.open_pending = true;
  a.phase = Agent::Phase::idle;
}

void SnmpPoller::on_walk_answer(Agent& a, int operation, ::snmp_pdu* pdu) {
  if (operation != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE) return fail(a, failure_of(operation));
  if (pdu->command == SNMP_MSG_REPORT) {
    const auto* vb = pdu->variables;
    if (vb != nullptr && starts_with(vb->name, vb->name_length, kNotInTimeWindow)) return;  // resent
    return fail(a, "auth");  // unknown user, wrong digest, unsupported level, ...
  }
  if (pdu->errstat != SNMP_ERR_NOERROR) return fail(a, "error_status");
  const netsnmp_variable_list* vb = pdu->variables;
  if (a.first_request) {
    if (vb == nullptr || vb->type != ASN_TIMETICKS ||
        snmp_oid_compare(vb->name, vb->name_length, kSysUpTimeInstance.data(), kSysUpTimeInstance.size()) !=
            0) {
      return fail(a, "malformed");
    }
    a.current.uptime_cs = static_cast<std::uint32_t>(*vb->val.integer);
    a.current.steady_ms = steady_ms_now();
    a.current.ts_ms = unix_now_ms();
    a.first_request = false;
    vb = vb->next_variable;
  }
  if (vb == nullptr) return fail(a, "malformed");  // no progress
  std::vector<bool> done(a.columns.size(), false);
  const std::size_t width = a.columns.size();
  for (std::size_t i = 0; vb != nullptr; vb = vb->next_variable, ++i) {
    const std::size_t c = i % width;
    if (done[c]) continue;
    auto& column = a.columns[c];
    if (vb->type == SNMP_ENDOFMIBVIEW || vb->type == SNMP_NOSUCHOBJECT || vb->type == SNMP_NOSUCHINSTANCE ||
        !starts_with(vb->name, vb->name_length, *column.prefix) ||
        vb->name_length != column.prefix->size() + 1) {
      done[c] = true;  // past the column's end
      continue;
    }
    if (snmp_oid_compare(vb->name, vb->name_length, column.last.data(), column.last.size()) <= 0) {
      return fail(a, "malformed");  // an agent going in circles
    }
    column.last.assign(vb->name, vb->name + vb->name_length);
    const auto if_index = static_cast<std::uint32_t>(vb->name[vb->name_length - 1]);
    auto row = a.current.interfaces.find(if_index);
    if (row == a.current.interfaces.end()) {
      if (a.current.interfaces.size() >= config_.max_interfaces) {
        a.current.truncated = true;
        done[c] = true;
        continue;
      }
      row = a.current.interfaces.emplace(if_index, SnmpInterface{}).first;
    }
    (void)store_value(column.field, *vb, row->second);  // a value of another type is left out
  }
  std::vector<Agent::Column> active;
  for (std::size_t c = 0; c < width; ++c) {
    if (!done[c]) active.push_back(std::move(a.columns[c]));
  }
  a.columns = std::move(active);
  if (a.columns.empty()) return finish(a);
  a.send_pending = true;
}

void SnmpPoller::fail(Agent& a, std::string_view reason) {
  metrics_.poll_failed(a.config.name, reason);
  HSNS_LOG(debug) << "snmp " << a.config.name << ": poll failed (" << reason << ")";
  a.phase = Agent::Phase::idle;
  a.send_pending = a.open_pending = false;
  a.close_pending = true;
  if (a.config.version == SnmpVersion::v3) a.engine_id.clear();  // probe again: the agent may be new
  const std::lock_guard lock(status_mutex_);
  ++status_[a.index].failures;
  status_[a.index].last_failure = reason;
}

void SnmpPoller::finish(Agent& a) {
  a.phase = Agent::Phase::idle;
  a.walk_ms = std::chrono::duration<double, std::milli>(Clock::now() - a.walk_started).count();
  CounterEvents events;
  auto samples = derive_samples(a.device, a.previous ? &*a.previous : nullptr, a.current, events);
  const auto& name = a.config.name;
  metrics_.poll_succeeded(name, static_cast<double>(a.current.ts_ms) / 1000.0, a.current.interfaces.size());
  metrics_.counter_event(name, "agent_restart", events.agent_restart ? 1 : 0);
  metrics_.counter_event(name, "counter_reset", events.counter_resets);
  metrics_.counter_event(name, "counter_wrap", events.counter_wraps);
  metrics_.counter_event(name, "discontinuity", events.discontinuities);
  metrics_.counter_event(name, "interfaces_truncated", a.current.truncated ? 1 : 0);
  metrics_.samples(name, samples.size());
  a.previous = std::move(a.current);
  a.events = events;
  publish(a);
  a.outbox = std::move(samples);
}

void SnmpPoller::deliver() {
  for (auto& a : agents_) {
    if (a->outbox.empty()) continue;
    if (!sink_.append(a->outbox)) metrics_.sink_error(a->config.name);
    a->outbox.clear();
  }
}

void SnmpPoller::publish(const Agent& a) {
  const std::lock_guard lock(status_mutex_);
  auto& s = status_[a.index];
  ++s.successes;
  s.device = a.device;
  s.last = a.previous;
  s.last_events = a.events;
  s.last_walk_ms = a.walk_ms;
}

}  // namespace hsns::ingest
