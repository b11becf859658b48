// The KPI sink every source writes through (POST /api/v1/kpis, reports, SNMP, Prometheus sources): it
// refuses samples dated beyond the data time window's future bound (ingest/data_time.h) before the store
// and the brain see them, so one sender's clock cannot make a series refuse every later sample as late,
// nor move the brain's clock.
//
// Contract: append(samples) validates the batch as the store does (a bad sample is the store's invalid
// error naming "samples[i].<field>" with its index in the batch as sent, and nothing is stored); then the
// samples dated after now + max_future are counted in the result's `future` (and in
// hsns_ingest_data_time_outside_window_total{source="kpis",direction="future"}) and the rest go to the
// inner sink. Samples in the past are the store's to judge (its late window and raw retention).
// Thread-safe as the inner sink is.
#pragma once

#include <cstdint>
#include <functional>

#include "ingest/data_time.h"
#include "ingest/syslog_receiver.h"
#include "store/kpi_store.h"

namespace hsns::ingest {

class WindowedKpiSink : public store::KpiSink {
 public:
  using WallClock = std::function<std::int64_t()>;  // Unix milliseconds
  WindowedKpiSink(store::KpiSink& inner, DataTimeWindow window, IngestMetrics& metrics, WallClock now);

  store::StoreResult<store::KpiAppendResult> append(std::span<const store::KpiSample> samples) override;

 private:
  store::KpiSink& inner_;
  DataTimeWindow window_;
  IngestMetrics& metrics_;
  WallClock now_;
};

}  // namespace hsns::ingest
