// A receive-only packet socket for LLDP frames on one netdev.
//
// Contract:
// - open(netdev) makes an AF_PACKET raw socket (non-blocking, close-on-exec) that receives only frames of
//   EtherType 0x88cc arriving on that netdev: it is created with protocol 0 (nothing received), given a
//   classic BPF filter that keeps LLDP frames to the nearest-bridge group address 01:80:c2:00:00:0e,
//   told to ignore outgoing frames, and only then bound to the netdev with
//   ETH_P_LLDP, so no frame of another interface or protocol is ever queued. It joins the multicast group
//   01:80:c2:00:00:0e (PACKET_ADD_MEMBERSHIP), so a NIC that filters multicast delivers it. Errors are
//   text naming the netdev and the failed call.
// - drain() reads what is queued, up to max_frames frames, calling on_frame for each (a frame longer than
//   kMaxFrameBytes is passed cut and flagged `truncated`); it never blocks. An error (the netdev went
//   away: ENETDOWN/ENXIO) is returned after the frames read before it; the caller reopens.
// - bound_ifindex() is the interface the socket is bound to now, as the kernel says (getsockname): the
//   ifindex it was opened on, or -1 once that netdev was deleted. One syscall, no lookup of the name.
// - hsnsd never sends on this socket (nor anywhere): LLDP is only received.
// - Move-only; the descriptor is closed by the destructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <tl/expected.hpp>

namespace hsns::lldp {

inline constexpr std::size_t kMaxFrameBytes = 9216;

class LldpSocket {
 public:
  using OnFrame = std::function<void(std::span<const std::uint8_t> frame, bool truncated)>;

  static tl::expected<LldpSocket, std::string> open(const std::string& netdev);
  LldpSocket() = default;
  ~LldpSocket();
  LldpSocket(LldpSocket&& other) noexcept;
  LldpSocket& operator=(LldpSocket&& other) noexcept;
  LldpSocket(const LldpSocket&) = delete;
  LldpSocket& operator=(const LldpSocket&) = delete;

  // Frames read, or the error that stopped the reading.
  tl::expected<std::size_t, std::string> drain(const OnFrame& on_frame, std::size_t max_frames);
  bool is_open() const { return fd_ >= 0; }
  int ifindex() const { return ifindex_; }
  int bound_ifindex() const;
  int fd() const { return fd_; }

 private:
  LldpSocket(int fd, int ifindex, std::string netdev);
  int fd_ = -1;
  int ifindex_ = 0;
  std::string netdev_;
};

}  // namespace hsns::lldp
