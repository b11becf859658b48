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

// The suffix naming where a value came from: sysfs alone keeps the plain wording.
std::string source_suffix(bool from_sysfs, bool from_dcb) {
  if (from_sysfs && from_dcb) return " (sysfs and dcb)";
  return from_dcb ? " (dcb)" : "";
}

}  // namespace

QosReport check_qos(const std::string& sysfs_root, const std::string& netdev, const QosProfile& profile) {
  return check_qos(sysfs_root, netdev, profile, DcbSource{});
}

QosReport check_qos(const std::string& sysfs_root, const std::string& netdev, const QosProfile& profile,
                    const DcbSource& dcb_source) {
  QosReport r;
  r.netdev = netdev;
  r.state = "unknown";
  const fs::path dev = fs::path(sysfs_root) / "class" / "net" / netdev;
  std::vector<int> want = profile.pfc_priorities;
  std::sort(want.begin(), want.end());

  // sysfs
  bool sysfs = false;
  std::optional<std::vector<int>> sys_pfc;
  std::optional<std::string> sys_pfc_error;
  if (auto pfc_text = read_all(dev / "qos" / "pfc")) {
    sysfs = true;
    if (auto pfc = parse_pfc(*pfc_text)) {
      sys_pfc.emplace();
      for (int p = 0; p < 8; ++p)
        if ((*pfc)[static_cast<std::size_t>(p)] != 0) sys_pfc->push_back(p);
    } else {
      sys_pfc_error = "pfc: unreadable format in " + (dev / "qos" / "pfc").string();
    }
  }
  std::optional<std::string> sys_trust;
  if (auto trust = read_all(dev / "qos" / "trust")) {
    sysfs = true;
    std::string t = *trust;
    if (const auto c = t.rfind(':'); c != std::string::npos) t = t.substr(c + 1);
    t.erase(std::remove_if(t.begin(), t.end(), [](char ch) { return ch == ' ' || ch == '\n'; }), t.end());
    sys_trust = t;
  }
  std::vector<std::string> ecn_findings;
  for (const char* side : {"roce_np", "roce_rp"}) {
    const fs::path dir = dev / "ecn" / side / "enable";
    for (int p = 0; p < 8; ++p) {
      auto v = read_all(dir / std::to_string(p));
      if (!v) continue;
      sysfs = true;
      const bool on = !v->empty() && (*v)[0] == '1';
      if (on != wanted(profile.ecn_priorities, p))
        ecn_findings.push_back(std::string("ecn ") + side + " priority " + std::to_string(p) +
                               (on ? " enabled" : " disabled") + ", expected " +
                               (on ? "disabled" : "enabled"));
    }
  }

  // DCB netlink
  std::optional<DcbQos> dcb;
  std::optional<std::string> dcb_error;
  if (dcb_source) {
    auto d = dcb_source(netdev);
    if (!d)
      dcb_error = d.error();
    else if (d->exposed)
      dcb = std::move(*d);
  }
  if (sysfs) r.sources.push_back("sysfs");
  if (dcb) r.sources.push_back("dcb");

  // PFC
  if (sys_pfc_error) r.findings.push_back(*sys_pfc_error);
  std::optional<std::vector<int>> dcb_pfc;
  if (dcb && dcb->pfc_enabled) dcb_pfc = dcb->pfc_priorities();
  if (sys_pfc && dcb_pfc && *sys_pfc != *dcb_pfc) {
    r.findings.push_back("pfc sources disagree: sysfs " + list_text(*sys_pfc) + ", dcb " +
                         list_text(*dcb_pfc) + " (expected " + list_text(want) + ")");
  } else if (sys_pfc || dcb_pfc) {
    const auto& enabled = sys_pfc ? *sys_pfc : *dcb_pfc;
    if (enabled != want)
      r.findings.push_back("pfc enabled on priorities " + list_text(enabled) +
                           source_suffix(sys_pfc.has_value(), dcb_pfc.has_value()) + ", expected " +
                           list_text(want));
  }
  if (dcb && dcb->pfc_cap && *dcb->pfc_cap > 0 && std::size_t{*dcb->pfc_cap} < want.size())
    r.findings.push_back("dcb pfc_cap " + std::to_string(*dcb->pfc_cap) + " is below the " +
                         std::to_string(want.size()) + " PFC priorities wanted");

  // Trust
  const std::optional<std::string> dcb_trust = dcb ? dcb->trust : std::nullopt;
  if (sys_trust && dcb_trust && *sys_trust != *dcb_trust) {
    r.findings.push_back("trust sources disagree: sysfs " + *sys_trust + ", dcb " + *dcb_trust +
                         " (expected " + profile.trust + ")");
  } else if (sys_trust || dcb_trust) {
    const auto& t = sys_trust ? *sys_trust : *dcb_trust;
    if (t != profile.trust)
      r.findings.push_back("trust mode " + t + source_suffix(sys_trust.has_value(), dcb_trust.has_value()) +
                           ", expected " + profile.trust);
  }
  if (dcb && !dcb_trust && dcb->app_table && profile.trust == "dscp")
    r.findings.push_back("dcb APP table has no DSCP entries, expected a DSCP to priority map (trust dscp)");

  // ECN (sysfs only)
  r.findings.insert(r.findings.end(), ecn_findings.begin(), ecn_findings.end());

  // DSCP map of the RoCE (PFC) priorities
  if (dcb) {
    for (int p : want) r.roce_dscp[p] = dcb->dscp_for_priority(p);
    if (profile.trust == "dscp" && !dcb->dscp_prio.empty())
      for (int p : want)
        if (r.roce_dscp[p].empty())
          r.findings.push_back("dcb: no DSCP maps to priority " + std::to_string(p));
    for (const auto& [dscp, prios] : dcb->ambiguous_dscp)
      if (std::any_of(prios.begin(), prios.end(), [&](int p) { return wanted(want, p); }))
        r.findings.push_back("dcb: DSCP " + std::to_string(dscp) + " maps to several priorities " +
                             list_text(prios));
  }

  if (dcb_error && sysfs) r.findings.push_back(*dcb_error);
  if (sysfs || dcb) r.state = r.findings.empty() ? "conformant" : "drift";
  return r;
}

}  // namespace hsns::daemon
