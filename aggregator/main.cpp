// hsns-aggregator entry point: configuration, store, HTTP server, signals and systemd notification.
#include <systemd/sd-daemon.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include "api/agents/reports.h"
#include "api/agents/routes.h"
#include "api/alarms/routes.h"
#include "api/diagnose/routes.h"
#include "api/incidents/routes.h"
#include "api/kpis/events.h"
#include "api/kpis/report_kpis.h"
#include "api/kpis/routes.h"
#include "api/logs/routes.h"
#include "api/network/routes.h"
#include "api/overlays/routes.h"
#include "api/overlays/stream.h"
#include "api/overlays/summary.h"
#include "api/scheduling/routes.h"
#include "api/telemetry/routes.h"
#include "api/topology/layout.h"
#include "api/topology/links.h"
#include "api/topology/routes.h"
#include "api/topology/stream.h"
#include "brain/alarm_service.h"
#include "brain/alertmanager_push.h"
#include "brain/incident_service.h"
#include "brain/pipeline_metrics.h"
#include "brain/pipeline_routes.h"
#include "brain/taps.h"
#include "brain/wiring.h"
#include "config.h"
#include "hsns/log.h"
#include "hsns/time.h"
#include "hsns/version.h"
#include "http/service.h"
#include "http/static_files.h"
#include "ingest/prometheus_source.h"
#include "ingest/snmp_poller.h"
#include "ingest/topology_devices.h"
#include "ingest/windowed_kpi_sink.h"
#include "store/factory.h"
#include "store/instrumented_network_store.h"
#include "store/marked_kpi_store.h"

namespace {

namespace net = boost::asio;
using hsns::AggregatorConfig;

std::optional<hsns::TokenAuthenticator> load_auth(const AggregatorConfig& c, std::string& error) {
  if (c.insecure_no_auth) return std::nullopt;
  auto auth = hsns::TokenAuthenticator::load_file(c.tokens_file);
  if (!auth) {
    error = auth.error();
    return std::nullopt;
  }
  return std::move(*auth);
}

std::unique_ptr<net::ssl::context> make_tls(const AggregatorConfig& c) {
  if (c.tls_certificate.empty()) return nullptr;
  auto ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                   net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1 |
                   net::ssl::context::single_dh_use);
  ctx->use_certificate_chain_file(c.tls_certificate);
  ctx->use_private_key_file(c.tls_private_key, net::ssl::context::pem);
  return ctx;
}

int check_config(const AggregatorConfig& c) {
  std::string error;
  auto auth = load_auth(c, error);
  if (!error.empty()) {
    HSNS_LOG(error) << error;
    return 1;
  }
  try {
    (void)make_tls(c);
  } catch (const std::exception& e) {
    HSNS_LOG(error) << "TLS: " << e.what();
    return 1;
  }
  if (auto usable = hsns::store::check_database(c.database); !usable) {
    HSNS_LOG(error) << usable.error().detail;
    return 1;
  }
  if (c.brain.enabled) {
    if (auto brain = hsns::brain_pipeline::make_brain_engine(c.brain, {}, {}, nullptr); !brain) {
      HSNS_LOG(error) << "brain: " << brain.error().message();
      return 1;
    }
  }
  std::cout << "configuration OK: listen " << c.listen_address << ":" << c.port << ", database " << c.database
            << ", " << (c.insecure_no_auth ? "authentication OFF" : std::to_string(auth->size()) + " tokens")
            << ", TLS " << (c.tls_certificate.empty() ? "off" : "on") << ", " << c.threads << " threads\n";
  return 0;
}

