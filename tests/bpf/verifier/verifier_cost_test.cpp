// What the kernel's verifier spends on each of the project's BPF programs, on the running kernel: every
// program of bpf/roce_flow.bpf.c (at the smallest, the default and hsnsd's largest flow table) and of
// bpf/isolation.bpf.c is loaded and its bpf_prog_info.verified_insns (Linux 5.16 and later) is printed
// against the verifier's limit of 1,000,000 instructions. A program above 20 % of the limit fails: a cost
// that creeps up shows here long before a newer verifier (which may explore more states for the same code)
// refuses the program. tests/bpf/kernels runs this binary inside Debian 12's Linux 6.1 as well. Needs root.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bpf/libbpf_log.h"
#include "isolation.skel.h"
#include "roce_flow_loader.h"

namespace {

using hsns::daemon::bpf::LibbpfLogCapture;

constexpr std::uint32_t kVerifierLimit = 1'000'000;  // BPF_COMPLEXITY_LIMIT_INSNS
constexpr std::uint32_t kBudget = kVerifierLimit / 5;

std::string kernel_release() {
  utsname u{};
  return uname(&u) == 0 ? u.release : "?";
}

// Prints and checks every program of `obj` (each must be loaded); returns how many there are.
int check_programs(bpf_object* obj, const std::string& what) {
  int checked = 0;
  bpf_program* prog = nullptr;
  while ((prog = bpf_object__next_program(obj, prog)) != nullptr) {
    ++checked;
    const int fd = bpf_program__fd(prog);
    EXPECT_GE(fd, 0) << what << " " << bpf_program__name(prog) << " was not loaded";
    if (fd < 0) continue;
    bpf_prog_info info{};
    std::uint32_t len = sizeof(info);
    EXPECT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0) << std::strerror(errno);
    const std::string name = bpf_program__name(prog);
    std::printf("verifier cost on Linux %s: %-34s %-24s %8u insns (%5.2f %% of %u), %6u bytes\n",
                kernel_release().c_str(), what.c_str(), name.c_str(), info.verified_insns,
                100.0 * info.verified_insns / kVerifierLimit, kVerifierLimit, info.xlated_prog_len);
    EXPECT_GT(info.verified_insns, 0u)
        << name << ": the kernel does not report verified_insns (Linux < 5.16)";
    EXPECT_LE(info.verified_insns, kBudget)
        << what << " " << name << " costs the verifier " << info.verified_insns
        << " instructions, over 20 % of " << kVerifierLimit
        << ": a newer kernel's verifier may refuse it (bpf/roce_flow.bpf.c's notes on cost)";
  }
  return checked;
}

TEST(VerifierCost, EveryRoceFlowProgramAtEveryTableSize) {
  // The fixtures' table, hsnsd's default and hsnsd's largest (daemon/core/config.h).
  for (const std::uint32_t table_size : {1024u, 65536u, 174762u}) {
    LibbpfLogCapture log;  // libbpf's warnings: a refused program's verifier log ends with its cost
    roce_flow* skel = hsns::test::load_roce_flow(table_size);
    ASSERT_NE(skel, nullptr) << "roce_flow with table_size " << table_size << " does not load on Linux "
                             << kernel_release() << ": " << std::strerror(errno) << "\n"
                             << log.text();
    EXPECT_GE(check_programs(skel->obj, "roce_flow (table_size " + std::to_string(table_size) + ")"), 10);
    roce_flow::destroy(skel);
  }
}

// BPF-to-BPF calls in a loaded program's instructions as the kernel runs them (after the verifier's
// rewrites, in which an inlined bpf_loop calls its callback so).
int subprogram_calls(const bpf_program* prog) {
  bpf_prog_info info{};
  std::uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0) return -1;
  std::vector<bpf_insn> insns(info.xlated_prog_len / sizeof(bpf_insn));
  bpf_prog_info again{};
  again.xlated_prog_len = static_cast<std::uint32_t>(insns.size() * sizeof(bpf_insn));
  again.xlated_prog_insns = reinterpret_cast<std::uintptr_t>(insns.data());
  len = sizeof(again);
  if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &again, &len) != 0) return -1;
  return static_cast<int>(std::count_if(insns.begin(), insns.end(), [](const bpf_insn& i) {
    return i.code == (BPF_JMP | BPF_CALL) && i.src_reg == BPF_PSEUDO_CALL;
  }));
}

// bpf_loop calls in a program as compiled (before it is loaded).
int loop_calls(const bpf_program* prog) {
  const bpf_insn* insns = bpf_program__insns(prog);
  return static_cast<int>(std::count_if(insns, insns + bpf_program__insn_cnt(prog), [](const bpf_insn& i) {
    return i.code == (BPF_JMP | BPF_CALL) && i.src_reg == 0 && i.imm == BPF_FUNC_loop;
  }));
}

// The walks of a flow table run one bpf_loop callback per slot. Inlined by the verifier, which it does
// only for a call with one known callback, that is a direct call per slot; otherwise the helper reaches the
// callback through an indirect call per slot, several times the cost where indirect branches and returns
// are mitigated. Every bpf_loop call of the walks must have become a direct call of its callback.
TEST(VerifierCost, TableWalksInlineTheirLoops) {
  roce_flow* compiled = roce_flow::open();
  ASSERT_NE(compiled, nullptr);
  LibbpfLogCapture log;
  roce_flow* loaded = hsns::test::load_roce_flow(65536);
  ASSERT_NE(loaded, nullptr) << std::strerror(errno) << "\n" << log.text();
  const std::pair<const bpf_program*, const bpf_program*> walks[] = {
      {compiled->progs.roce_harvest, loaded->progs.roce_harvest},
      {compiled->progs.roce_clear, loaded->progs.roce_clear},
      {compiled->progs.roce_clear_listed, loaded->progs.roce_clear_listed}};
  for (const auto& [before, after] : walks) {
    EXPECT_GT(loop_calls(before), 0) << bpf_program__name(before);
    EXPECT_EQ(subprogram_calls(after), loop_calls(before))
        << bpf_program__name(after) << " on Linux " << kernel_release()
        << ": not every bpf_loop call was inlined (a call whose callback depends on the path is not)";
  }
  roce_flow::destroy(loaded);
  roce_flow::destroy(compiled);
}

TEST(VerifierCost, EveryIsolationProgram) {
  LibbpfLogCapture log;
  isolation* skel = isolation::open_and_load();
  ASSERT_NE(skel, nullptr) << "isolation does not load on Linux " << kernel_release() << ": "
                           << std::strerror(errno) << "\n"
                           << log.text();
  EXPECT_GE(check_programs(skel->obj, "isolation"), 1);
  isolation::destroy(skel);
}

}  // namespace
