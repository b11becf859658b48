// How far a reading has moved the bad way from its own series' usual level: a receiver's light that slides
// a few dB (a dirty or bent fiber, a far laser ageing), or a module heating by tens of degrees in minutes,
// is a fault before it crosses any fixed or module threshold, and a module that has always sat at -9 dBm
// or at 60 degrees is not one.
//
// Contract:
// - departure(entity, ts_ms, value) answers how far value lies beyond the entity's own level in the bad
//   direction (Bad::lower: below it; Bad::higher: above it), in the reading's unit, 0 when on the good
//   side, and then moves the level: to a better reading at once, towards a worse one only slowly (time
//   constant `settle_s`), so that a change over minutes stands out against it while a permanent step (a
//   module swapped for a weaker one) is the new level after a few hours.
// - The first reading of an entity sets its level and answers 0. Readings at or before the entity's last
//   time answer the fall against the level without moving it. A non-finite value answers nullopt and
//   changes nothing.
// - Bounded: at most max_entities levels; a new entity beyond the cap forgets the oldest-inserted one.
// Pure; not thread-safe (the brain engine's thread owns it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hsns::brain {

class OwnLevel {
 public:
  enum class Bad : std::uint8_t { lower, higher };

  explicit OwnLevel(Bad bad, double settle_s = 6 * 3600.0, std::size_t max_entities = 200'000)
      : sign_(bad == Bad::lower ? 1.0 : -1.0), settle_s_(settle_s), max_entities_(max_entities) {}

  std::optional<double> departure(std::string_view entity, std::int64_t ts_ms, double value);
  std::size_t size() const { return levels_.size(); }

 private:
  struct Level {
    double value;
    std::int64_t ts_ms;
  };
  double sign_;  // +1: lower is worse; -1: higher is worse (levels are kept as sign_ x reading)
  double settle_s_;
  std::size_t max_entities_;
  std::unordered_map<std::string, Level> levels_;
  std::deque<std::string> order_;  // insertion order, for the cap
};

}  // namespace hsns::brain
