// The attach layer on a real kernel: a veth in a network namespace the test creates and a private bpffs
// instance the test mounts (so the qdisc registry is the test's own), with minimal tc/XDP programs.
// Checks the clsact ownership across two users, foreign qdiscs, restarts and stale records; XDP detach;
// bpffs helpers; feature probing; libbpf's log routed into hsns::log. Needs root.
#include "bpf/tc_attach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../isolation/netns.h"
#include "bpf/bpffs.h"
#include "bpf/kernel_features.h"
#include "bpf/libbpf_log.h"
#include "hsns/log.h"

namespace hsns::daemon::bpf {
namespace {

using test::sh;

constexpr std::uint32_t kIso = bit(TcUser::isolation);
constexpr std::uint32_t kProbe = bit(TcUser::flow_probe);

// "r0 = ret; exit": the smallest program of a type.
int load_program(bpf_prog_type type, int ret) {
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[0].dst_reg = BPF_REG_0;
  insns[0].imm = ret;
  insns[1].code = BPF_JMP | BPF_EXIT;
  return bpf_prog_load(type, "hsns_attach_t", "GPL", insns, 2, nullptr);
}

class TcAttachTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root (network namespaces, bpffs, eBPF)";
    netns_ = std::make_unique<test::Namespaces>("hsatt");
    ns_ = netns_->add("a");
    for (const std::string& cmd : {"ip -n " + ns_ + " link add x0 type veth peer name x1",
                                   "ip -n " + ns_ + " link set x0 up", "ip -n " + ns_ + " link set x1 up"}) {
      const auto r = sh(cmd);
      ASSERT_EQ(r.status, 0) << cmd << ": " << r.output;
    }
    root_ = "/tmp/hsns-attach-test-" + std::to_string(getpid());
    std::filesystem::create_directories(root_);
    auto mounted = ensure_bpffs(root_);
    ASSERT_TRUE(mounted.has_value()) << mounted.error().message();
    mounted_ = true;
    pin_dir_ = root_ + "/pins/sub";
    auto pins = ensure_pin_dir(pin_dir_);
    ASSERT_TRUE(pins.has_value()) << pins.error().message();
    auto tc = TcAttach::open(pin_dir_);
    ASSERT_TRUE(tc.has_value()) << tc.error().message();
    tc_.emplace(std::move(*tc));
    tc_prog_ = load_program(BPF_PROG_TYPE_SCHED_CLS, -1);  // TC_ACT_UNSPEC
    ASSERT_GE(tc_prog_, 0) << std::strerror(errno);
    test::NetnsScope in(ns_);
    ifindex_ = static_cast<int>(if_nametoindex("x0"));
    ASSERT_GT(ifindex_, 0);
  }

  void TearDown() override {
    if (tc_prog_ >= 0) close(tc_prog_);
    netns_.reset();
    if (mounted_) umount2(root_.c_str(), MNT_DETACH);
    std::filesystem::remove_all(root_);
  }

  void attach(TcUser user, TcHook hook) {
    test::NetnsScope in(ns_);
    auto r = tc_->attach(ifindex_, user, hook, tc_prog_);
    ASSERT_TRUE(r.has_value()) << r.error().message();
  }
  void detach(TcUser user) {
    test::NetnsScope in(ns_);
    auto r = tc_->detach(ifindex_, user);
    ASSERT_TRUE(r.has_value()) << r.error().message();
  }
  std::optional<QdiscRecord> record() {
    test::NetnsScope in(ns_);
    auto r = tc_->record(ifindex_);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r ? *r : std::nullopt;
  }
  bool has_filter(TcUser user, TcHook hook) {
    test::NetnsScope in(ns_);
    return tc_->filter_prog_id(ifindex_, user, hook) != 0;
  }
  std::string tc(const std::string& args) { return sh("ip netns exec " + ns_ + " tc " + args).output; }
  bool has_clsact() { return tc("qdisc show dev x0").find("clsact") != std::string::npos; }
  bool registry_pinned() { return std::filesystem::exists(tc_->registry_path()); }

  std::unique_ptr<test::Namespaces> netns_;
  std::string ns_, root_, pin_dir_;
  bool mounted_ = false;
  std::optional<TcAttach> tc_;
  int tc_prog_ = -1;
  int ifindex_ = 0;
};

