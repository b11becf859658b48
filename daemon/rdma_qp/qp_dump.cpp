#include "qp_dump.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cstring>
#include <map>
#include <system_error>
#include <utility>

namespace hsns::daemon::rdma {
namespace {

tl::unexpected<NlError> fail(std::string reason, std::string detail, int errno_value = 0) {
  return tl::unexpected(NlError{std::move(reason), std::move(detail), errno_value});
}

std::int32_t load_s32(Bytes b) {
  std::int32_t v = 0;
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

tl::unexpected<NlError> kernel_error(std::int32_t status, const char* what) {
  // An errno is 1..4095 (MAX_ERRNO); checked before negating, which INT32_MIN would overflow.
  if (status >= 0 || status < -4095)
    return fail("malformed", std::string(what) + " with status " + std::to_string(status));
  const int e = -status;
  return fail("kernel", std::string(what) + ": " + std::error_code(e, std::generic_category()).message(), e);
}

// Walks the messages of one buffer of the answer to `command`: NLMSG_DONE ends the dump (true),
// NLMSG_ERROR is the kernel's refusal, an ack or NLMSG_NOOP is skipped, every other message must be the
// command's answer and goes to on_body.
template <typename OnBody>
tl::expected<bool, NlError> walk(Bytes buffer, std::uint32_t command, std::optional<std::uint32_t> seq,
                                 OnBody&& on_body) {
  auto messages = split_messages(buffer);
  if (!messages) return tl::unexpected(std::move(messages.error()));
  bool done = false;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const auto& m = (*messages)[i];
    const std::string where = "message " + std::to_string(i);
    if (done) return fail("unexpected", where + " follows NLMSG_DONE");
    if (seq && m.seq != *seq)
      return fail("unexpected",
                  where + ": sequence " + std::to_string(m.seq) + ", expected " + std::to_string(*seq));
    if (m.type == NLMSG_NOOP) continue;
    if (m.type == NLMSG_DONE) {
      // Since Linux 4.x NLMSG_DONE carries the dump's status (an int); older kernels may send none.
      if (m.body.size() >= sizeof(std::int32_t) && load_s32(m.body) != 0)
        return kernel_error(load_s32(m.body), "NLMSG_DONE");
      done = true;
      continue;
    }
    if (m.type == NLMSG_ERROR) {
      if (m.body.size() < sizeof(std::int32_t))
        return fail("truncated", where + ": NLMSG_ERROR without its error code");
      const auto status = load_s32(m.body);
      if (status == 0) continue;  // an acknowledgement
      return kernel_error(status, "NLMSG_ERROR");
    }
    if (m.type != nldev_message_type(command))
      return fail("unexpected", where + ": type " + std::to_string(m.type) + ", expected " +
                                    std::to_string(nldev_message_type(command)));
    auto attrs = split_attributes(m.body, where);
    if (!attrs) return tl::unexpected(std::move(attrs.error()));
    if (auto r = on_body(*attrs, where); !r) return tl::unexpected(std::move(r.error()));
  }
  return done;
}

// DEV_INDEX and DEV_NAME of a message: both required.
tl::expected<RdmaDevice, NlError> device_of(const std::vector<NlAttr>& attrs, const std::string& where) {
  std::optional<std::uint32_t> index;
  std::optional<std::string> name;
  for (const auto& a : attrs) {
    if (a.type == RDMA_NLDEV_ATTR_DEV_INDEX) {
      auto v = attr_u32(a, "DEV_INDEX");
      if (!v) return tl::unexpected(std::move(v.error()));
      index = *v;
    } else if (a.type == RDMA_NLDEV_ATTR_DEV_NAME) {
      auto v = attr_string(a, "DEV_NAME", kMaxDeviceName);
      if (!v) return tl::unexpected(std::move(v.error()));
      name = std::move(*v);
    }
  }
  if (!index || !name) return fail("malformed", where + ": no " + (index ? "DEV_NAME" : "DEV_INDEX"));
  return RdmaDevice{*index, std::move(*name)};
}

// The nest `table` of a message and every `entry` nest in it, each split into its attributes.
template <typename OnEntry>
tl::expected<void, NlError> for_each_entry(const std::vector<NlAttr>& attrs, std::uint16_t table,
                                           std::uint16_t entry, const std::string& where,
                                           OnEntry&& on_entry) {
  for (const auto& a : attrs) {
    if (a.type != table) continue;
    auto entries = split_attributes(a.payload, where + " table");
    if (!entries) return tl::unexpected(std::move(entries.error()));
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const auto& e = (*entries)[i];
      if (e.type != entry) continue;
      const std::string entry_where = where + " entry " + std::to_string(i);
      auto fields = split_attributes(e.payload, entry_where);
      if (!fields) return tl::unexpected(std::move(fields.error()));
      if (auto r = on_entry(*fields, entry_where); !r) return r;
    }
  }
  return {};
}

// Reads a u32 attribute into `out`; the error of a wrong size otherwise.
tl::expected<void, NlError> put_u32(const NlAttr& a, const char* name, std::optional<std::uint32_t>& out) {
  auto v = attr_u32(a, name);
  if (!v) return tl::unexpected(std::move(v.error()));
  out = *v;
  return {};
}

tl::expected<void, NlError> read_qp_entry(const std::vector<NlAttr>& fields, const std::string& where,
                                          const RdmaDevice& dev, std::vector<QpEntry>& out) {
  QpEntry q;
  q.dev_index = dev.index;
  q.device = dev.name;
  std::optional<std::uint32_t> port, lqpn;
  std::optional<std::uint8_t> type, state;
  for (const auto& f : fields) {
    tl::expected<void, NlError> r;
    switch (f.type) {
      case RDMA_NLDEV_ATTR_PORT_INDEX:
        r = put_u32(f, "PORT_INDEX", port);
        break;
      case RDMA_NLDEV_ATTR_RES_LQPN:
        r = put_u32(f, "RES_LQPN", lqpn);
        break;
      case RDMA_NLDEV_ATTR_RES_RQPN:
        r = put_u32(f, "RES_RQPN", q.rqpn);
        break;
      case RDMA_NLDEV_ATTR_RES_SQ_PSN:
        r = put_u32(f, "RES_SQ_PSN", q.sq_psn);
        break;
      case RDMA_NLDEV_ATTR_RES_RQ_PSN:
        r = put_u32(f, "RES_RQ_PSN", q.rq_psn);
        break;
      case RDMA_NLDEV_ATTR_RES_PID:
        r = put_u32(f, "RES_PID", q.pid);
        break;
      case RDMA_NLDEV_ATTR_RES_TYPE:
      case RDMA_NLDEV_ATTR_RES_STATE: {
        const bool is_type = f.type == RDMA_NLDEV_ATTR_RES_TYPE;
        auto v = attr_u8(f, is_type ? "RES_TYPE" : "RES_STATE");
        if (!v) return tl::unexpected(std::move(v.error()));
        (is_type ? type : state) = *v;
        break;
      }
      case RDMA_NLDEV_ATTR_RES_KERN_NAME: {
        auto v = attr_string(f, "RES_KERN_NAME", kMaxKernName);
        if (!v) return tl::unexpected(std::move(v.error()));
        q.kern_name = std::move(*v);
        break;
      }
      default:
        break;  // PDN, PATH_MIG_STATE, the driver's nest, attributes of newer kernels
    }
    if (!r) return r;
  }
  if (!lqpn || !type || !state)
    return fail("malformed", where + ": QP entry without " +
                                 (!lqpn   ? "RES_LQPN"
                                  : !type ? "RES_TYPE"
                                          : "RES_STATE"));
  q.port = port.value_or(0);
  q.lqpn = *lqpn;
  q.type = *type;
  q.state = *state;
  out.push_back(std::move(q));
  return {};
}

tl::expected<void, NlError> read_cm_id_entry(const std::vector<NlAttr>& fields, const RdmaDevice& dev,
                                             std::vector<CmIdEntry>& out) {
  CmIdEntry c;
  c.dev_index = dev.index;
  c.device = dev.name;
  std::optional<std::uint32_t> port;
  for (const auto& f : fields) {
    tl::expected<void, NlError> r;
    if (f.type == RDMA_NLDEV_ATTR_PORT_INDEX) {
      r = put_u32(f, "PORT_INDEX", port);
    } else if (f.type == RDMA_NLDEV_ATTR_RES_LQPN) {
      r = put_u32(f, "RES_LQPN", c.lqpn);
    } else if (f.type == RDMA_NLDEV_ATTR_RES_SRC_ADDR || f.type == RDMA_NLDEV_ATTR_RES_DST_ADDR) {
      const bool src = f.type == RDMA_NLDEV_ATTR_RES_SRC_ADDR;
      auto v = attr_sockaddr(f, src ? "RES_SRC_ADDR" : "RES_DST_ADDR");
      if (!v) return tl::unexpected(std::move(v.error()));
      (src ? c.src : c.dst) = std::move(*v);
    }
    if (!r) return r;
  }
  c.port = port.value_or(0);
  out.push_back(std::move(c));
  return {};
}

}  // namespace

