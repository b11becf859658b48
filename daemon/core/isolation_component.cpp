#include "isolation_component.h"

namespace hsns::daemon {

tl::expected<void, std::string> IsolationComponent::start() {
  if (config_.isolation_enabled) {
    auto manager = IsolationManager::create({config_.isolation_pin_dir});
    if (!manager) return tl::unexpected("isolation: " + manager.error());
    manager_ = std::move(*manager);
  }
  started_ = true;
  return {};
}

void IsolationComponent::stop() {
  if (manager_) manager_->detach_all();
}

}  // namespace hsns::daemon
