// DetectorBank: the incremental anomaly detectors of every (entity, metric) series, fed one sample at a
// time, answering anomaly events that are raised while an anomaly lasts and cleared when it ends.
//
// Contract: not thread-safe (one owner, e.g. the aggregator's ingest strand). Per sample: one hash lookup
// and the series' detectors (series.h), constant work. Memory: at most limits.max_series series, each of a
// size fixed by its configuration; a new series beyond the cap evicts the least recently updated one
// (counted; its raised anomalies are reported cleared with detail "series evicted"). A sample older than
// its series' last is late, one at the same time a duplicate: both are counted and ignored, as are
// non-finite values and entities containing a NUL byte (invalid) and metrics the configuration does not
// track or declares without any detector enabled (untracked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "brain/config.h"
#include "brain/series.h"

namespace hsns::brain {

struct Sample {
  std::string_view entity;  // e.g. "host0042/mlx5_3/1"
  std::string_view metric;  // e.g. "rx_power_dbm"
  std::int64_t timestamp_ms = 0;
  double value = 0;
};

enum class EventState : std::uint8_t { raised, cleared };
std::string_view to_string(EventState state);

struct AnomalyEvent {
  std::string entity;
  std::string metric;
  AnomalyKind kind = AnomalyKind::deviation;
  EventState state = EventState::raised;
  std::int64_t started_ms = 0;
  std::int64_t ended_ms = 0;  // cleared events only
  double value = 0;           // what the detector saw (a counter's rate; burst: the increments)
  double baseline = 0;        // median, reference mean, bound or maximum rate
  double score = 0;
  std::string detail;
};

struct BankLimits {
  std::size_t max_series = 100'000;  // at least 1
};

struct BankStats {
  std::uint64_t samples = 0;  // every sample offered
  std::uint64_t accepted = 0;
  std::uint64_t late = 0;
  std::uint64_t duplicate = 0;
  std::uint64_t invalid = 0;
  std::uint64_t untracked = 0;
  std::uint64_t evicted = 0;
  std::uint64_t counter_resets = 0;
  std::uint64_t counter_wraps = 0;
  std::uint64_t raised = 0;
  std::uint64_t cleared = 0;
};

class DetectorBank {
 public:
  explicit DetectorBank(BrainConfig config, BankLimits limits = {});
  DetectorBank(const DetectorBank&) = delete;
  DetectorBank& operator=(const DetectorBank&) = delete;

  // Appends the sample's events (usually none) to `events`.
  void observe(const Sample& sample, std::vector<AnomalyEvent>& events);

  const BankStats& stats() const { return stats_; }
  std::size_t series_count() const { return index_.size(); }
  bool has_series(std::string_view entity, std::string_view metric) const;
  // Anomalies raised and not yet cleared, over every series.
  std::size_t active_anomalies() const;
  const BrainConfig& config() const { return config_; }

 private:
  struct Series {
    Series(std::string k, std::size_t entity_size, const DetectorConfig& c)
        : key(std::move(k)), entity_length(entity_size), config(&c), detectors(c) {}
    std::string key;  // entity '\0' metric
    std::size_t entity_length;
    const DetectorConfig* config;  // owned by config_
    bool has_last = false;
    std::int64_t last_ms = 0;
    SeriesDetectors detectors;
  };
  using Lru = std::list<Series>;  // most recently updated first

  void build_key(std::string_view entity, std::string_view metric);
  Series* find_or_add(const Sample& sample, std::vector<AnomalyEvent>& events);
  void emit(const Series& series, const SeriesStep& step, const char* reason,
            std::vector<AnomalyEvent>& events);

  BrainConfig config_;
  BankLimits limits_;
  BankStats stats_;
  Lru lru_;
  std::unordered_map<std::string_view, Lru::iterator> index_;  // keys view Series::key
  std::string key_;                                            // scratch, reused for every lookup
};

}  // namespace hsns::brain
