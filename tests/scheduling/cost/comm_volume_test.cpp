// Communication volume: every formula against a hand-computed case (numbers derived in the comments
// and in docs/cost-model.md).
#include "scheduling/cost/comm_volume.h"

#include <gtest/gtest.h>

namespace hsns::cost {
namespace {

const CommOp* find(const CommVolume& v, Dimension d, Collective k, const std::string& needle) {
  for (const auto& op : v.ops) {
    if (op.dim == d && op.kind == k && op.what.find(needle) != std::string::npos) return &op;
  }
  return nullptr;
}

std::size_t count_dim(const CommVolume& v, Dimension d) {
  std::size_t n = 0;
  for (const auto& op : v.ops) n += op.dim == d ? 1 : 0;
  return n;
}

// Case A: dense, TP 4 without SP, PP 2, DP 2, ZeRO 0.
ModelSpec model_a() {
  ModelSpec m;
  m.parameters = 100'000'000;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.seq_len = 2048;
  m.micro_batch = 2;
  m.global_batch = 32;
  m.dtype_bytes = 2;
  return m;
}

ParallelSpec par_a() {
  ParallelSpec p;
  p.tp = 4;
  p.pp = 2;
  p.dp = 2;
  return p;
}

TEST(CommVolume, TensorParallelWithoutSequenceParallelIsFourAllReducesPerLayer) {
  auto v = communication_volume(model_a(), par_a());
  ASSERT_TRUE(v) << v.error();
  // m = 32 / (2 * 2) = 8 micro-batches; activation = b*s*h*d = 2*2048*1024*2 = 8 MiB; 2 layers per rank.
  EXPECT_EQ(v->micro_batches, 8u);
  const CommOp* fwd = find(*v, Dimension::tp, Collective::all_reduce, "forward");
  const CommOp* bwd = find(*v, Dimension::tp, Collective::all_reduce, "backward");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(fwd->bytes, 8'388'608u);
  EXPECT_EQ(fwd->count, 32u);  // 2 per layer * 2 layers * 8 micro-batches
  EXPECT_EQ(bwd->count, 32u);
  EXPECT_EQ(fwd->group_size, 4u);
  EXPECT_EQ(count_dim(*v, Dimension::tp), 2u);
  EXPECT_DOUBLE_EQ(v->buffer_bytes(Dimension::tp), 64.0 * 8'388'608);
}

TEST(CommVolume, PipelineSendsActivationsAndGradientsPerMicroBatch) {
  auto v = communication_volume(model_a(), par_a());
  ASSERT_TRUE(v) << v.error();
  const CommOp* pp = find(*v, Dimension::pp, Collective::send_recv, "");
  ASSERT_NE(pp, nullptr);
  // pp = 2, v = 1: each rank sends once per micro-batch (stage 0 forward, stage 1 backward).
  EXPECT_EQ(pp->bytes, 8'388'608u);
  EXPECT_EQ(pp->count, 8u);
  EXPECT_EQ(v->pp_crossings_per_microbatch, 1u);
}

TEST(CommVolume, ZeroStagesZeroAndOneAllReduceGradientsOnce) {
  for (int stage : {0, 1}) {
    auto p = par_a();
    p.zero_stage = stage;
    auto v = communication_volume(model_a(), p);
    ASSERT_TRUE(v) << v.error();
    // 1e8 / (tp 4 * pp 2) = 12.5e6 parameters per rank, 2 bytes each.
    EXPECT_EQ(v->params_per_rank, 12'500'000u);
    const CommOp* dp = find(*v, Dimension::dp, Collective::all_reduce, "dense");
    ASSERT_NE(dp, nullptr);
    EXPECT_EQ(dp->bytes, 25'000'000u);
    EXPECT_EQ(dp->count, 1u);
    EXPECT_EQ(dp->group_size, 2u);
    EXPECT_EQ(count_dim(*v, Dimension::dp), 1u);
  }
}

TEST(CommVolume, ZeroThreeGathersParametersInForwardAndBackwardEveryMicroBatch) {
  auto p = par_a();
  p.zero_stage = 3;
  auto v = communication_volume(model_a(), p);
  ASSERT_TRUE(v) << v.error();
  const CommOp* rs = find(*v, Dimension::dp, Collective::reduce_scatter, "gradient");
  const CommOp* agf = find(*v, Dimension::dp, Collective::all_gather, "forward");
  const CommOp* agb = find(*v, Dimension::dp, Collective::all_gather, "backward");
  ASSERT_NE(rs, nullptr);
  ASSERT_NE(agf, nullptr);
  ASSERT_NE(agb, nullptr);
  for (const CommOp* op : {rs, agf, agb}) {
    EXPECT_EQ(op->bytes, 25'000'000u);
    EXPECT_EQ(op->count, 8u);
  }
  EXPECT_EQ(count_dim(*v, Dimension::dp), 3u);
  // With one micro-batch per iteration ZeRO-3 moves 1.5x the buffer bytes of ZeRO-0's all-reduce.
  auto m = model_a();
  m.global_batch = 4;
  auto v1 = communication_volume(m, p);
  ASSERT_TRUE(v1);
  EXPECT_DOUBLE_EQ(v1->buffer_bytes(Dimension::dp), 75'000'000.0);
}

// Case B: SP on, ZeRO 2, interleaved pipeline (pp 4, 2 virtual stages).
TEST(CommVolume, SequenceParallelZeroTwoAndInterleavedPipeline) {
  ModelSpec m;
  m.parameters = 200'000'000;
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.seq_len = 2048;
  m.micro_batch = 1;
  m.global_batch = 64;
  ParallelSpec p;
  p.tp = 2;
  p.pp = 4;
  p.dp = 4;
  p.sequence_parallel = true;
  p.zero_stage = 2;
  p.virtual_stages = 2;
  auto v = communication_volume(m, p);
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ(v->micro_batches, 16u);  // 64 / (1 * 4)
  // Activation 1*2048*1024*2 = 4 MiB; per pass 2 per layer * 2 layers * 16 = 64.
  for (const char* pass : {"forward", "backward"}) {
    const CommOp* ag = find(*v, Dimension::tp, Collective::all_gather, pass);
    const CommOp* rs = find(*v, Dimension::tp, Collective::reduce_scatter, pass);
    ASSERT_NE(ag, nullptr);
    ASSERT_NE(rs, nullptr);
    EXPECT_EQ(ag->bytes, 4'194'304u);
    EXPECT_EQ(ag->count, 64u);
    EXPECT_EQ(rs->count, 64u);
  }
  EXPECT_EQ(find(*v, Dimension::tp, Collective::all_reduce, ""), nullptr);
  // Interleaving: 2*4 - 1 = 7 crossings per direction; a middle rank sends 2v = 4 per micro-batch;
  // with SP the boundary tensor is split over TP: 4 MiB / 2.
  EXPECT_EQ(v->pp_crossings_per_microbatch, 7u);
  const CommOp* pp = find(*v, Dimension::pp, Collective::send_recv, "");
  ASSERT_NE(pp, nullptr);
  EXPECT_EQ(pp->bytes, 2'097'152u);
  EXPECT_EQ(pp->count, 64u);
  // ZeRO 2: 2e8 / (2*4) = 25e6 parameters -> 50 MB; reduce-scatter each micro-batch, one all-gather.
  const CommOp* rs = find(*v, Dimension::dp, Collective::reduce_scatter, "gradient");
  const CommOp* ag = find(*v, Dimension::dp, Collective::all_gather, "parameter");
  ASSERT_NE(rs, nullptr);
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(rs->bytes, 50'000'000u);
  EXPECT_EQ(rs->count, 16u);
  EXPECT_EQ(ag->bytes, 50'000'000u);
  EXPECT_EQ(ag->count, 1u);
}

TEST(CommVolume, InterleavingWithTwoStagesSendsOneMessageFewerPerRank) {
  ModelSpec m = model_a();
  ParallelSpec p = par_a();
  p.virtual_stages = 2;  // 4 layers / (2 * 2) = 1 layer per chunk
  auto v = communication_volume(m, p);
  ASSERT_TRUE(v) << v.error();
  // Chunks 0..3 on ranks 0,1,0,1: rank 0 sends 0->1, 2->3 forward and 2->1 backward: 2v - 1 = 3.
  EXPECT_EQ(v->pp_crossings_per_microbatch, 3u);
  EXPECT_EQ(find(*v, Dimension::pp, Collective::send_recv, "")->count, 3u * 8u);
}

// Case C: MoE with EP 4, CP 2 with grouped-query attention (4 KV heads).
TEST(CommVolume, ExpertParallelAllToAllContextRingAndExpertDataParallel) {
  ModelSpec m;
  m.parameters = 400'000'000;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 4;
  m.seq_len = 4096;
  m.micro_batch = 1;
  m.global_batch = 16;
  m.moe_experts = 8;
  m.moe_top_k = 2;
  ParallelSpec p;
  p.tp = 2;
  p.dp = 4;
  p.cp = 2;
  p.ep = 4;
  auto v = communication_volume(m, p);
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ(v->micro_batches, 4u);
  // Expert parameters 4 layers * 8 experts * 8 * 1024^2 = 268,435,456; dense 131,564,544.
  // Dense per rank / tp 2 = 65,782,272 (all-reduce over dp*cp = 8); expert per rank / (2*4) =
  // 33,554,432 (all-reduce over dp*cp/ep = 2).
  EXPECT_EQ(v->params_per_rank, 65'782'272u + 33'554'432u);
  const CommOp* dense = find(*v, Dimension::dp, Collective::all_reduce, "dense");
  const CommOp* expert = find(*v, Dimension::dp, Collective::all_reduce, "expert");
  ASSERT_NE(dense, nullptr);
  ASSERT_NE(expert, nullptr);
  EXPECT_EQ(dense->bytes, 131'564'544u);
  EXPECT_EQ(dense->group_size, 8u);
  EXPECT_EQ(expert->bytes, 67'108'864u);
  EXPECT_EQ(expert->group_size, 2u);
  // All-to-all: tokens per rank 4096/2 = 2048, * top-k 2 * hidden 1024 * 2 bytes = 8 MiB; dispatch +
  // combine per layer, 4 layers, 4 micro-batches: 32 forward and 32 backward.
  const CommOp* a2af = find(*v, Dimension::ep, Collective::all_to_all, "forward");
  const CommOp* a2ab = find(*v, Dimension::ep, Collective::all_to_all, "backward");
  ASSERT_NE(a2af, nullptr);
  ASSERT_NE(a2ab, nullptr);
  EXPECT_EQ(a2af->bytes, 8'388'608u);
  EXPECT_EQ(a2af->count, 32u);
  EXPECT_EQ(a2ab->count, 32u);
  EXPECT_EQ(a2af->group_size, 4u);
  // CP ring: K and V chunk 2 * 1 * 2048 * (4 kv heads / tp 2) * head dim 64 * 2 bytes = 1 MiB; cp - 1 = 1
  // step per layer forward, K/V plus dK/dV backward: 16 forward, 32 backward.
  const CommOp* cpf = find(*v, Dimension::cp, Collective::send_recv, "forward");
  const CommOp* cpb = find(*v, Dimension::cp, Collective::send_recv, "backward");
  ASSERT_NE(cpf, nullptr);
  ASSERT_NE(cpb, nullptr);
  EXPECT_EQ(cpf->bytes, 1'048'576u);
  EXPECT_EQ(cpf->count, 16u);
  EXPECT_EQ(cpb->count, 32u);
  // TP 2 without SP over 2048 tokens: 4 MiB, 2 * 4 layers * 4 micro-batches per pass.
  const CommOp* tp = find(*v, Dimension::tp, Collective::all_reduce, "forward");
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->bytes, 4'194'304u);
  EXPECT_EQ(tp->count, 32u);
}

TEST(CommVolume, SequenceParallelSplitsAllToAllTokensOverTensorParallelRanks) {
  ModelSpec m;
  m.parameters = 400'000'000;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.seq_len = 4096;
  m.micro_batch = 1;
  m.global_batch = 8;
  m.moe_experts = 8;
  m.moe_top_k = 1;
  ParallelSpec p;
  p.tp = 4;
  p.dp = 8;
  p.ep = 8;
  p.sequence_parallel = true;
  auto v = communication_volume(m, p);
  ASSERT_TRUE(v) << v.error();
  // 4096 tokens / tp 4 = 1024 tokens * top-1 * 1024 * 2 bytes = 2 MiB.
  EXPECT_EQ(find(*v, Dimension::ep, Collective::all_to_all, "forward")->bytes, 2'097'152u);
  // Expert data-parallel group dp*cp/ep = 1: no expert gradient collective.
  EXPECT_EQ(find(*v, Dimension::dp, Collective::all_reduce, "expert"), nullptr);
}

TEST(CommVolume, SingleDeviceHasNoCommunication) {
  ModelSpec m = model_a();
  m.global_batch = 2;
  auto v = communication_volume(m, ParallelSpec{});
  ASSERT_TRUE(v) << v.error();
  EXPECT_TRUE(v->ops.empty());
}

struct BadCase {
  const char* name;
  void (*mutate)(ModelSpec&, ParallelSpec&);
  const char* message;
};

TEST(CommVolume, RejectsInvalidInputWithTheRuleThatFails) {
  const BadCase cases[] = {
      {"heads", [](ModelSpec&, ParallelSpec& p) { p.tp = 3; }, "heads must be divisible by tp"},
      {"batch", [](ModelSpec& m, ParallelSpec&) { m.global_batch = 30; }, "global_batch"},
      {"zero", [](ModelSpec&, ParallelSpec& p) { p.zero_stage = 4; }, "zero_stage"},
      {"layers", [](ModelSpec&, ParallelSpec& p) { p.pp = 3; }, "pp * virtual_stages"},
      {"vpp",
       [](ModelSpec&, ParallelSpec& p) {
         p.pp = 1;
         p.virtual_stages = 2;
       },
       "pp >= 2"},
      {"ep dense", [](ModelSpec&, ParallelSpec& p) { p.ep = 2; }, "moe_experts > 0"},
      {"cp",
       [](ModelSpec& m, ParallelSpec& p) {
         m.seq_len = 2047;
         p.cp = 2;
       },
       "seq_len"},
      {"sp",
       [](ModelSpec& m, ParallelSpec& p) {
         m.seq_len = 2050;
         p.sequence_parallel = true;
       },
       "sequence_parallel"},
      {"topk",
       [](ModelSpec& m, ParallelSpec&) {
         m.moe_experts = 4;
         m.moe_top_k = 5;
       },
       "moe_top_k"},
      {"expert params",
       [](ModelSpec& m, ParallelSpec&) {
         m.moe_experts = 16;
         m.moe_top_k = 2;
       },
       "expert parameters"},
      {"zero tp", [](ModelSpec&, ParallelSpec& p) { p.tp = 0; }, ">= 1"},
      {"dtype", [](ModelSpec& m, ParallelSpec&) { m.dtype_bytes = 0; }, "dtype_bytes"},
      {"params", [](ModelSpec& m, ParallelSpec&) { m.parameters = 0; }, "parameters"},
      {"huge hidden", [](ModelSpec& m, ParallelSpec&) { m.hidden = 1u << 24; }, "hidden must be <= 1048576"},
      {"huge tokens", [](ModelSpec& m, ParallelSpec&) { m.micro_batch = 1u << 20; }, "2^28 tokens"},
      {"huge experts",
       [](ModelSpec& m, ParallelSpec&) {
         m.moe_experts = 65536;
         m.moe_top_k = 1;
         m.hidden = 1u << 20;
         m.heads = 16;
       },
       "expert parameters"},
      {"huge tp", [](ModelSpec&, ParallelSpec& p) { p.dp = 1u << 21; }, "<= 2^20"},
  };
  for (const auto& c : cases) {
    ModelSpec m = model_a();
    ParallelSpec p = par_a();
    c.mutate(m, p);
    auto v = communication_volume(m, p);
    ASSERT_FALSE(v) << c.name;
    EXPECT_NE(v.error().find(c.message), std::string::npos) << c.name << ": " << v.error();
  }
}

// The outside report: layers, pp and virtual_stages 65536 each (every one inside its documented range)
// made pp * virtual_stages wrap to 0 in 32 bits, and `layers % 0` killed the process with SIGFPE.
TEST(CommVolume, ReportedWrapOfPpTimesVirtualStagesIsAValidationError) {
  ModelSpec m = model_a();
  m.layers = 65536;
  ParallelSpec p;
  p.pp = 65536;
  p.virtual_stages = 65536;
  m.global_batch = 32;
  auto ok = check(m, p);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().field(), "parallel.virtual_stages");
  EXPECT_NE(ok.error().detail.find("4294967296 model chunks"), std::string::npos) << ok.error().detail;
  EXPECT_FALSE(communication_volume(m, p));
  // The same with pp alone too large for the layers names pp.
  p.virtual_stages = 1;
  m.layers = 4;
  p.pp = 8;
  ASSERT_FALSE(check(m, p));
  EXPECT_EQ(check(m, p).error().field(), "parallel.pp");
  // At the edge: one layer per chunk is fine.
  m.layers = 65536;
  p.pp = 256;
  p.virtual_stages = 256;
  EXPECT_TRUE(check(m, p)) << check(m, p).error().detail;
}

