#include "api/overlays/stream.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "api/overlays/routes.h"
#include "hsns/log.h"
#include "hsns/time.h"
#include "http/json_io.h"

namespace hsns::overlays {
namespace {

constexpr unsigned kAllTiers = 7;

unsigned mask_of(const topology_api::UpperFilter& upper) {
  return (upper[1] ? 1U : 0U) | (upper[2] ? 2U : 0U) | (upper[3] ? 4U : 0U);
}

topology_api::UpperFilter filter_of(unsigned mask) {
  return {false, (mask & 1U) != 0, (mask & 2U) != 0, (mask & 4U) != 0};
}

std::string topic_of(const std::string& overlay, std::int64_t max_age_s, unsigned mask) {
  return "overlay-grades:" + overlay + ":" + std::to_string(max_age_s) + ":" + std::to_string(mask);
}

const prometheus::Histogram::BucketBoundaries& buckets() {
  static const prometheus::Histogram::BucketBoundaries b{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                         0.1,    0.25,  0.5,    1,     2.5,  5};
  return b;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string grade_topic(const std::string& overlay, std::int64_t max_age_s,
                        const topology_api::UpperFilter& upper) {
  return topic_of(overlay, max_age_s, mask_of(upper));
}

OverlayGradeNotifier::OverlayGradeNotifier(OverlaySettings overlays, store::MarkedKpiStore& kpis,
                                           std::shared_ptr<services::TopologyCache> topology,
                                           http::WebSocketHub& hub, prometheus::Registry& registry,
                                           std::chrono::milliseconds period,
                                           std::chrono::milliseconds refresh)
    : overlays_(std::move(overlays)),
      kpis_(kpis),
      topology_(std::move(topology)),
      hub_(hub),
      refresh_(refresh),
      seconds_(prometheus::BuildHistogram()
                   .Name("hsns_overlay_grading_seconds")
                   .Help("Time of each step of a live metric overlay's grading (read, grade, send)")
                   .Register(registry)),
      thread_("overlay grades", {.period = period, .start = PeriodicThread::Start::after_period},
              [this] { tick(); }) {}

OverlayGradeNotifier::~OverlayGradeNotifier() {
  thread_.stop();  // before the members its ticks use go
}

void OverlayGradeNotifier::open(std::size_t overlay, std::int64_t max_age_s,
                                const topology_api::UpperFilter& upper,
                                std::shared_ptr<http::WebSocketChannel> channel) {
  {
    const std::lock_guard lock(mutex_);
    pending_.push_back(Pending{Key{overlay, max_age_s}, upper, std::move(channel)});
  }
  thread_.wake();
}

bool OverlayGradeNotifier::followed(const Key& key) const {
  for (unsigned mask = 1; mask <= kAllTiers; ++mask) {
    if (hub_.subscribers(topic_of(overlays_[key.overlay].id, key.max_age_s, mask)) > 0) return true;
  }
  return false;
}

const std::vector<std::int64_t>& OverlayGradeNotifier::positions(const topology::Topology& t, unsigned mask) {
  auto it = positions_.find(mask);
  if (it == positions_.end()) it = positions_.emplace(mask, link_positions(t, filter_of(mask))).first;
  return it->second;
}

// Grades the overlay with the key's max age again and publishes what changed to its topics; false when
// it could not be graded.
bool OverlayGradeNotifier::regrade(const Key& key, Followed& f) {
  const auto& o = overlays_[key.overlay];
  auto snapshot = topology_->current();  // the cached model (parsed here, off the I/O threads, if not yet)
  if (!snapshot) return false;
  if (snapshot->topology != model_) {
    model_ = snapshot->topology;
    positions_.clear();
  }
  const std::int64_t since_ms = unix_now_ms() - key.max_age_s * 1000;
  const auto started = std::chrono::steady_clock::now();
  auto values = read_entity_values(kpis_, o, std::nullopt, since_ms);
  if (!values) {
    HSNS_LOG(warning) << "overlay " << o.id << " grades: " << values.error().message();
    return false;
  }
  const auto read = std::chrono::steady_clock::now();
  seconds_.Add({{"overlay", o.id}, {"step", "read"}}, buckets()).Observe(seconds_since(started));
  Grades next = grade_topology(o, *model_, snapshot->revision, *values);
  f.graded = std::chrono::steady_clock::now();
  seconds_.Add({{"overlay", o.id}, {"step", "grade"}}, buckets()).Observe(seconds_since(read));
  if (f.grades) {
    for (unsigned mask = 1; mask <= kAllTiers; ++mask) {
      const auto topic = topic_of(o.id, key.max_age_s, mask);
      if (hub_.subscribers(topic) == 0) continue;
      const auto& at = positions(*model_, mask);
      if (f.grades->revision == next.revision && f.grades->links.size() == next.links.size()) {
        if (auto changes = changes_json(o, *f.grades, next, at)) hub_.publish(topic, changes->dump());
      } else {
        hub_.publish(topic, groups_json(o, next).dump());
        hub_.publish(topic, grades_json(o, next, at, std::nullopt, since_ms).dump(),
                     http::MessageKind::state);
      }
    }
    seconds_.Add({{"overlay", o.id}, {"step", "send"}}, buckets()).Observe(seconds_since(f.graded));
  }
  f.grades = std::move(next);
  return true;
}

void OverlayGradeNotifier::tick() {
  std::vector<Pending> opened;
  {
    const std::lock_guard lock(mutex_);
    opened.swap(pending_);
  }
  {
    // Marks read before the data: a write after them moves them again (store/marked_kpi_store.h).
    const std::uint64_t kpis_mark = kpis_.change_mark();
    const std::optional<std::int64_t> topology_mark = topology_->change_mark();
    const bool moved = kpis_mark != seen_kpis_ || topology_mark != seen_topology_ || !topology_mark;
    seen_kpis_ = kpis_mark;
    seen_topology_ = topology_mark;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& p : opened) followed_.try_emplace(p.key);
    for (auto it = followed_.begin(); it != followed_.end();) {
      const Key& key = it->first;
      auto& f = it->second;
      const bool opening =
          std::any_of(opened.begin(), opened.end(), [&key](const Pending& p) { return p.key == key; });
      if (!opening && !followed(key)) {
        it = followed_.erase(it);  // nobody follows it any more: not graded, its grades forgotten
        continue;
      }
      // Readings age out of a short max age sooner than `refresh`.
      const auto refresh = std::min<std::chrono::milliseconds>(refresh_, std::chrono::seconds(key.max_age_s));
      if (!f.grades || moved || now - f.graded >= refresh) regrade(key, f);
      ++it;
    }
    for (auto& p : opened) {
      const auto& f = followed_[p.key];
      if (!f.grades || !model_) {
        // Not graded (no topology yet, or the store failed): nothing to start the session with.
        p.channel->close(1011, "the grades could not be read");
        continue;
      }
      const auto& o = overlays_[p.key.overlay];
      const auto mask = mask_of(p.upper);
      p.channel->send_text(groups_json(o, *f.grades).dump());
      p.channel->send_state(grades_json(o, *f.grades, positions(*model_, mask), std::nullopt,
                                        unix_now_ms() - p.key.max_age_s * 1000)
                                .dump());
      hub_.subscribe(topic_of(o.id, p.key.max_age_s, mask), p.channel);
    }
  }
}

void register_overlay_stream(http::Router& router, OverlayGradeNotifier& notifier) {
  router.add_websocket(
      "/api/v1/overlays/{id}/stream", http::permits(http::Permission::read),
      [&notifier](const http::RequestContext& ctx, const std::shared_ptr<http::WebSocketChannel>& channel) {
        const auto refuse = [&channel](const std::string& detail) {
          channel->close(1008, detail.substr(0, 120));
        };
        const auto id = ctx.path_param("id");
        const auto& all = notifier.overlays();
        std::size_t index = all.size();
        for (std::size_t i = 0; i < all.size(); ++i) {
          if (is_metric(all[i]) && all[i].id == id) index = i;
        }
        if (index == all.size())
          return refuse("id: no metric overlay is called \"" + std::string(id.substr(0, 32)) + "\"");
        if (auto bad = http::check_query(ctx, {"max_age_s", "upper"})) return refuse(bad->detail);
        const auto upper = topology_api::parse_upper_filter(ctx);
        if (!upper) return refuse("upper: " + upper.error().detail);
        const auto max_age = parse_grade_max_age(ctx);
        if (!max_age) return refuse(max_age.error().name + ": " + max_age.error().reason);
        notifier.open(index, *max_age, *upper, channel);
      });
}

}  // namespace hsns::overlays