TEST_F(TcAttachTest, RegistryLivesAtTheRootOfTheBpffs) {
  EXPECT_EQ(tc_->registry_path(), root_ + "/" + kQdiscRegistryName);
  auto root = bpffs_root(pin_dir_);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(*root, root_);
  EXPECT_TRUE(ensure_bpffs(root_).has_value());  // idempotent: mounted already, nothing stacked
  EXPECT_EQ(sh("grep -c ' " + root_ + " bpf ' /proc/self/mounts").output, "1\n");
  EXPECT_FALSE(registry_pinned());  // nothing attached yet
}

TEST_F(TcAttachTest, TwoUsersShareTheQdiscTheFirstOneCreated) {
  attach(TcUser::isolation, TcHook::egress);
  EXPECT_TRUE(has_clsact());
  EXPECT_EQ(record(), (QdiscRecord{kIso, kQdiscCreatedByHsns}));
  EXPECT_TRUE(registry_pinned());

  attach(TcUser::flow_probe, TcHook::ingress);
  attach(TcUser::flow_probe, TcHook::egress);
  EXPECT_EQ(record(), (QdiscRecord{kIso | kProbe, kQdiscCreatedByHsns}));
  EXPECT_TRUE(has_filter(TcUser::isolation, TcHook::egress));
  EXPECT_TRUE(has_filter(TcUser::flow_probe, TcHook::ingress));
  EXPECT_TRUE(has_filter(TcUser::flow_probe, TcHook::egress));

  // The creator leaves first: the qdisc and the probe's filters stay.
  detach(TcUser::isolation);
  EXPECT_TRUE(has_clsact());
  EXPECT_FALSE(has_filter(TcUser::isolation, TcHook::egress));
  EXPECT_TRUE(has_filter(TcUser::flow_probe, TcHook::ingress));
  EXPECT_TRUE(has_filter(TcUser::flow_probe, TcHook::egress));
  EXPECT_EQ(record(), (QdiscRecord{kProbe, kQdiscCreatedByHsns}));

  detach(TcUser::flow_probe);
  EXPECT_FALSE(has_clsact());
  EXPECT_EQ(record(), std::nullopt);
  EXPECT_FALSE(registry_pinned()) << "the registry outlived its last record";
}

TEST_F(TcAttachTest, AttachingTwiceCountsOnce) {
  attach(TcUser::flow_probe, TcHook::egress);
  attach(TcUser::flow_probe, TcHook::egress);  // a replace, as after a restart
  EXPECT_EQ(record(), (QdiscRecord{kProbe, kQdiscCreatedByHsns}));
  detach(TcUser::flow_probe);
  EXPECT_FALSE(has_clsact());
}

TEST_F(TcAttachTest, QdiscSomeoneElseCreatedSurvives) {
  ASSERT_EQ(sh("ip netns exec " + ns_ + " tc qdisc add dev x0 clsact").status, 0);
  attach(TcUser::flow_probe, TcHook::ingress);
  attach(TcUser::isolation, TcHook::egress);
  EXPECT_EQ(record(), (QdiscRecord{kIso | kProbe, 0}));
  detach(TcUser::flow_probe);
  detach(TcUser::isolation);
  EXPECT_TRUE(has_clsact()) << "a qdisc hsns did not create was deleted";
  EXPECT_EQ(tc("filter show dev x0 ingress"), "");
  EXPECT_EQ(tc("filter show dev x0 egress"), "");
  EXPECT_FALSE(registry_pinned());
}

TEST_F(TcAttachTest, RestartedProcessKnowsWhatItCreated) {
  attach(TcUser::isolation, TcHook::egress);
  tc_.reset();  // the process ends without detaching; a new one opens the same bpffs
  auto again = TcAttach::open(pin_dir_);
  ASSERT_TRUE(again.has_value());
  tc_.emplace(std::move(*again));
  EXPECT_EQ(record(), (QdiscRecord{kIso, kQdiscCreatedByHsns}));
  attach(TcUser::isolation, TcHook::egress);  // its first apply replaces the filter in place
  detach(TcUser::isolation);
  EXPECT_FALSE(has_clsact());
}

TEST_F(TcAttachTest, StaleRecordDoesNotClaimAQdiscSomeoneElseMadeLater) {
  attach(TcUser::isolation, TcHook::egress);
  ASSERT_EQ(sh("ip netns exec " + ns_ + " tc qdisc del dev x0 clsact").status, 0);
  ASSERT_EQ(sh("ip netns exec " + ns_ + " tc qdisc add dev x0 clsact").status, 0);
  attach(TcUser::isolation, TcHook::egress);
  EXPECT_EQ(record(), (QdiscRecord{kIso, 0}));
  detach(TcUser::isolation);
  EXPECT_TRUE(has_clsact());
}