struct FieldCase {
  const char* name;
  void (*mutate)(ModelSpec&, ParallelSpec&);
  const char* field;
};

// Siblings of the reported case: every product of request numbers the model divides by or sizes from,
// at values where 32-bit (or 64-bit) arithmetic would wrap.
TEST(CommVolume, ProductsOfRequestNumbersAreBoundedAndNameTheirField) {
  const FieldCase cases[] = {
      // tp * pp * dp * cp = 2^80 wraps 64 bits to 0; 2^40 wraps 32 bits.
      {"world 2^80", [](ModelSpec&, ParallelSpec& p) { p.tp = p.pp = p.dp = p.cp = 1u << 20; }, "parallel"},
      {"world 2^25",
       [](ModelSpec&, ParallelSpec& p) {
         p.tp = 1;
         p.pp = 2;
         p.dp = 1u << 12;
         p.cp = 1u << 12;
       },
       "parallel"},
      // dp * cp = 2^32 wrapped to 0 in 32 bits, so `(dp * cp) % ep` passed for any ep.
      {"dp*cp wrap",
       [](ModelSpec& m, ParallelSpec& p) {
         m.moe_experts = 16;
         m.moe_top_k = 2;
         p.tp = 1;
         p.pp = 1;
         p.dp = 1u << 16;
         p.cp = 1u << 16;
         p.ep = 16;
       },
       "parallel"},
      // micro_batch * dp larger than the global batch (no micro-batch for some DP rank).
      {"micro_batch*dp",
       [](ModelSpec& m, ParallelSpec& p) {
         m.micro_batch = 1u << 12;
         m.global_batch = 1u << 24;
         m.seq_len = 1u << 16;
         p.dp = 1u << 13;
         p.tp = 1;
         p.pp = 1;
       },
       "model.global_batch"},
      {"tokens", [](ModelSpec& m, ParallelSpec&) { m.micro_batch = 1u << 24; }, "model.micro_batch"},
      {"ep > dp*cp",
       [](ModelSpec& m, ParallelSpec& p) {
         m.moe_experts = 8;
         m.moe_top_k = 1;
         p.ep = 8;  // dp 2
       },
       "parallel.ep"},
      {"virtual_stages 2^21", [](ModelSpec&, ParallelSpec& p) { p.virtual_stages = 1u << 21; },
       "parallel.virtual_stages"},
      {"zero layers", [](ModelSpec& m, ParallelSpec&) { m.layers = 0; }, "model.layers"},
      {"zero pp", [](ModelSpec&, ParallelSpec& p) { p.pp = 0; }, "parallel.pp"},
      {"sp",
       [](ModelSpec& m, ParallelSpec& p) {
         m.seq_len = 2050;
         p.sequence_parallel = true;
       },
       "parallel.sequence_parallel"},
  };
  for (const auto& c : cases) {
    ModelSpec m = model_a();
    ParallelSpec p = par_a();
    c.mutate(m, p);
    auto ok = check(m, p);
    ASSERT_FALSE(ok) << c.name;
    EXPECT_EQ(ok.error().field(), c.field) << c.name << ": " << ok.error().detail;
    EXPECT_EQ(ok.error().detail.rfind(c.field, 0), 0u) << c.name << ": " << ok.error().detail;
    EXPECT_EQ(validate(m, p).error(), ok.error().detail) << c.name;
    EXPECT_FALSE(communication_volume(m, p)) << c.name;
  }
}

