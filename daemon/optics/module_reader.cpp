#include "module_reader.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "hsns/unique_fd.h"

namespace hsns::optics {
namespace {

constexpr int kReceiveTimeoutSeconds = 2;
constexpr int kMaxReceives = 8;  // messages that answer something else are skipped, up to this
constexpr std::size_t kReceiveBuffer = 16384;
constexpr int kMaxPlanRounds = 4;  // lower page; page 00h/01h/02h or A2h; banks; nothing more

using Fd = UniqueFd;

ReadFailure failure_of(int error) {
  switch (error) {
    case EOPNOTSUPP:
      return ReadFailure::no_module;
    case ENODEV:
      return ReadFailure::no_such_netdev;
    case EPERM:
    case EACCES:
      return ReadFailure::permission;
    case EPROTO:
    case EAGAIN:
    case ENOMSG:
      return ReadFailure::netlink;
    default:
      return ReadFailure::io_error;
  }
}

ReadError read_error(const std::string& netdev, const std::string& what, int error) {
  std::string reason = error == EAGAIN ? std::string("no answer in time") : std::string(std::strerror(error));
  return ReadError{failure_of(error), netdev + ": " + what + ": " + reason};
}

// A netlink request under construction: nlmsghdr, genlmsghdr, attributes (host byte order, 4-aligned).
class Request {
 public:
  Request(std::uint16_t type, std::uint8_t cmd, std::uint32_t seq) {
    bytes_.resize(NLMSG_HDRLEN + GENL_HDRLEN);
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = NLM_F_REQUEST;
    h.nlmsg_seq = seq;
    std::memcpy(bytes_.data(), &h, sizeof h);
    genlmsghdr g{};
    g.cmd = cmd;
    g.version = 1;
    std::memcpy(bytes_.data() + NLMSG_HDRLEN, &g, sizeof g);
  }
  void put(std::uint16_t type, const void* data, std::size_t length) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + NLA_ALIGN(NLA_HDRLEN + length));
    nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + length), type};
    std::memcpy(bytes_.data() + at, &a, sizeof a);
    if (length > 0) std::memcpy(bytes_.data() + at + NLA_HDRLEN, data, length);
  }
  void put_string(std::uint16_t type, const std::string& s) { put(type, s.c_str(), s.size() + 1); }
  template <typename T>
  void put_value(std::uint16_t type, T v) {
    put(type, &v, sizeof v);
  }
  std::size_t begin_nest(std::uint16_t type) {
    const std::size_t at = bytes_.size();
    put(static_cast<std::uint16_t>(type | NLA_F_NESTED), nullptr, 0);
    return at;
  }
  void end_nest(std::size_t at) {
    const auto length = static_cast<std::uint16_t>(bytes_.size() - at);
    std::memcpy(bytes_.data() + at, &length, sizeof length);
  }
  const std::vector<std::uint8_t>& finish() {
    const auto length = static_cast<std::uint32_t>(bytes_.size());
    std::memcpy(bytes_.data(), &length, sizeof length);
    return bytes_;
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

// One generic netlink socket and its request sequence.
class GenlSocket {
 public:
  GenlSocket() : fd_(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC)) {}
  int open_error() const { return fd_.get() < 0 ? errno : 0; }
  bool ok() const { return fd_.get() >= 0; }

  // Sends the request and returns attribute `attr` of its answer (or a positive errno).
  tl::expected<std::vector<std::uint8_t>, int> call(Request& request, std::uint32_t seq, std::uint16_t attr) {
    const auto& bytes = request.finish();
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd_.get(), bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&kernel),
                 sizeof kernel) < 0)
      return tl::unexpected(errno);
    std::vector<std::uint8_t> buffer(kReceiveBuffer);
    for (int i = 0; i < kMaxReceives; ++i) {
      sockaddr_nl peer{};
      socklen_t peer_len = sizeof peer;
      const ssize_t n = ::recvfrom(fd_.get(), buffer.data(), buffer.size(), 0,
                                   reinterpret_cast<sockaddr*>(&peer), &peer_len);
      if (n < 0) return tl::unexpected(errno == EWOULDBLOCK ? EAGAIN : errno);
      if (peer.nl_pid != 0) continue;  // only the kernel answers
      auto r = genl_reply_attribute(std::span(buffer.data(), static_cast<std::size_t>(n)), seq, attr);
      if (!r && r.error() == ENOMSG) continue;
      return r;
    }
    return tl::unexpected(ENOMSG);
  }
  void set_timeout() const {
    timeval timeout{kReceiveTimeoutSeconds, 0};
    (void)::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  std::uint32_t next_seq() { return ++seq_; }

 private:
  Fd fd_;
  std::uint32_t seq_ = 0;
};

