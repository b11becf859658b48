// Subnet isolation as an hsnsd component: owns the IsolationManager (daemon/isolation) when
// `isolation.enabled` is true; the reconciler applies each port's allowed prefixes through manager().
//
// Contract:
// - start() loads the program and opens the pinned maps; it fails (hsnsd exits 1) when isolation is
//   enabled but the kernel refuses it. Disabled: start()
//   does nothing, manager() is null. ready() once started.
// - stop() detaches the filters from every port (SIGTERM); the pinned maps stay.
// - reload(): isolation is set up at start only; a changed isolation section takes effect after a restart.
#pragma once

#include <memory>

#include "../isolation/isolation.h"
#include "component.h"

namespace hsns::daemon {

class IsolationComponent final : public Component {
 public:
  explicit IsolationComponent(const DaemonConfig& config) : config_(config) {}

  std::string_view name() const override { return "isolation"; }
  tl::expected<void, std::string> start() override;
  Clock::time_point tick(Clock::time_point) override { return Clock::time_point::max(); }
  void reload(const DaemonConfig&) override {}
  void stop() override;
  bool ready() const override { return started_; }

  IsolationManager* manager() const { return manager_.get(); }

 private:
  DaemonConfig config_;
  std::unique_ptr<IsolationManager> manager_;
  bool started_ = false;
};

}  // namespace hsns::daemon