TEST_F(TcAttachTest, HandDeletedQdiscIsRecreatedAndOwnedAgain) {
  attach(TcUser::isolation, TcHook::egress);
  attach(TcUser::flow_probe, TcHook::egress);
  ASSERT_EQ(sh("ip netns exec " + ns_ + " tc qdisc del dev x0 clsact").status, 0);
  attach(TcUser::isolation, TcHook::egress);
  EXPECT_EQ(record(), (QdiscRecord{kIso, kQdiscCreatedByHsns}));  // the probe's filter went with the old one
  detach(TcUser::flow_probe);                                     // a holder no more: changes nothing
  EXPECT_TRUE(has_clsact());
  detach(TcUser::isolation);
  EXPECT_FALSE(has_clsact());
}

TEST_F(TcAttachTest, RecordOfADeletedNetdevIsPruned) {
  ASSERT_EQ(sh("ip -n " + ns_ + " link add z0 type veth peer name z1").status, 0);
  int z0 = 0;
  {
    test::NetnsScope in(ns_);
    z0 = static_cast<int>(if_nametoindex("z0"));
    ASSERT_GT(z0, 0);
    ASSERT_TRUE(tc_->attach(z0, TcUser::isolation, TcHook::egress, tc_prog_).has_value());
  }
  attach(TcUser::isolation, TcHook::egress);                 // x0
  ASSERT_EQ(sh("ip -n " + ns_ + " link del z0").status, 0);  // its qdisc and filter go with it
  detach(TcUser::isolation);                                 // x0: the last live record
  test::NetnsScope in(ns_);
  auto gone = tc_->record(z0);
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(*gone, std::nullopt);
  EXPECT_FALSE(registry_pinned()) << "a deleted netdev kept the registry pinned";
}

TEST_F(TcAttachTest, DetachWithoutAttachChangesNothing) {
  ASSERT_EQ(sh("ip netns exec " + ns_ + " tc qdisc add dev x0 clsact").status, 0);
  detach(TcUser::isolation);
  EXPECT_TRUE(has_clsact());
  EXPECT_FALSE(registry_pinned());
}

TEST_F(TcAttachTest, LegacyOwnershipIsAdopted) {
  // What a version before the layer left: its own qdisc with its filter, no registry record.
  ASSERT_EQ(sh("ip netns exec " + ns_ + " tc qdisc add dev x0 clsact").status, 0);
  {
    test::NetnsScope in(ns_);
    bpf_tc_hook hook{};
    hook.sz = sizeof(hook);
    hook.ifindex = ifindex_;
    hook.attach_point = BPF_TC_INGRESS;
    bpf_tc_opts opts{};
    opts.sz = sizeof(opts);
    opts.handle = tc_slot(TcUser::flow_probe).handle;
    opts.priority = tc_slot(TcUser::flow_probe).priority;
    opts.prog_fd = tc_prog_;
    ASSERT_EQ(bpf_tc_attach(&hook, &opts), 0);
    ASSERT_TRUE(tc_->adopt_created(ifindex_, TcUser::isolation).has_value());  // no isolation filter: no-op
  }
  EXPECT_EQ(record(), std::nullopt);
  {
    test::NetnsScope in(ns_);
    ASSERT_TRUE(tc_->adopt_created(ifindex_, TcUser::flow_probe).has_value());
  }
  EXPECT_EQ(record(), (QdiscRecord{kProbe, kQdiscCreatedByHsns}));
  detach(TcUser::flow_probe);
  EXPECT_FALSE(has_clsact());
}

