// libFuzzer target over the RDMA netlink reply parser of hsnsd's QP inventory (daemon/rdma_qp: the
// length-checked netlink reader and the nldev dump parser). The input is the whole answer to one dump
// (every message of every datagram, end to end), as the seeds in corpus_rdma_netlink/ (composed by
// tests/fixtures/daemon/rdma-netlink/compose.py) are.
// Each input goes through the QP, CM ID and device dump parsers, and message by message through
// parse_qp_messages with a sequence check. Invariants (a violation is __builtin_trap()): nothing throws;
// a refusal has a reason of the fixed vocabulary and a detail; an accepted QP dump has QPNs whose RoCE v2
// source port is in 0xC000..0xFFFF and symmetric; the CM ID join never adds addresses of a family other
// than 4 or 6; the message-by-message parse agrees with the whole-dump parse.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "qp_dump.h"
#include "roce_sport.h"

namespace {

namespace rdma = hsns::daemon::rdma;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_error(const rdma::NlError& e) {
  check(std::find(rdma::kNlErrorReasons.begin(), rdma::kNlErrorReasons.end(), e.reason) !=
        rdma::kNlErrorReasons.end());
  check(!e.detail.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const rdma::Bytes input(data, size);
  auto qps = rdma::parse_qp_dump(input);
  auto cm_ids = rdma::parse_cm_id_dump(input);
  auto devices = rdma::parse_device_dump(input);
  if (!qps) check_error(qps.error());
  if (!cm_ids) check_error(cm_ids.error());
  if (!devices) check_error(devices.error());
  if (qps) {
    for (const auto& q : *qps) {
      check(!rdma::qp_type_name(q.type).empty() && !rdma::qp_state_name(q.state).empty());
      if (q.rqpn) {
        const auto port = rdma::rocev2_source_port(q.lqpn, *q.rqpn);
        check(port >= 0xC000);
        check(port == rdma::rocev2_source_port(*q.rqpn, q.lqpn));
      }
    }
    if (cm_ids) {
      rdma::join_cm_addresses(*qps, *cm_ids);
      for (const auto& q : *qps)
        for (const auto* a : {&q.src, &q.dst})
          if (*a) check((*a)->family == 4 || (*a)->family == 6);
    }
  }
  // The same bytes message by message (each message as a buffer of its own) agree with the whole.
  if (auto messages = rdma::split_messages(input)) {
    std::vector<rdma::QpEntry> incremental;
    bool done = false;
    bool failed = false;
    std::size_t off = 0;
    for (const auto& m : *messages) {
      const std::size_t len = std::min(input.size() - off, (16 + m.body.size() + 3) & ~std::size_t{3});
      auto r = rdma::parse_qp_messages(input.subspan(off, len), m.seq, incremental);
      off += len;
      if (!r) {
        failed = true;
        break;
      }
      if (done && *r) {
        failed = true;  // the whole parse refuses a message after NLMSG_DONE, so must this one
        break;
      }
      done = done || *r;
    }
    if (qps && qps->size() > 0) check(!failed && done);
  }
  return 0;
}