std::uint16_t nldev_message_type(std::uint32_t command) {
  return static_cast<std::uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command));
}

tl::expected<bool, NlError> parse_device_messages(Bytes buffer, std::optional<std::uint32_t> seq,
                                                  std::vector<RdmaDevice>& out) {
  return walk(
      buffer, RDMA_NLDEV_CMD_GET, seq,
      [&out](const std::vector<NlAttr>& attrs, const std::string& where) -> tl::expected<void, NlError> {
        auto dev = device_of(attrs, where);
        if (!dev) return tl::unexpected(std::move(dev.error()));
        out.push_back(std::move(*dev));
        return {};
      });
}

tl::expected<bool, NlError> parse_qp_messages(Bytes buffer, std::optional<std::uint32_t> seq,
                                              std::vector<QpEntry>& out) {
  return walk(
      buffer, RDMA_NLDEV_CMD_RES_QP_GET, seq,
      [&out](const std::vector<NlAttr>& attrs, const std::string& where) -> tl::expected<void, NlError> {
        auto dev = device_of(attrs, where);
        if (!dev) return tl::unexpected(std::move(dev.error()));
        return for_each_entry(attrs, RDMA_NLDEV_ATTR_RES_QP, RDMA_NLDEV_ATTR_RES_QP_ENTRY, where,
                              [&](const std::vector<NlAttr>& fields, const std::string& entry_where) {
                                return read_qp_entry(fields, entry_where, *dev, out);
                              });
      });
}

