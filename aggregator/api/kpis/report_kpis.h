// The KPI samples of an hsnsd telemetry report (hsns/proto/report.h): what the network brain's series
// are made of (docs/brain.md, "KPI store": the entity ids and metric names).
//
// Contract:
// - report_kpi_samples(host, report) is pure: one sample per (port, metric) present in the report.
//   Entity: "<host>/<netdev>" (the topology's host and NPU port names, so a series leads to its link),
//   "<host>/<rdma device>/<port>" for an RDMA port without a netdev.
//   * counters section (only when interval_ms > 0: the first snapshot's rates are no reading), at its
//     ts_ms, each counter's rate as "<counter>_per_s": the netdev statistics in kNetdevRateCounters, the
//     RDMA counters and hw counters in kRdmaRateCounters, and the PFC pause of each priority as
//     "pfc_prio<N>_{rx,tx}_pause_per_s" (frames) and "pfc_prio<N>_{rx,tx}_pause_us_per_s" (duration).
//   * optics section, at its ts_ms, modules with status ok: "module_temperature_celsius",
//     "module_voltage_volts", and per lane "lane<N>_tx_power_watts", "lane<N>_rx_power_watts",
//     "lane<N>_bias_amperes" (what the module reports; base units).
//   A sample that would not pass validate_kpi_samples (an entity too long, say) is left out.
// - ReportKpiRecorder is the report route's observer (api/agents/reports.h): it appends a report's
//   samples to the sink and counts them (hsns_kpi_samples_total{source="report"}); a refused append is
//   logged and counted (hsns_kpi_append_failures_total{source="report"}) and never fails the report,
//   whose rows are stored already. Thread-safe as the sink.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "api/kpis/metrics.h"
#include "hsns/proto/report.h"
#include "store/kpi_store.h"

namespace hsns::kpis_api {

inline constexpr std::array<const char*, 8> kNetdevRateCounters = {
    "rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"};

inline constexpr std::array<const char*, 23> kRdmaRateCounters = {
    // counters/ (InfiniBand port counters, also on RoCE)
    "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "link_downed", "symbol_error",
    "port_rcv_errors", "link_error_recovery", "port_xmit_discards", "port_xmit_wait",
    // hw_counters/ (mlx5 RoCE congestion and transport)
    "np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "rp_cnp_ignored", "out_of_sequence",
    "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err", "rnr_nak_retry_err", "out_of_buffer",
    "duplicate_request", "roce_adp_retrans", "roce_slow_restart"};

std::vector<store::KpiSample> report_kpi_samples(const std::string& host, const proto::Report& report);

class ReportKpiRecorder {
 public:
  ReportKpiRecorder(store::KpiSink& sink, KpiMetrics& metrics) : sink_(sink), metrics_(metrics) {}
  void operator()(const std::string& host, const proto::Report& report) const;

 private:
  store::KpiSink& sink_;
  KpiMetrics& metrics_;
};

}  // namespace hsns::kpis_api
