// Where the ingest paths meet the brain pipeline (engine.h): one tee at the KPI sink interface and one
// observer of the log buffer, so that no ingest source knows the engine.
//
// Contract:
// - BrainKpiStore is a KpiStore that forwards every call to the store it wraps; a batch the store accepted
//   (append answered a value) is also submitted to the engine, in the order given (duplicates and late
//   samples included: the detector bank counts and ignores them itself). A refused batch never reaches the
//   engine. The report route, POST /api/v1/kpis and the SNMP poller's StoreKpiSink all append through it.
//   A full engine queue drops (counted there), never fails or delays the append.
// - log_input(log) is the engine's copy of a parsed message: entity the topology device when the hostname
//   named one, else the hostname as sent (else the device string, "unknown:<source>"), the message, app,
//   hostname, msgid, procid, severity, structured data flattened to "<sd-id>.<param>" fields, and the
//   message's own time (clamped to the receive time by the buffer when outside the data time window).
//   feed_logs(buffer, engine) makes the buffer hand every message of a topology device offered to it
//   (syslog lines and pushed events) to the engine; a sender the topology does not name (an invented or
//   spoofed hostname) is kept in the log but raises no alarm.
// Thread-safe as the store and the engine.
#pragma once

#include "brain/engine.h"
#include "ingest/log_buffer.h"
#include "store/kpi_store.h"

namespace hsns::brain_pipeline {

class BrainKpiStore final : public store::KpiStore {
 public:
  BrainKpiStore(store::KpiStore& store, BrainEngine* engine) : store_(store), engine_(engine) {}

  store::StoreResult<store::KpiAppendResult> append(std::span<const store::KpiSample> samples) override;
  store::StoreResult<store::KpiSeriesPoints> query(const store::KpiQuery& q) override {
    return store_.query(q);
  }
  store::StoreResult<store::KpiSeriesList> list_series(const store::KpiSeriesFilter& filter) override {
    return store_.list_series(filter);
  }
  store::StoreResult<store::KpiLatestValues> latest(const store::KpiLatestQuery& q) override {
    return store_.latest(q);
  }
  store::StoreResult<store::KpiPruneResult> prune(std::chrono::system_clock::time_point now) override {
    return store_.prune(now);
  }

 private:
  store::KpiStore& store_;
  BrainEngine* engine_;  // nullptr: the brain is off, a plain pass-through
};

LogInput log_input(const ingest::IngestedLog& log);
void feed_logs(ingest::LogBuffer& buffer, BrainEngine& engine);

}  // namespace hsns::brain_pipeline