tl::expected<std::uint16_t, int> ethtool_family(GenlSocket& s) {
  const auto seq = s.next_seq();
  Request r(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, seq);
  r.put_string(CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
  auto id = s.call(r, seq, CTRL_ATTR_FAMILY_ID);
  if (!id) return tl::unexpected(id.error());
  if (id->size() < sizeof(std::uint16_t)) return tl::unexpected(EPROTO);
  std::uint16_t family = 0;
  std::memcpy(&family, id->data(), sizeof family);
  return family;
}

tl::expected<std::vector<std::uint8_t>, int> netlink_page(GenlSocket& s, std::uint16_t family,
                                                          const std::string& netdev, const PageAddress& a) {
  const auto seq = s.next_seq();
  Request r(family, ETHTOOL_MSG_MODULE_EEPROM_GET, seq);
  const auto nest = r.begin_nest(ETHTOOL_A_MODULE_EEPROM_HEADER);
  r.put_string(ETHTOOL_A_HEADER_DEV_NAME, netdev);
  r.end_nest(nest);
  r.put_value<std::uint32_t>(ETHTOOL_A_MODULE_EEPROM_OFFSET, a.upper ? kPageSize : 0);
  r.put_value<std::uint32_t>(ETHTOOL_A_MODULE_EEPROM_LENGTH, kPageSize);
  r.put_value<std::uint8_t>(ETHTOOL_A_MODULE_EEPROM_PAGE, a.page);
  r.put_value<std::uint8_t>(ETHTOOL_A_MODULE_EEPROM_BANK, a.bank);
  r.put_value<std::uint8_t>(ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, a.i2c);
  auto data = s.call(r, seq, ETHTOOL_A_MODULE_EEPROM_DATA);
  if (data && data->size() != kPageSize) return tl::unexpected(EPROTO);
  return data;
}

// The legacy ioctl: the module's linear dump, cut into the pages the decoders read.
tl::expected<EepromPages, ReadError> ioctl_pages(const std::string& netdev) {
  const Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return tl::unexpected(read_error(netdev, "ioctl socket", errno));
  ifreq ifr{};
  netdev.copy(ifr.ifr_name, IFNAMSIZ - 1);  // valid_netdev: shorter than IFNAMSIZ; ifr is zeroed
  ethtool_modinfo info{};
  info.cmd = ETHTOOL_GMODULEINFO;
  ifr.ifr_data = reinterpret_cast<char*>(&info);
  if (::ioctl(fd.get(), SIOCETHTOOL, &ifr) != 0)
    return tl::unexpected(read_error(netdev, "ETHTOOL_GMODULEINFO", errno));
  const std::size_t length = std::min<std::size_t>(info.eeprom_len, ETH_MODULE_SFF_8636_MAX_LEN);
  std::vector<std::uint8_t> buffer(sizeof(ethtool_eeprom) + length);
  ethtool_eeprom request{};
  request.cmd = ETHTOOL_GMODULEEEPROM;
  request.offset = 0;
  request.len = static_cast<std::uint32_t>(length);
  std::memcpy(buffer.data(), &request, sizeof request);
  ifr.ifr_data = reinterpret_cast<char*>(buffer.data());
  if (::ioctl(fd.get(), SIOCETHTOOL, &ifr) != 0)
    return tl::unexpected(read_error(netdev, "ETHTOOL_GMODULEEEPROM", errno));
  const std::uint8_t* dump = buffer.data() + sizeof(ethtool_eeprom);
  std::vector<PageAddress> layout{kLowerPage, upper_page(0x00)};
  if (info.type == ETH_MODULE_SFF_8472)
    layout.insert(layout.end(), {PageAddress{kAddressA2, 0, 0, false}, PageAddress{kAddressA2, 0, 0, true}});
  else if (info.type == ETH_MODULE_SFF_8636 || info.type == ETH_MODULE_SFF_8436)
    layout.insert(layout.end(), {upper_page(0x01), upper_page(0x02), upper_page(0x03)});
  EepromPages pages;
  for (std::size_t i = 0; i < layout.size() && (i + 1) * kPageSize <= length; ++i)
    pages[layout[i]] = std::vector<std::uint8_t>(dump + i * kPageSize, dump + (i + 1) * kPageSize);
  return pages;
}

bool valid_netdev(const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ || netdev == "." || netdev == "..") return false;
  for (const char c : netdev)
    if (c == '/' || c == ':' || c <= ' ' || c == 0x7F) return false;
  return true;
}

}  // namespace

