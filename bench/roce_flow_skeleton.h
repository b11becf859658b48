// bpf/roce_flow.bpf.c's skeleton opened and loaded with its built-in sizes, for the benchmarks that run its
// programs through bpf_prog_test_run_opts (bench/roce_flow, bench/bpf_isolation).
//
// Contract: open_and_load_roce_flow() returns the loaded skeleton (destroy it with roce_flow::destroy) or
// nullptr. Hidden from clang-tidy's static analyzer, which takes libbpf's bpf_object__destroy_skeleton (a
// system header's function) for one that frees nothing and so reports a leak inside the generated error
// path (as daemon/isolation/isolation_maps.cpp does for its own skeleton).
#pragma once

#include "roce_flow.skel.h"

inline roce_flow* open_and_load_roce_flow() {
#ifdef __clang_analyzer__
  return nullptr;
#else
  return roce_flow::open_and_load();
#endif
}
