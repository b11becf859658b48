#include "qos.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace hsns::daemon {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_all(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<std::vector<int>> parse_pfc(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Priority", 0) == 0) continue;
    const auto colon = line.find(':');
    std::istringstream values(colon == std::string::npos ? line : line.substr(colon + 1));
    std::vector<int> v;
    int x = 0;
    while (values >> x) v.push_back(x);
    if (v.size() == 8) return v;
  }
  return std::nullopt;
}

std::string list_text(const std::vector<int>& prios) {
  std::string s = "{";
  for (std::size_t i = 0; i < prios.size(); ++i) s += (i ? "," : "") + std::to_string(prios[i]);
  return s + "}";
}

bool wanted(const std::vector<int>& prios, int p) {
  return std::find(prios.begin(), prios.end(), p) != prios.end();
}

}  // namespace

QosReport check_qos(const std::string& sysfs_root, const std::string& netdev, const QosProfile& profile) {
  QosReport r{netdev, "unknown", {}};
  const fs::path dev = fs::path(sysfs_root) / "class" / "net" / netdev;
  bool exposed = false;
  if (auto pfc_text = read_all(dev / "qos" / "pfc")) {
    exposed = true;
    if (auto pfc = parse_pfc(*pfc_text)) {
      std::vector<int> enabled;
      for (int p = 0; p < 8; ++p)
        if ((*pfc)[static_cast<std::size_t>(p)] != 0) enabled.push_back(p);
      std::vector<int> want = profile.pfc_priorities;
      std::sort(want.begin(), want.end());
      if (enabled != want)
        r.findings.push_back("pfc enabled on priorities " + list_text(enabled) + ", expected " +
                             list_text(want));
    } else {
      r.findings.push_back("pfc: unreadable format in " + (dev / "qos" / "pfc").string());
    }
  }
  if (auto trust = read_all(dev / "qos" / "trust")) {
    exposed = true;
    std::string t = *trust;
    if (const auto c = t.rfind(':'); c != std::string::npos) t = t.substr(c + 1);
    t.erase(std::remove_if(t.begin(), t.end(), [](char ch) { return ch == ' ' || ch == '\n'; }), t.end());
    if (t != profile.trust) r.findings.push_back("trust mode " + t + ", expected " + profile.trust);
  }
  for (const char* side : {"roce_np", "roce_rp"}) {
    const fs::path dir = dev / "ecn" / side / "enable";
    for (int p = 0; p < 8; ++p) {
      auto v = read_all(dir / std::to_string(p));
      if (!v) continue;
      exposed = true;
      const bool on = !v->empty() && (*v)[0] == '1';
      if (on != wanted(profile.ecn_priorities, p))
        r.findings.push_back(std::string("ecn ") + side + " priority " + std::to_string(p) +
                             (on ? " enabled" : " disabled") + ", expected " + (on ? "disabled" : "enabled"));
    }
  }
  if (exposed) r.state = r.findings.empty() ? "conformant" : "drift";
  return r;
}

}  // namespace hsns::daemon