const char* to_string(ReadFailure failure) {
  switch (failure) {
    case ReadFailure::no_module:
      return "no_module";
    case ReadFailure::no_such_netdev:
      return "no_such_netdev";
    case ReadFailure::permission:
      return "permission";
    case ReadFailure::io_error:
      return "io_error";
    case ReadFailure::netlink:
      return "netlink";
  }
  return "io_error";
}

tl::expected<std::vector<std::uint8_t>, int> genl_reply_attribute(std::span<const std::uint8_t> buffer,
                                                                  std::uint32_t seq, std::uint16_t attr) {
  std::size_t at = 0;
  while (buffer.size() - at >= NLMSG_HDRLEN) {
    nlmsghdr h{};
    std::memcpy(&h, buffer.data() + at, sizeof h);
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > buffer.size() - at) return tl::unexpected(EPROTO);
    const auto message = buffer.subspan(at, h.nlmsg_len);
    at += std::min<std::size_t>(NLMSG_ALIGN(h.nlmsg_len), buffer.size() - at);
    if (h.nlmsg_seq != seq) continue;
    if (h.nlmsg_type == NLMSG_ERROR) {
      if (message.size() < NLMSG_HDRLEN + sizeof(int)) return tl::unexpected(EPROTO);
      int error = 0;
      std::memcpy(&error, message.data() + NLMSG_HDRLEN, sizeof error);
      if (error == 0) continue;  // an acknowledgement: the answer is elsewhere
      return tl::unexpected(error < 0 ? -error : EPROTO);
    }
    if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_NOOP) continue;
    if (message.size() < NLMSG_HDRLEN + GENL_HDRLEN) return tl::unexpected(EPROTO);
    std::size_t a = NLMSG_HDRLEN + GENL_HDRLEN;
    while (message.size() - a >= NLA_HDRLEN) {
      nlattr na{};
      std::memcpy(&na, message.data() + a, sizeof na);
      if (na.nla_len < NLA_HDRLEN || na.nla_len > message.size() - a) return tl::unexpected(EPROTO);
      if ((na.nla_type & NLA_TYPE_MASK) == attr)
        return std::vector<std::uint8_t>(message.begin() + static_cast<std::ptrdiff_t>(a + NLA_HDRLEN),
                                         message.begin() + static_cast<std::ptrdiff_t>(a + na.nla_len));
      a += std::min<std::size_t>(NLA_ALIGN(na.nla_len), message.size() - a);
    }
    return tl::unexpected(EPROTO);  // our answer, without the attribute
  }
  return tl::unexpected(ENOMSG);
}

tl::expected<EepromPages, ReadError> read_module_pages(const std::string& netdev) {
  if (!valid_netdev(netdev))
    return tl::unexpected(ReadError{ReadFailure::no_such_netdev, netdev + ": invalid netdev name"});
  GenlSocket s;
  if (!s.ok()) return tl::unexpected(read_error(netdev, "netlink socket", s.open_error()));
  s.set_timeout();
  const auto family = ethtool_family(s);
  // No ethtool netlink family (a kernel before 5.6): the ioctl is all there is.
  if (!family && family.error() == ENOENT) return ioctl_pages(netdev);
  if (!family)
    return tl::unexpected(read_error(netdev, "resolving the ethtool netlink family", family.error()));
  EepromPages pages;
  for (int round = 0; round < kMaxPlanRounds; ++round) {
    const auto plan = pages_to_read(pages);
    if (plan.empty()) break;
    for (const auto& a : plan) {
      auto page = netlink_page(s, *family, netdev, a);
      // A kernel before 5.13 has the family but not the message; veth and lo say the same (and so does the
      // ioctl, which then tells "no module").
      if (!page && page.error() == EOPNOTSUPP && pages.empty()) return ioctl_pages(netdev);
      if (!page) return tl::unexpected(read_error(netdev, page_name(a), page.error()));
      pages[a] = std::move(*page);
    }
  }
  return pages;
}

}  // namespace hsns::optics