// The largest inputs the model accepts give exact, unwrapped counts (2^24 NPUs, the largest activations).
TEST(CommVolume, LargestAcceptedInputsGiveExactCounts) {
  ModelSpec m;
  m.parameters = std::uint64_t{1} << 50;
  m.layers = 65536;
  m.hidden = 1u << 20;
  m.heads = 1u << 10;
  m.seq_len = 1u << 24;
  m.micro_batch = 16;  // 2^28 tokens
  m.global_batch = 1u << 24;
  m.dtype_bytes = 8;
  m.moe_experts = 256;
  m.moe_top_k = 256;
  ParallelSpec p;
  p.tp = 16;
  p.pp = 64;
  p.dp = 64;
  p.cp = 256;  // 2^4 * 2^6 * 2^6 * 2^8 = 2^24 NPUs
  p.ep = 256;
  p.virtual_stages = 1024;  // pp * virtual_stages = 65536 = layers
  p.zero_stage = 3;
  p.sequence_parallel = true;
  // Expert parameters 2^16 * 2^8 * 8 * 2^40 = 2^67 > parameters: a dense model at this size instead.
  m.moe_experts = 0;
  m.moe_top_k = 0;
  p.ep = 1;
  auto v = communication_volume(m, p);
  ASSERT_TRUE(v) << v.error();
  // m = 2^24 / (16 * 64) = 2^14 micro-batches; activations 16 * 2^16 tokens * 2^20 * 8 = 2^43 bytes.
  EXPECT_EQ(v->micro_batches, 1u << 14);
  EXPECT_EQ(v->pp_crossings_per_microbatch, 65535u);
  for (const auto& op : v->ops) {
    EXPECT_GE(op.group_size, 2u) << op.what;
    EXPECT_GT(op.bytes, 0u) << op.what;
    EXPECT_GT(op.count, 0u) << op.what;
  }
  // CP ring backward: 2 (cp - 1) L_p m = 2 * 255 * 1024 * 2^14 calls.
  bool found = false;
  for (const auto& op : v->ops) {
    if (op.what.find("cp ring backward") != std::string::npos) {
      EXPECT_EQ(op.count, 2ull * 255 * 1024 * (1u << 14));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace hsns::cost
