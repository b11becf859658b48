// hsns-flowprobe: the flow probe on its own (hsnsd runs the same library on a harvester thread of its own:
// daemon/flows/flow_harvester.h; do not run both on the same pin_dir and interfaces). Reads the
// `flow_probe:` section of --config, attaches, harvests every interval into the JSON-lines sink, and on
// SIGTERM/SIGINT harvests until it has caught up (a pending or left-behind table first), detaches and exits 0
// (pinned maps stay unless --purge-on-exit).
// --ready-file is created after attach (tests poll it). Exit 1 on a runtime failure, 64 on usage/config.
// Each harvest is written to the sink and only then committed (FlowProbe::commit), and a restart first
// settles a batch left pending by a killed process (FlowProbe::recover with the sink's last epoch), so a
// kill -9 at any moment neither loses nor repeats a count. libbpf's messages go through hsns::log.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "flow_probe.h"
#include "flow_probe_config.h"
#include "flow_sink.h"
#include "hsns/log.h"

namespace {

int usage() {
  std::cerr << "usage: hsns-flowprobe --config FILE [--ready-file PATH] [--purge-on-exit] [--check-config]\n"
               "                      [--log-level error|warning|notice|info|debug]\n";
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  hsns::log::init("hsns-flowprobe");  // libbpf's messages reach stderr through it (daemon/bpf/libbpf_log.h)
  std::string config_path;
  std::string ready_file;
  bool purge = false;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--config" && i + 1 < argc)
      config_path = argv[++i];
    else if (a == "--ready-file" && i + 1 < argc)
      ready_file = argv[++i];
    else if (a == "--purge-on-exit")
      purge = true;
    else if (a == "--check-config")
      check_only = true;
    else if (a == "--log-level" && i + 1 < argc) {
      hsns::log::Level level{};
      if (!hsns::log::parse_level(argv[++i], level)) return usage();
      hsns::log::set_level(level);
    } else
      return usage();
  }
  if (config_path.empty()) return usage();
  std::ifstream in(config_path);
  if (!in) {
    HSNS_LOG(error) << "cannot read " << config_path;
    return 64;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto config = hsns::daemon::parse_flow_probe_config(text.str());
  if (!config) {
    HSNS_LOG(error) << config_path << ": " << config.error();
    return 64;
  }
  if (check_only) return std::cout << "ok\n", 0;

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_BLOCK, &set, nullptr);

  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::optional<hsns::daemon::FlowSink> sink;
  if (!config->sink.empty()) {
    auto s = hsns::daemon::FlowSink::open(config->sink, host);
    if (!s) {
      HSNS_LOG(error) << s.error();
      return 1;
    }
    sink.emplace(std::move(*s));
  }
  auto probe = hsns::daemon::FlowProbe::start(*config);
  if (!probe) {
    HSNS_LOG(error) << "flow probe: " << probe.error();
    return 1;
  }
  HSNS_LOG(info) << "flow probe attached to " << config->interfaces.size() << " interface(s), pinned under "
                 << config->pin_dir;
  if (sink && sink->truncated_bytes() > 0)
    HSNS_LOG(notice) << config->sink << ": removed a batch cut short by a crash (" << sink->truncated_bytes()
                     << " bytes after epoch " << sink->last_epoch() << ")";
  if (auto r = (*probe)->recover(sink ? std::optional<std::uint64_t>(sink->last_epoch()) : std::nullopt);
      !r) {
    HSNS_LOG(error) << "flow probe recovery: " << r.error();
    (*probe)->stop(false);
    return 1;
  }
  if (!ready_file.empty()) std::ofstream(ready_file) << getpid() << "\n";

  int rc = 0;
  // After SIGTERM/SIGINT, harvests go on (at most kHarvestsToCatchUp) until a batch is caught up
  // (FlowBatch::caught_up): a pending batch or a table a killed process left behind is followed by the active
  // table.
  int last_harvests = 0;
  for (;;) {
    if (last_harvests == 0) {
      const auto ms = config->interval.count();
      const timespec timeout{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
      const int sig = sigtimedwait(&set, nullptr, &timeout);
      if (sig == SIGTERM || sig == SIGINT) last_harvests = hsns::daemon::kHarvestsToCatchUp;
    }
    auto batch = (*probe)->harvest();
    if (!batch) {
      HSNS_LOG(error) << "harvest: " << batch.error();
      rc = 1;
      break;
    }
    if (sink) {
      if (auto w = sink->write(*batch, (*probe)->counters()); !w) {
        // Not committed: the kernel keeps the batch and the next run of the probe re-emits it.
        HSNS_LOG(error) << w.error();
        rc = 1;
        break;
      }
    }
    if (auto c = (*probe)->commit(*batch); !c) {
      HSNS_LOG(error) << "commit: " << c.error();
      rc = 1;
      break;
    }
    if (last_harvests > 0 && (batch->caught_up || --last_harvests == 0)) break;
  }
  (*probe)->stop(purge);
  HSNS_LOG(info) << "flow probe detached";
  return rc;
}
