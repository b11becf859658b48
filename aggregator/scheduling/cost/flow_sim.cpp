#include "scheduling/cost/flow_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hsns::cost {

namespace {

tl::expected<void, std::string> check(const std::vector<double>& capacity,
                                      const std::vector<SimFlow>& flows) {
  for (std::size_t l = 0; l < capacity.size(); ++l) {
    if (!(capacity[l] > 0) || !std::isfinite(capacity[l])) {
      return tl::unexpected("link " + std::to_string(l) + ": capacity must be a finite number > 0");
    }
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const auto& f = flows[i];
    const std::string where = "flow " + std::to_string(i);
    if (!std::isfinite(f.bytes) || f.bytes < 0)
      return tl::unexpected(where + ": bytes must be finite and >= 0");
    if (f.bytes > 0 && f.path.empty()) return tl::unexpected(where + ": a flow with bytes needs a path");
    for (std::size_t k = 0; k < f.path.size(); ++k) {
      if (f.path[k] >= capacity.size()) return tl::unexpected(where + ": link index out of range");
      if (std::find(f.path.begin(), f.path.begin() + static_cast<std::ptrdiff_t>(k), f.path[k]) !=
          f.path.begin() + static_cast<std::ptrdiff_t>(k)) {
        return tl::unexpected(where + ": link " + std::to_string(f.path[k]) + " appears twice in the path");
      }
    }
  }
  return {};
}

std::vector<double> water_fill(const std::vector<double>& capacity, const std::vector<SimFlow>& flows,
                               const std::vector<bool>& active) {
  std::vector<double> rate(flows.size(), 0);
  std::vector<double> remaining = capacity;
  std::vector<std::uint32_t> unfrozen(capacity.size(), 0);
  std::vector<std::vector<std::uint32_t>> on_link(capacity.size());
  std::vector<bool> frozen(flows.size(), true);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!active[i] || flows[i].bytes <= 0) continue;
    frozen[i] = false;
    for (auto l : flows[i].path) {
      ++unfrozen[l];
      on_link[l].push_back(static_cast<std::uint32_t>(i));
    }
  }
  for (;;) {
    double share = std::numeric_limits<double>::infinity();
    std::size_t bottleneck = capacity.size();
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      if (unfrozen[l] == 0) continue;
      const double s = std::max(0.0, remaining[l]) / unfrozen[l];
      if (s < share) {
        share = s;
        bottleneck = l;
      }
    }
    if (bottleneck == capacity.size()) break;
    for (std::uint32_t i : on_link[bottleneck]) {
      if (frozen[i]) continue;
      frozen[i] = true;
      rate[i] = share;
      for (auto l : flows[i].path) {
        remaining[l] -= share;
        --unfrozen[l];
      }
    }
  }
  return rate;
}

}  // namespace

tl::expected<std::vector<double>, std::string> max_min_rates(const std::vector<double>& capacity,
                                                             const std::vector<SimFlow>& flows,
                                                             const std::vector<bool>& active) {
  if (auto ok = check(capacity, flows); !ok) return tl::unexpected(ok.error());
  if (active.size() != flows.size()) return tl::unexpected(std::string("active: one entry per flow"));
  return water_fill(capacity, flows, active);
}

tl::expected<SimResult, std::string> simulate(const std::vector<double>& capacity,
                                              const std::vector<SimFlow>& flows) {
  if (auto ok = check(capacity, flows); !ok) return tl::unexpected(ok.error());
  SimResult result;
  result.completion.assign(flows.size(), 0);
  std::vector<double> left(flows.size());
  std::vector<bool> active(flows.size());
  std::size_t running = 0;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    left[i] = flows[i].bytes;
    active[i] = flows[i].bytes > 0;
    running += active[i] ? 1 : 0;
  }
  double now = 0;
  while (running > 0) {
    const std::vector<double> rate = water_fill(capacity, flows, active);
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (active[i] && rate[i] > 0) step = std::min(step, left[i] / rate[i]);
    }
    if (!std::isfinite(step)) return tl::unexpected(std::string("simulation stalled: no flow can progress"));
    now += step;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (!active[i]) continue;
      left[i] -= rate[i] * step;
      // A relative tolerance absorbs the rounding of rate * step.
      if (left[i] <= flows[i].bytes * 1e-12) {
        active[i] = false;
        --running;
        result.completion[i] = now;
      }
    }
  }
  result.makespan = now;
  return result;
}

tl::expected<PhasedResult, std::string> simulate_phases(const std::vector<double>& capacity,
                                                        const std::vector<SimPhase>& phases) {
  PhasedResult out;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (!std::isfinite(phases[p].latency_s) || phases[p].latency_s < 0) {
      return tl::unexpected("phase " + std::to_string(p) + ": latency must be finite and >= 0");
    }
    auto r = simulate(capacity, phases[p].flows);
    if (!r) return tl::unexpected("phase " + std::to_string(p) + ": " + r.error());
    const double t = phases[p].latency_s + r->makespan;
    out.phase_seconds.push_back(t);
    out.makespan += t;
  }
  return out;
}

}  // namespace hsns::cost
