#include "lldp_socket.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace hsns::lldp {

namespace {

// 01:80:c2:00:00:0e, the nearest-bridge group address of IEEE 802.1AB.
constexpr std::array<std::uint8_t, 6> kNearestBridge = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

std::string failed(const std::string& netdev, const char* call) {
  return "lldp: " + netdev + ": " + call + ": " + std::strerror(errno);
}

// Keeps LLDP frames to 01:80:c2:00:00:0e, whole; drops everything else. Offsets are the Ethernet
// header's as the packet socket sees it (an offloaded VLAN tag is not in the data).
std::vector<sock_filter> lldp_filter() {
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),                  // destination bytes 0..3
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0180c200, 0, 5),  // else drop
      BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 4),                  // destination bytes 4..5
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x000e, 0, 3),
      BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),  // EtherType
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_LLDP, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0xffff),  // keep (whole frame)
      BPF_STMT(BPF_RET | BPF_K, 0),       // drop
  };
}

}  // namespace

tl::expected<LldpSocket, std::string> LldpSocket::open(const std::string& netdev) {
  const unsigned ifindex = if_nametoindex(netdev.c_str());
  if (ifindex == 0) return tl::unexpected(failed(netdev, "if_nametoindex"));
  // Protocol 0: nothing is queued until bind(), by which time the filter is in place.
  LldpSocket s(::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), static_cast<int>(ifindex),
               netdev);
  if (s.fd_ < 0) return tl::unexpected(failed(netdev, "socket(AF_PACKET)"));
  auto filter = lldp_filter();
  const sock_fprog program{static_cast<unsigned short>(filter.size()), filter.data()};
  if (setsockopt(s.fd_, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) != 0)
    return tl::unexpected(failed(netdev, "SO_ATTACH_FILTER"));
  const int one = 1;
  if (setsockopt(s.fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0)
    return tl::unexpected(failed(netdev, "PACKET_IGNORE_OUTGOING"));
  packet_mreq membership{};
  membership.mr_ifindex = static_cast<int>(ifindex);
  membership.mr_type = PACKET_MR_MULTICAST;
  membership.mr_alen = kNearestBridge.size();
  std::memcpy(membership.mr_address, kNearestBridge.data(), kNearestBridge.size());
  if (setsockopt(s.fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &membership, sizeof membership) != 0)
    return tl::unexpected(failed(netdev, "PACKET_ADD_MEMBERSHIP"));
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_LLDP);
  address.sll_ifindex = static_cast<int>(ifindex);
  if (bind(s.fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
    return tl::unexpected(failed(netdev, "bind"));
  return s;
}

LldpSocket::LldpSocket(int fd, int ifindex, std::string netdev)
    : fd_(fd), ifindex_(ifindex), netdev_(std::move(netdev)) {}

LldpSocket::~LldpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

LldpSocket::LldpSocket(LldpSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), ifindex_(other.ifindex_), netdev_(std::move(other.netdev_)) {}

LldpSocket& LldpSocket::operator=(LldpSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    ifindex_ = other.ifindex_;
    netdev_ = std::move(other.netdev_);
  }
  return *this;
}

int LldpSocket::bound_ifindex() const {
  sockaddr_ll address{};
  socklen_t length = sizeof address;
  if (fd_ < 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  return address.sll_ifindex;
}

tl::expected<std::size_t, std::string> LldpSocket::drain(const OnFrame& on_frame, std::size_t max_frames) {
  std::vector<std::uint8_t> buffer(kMaxFrameBytes);
  std::size_t frames = 0;
  while (frames < max_frames) {
    // MSG_TRUNC: the frame's real length, so a cut frame is told apart from a whole one.
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), MSG_TRUNC);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return tl::unexpected(failed(netdev_, "recv"));
    }
    const auto length = static_cast<std::size_t>(n);
    const bool truncated = length > buffer.size();
    on_frame(std::span<const std::uint8_t>(buffer.data(), truncated ? buffer.size() : length), truncated);
    ++frames;
  }
  return frames;
}

}  // namespace hsns::lldp
