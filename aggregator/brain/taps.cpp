#include "brain/taps.h"

namespace hsns::brain_pipeline {

store::StoreResult<store::KpiAppendResult> BrainKpiStore::append(std::span<const store::KpiSample> samples) {
  auto result = store_.append(samples);
  if (result && engine_ != nullptr) engine_->submit(samples);
  return result;
}

LogInput log_input(const ingest::IngestedLog& log) {
  const auto& m = log.message;
  LogInput in;
  if (log.known_device) {
    in.entity = log.device;
  } else {
    in.entity = m.hostname.empty() ? log.device : m.hostname;
  }
  in.timestamp_ms = m.timestamp_ms;
  in.message = m.message;
  in.app = m.app;
  in.hostname = m.hostname;
  in.msgid = m.msgid;
  in.procid = m.procid;
  in.severity = m.severity;
  for (const auto& element : m.structured_data) {
    for (const auto& param : element.params)
      in.fields.emplace_back(element.id + "." + param.name, param.value);
  }
  return in;
}

void feed_logs(ingest::LogBuffer& buffer, BrainEngine& engine) {
  buffer.set_observer([&engine](const ingest::IngestedLog& log) {
    if (log.known_device) engine.submit(log_input(log));
  });
}

}  // namespace hsns::brain_pipeline
