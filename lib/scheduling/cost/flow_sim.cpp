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

// Progressive filling. The bottleneck of each round is the link with the smallest fair share
// remaining / unfrozen (ties: lowest index), kept in a min-heap with lazy deletion: an entry is current
// while its link's version is unchanged, and a link's version changes whenever one of its flows freezes.
// Same rounds, shares and subtractions, in the same order, as a scan over every link per round, at
// O((links + flows x path) log links) instead of O(links x rounds).
std::vector<double> water_fill(const std::vector<double>& capacity, const std::vector<SimFlow>& flows,
                               const std::vector<bool>& active) {
  std::vector<double> rate(flows.size(), 0);
  std::vector<double> remaining = capacity;
  std::vector<std::uint32_t> unfrozen(capacity.size(), 0);
  std::vector<std::uint32_t> first(capacity.size() + 1, 0);  // flows of link l: on_link[first[l]..first[l+1])
  std::vector<bool> frozen(flows.size(), true);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!active[i] || flows[i].bytes <= 0) continue;
    frozen[i] = false;
    for (auto l : flows[i].path) ++unfrozen[l];
  }
  for (std::size_t l = 0; l < capacity.size(); ++l) first[l + 1] = first[l] + unfrozen[l];
  std::vector<std::uint32_t> on_link(first.back());
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (frozen[i]) continue;
      for (auto l : flows[i].path) on_link[fill[l]++] = static_cast<std::uint32_t>(i);
    }
  }
  struct Entry {
    double share;
    std::uint32_t link;
    std::uint32_t version;
  };
  // std::push_heap builds a max-heap: "a < b" means b pops first, i.e. b has the smaller (share, link).
  auto later = [](const Entry& a, const Entry& b) {
    return a.share > b.share || (a.share == b.share && a.link > b.link);
  };
  std::vector<std::uint32_t> version(capacity.size(), 0);
  std::vector<Entry> heap;
  auto share_of = [&](std::size_t l) { return std::max(0.0, remaining[l]) / unfrozen[l]; };
  for (std::size_t l = 0; l < capacity.size(); ++l) {
    if (unfrozen[l] > 0) heap.push_back({share_of(l), static_cast<std::uint32_t>(l), 0});
  }
  std::make_heap(heap.begin(), heap.end(), later);
  std::vector<std::uint32_t> touched;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Entry top = heap.back();
    heap.pop_back();
    if (top.version != version[top.link] || unfrozen[top.link] == 0) continue;
    const double share = top.share;
    touched.clear();
    for (std::uint32_t k = first[top.link]; k < first[top.link + 1]; ++k) {
      const std::uint32_t i = on_link[k];
      if (frozen[i]) continue;
      frozen[i] = true;
      rate[i] = share;
      for (auto l : flows[i].path) {
        remaining[l] -= share;
        --unfrozen[l];
        touched.push_back(l);
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (std::uint32_t l : touched) {
      ++version[l];
      if (unfrozen[l] > 0) {
        heap.push_back({share_of(l), l, version[l]});
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }
  return rate;
}

bool same_flows(const std::vector<SimFlow>& a, const std::vector<SimFlow>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const SimFlow& x, const SimFlow& y) {
    return x.bytes == y.bytes && x.path == y.path;
  });
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
  double makespan = 0;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (!std::isfinite(phases[p].latency_s) || phases[p].latency_s < 0) {
      return tl::unexpected("phase " + std::to_string(p) + ": latency must be finite and >= 0");
    }
    // A phase with the same flows as the one before (a ring's 2(n-1) steps) takes the same time.
    if (p == 0 || !same_flows(phases[p].flows, phases[p - 1].flows)) {
      auto r = simulate(capacity, phases[p].flows);
      if (!r) return tl::unexpected("phase " + std::to_string(p) + ": " + r.error());
      makespan = r->makespan;
    }
    const double t = phases[p].latency_s + makespan;
    out.phase_seconds.push_back(t);
    out.makespan += t;
  }
  return out;
}

}  // namespace hsns::cost
