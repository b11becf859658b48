#include "rdma_netlink.h"

#include <errno.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <system_error>

namespace hsns::daemon::rdma {
namespace {

constexpr std::size_t kReceiveBuffer =
    std::size_t{64} * 1024;         // the kernel's dump datagrams are at most 32 KiB
constexpr int kMaxReads = 1 << 16;  // bounds a dump that never ends

tl::unexpected<NlError> socket_error(const std::string& what, int e) {
  return tl::unexpected(
      NlError{"socket", what + ": " + std::error_code(e, std::generic_category()).message(), e});
}

class Socket {
 public:
  Socket() = default;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }

  tl::expected<void, NlError> open() {
    fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
    if (fd_ < 0) {
      const int e = errno;
      if (e == EPROTONOSUPPORT)
        return tl::unexpected(
            NlError{"absent", "no RDMA netlink in this kernel (the RDMA core is not loaded)", e});
      return socket_error("socket(NETLINK_RDMA)", e);
    }
    const timeval timeout{2, 0};
    if (::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0)
      return socket_error("SO_RCVTIMEO", errno);
    return {};
  }

  // One dump: the request, then every datagram of the answer to `parse` until it reads NLMSG_DONE.
  template <typename Entry, typename Parse>
  tl::expected<void, NlError> dump(std::uint32_t command, std::optional<std::uint32_t> dev_index, Parse parse,
                                   std::vector<Entry>& out) {
    struct {
      nlmsghdr header;
      nlattr attr;
      std::uint32_t index;
    } request{};
    const std::uint32_t seq = ++seq_;
    const std::size_t size = dev_index ? sizeof request : sizeof request.header;
    request.header.nlmsg_len = static_cast<std::uint32_t>(size);
    request.header.nlmsg_type = nldev_message_type(command);
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.header.nlmsg_seq = seq;
    request.attr.nla_len = sizeof request.attr + sizeof request.index;
    request.attr.nla_type = RDMA_NLDEV_ATTR_DEV_INDEX;
    request.index = dev_index.value_or(0);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd_, &request, size, 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) < 0)
      return socket_error("send", errno);

    std::vector<std::uint8_t> buffer(kReceiveBuffer);
    for (int reads = 0; reads < kMaxReads; ++reads) {
      sockaddr_nl peer{};
      iovec iov{buffer.data(), buffer.size()};
      msghdr msg{};
      msg.msg_name = &peer;
      msg.msg_namelen = sizeof peer;
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      const ssize_t n = ::recvmsg(fd_, &msg, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return socket_error("no answer within 2 s", errno);
        return socket_error("receive", errno);
      }
      if ((msg.msg_flags & MSG_TRUNC) != 0)
        return tl::unexpected(NlError{"truncated", "a datagram larger than the receive buffer", 0});
      if (peer.nl_pid != 0) continue;  // not from the kernel
      // The rest of an earlier dump that failed half-way: a datagram holds messages of one dump only.
      std::uint32_t first_seq = 0;
      if (static_cast<std::size_t>(n) >= sizeof(nlmsghdr)) {
        std::memcpy(&first_seq, buffer.data() + offsetof(nlmsghdr, nlmsg_seq), sizeof first_seq);
        if (first_seq != seq) continue;
      }
      auto done = parse(Bytes(buffer.data(), static_cast<std::size_t>(n)), seq, out);
      if (!done) return tl::unexpected(std::move(done.error()));
      if (*done) return {};
    }
    return tl::unexpected(NlError{"incomplete", "the dump did not end", 0});
  }

 private:
  int fd_ = -1;
  std::uint32_t seq_ = 0;
};

}  // namespace

tl::expected<QpSnapshot, NlError> read_qp_snapshot() {
  Socket socket;
  if (auto r = socket.open(); !r) return tl::unexpected(std::move(r.error()));
  QpSnapshot snapshot;
  if (auto r = socket.dump(RDMA_NLDEV_CMD_GET, std::nullopt, parse_device_messages, snapshot.devices); !r)
    return tl::unexpected(std::move(r.error()));
  std::vector<CmIdEntry> cm_ids;
  for (const auto& dev : snapshot.devices) {
    if (auto r = socket.dump(RDMA_NLDEV_CMD_RES_QP_GET, dev.index, parse_qp_messages, snapshot.qps); !r) {
      r.error().detail = dev.name + ": " + r.error().detail;
      return tl::unexpected(std::move(r.error()));
    }
    if (auto r = socket.dump(RDMA_NLDEV_CMD_RES_CM_ID_GET, dev.index, parse_cm_id_messages, cm_ids); !r) {
      r.error().detail = dev.name + " CM IDs: " + r.error().detail;
      snapshot.warnings.push_back(std::move(r.error()));
    }
  }
  join_cm_addresses(snapshot.qps, cm_ids);
  return snapshot;
}

}  // namespace hsns::daemon::rdma