int run(const AggregatorConfig& c) {
  std::string error;
  auto auth = load_auth(c, error);
  if (!error.empty()) {
    HSNS_LOG(error) << error;
    return 1;
  }
  if (c.insecure_no_auth) {
    HSNS_LOG(warning) << "authentication is OFF (--insecure-no-auth); listening on loopback only";
  }
  for (const auto& name : auth ? auth->unbound_agents() : std::vector<std::string>{}) {
    HSNS_LOG(warning) << "agent token '" << name << "' is not bound to a host: it may act for every host "
                      << "(add 'host: <name>' to its entry in the tokens file)";
  }

  auto stores = hsns::store::open_stores({c.database, static_cast<std::size_t>(std::max(2, c.threads))});
  if (!stores) {
    HSNS_LOG(error) << stores.error().detail;
    return 1;
  }
  hsns::store::Stores& backend = **stores;

  hsns::Metrics metrics;
  hsns::store::InstrumentedNetworkStore store(backend.network(), metrics);
  hsns::AggregatorService service(
      metrics, std::move(auth),
      [&backend]() -> std::optional<std::string> {
        auto ok = backend.check();
        if (!ok) return ok.error().detail;
        return std::nullopt;
      },
      hsns::WorkerLimits{c.worker_threads, c.heavy_queue_limit, c.worker_nice});
  hsns::network::register_network_routes(service.router(), store);
  hsns::network::register_agent_routes(service.router(), store, backend.agents());
  auto topology_cache = std::make_shared<hsns::services::TopologyCache>(backend.topology());
  // Alarms: the pipeline's faults go to alarm_service.on_faults (its FaultHandler).
  hsns::alarms::AlarmService alarm_service(backend.alarms(), metrics.registry(), c.alarms);
  if (auto loaded = alarm_service.load(hsns::unix_now_ms()); !loaded) {
    HSNS_LOG(error) << "alarms: " << loaded.error().message();
    return 1;
  }
  hsns::alarms_api::register_alarm_routes(service.router(), alarm_service, service.hub());
  // Root cause and job impact: incidents from the alarm service's changes (its listener feeds on_alarms).
  hsns::brain_service::IncidentService incidents(*topology_cache, backend.jobs(), backend.incidents(),
                                                 &service.hub(), metrics.registry());
  if (auto started = incidents.start(); !started) {
    HSNS_LOG(error) << "incidents: " << started.error().detail;
    return 1;
  }
  alarm_service.add_listener([&incidents](std::span<const hsns::brain::AlarmChange> changes) {
    std::vector<hsns::brain::IncidentInput> inputs;
    inputs.reserve(changes.size());
    for (const auto& change : changes) inputs.push_back(hsns::brain::to_incident_input(change));
    incidents.on_alarms(inputs);
  });
  hsns::incidents_api::register_incident_routes(service.router(), incidents, service.hub());
  // The network brain's live pipeline: every KPI batch the store accepts and every log line also go to it.
  hsns::brain_pipeline::BrainMetrics brain_metrics(metrics.registry());
  std::unique_ptr<hsns::brain_pipeline::BrainEngine> brain;
  if (c.brain.enabled) {
    auto made = hsns::brain_pipeline::make_brain_engine(
        c.brain,
        [&alarm_service](std::span<const hsns::brain::FaultMatch> faults) {
          alarm_service.on_faults(faults);
        },
        hsns::brain_pipeline::cache_topology(topology_cache), &brain_metrics);
    if (!made) {
      HSNS_LOG(error) << "brain: " << made.error().message();
      return 1;
    }
    brain = std::move(*made);
    // The telemetry's event time is the alarms' and incidents' clock (docs/brain.md, "Live pipeline").
    brain->set_clock_handler([&alarm_service, &incidents](std::int64_t event_ms) {
      alarm_service.advance_event_time(event_ms);
      incidents.advance(event_ms);
    });
    brain->start();
  }
  // Every KPI write moves the mark the overlay grade stream polls (store/marked_kpi_store.h).
  hsns::store::MarkedKpiStore marked_kpis(backend.kpis());
  hsns::brain_pipeline::BrainKpiStore kpis(marked_kpis, brain.get());
  // Every KPI writer goes through the data time window (ingest/windowed_kpi_sink.h).
  hsns::ingest::IngestMetrics ingest_metrics(metrics.registry());
  hsns::ingest::WindowedKpiSink windowed_kpis(kpis, c.ingest.data_time, ingest_metrics, hsns::unix_now_ms);
  hsns::brain_pipeline::register_brain_routes(service.router(), brain.get(),
                                              hsns::brain_pipeline::patterns_dir(c.brain));
  hsns::network::TelemetryMetrics telemetry_metrics(metrics.registry());
  hsns::kpis_api::KpiMetrics kpi_metrics(metrics.registry());
  hsns::network::register_report_routes(service.router(), backend.telemetry(), telemetry_metrics,
                                        topology_cache,
                                        hsns::kpis_api::ReportKpiRecorder(windowed_kpis, kpi_metrics));
  hsns::telemetry_api::register_telemetry_routes(service.router(), backend.telemetry(), backend.jobs(),
                                                 store);
  hsns::kpis_api::DeviceCheck topology_device =
      [resolve = hsns::ingest::topology_device_resolver(topology_cache)](std::string_view device) {
        return resolve(device, "");
      };
  hsns::kpis_api::register_kpi_routes(service.router(), kpis, windowed_kpis, kpi_metrics, topology_device);
  hsns::topology_api::register_topology_routes(service.router(), topology_cache);
  hsns::topology_api::register_layout_route(service.router(), topology_cache);
  hsns::topology_api::register_links_route(service.router(), topology_cache);
  hsns::topology_api::TopologyChangeNotifier topology_changes(topology_cache, service.hub());
  hsns::topology_api::register_topology_stream(service.router(), topology_changes, service.hub());
  hsns::scheduling_api::register_scheduling_routes(service.router(), topology_cache, backend.jobs(), store);
  hsns::ingest::LogBuffer logs(hsns::ingest::LogBufferLimits{.per_device = c.syslog.messages_per_device,
                                                             .max_devices = c.syslog.max_devices,
                                                             .max_bytes = c.syslog.buffer_bytes,
                                                             .unknown_devices = c.syslog.unknown_devices,
                                                             .unknown_bytes = c.syslog.unknown_buffer_bytes,
                                                             .window = c.ingest.data_time});
  if (brain) hsns::brain_pipeline::feed_logs(logs, *brain);
  hsns::logs_api::register_log_routes(service.router(), logs);
  hsns::kpis_api::register_event_routes(service.router(), logs, kpi_metrics, ingest_metrics, topology_device);
  // Full-path diagnosis: each hop's evidence includes the alarms active on its entities.
  hsns::services::AlarmLookup active_alarms = [&alarm_service](const std::string& entity) {
    std::vector<hsns::diagnose::ActiveAlarm> found;
    for (const auto& a : alarm_service.active_on(entity)) {
      if (a.suppressed) continue;  // silenced: kept in the alarm list, not held against a hop
      found.push_back({a.id, a.type, std::string(hsns::brain::to_string(a.severity)), a.entity, a.detail});
    }
    return found;
  };
  hsns::diagnose_api::register_diagnose_routes(
      service.router(), std::make_shared<hsns::services::DiagnosisService>(
                            topology_cache, backend.jobs(), backend.kpis(), active_alarms,
                            hsns::services::TrafficSource{&backend.telemetry(), &store}));
  hsns::overlays::register_overlay_routes(service.router(), c.overlays, marked_kpis, topology_cache);
  hsns::overlays::register_summary_route(service.router(), c.overlays, marked_kpis, topology_cache,
                                         [&alarm_service] { return alarm_service.active(); });
  hsns::overlays::OverlayGradeNotifier overlay_grades(c.overlays, marked_kpis, topology_cache, service.hub(),
                                                      metrics.registry());
  hsns::overlays::register_overlay_stream(service.router(), overlay_grades);
  // The dashboard (docs/dashboard.md): its assets, and browser sessions with a Secure cookie under TLS.
  service.configure_sessions(c.sessions, !c.tls_certificate.empty());
  const auto web_root = c.web_root.empty() ? hsns::default_web_root() : c.web_root;
  hsns::http::register_static_routes(service.router(), web_root);
  HSNS_LOG(info) << "dashboard assets from " << web_root;

  net::io_context ioc(c.threads);
  std::unique_ptr<net::ssl::context> tls;
  try {
    tls = make_tls(c);
  } catch (const std::exception& e) {
    HSNS_LOG(error) << "TLS: " << e.what();
    return 1;
  }
  // Request bodies and their decoded documents share one budget (hsns/memory_budget.h).
  auto limits = c.limits;
  limits.memory_budget = std::make_shared<hsns::MemoryBudget>(c.ingest.memory_budget_bytes);
  metrics.watch_memory_budget(limits.memory_budget);
  hsns::http::HttpServer server(
      ioc, tls.get(), limits,
      [&service](hsns::http::Request&& req, const hsns::http::Peer& peer, hsns::http::Respond respond) {
        service.handle(std::move(req), peer, std::move(respond));
      },
      hsns::http::ServerObserver{[&metrics](int status) { metrics.observe_rejected(status); },
                                 [&metrics](const char* action) { metrics.observe_connection_shed(action); },
                                 [&metrics](const char* kind) { metrics.observe_accept_error(kind); },
                                 [&metrics] { metrics.observe_websocket_opened(); },
                                 [&metrics](const char* reason) { metrics.observe_websocket_closed(reason); },
                                 [&metrics] { metrics.observe_websocket_message_sent(); }});
  server.set_upgrade_handler([&service](const hsns::http::Request& req, const hsns::http::Peer& peer) {
    return service.upgrade(req, peer);
  });
  try {
    server.listen({net::ip::make_address(c.listen_address), c.port});
  } catch (const std::exception& e) {
    HSNS_LOG(error) << "cannot listen on " << c.listen_address << ":" << c.port << ": " << e.what();
    return 1;
  }
  server.start();
  hsns::ingest::SyslogReceiver syslog(ioc, c.syslog, hsns::ingest::topology_device_resolver(topology_cache),
                                      ingest_metrics);
  syslog.subscribe(hsns::ingest::keep_in(logs, ingest_metrics));
  try {
    syslog.start();
  } catch (const std::exception& e) {
    HSNS_LOG(error) << "syslog receiver: " << e.what();
    return 1;
  }
  if (auto at = syslog.udp_endpoint()) HSNS_LOG(info) << "syslog over UDP at " << *at;
  if (auto at = syslog.tcp_endpoint()) HSNS_LOG(info) << "syslog over TCP at " << *at;
  hsns::ingest::SnmpMetrics snmp_metrics(metrics.registry());
  hsns::ingest::StoreKpiSink snmp_samples(windowed_kpis);
  hsns::ingest::SnmpPoller snmp(c.snmp, hsns::ingest::topology_device_resolver(topology_cache), snmp_samples,
                                snmp_metrics);
  snmp.start();
  if (!c.snmp.switches.empty())
    HSNS_LOG(info) << "polling " << c.snmp.switches.size() << " switches over SNMP";
  hsns::ingest::PrometheusSourceMetrics prometheus_metrics(metrics.registry());
  hsns::ingest::PrometheusSources prometheus_sources(c.prometheus, snmp_samples, prometheus_metrics);
  prometheus_sources.start();
  if (!c.prometheus.sources.empty())
    HSNS_LOG(info) << "querying " << c.prometheus.sources.size() << " Prometheus sources";
  const auto bound = server.local_endpoint();
  auto alertmanager_config = c.alertmanager;
  if (alertmanager_config.external_url.empty()) {
    alertmanager_config.external_url = std::string(tls ? "https" : "http") + "://" +
                                       bound.address().to_string() + ":" + std::to_string(bound.port());
  }
  hsns::alarms::AlertmanagerPush alertmanager(alertmanager_config, metrics.registry());
  alarm_service.add_listener([&alertmanager](std::span<const hsns::brain::AlarmChange> changes) {
    alertmanager.on_changes(changes);
  });
  alertmanager.seed(alarm_service.active());
  alertmanager.start();
  alarm_service.start();
  if (!c.alertmanager.urls.empty())
    HSNS_LOG(info) << "pushing alarms to " << c.alertmanager.urls.size() << " Alertmanager(s)";
  metrics.set_max_connections(static_cast<double>(server.max_connections()));

  // Connection gauge and systemd watchdog, refreshed from the event loop (proves it makes progress).
  net::steady_timer tick(ioc);
  std::uint64_t watchdog_usec = 0;
  const bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0;
  std::function<void()> schedule_tick = [&] {
    tick.expires_after(std::chrono::milliseconds(500));
    tick.async_wait([&](boost::system::error_code ec) {
      if (ec) return;
      metrics.set_open_connections(static_cast<double>(server.open_connections()));
      if (watchdog) sd_notify(0, "WATCHDOG=1");
      schedule_tick();
    });
  };
  schedule_tick();

  // SIGHUP reloads the fault-pattern library (an invalid one is logged, the previous one stays).
  net::signal_set hangup(ioc, SIGHUP);
  std::function<void()> wait_hangup = [&] {
    hangup.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      if (!brain) {
        HSNS_LOG(info) << "SIGHUP: the network brain is off, nothing to reload";
      } else if (auto loaded = brain->reload(hsns::brain_pipeline::patterns_dir(c.brain)); loaded) {
        HSNS_LOG(info) << "SIGHUP: fault-pattern library reloaded, " << *loaded << " patterns";
      } else {
        HSNS_LOG(error) << "SIGHUP: fault-pattern library not reloaded (the previous one stays): "
                        << loaded.error().message();
      }
      wait_hangup();
    });
  };
  wait_hangup();

  net::steady_timer deadline(ioc);
  net::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code ec, int sig) {
    if (ec) return;
    HSNS_LOG(info) << "signal " << sig << ", stopping (in-flight requests finish)";
    sd_notify(0, "STOPPING=1");
    service.set_ready(false);
    tick.cancel();
    hangup.cancel();
    syslog.stop();
    deadline.expires_after(c.shutdown_grace);
    deadline.async_wait([&](boost::system::error_code e) {
      if (e) return;
      HSNS_LOG(warning) << "grace period over, closing remaining connections";
      ioc.stop();
    });
    server.shutdown([&] { net::post(ioc, [&] { deadline.cancel(); }); });
  });

  auto retention = std::make_unique<hsns::network::TelemetryRetention>(
      backend.telemetry(),
      hsns::store::RetentionPolicy{std::chrono::duration_cast<std::chrono::milliseconds>(c.telemetry_max_age),
                                   c.telemetry_max_bytes},
      c.telemetry_prune_interval, telemetry_metrics);
  auto kpi_retention = std::make_unique<hsns::kpis_api::KpiRetentionTask>(
      backend.kpis(), c.telemetry_prune_interval, kpi_metrics);
  service.set_ready(true);
  if (!c.ready_file.empty()) {
    const auto tmp = c.ready_file + ".tmp";
    std::ofstream(tmp) << bound.address().to_string() << " " << bound.port() << "\n";
    std::filesystem::rename(tmp, c.ready_file);
  }
  HSNS_LOG(info) << "version " << hsns::kVersion << " listening on " << (tls ? "https" : "http") << "://"
                 << bound.address().to_string() << ":" << bound.port() << " (" << backend.describe()
                 << ", at most " << server.max_connections() << " connections)";
  sd_notify(0, "READY=1");

  std::vector<std::thread> threads;
  for (int i = 1; i < c.threads; ++i) threads.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : threads) t.join();
  snmp.stop();
  service.stop_workers();    // heavy requests still running finish before the stores close
  if (brain) brain->stop();  // what is queued is processed; nothing feeds it any more
  alarm_service.stop();      // then its faults' alarms, their pushes and incidents settle
  alertmanager.stop();
  incidents.stop();
  prometheus_sources.stop();
  retention.reset();
  kpi_retention.reset();

  if (auto closed = backend.close(); !closed) {
    HSNS_LOG(warning) << "database close: " << closed.error().detail;
  }
  HSNS_LOG(info) << "stopped";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  hsns::log::init("hsns-aggregator");
  auto cl = hsns::parse_command_line(argc, argv);
  if (!cl) {
    HSNS_LOG(error) << cl.error();
    return 64;
  }
  hsns::log::set_level(cl->config.log_level);
  switch (cl->command) {
    case hsns::Command::exit_ok:
      return 0;
    case hsns::Command::check_config:
      return check_config(cl->config);
    case hsns::Command::run:
      return run(cl->config);
  }
  return 0;
}
