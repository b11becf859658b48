// Loads bpf/roce_flow.bpf.c's skeleton the way hsnsd's probe does (daemon/flows/flow_probe.cpp), for tests:
// flow tables and their companions sized for `table_size` flows, the inner-map template of that size
// (create_flow_table_template, daemon/flows/flow_probe.h), the slot mask in .rodata; nothing pinned, nothing
// attached.
//
// Contract: load_roce_flow(table_size) returns the loaded skeleton (the caller destroys it with
// roce_flow::destroy) or nullptr with errno set when the kernel refuses it (not root, or the verifier
// rejects a program: libbpf prints why). A table_size below 1024 also shrinks the overflow ring buffer to
// one page, so that a test can fill it.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "flow_probe.h"
#include "roce_flow.h"
#include "roce_flow.skel.h"

namespace hsns::test {

inline roce_flow* load_roce_flow(std::uint32_t table_size) {
  roce_flow* s = roce_flow::open();
  if (s == nullptr) return nullptr;
  const std::uint32_t slots = roce_table_slots(table_size);
  bpf_map__set_max_entries(s->maps.roce_flows_a, slots);
  bpf_map__set_max_entries(s->maps.roce_flows_b, slots);
  const int tmpl = hsns::daemon::create_flow_table_template(slots);
  bpf_map__set_inner_map_fd(s->maps.roce_tables, tmpl);
  bpf_map__set_max_entries(s->maps.roce_psn_last, slots);
  bpf_map__set_max_entries(s->maps.roce_clear_list, slots);
  bpf_map__set_max_entries(s->maps.roce_occupied, (slots + 63) / 64);
  s->rodata->roce_slot_mask = slots - 1;
  if (table_size < 1024) bpf_map__set_max_entries(s->maps.roce_overflow, 4096);
  const int rc = roce_flow::load(s);
  const int saved = rc != 0 ? -rc : 0;
  if (tmpl >= 0) close(tmpl);
  if (rc != 0) {
    roce_flow::destroy(s);
    errno = saved;
    return nullptr;
  }
  return s;
}

}  // namespace hsns::test