tl::expected<bool, NlError> parse_cm_id_messages(Bytes buffer, std::optional<std::uint32_t> seq,
                                                 std::vector<CmIdEntry>& out) {
  return walk(
      buffer, RDMA_NLDEV_CMD_RES_CM_ID_GET, seq,
      [&out](const std::vector<NlAttr>& attrs, const std::string& where) -> tl::expected<void, NlError> {
        auto dev = device_of(attrs, where);
        if (!dev) return tl::unexpected(std::move(dev.error()));
        return for_each_entry(attrs, RDMA_NLDEV_ATTR_RES_CM_ID, RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY, where,
                              [&](const std::vector<NlAttr>& fields, const std::string&) {
                                return read_cm_id_entry(fields, *dev, out);
                              });
      });
}

namespace {

template <typename Entry, typename Parse>
tl::expected<std::vector<Entry>, NlError> whole(Bytes answer, Parse parse) {
  std::vector<Entry> out;
  auto done = parse(answer, std::nullopt, out);
  if (!done) return tl::unexpected(std::move(done.error()));
  if (!*done) return tl::unexpected(NlError{"incomplete", "the dump ends without NLMSG_DONE", 0});
  return out;
}

}  // namespace

tl::expected<std::vector<RdmaDevice>, NlError> parse_device_dump(Bytes answer) {
  return whole<RdmaDevice>(answer, parse_device_messages);
}

tl::expected<std::vector<QpEntry>, NlError> parse_qp_dump(Bytes answer) {
  return whole<QpEntry>(answer, parse_qp_messages);
}

tl::expected<std::vector<CmIdEntry>, NlError> parse_cm_id_dump(Bytes answer) {
  return whole<CmIdEntry>(answer, parse_cm_id_messages);
}

void join_cm_addresses(std::vector<QpEntry>& qps, const std::vector<CmIdEntry>& cm_ids) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, const CmIdEntry*> by_qp;
  for (const auto& c : cm_ids)
    if (c.lqpn && (c.src || c.dst)) by_qp.emplace(std::make_pair(c.dev_index, *c.lqpn), &c);
  for (auto& q : qps) {
    const auto it = by_qp.find({q.dev_index, q.lqpn});
    if (it == by_qp.end()) continue;
    q.src = it->second->src;
    q.dst = it->second->dst;
  }
}

std::string qp_type_name(std::uint8_t type) {
  static constexpr std::array<const char*, 11> kNames = {
      "SMI",           "GSI",     "RC",         "UC",      "UD",     "RAW_IPV6",
      "RAW_ETHERTYPE", "UNKNOWN", "RAW_PACKET", "XRC_INI", "XRC_TGT"};
  if (type == 0xff) return "DRIVER";
  return type < kNames.size() ? kNames[type] : "UNKNOWN";
}

std::string qp_state_name(std::uint8_t state) {
  static constexpr std::array<const char*, 7> kNames = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
  return state < kNames.size() ? kNames[state] : "UNKNOWN";
}

}  // namespace hsns::daemon::rdma