TEST_F(TcAttachTest, XdpDetachRemovesOnlyItsOwnProgram) {
  const int ours = load_program(BPF_PROG_TYPE_XDP, 2);  // XDP_PASS
  const int theirs = load_program(BPF_PROG_TYPE_XDP, 2);
  ASSERT_GE(ours, 0);
  ASSERT_GE(theirs, 0);
  test::NetnsScope in(ns_);
  const auto attached_id = [&] {
    std::uint32_t id = 0;
    return bpf_xdp_query_id(ifindex_, 0, &id) == 0 ? id : 0u;
  };
  ASSERT_TRUE(xdp_attach(ifindex_, ours).has_value());
  ASSERT_NE(attached_id(), 0u);
  ASSERT_EQ(bpf_xdp_attach(ifindex_, theirs, 0, nullptr), 0);  // someone else replaced it
  const std::uint32_t their_id = attached_id();
  EXPECT_TRUE(xdp_detach(ifindex_, ours).has_value());
  EXPECT_EQ(attached_id(), their_id) << "another program was detached";
  EXPECT_TRUE(xdp_detach(ifindex_, theirs).has_value());
  EXPECT_EQ(attached_id(), 0u);
  close(ours);
  close(theirs);
}

TEST_F(TcAttachTest, PinDirOutsideABpffsIsRefused) {
  const std::string plain = root_ + "-plain";
  auto r = ensure_pin_dir(plain);
  std::filesystem::remove_all(plain);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find(plain + " is not on a bpf filesystem"), std::string::npos)
      << r.error().message();
  EXPECT_FALSE(TcAttach::open("/tmp").has_value());
}

TEST(KernelFeatures, PresentTypesPassAndAMissingOneIsNamed) {
  ASSERT_EQ(geteuid(), 0u) << "needs root (feature probes load programs)";
  EXPECT_TRUE(require_prog_type(BPF_PROG_TYPE_SCHED_CLS, "the test").has_value());
  EXPECT_TRUE(require_prog_type(BPF_PROG_TYPE_XDP, "the test").has_value());
  EXPECT_TRUE(require_map_type(BPF_MAP_TYPE_LPM_TRIE, "the test").has_value());
  EXPECT_TRUE(require_map_type(BPF_MAP_TYPE_RINGBUF, "the test").has_value());
  // A type number no header names (a newer object's) is left to the load to judge.
  EXPECT_TRUE(require_map_type(4000, "the test").has_value());
  EXPECT_TRUE(require_prog_type(-1, "the test").has_value());
  // lirc_mode2 exists only with CONFIG_BPF_LIRC_MODE2: the verdict must agree with bpftool's, and a
  // missing type is named together with who needed it.
  const auto probe = sh("bpftool feature probe kernel | grep 'program_type lirc_mode2'");
  ASSERT_EQ(probe.status, 0) << probe.output;
  auto r = require_prog_type(BPF_PROG_TYPE_LIRC_MODE2, "the test program");
  if (probe.output.find("NOT available") != std::string::npos) {
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message(),
              "the test program needs BPF program type lirc_mode2, which this kernel does not support");
  } else {
    EXPECT_TRUE(r.has_value()) << r.error().message();
  }
}

TEST(LibbpfLog, WarningsReachTheLogAndCapturesTakeThem) {
  ASSERT_EQ(geteuid(), 0u) << "needs root (tc)";
  test::Namespaces netns("hslog");
  const std::string ns = netns.add("a");
  ASSERT_EQ(sh("ip -n " + ns + " link add y0 type veth peer name y1 && ip netns exec " + ns +
               " tc qdisc add dev y0 clsact")
                .status,
            0);
  log::init("hsns-attach-test");
  route_libbpf_log();
  test::NetnsScope in(ns);
  bpf_tc_hook hook{};
  hook.sz = sizeof(hook);
  hook.ifindex = static_cast<int>(if_nametoindex("y0"));
  hook.attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS);
  {
    LibbpfLogCapture capture;
    EXPECT_EQ(bpf_tc_hook_create(&hook), -EEXIST);
    EXPECT_NE(capture.text().find("Exclusivity flag on"), std::string::npos) << capture.text();
  }
  // Without a capture the same message is a warning line of the log (stderr here).
  char path[] = "/tmp/hsns-attach-log-XXXXXX";
  const int file = mkstemp(path);
  ASSERT_GE(file, 0);
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  dup2(file, STDERR_FILENO);
  const int rc = bpf_tc_hook_create(&hook);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(file);
  std::ifstream in_file(path);
  std::stringstream text;
  text << in_file.rdbuf();
  unlink(path);
  EXPECT_EQ(rc, -EEXIST);
  EXPECT_NE(text.str().find("hsns-attach-test: warning: libbpf: Kernel error message: Exclusivity flag on"),
            std::string::npos)
      << text.str();
}

}  // namespace
}  // namespace hsns::daemon::bpf
