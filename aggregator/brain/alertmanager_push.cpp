#include "brain/alertmanager_push.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "brain/alarm_service.h"
#include "hsns/http_client.h"
#include "hsns/log.h"
#include "hsns/time.h"

namespace hsns::alarms {

struct AlertmanagerPush::Target {
  std::string url;
  std::unique_ptr<HttpClient> client;  // null when the URL could not be used (logged once)
  std::deque<std::shared_ptr<const std::string>> queue;
  std::chrono::steady_clock::time_point next_attempt{};
  std::chrono::milliseconds backoff{0};
  bool failing = false;  // logged once per run of failures
};

AlertmanagerPush::AlertmanagerPush(AlertmanagerConfig config, prometheus::Registry& registry)
    : config_(std::move(config)),
      sent_(prometheus::BuildCounter()
                .Name("hsns_alarms_alertmanager_sent_total")
                .Help("Alerts an Alertmanager accepted (counted per URL)")
                .Register(registry)
                .Add({})),
      failures_(prometheus::BuildCounter()
                    .Name("hsns_alarms_alertmanager_push_failures_total")
                    .Help("POSTs to an Alertmanager that failed (retried with backoff)")
                    .Register(registry)
                    .Add({})),
      dropped_(prometheus::BuildCounter()
                   .Name("hsns_alarms_alertmanager_dropped_total")
                   .Help("Alerts dropped because an Alertmanager's queue was full")
                   .Register(registry)
                   .Add({})),
      queued_(prometheus::BuildGauge()
                  .Name("hsns_alarms_alertmanager_queued")
                  .Help("Alerts waiting to be sent, over every Alertmanager")
                  .Register(registry)
                  .Add({})) {
  for (const auto& url : config_.urls) {
    auto t = std::make_unique<Target>();
    t->url = url;
    HttpClientOptions options;
    options.timeout = config_.timeout;
    options.user_agent = "hsns-aggregator alarms";
    auto client = HttpClient::make(url, options);
    if (client) {
      t->client = std::make_unique<HttpClient>(std::move(*client));
    } else {
      HSNS_LOG(error) << "alertmanager " << url << ": " << client.error() << "; alerts to it are dropped";
    }
    targets_.push_back(std::move(t));
  }
}

AlertmanagerPush::~AlertmanagerPush() {
  stop();
}

std::string AlertmanagerPush::alert_json(const brain::Alarm& a, bool resolved,
                                         std::int64_t wall_now_ms) const {
  const std::int64_t resend = config_.resend_interval.count();
  std::int64_t ends = resolved ? (a.cleared_ms != 0 ? a.cleared_ms : wall_now_ms) : wall_now_ms + 4 * resend;
  ends = std::max(ends, a.first_ms);
  nlohmann::json alert = {{"labels",
                           {{"alertname", a.type},
                            {"fault", a.fault},
                            {"severity", std::string(brain::to_string(a.severity))},
                            {"entity", a.entity},
                            {"root_cause", a.root_cause},
                            {"alarm_id", a.id}}},
                          {"annotations",
                           {{"detail", a.detail},
                            {"state", std::string(brain::to_string(a.state))},
                            {"count", std::to_string(a.count)},
                            {"flapping", a.flapping ? "true" : "false"}}},
                          {"startsAt", format_time_ms(a.first_ms)},
                          {"endsAt", format_time_ms(ends)},
                          {"generatorURL", config_.external_url + "/api/v1/alarms/" + a.id}};
  return alert.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void AlertmanagerPush::enqueue_locked(const std::shared_ptr<const std::string>& alert) {
  for (auto& t : targets_) {
    if (!t->client || t->queue.size() >= config_.queue_max) {
      ++stats_.dropped;
      dropped_.Increment();
      continue;
    }
    t->queue.push_back(alert);
    ++stats_.queued;
  }
}

void AlertmanagerPush::on_changes(std::span<const brain::AlarmChange> changes) {
  if (targets_.empty()) return;
  using K = brain::AlarmChangeKind;
  const std::int64_t now = unix_now_ms();
  bool queued = false;
  {
    std::lock_guard lock(mu_);
    for (const brain::AlarmChange& c : changes) {
      const brain::Alarm& a = c;
      const bool notify_firing =
          !c.suppressed && (c.change == K::raised || c.change == K::reopened || c.change == K::unsuppressed);
      const bool notify_resolved = c.change == K::cleared || c.change == K::suppressed;
      if (notify_firing) {
        if (active_.size() < config_.max_active || active_.contains(a.id)) active_[a.id] = a;
        enqueue_locked(std::make_shared<const std::string>(alert_json(a, false, now)));
        queued = true;
      } else if (notify_resolved) {
        // A silenced alarm leaves Alertmanager as resolved; one never sent firing needs no resolve.
        const bool was_active = active_.erase(a.id) > 0;
        if (was_active || (c.change == K::cleared && !c.suppressed)) {
          enqueue_locked(std::make_shared<const std::string>(alert_json(a, true, now)));
          queued = true;
        }
      } else if (auto it = active_.find(a.id); it != active_.end()) {
        it->second = a;  // the next re-send carries the new count, detail, flapping
      }
    }
    queued_.Set(static_cast<double>(stats_.queued));
  }
  if (queued) cv_.notify_all();
}

void AlertmanagerPush::seed(std::span<const brain::Alarm> alarms) {
  if (targets_.empty()) return;
  const std::int64_t now = unix_now_ms();
  {
    std::lock_guard lock(mu_);
    for (const brain::Alarm& a : alarms) {
      if (a.suppressed || a.state == brain::AlarmState::cleared || active_.size() >= config_.max_active)
        continue;
      active_[a.id] = a;
      enqueue_locked(std::make_shared<const std::string>(alert_json(a, false, now)));
    }
    queued_.Set(static_cast<double>(stats_.queued));
  }
  cv_.notify_all();
}

void AlertmanagerPush::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || targets_.empty()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void AlertmanagerPush::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

AlertmanagerPush::Stats AlertmanagerPush::stats() const {
  std::lock_guard lock(mu_);
  Stats s = stats_;
  s.active = active_.size();
  return s;
}

void AlertmanagerPush::run() {
  using Clock = std::chrono::steady_clock;
  auto next_resend = Clock::now() + config_.resend_interval;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = Clock::now();
    if (now >= next_resend) {
      next_resend = now + config_.resend_interval;
      const std::int64_t wall = unix_now_ms();
      for (const auto& [id, a] : active_)
        enqueue_locked(std::make_shared<const std::string>(alert_json(a, false, wall)));
      queued_.Set(static_cast<double>(stats_.queued));
    }
    // The next due target: one batch for it, sent without the lock.
    Target* due = nullptr;
    auto wake = next_resend;
    for (auto& t : targets_) {
      if (t->queue.empty()) continue;
      if (t->next_attempt <= now) {
        due = t.get();
        break;
      }
      wake = std::min(wake, t->next_attempt);
    }
    if (due == nullptr) {
      cv_.wait_until(lock, wake, [this, &wake] {
        if (stopping_ || Clock::now() >= wake) return true;
        return std::any_of(targets_.begin(), targets_.end(), [](const auto& t) {
          return !t->queue.empty() && t->next_attempt <= Clock::now();
        });
      });
      continue;
    }
    const std::size_t n = std::min(config_.batch_max, due->queue.size());
    std::string body = "[";
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) body += ',';
      body += *due->queue[i];
    }
    body += ']';
    lock.unlock();
    // Only this thread pops a queue and enqueue appends at the back, so the first n are still these.
    auto answer = due->client->request("POST", "/api/v2/alerts", body, "application/json");
    lock.lock();
    const bool ok = answer && answer->status >= 200 && answer->status < 300;
    if (ok) {
      due->queue.erase(due->queue.begin(), due->queue.begin() + static_cast<std::ptrdiff_t>(n));
      stats_.queued -= n;
      stats_.sent += n;
      sent_.Increment(static_cast<double>(n));
      due->backoff = std::chrono::milliseconds(0);
      due->next_attempt = Clock::now();
      if (due->failing) HSNS_LOG(info) << "alertmanager " << due->url << ": sending again";
      due->failing = false;
    } else {
      ++stats_.failures;
      failures_.Increment();
      due->backoff =
          due->backoff.count() == 0 ? config_.backoff_min : std::min(config_.backoff_max, due->backoff * 2);
      due->next_attempt = Clock::now() + due->backoff;
      if (!due->failing) {
        HSNS_LOG(warning) << "alertmanager " << due->url << ": "
                          << (answer ? "HTTP " + std::to_string(answer->status) + " " +
                                           answer->body.substr(0, 200)
                                     : answer.error())
                          << "; retrying with backoff";
      }
      due->failing = true;
    }
    queued_.Set(static_cast<double>(stats_.queued));
  }
}

}  // namespace hsns::alarms
