// Per-iteration communication volume of a GPT-style (Megatron) model under TP/PP/DP/CP/EP and ZeRO.
//
// Contract:
// - communication_volume() validates the model and the parallelism (every divisibility rule it relies
//   on) and returns either the list of collective operations one rank issues per training iteration,
//   or a human-readable reason naming the first rule that fails. Pure, deterministic, thread-safe.
// - Every CommOp gives the buffer size of one call in the nccl-tests convention (`bytes`: the full
//   all-reduce buffer, the full (gathered) all-gather output, the full reduce-scatter input, the whole
//   all-to-all send buffer of one rank, the message of one send/recv), how many calls one rank makes
//   per iteration (`count`) and the group size. Wire traffic per rank follows from the algorithm
//   (collective_time.h). The busiest rank is reported where ranks differ (pipeline ends).
// - Formulas and their derivations: docs/cost-model.md. Simplifications (no activation recomputation,
//   gradients reduced in the model dtype, every layer an MoE layer when experts > 0, expert MLPs of
//   8*h^2 parameters) are stated there.
// - Inputs are bounded so that no byte or call count can overflow 64 bits, and combinations are checked
//   against what the model can mean (check() names the field, docs/cost-model.md lists every rule):
//   layers, moe_experts <= 65536; hidden <= 2^20; seq_len <= 2^24; micro_batch * seq_len <= 2^28;
//   global_batch <= 2^24; parameters <= 2^50; moe_top_k <= 256; every parallel size <= 2^20; the world
//   size tp * pp * dp * cp <= 2^24; pp * virtual_stages <= layers; micro_batch * dp <= global_batch;
//   ep <= dp * cp. Every product of request numbers is computed with overflow checks (hsns/checked_math.h),
//   never in a width that can wrap. Products of bytes and counts (total_bytes, buffer_bytes) are doubles.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/error.h"

namespace hsns::cost {

// GPT-style model hyperparameters. `parameters` is the total count including every expert.
struct ModelSpec {
  std::uint64_t parameters = 0;
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;
  std::uint32_t heads = 0;
  std::uint32_t kv_heads = 0;  // 0 = same as heads (no grouped-query attention)
  std::uint32_t seq_len = 0;
  std::uint32_t micro_batch = 0;
  std::uint32_t global_batch = 0;
  std::uint32_t dtype_bytes = 2;
  std::uint32_t moe_experts = 0;  // 0 = dense model
  std::uint32_t moe_top_k = 0;    // required (>= 1) when moe_experts > 0
};

struct ParallelSpec {
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint32_t dp = 1;
  std::uint32_t cp = 1;
  std::uint32_t ep = 1;  // expert parallel size; must divide dp * cp
  int zero_stage = 0;    // 0..3
  bool sequence_parallel = false;
  std::uint32_t virtual_stages = 1;  // interleaved pipeline: model chunks per pipeline rank
};

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };
enum class Dimension { tp, pp, dp, ep, cp };

std::string_view to_string(Collective c);
std::string_view to_string(Dimension d);

struct CommOp {
  Dimension dim = Dimension::tp;
  Collective kind = Collective::all_reduce;
  std::string what;  // e.g. "tp forward all-reduce (attention + mlp)"
  std::uint32_t group_size = 1;
  std::uint64_t bytes = 0;  // buffer size of one call (see contract)
  std::uint64_t count = 0;  // calls per iteration per rank
  double total_bytes() const { return static_cast<double>(bytes) * static_cast<double>(count); }
};

struct CommVolume {
  std::uint64_t micro_batches = 0;    // global_batch / (micro_batch * dp)
  std::uint64_t params_per_rank = 0;  // dense + expert parameters held by one rank (before ZeRO sharding)
  std::uint64_t pp_crossings_per_microbatch = 0;  // pipeline-wide boundary crossings per direction
  std::vector<CommOp> ops;
  // Sum of bytes*count over the operations of one dimension (buffer bytes, not wire bytes).
  double buffer_bytes(Dimension d) const;
};

// Validation limits (inclusive). The REST parser's per-field ranges match the single-field ones.
inline constexpr std::uint64_t kMaxLayers = 65536;
inline constexpr std::uint64_t kMaxHidden = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxSeqLen = std::uint64_t{1} << 24;
inline constexpr std::uint64_t kMaxTokens = std::uint64_t{1} << 28;  // micro_batch * seq_len
inline constexpr std::uint64_t kMaxGlobalBatch = std::uint64_t{1} << 24;
inline constexpr std::uint64_t kMaxParameters = std::uint64_t{1} << 50;
inline constexpr std::uint64_t kMaxExperts = 65536;
inline constexpr std::uint64_t kMaxTopK = 256;
inline constexpr std::uint64_t kMaxParallelSize = std::uint64_t{1}
                                                  << 20;                // tp, pp, dp, cp, ep, virtual_stages
inline constexpr std::uint64_t kMaxWorldSize = std::uint64_t{1} << 24;  // tp * pp * dp * cp NPUs

// Checks every rule the formulas rely on, cheapest first; the first failing rule is reported as an
// hsns::Error of kind invalid with one field: the request path it is about ("model.layers",
// "parallel.virtual_stages", or "parallel" for a rule on the whole parallelism); its detail says why and
// starts with the field.
Result<void> check(const ModelSpec& model, const ParallelSpec& par);

// check() with the message only.
tl::expected<void, std::string> validate(const ModelSpec& model, const ParallelSpec& par);

tl::expected<CommVolume, std::string> communication_volume(const ModelSpec& model, const ParallelSpec& par);

}  // namespace hsns::cost
