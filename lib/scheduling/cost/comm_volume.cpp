#include "scheduling/cost/comm_volume.h"

#include <string>
#include <tuple>

#include "hsns/checked_math.h"

namespace hsns::cost {

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce:
      return "all_reduce";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::all_gather:
      return "all_gather";
    case Collective::all_to_all:
      return "all_to_all";
    case Collective::send_recv:
      return "send_recv";
  }
  return "unknown";
}

std::string_view to_string(Dimension d) {
  switch (d) {
    case Dimension::tp:
      return "tp";
    case Dimension::pp:
      return "pp";
    case Dimension::dp:
      return "dp";
    case Dimension::ep:
      return "ep";
    case Dimension::cp:
      return "cp";
  }
  return "unknown";
}

double CommVolume::buffer_bytes(Dimension d) const {
  double sum = 0;
  for (const auto& op : ops) {
    if (op.dim == d) sum += op.total_bytes();
  }
  return sum;
}

namespace {

using Check = Result<void>;

tl::unexpected<Error> fail(std::string field, std::string why) {
  std::string message = field + " " + why;
  return tl::unexpected(Error::invalid(std::move(field), std::move(message)));
}

std::string str(std::uint64_t v) {
  return std::to_string(v);
}

// __extension__: a GCC built-in type, so -Wpedantic does not flag it.
__extension__ typedef unsigned __int128 u128;

// Exact once bounds() holds: at most 2^16 * 2^16 * 8 * 2^40 = 2^75.
u128 expert_parameters_wide(const ModelSpec& m) {
  const u128 h = m.hidden;
  return static_cast<u128>(m.layers) * m.moe_experts * 8 * h * h;
}

std::uint64_t expert_parameters(const ModelSpec& m) {
  return static_cast<std::uint64_t>(expert_parameters_wide(m));
}

struct Named {
  const char* field;
  std::uint64_t value;
};

Check positive(const ModelSpec& m, const ParallelSpec& p) {
  for (const Named& f :
       {Named{"model.parameters", m.parameters}, Named{"model.layers", m.layers},
        Named{"model.hidden", m.hidden}, Named{"model.heads", m.heads}, Named{"model.seq_len", m.seq_len},
        Named{"model.micro_batch", m.micro_batch}, Named{"model.global_batch", m.global_batch}}) {
    if (f.value == 0) return fail(f.field, "must be > 0");
  }
  if (m.dtype_bytes == 0 || m.dtype_bytes > 8) return fail("model.dtype_bytes", "must be in 1..8");
  for (const Named& f : {Named{"parallel.tp", p.tp}, Named{"parallel.pp", p.pp}, Named{"parallel.dp", p.dp},
                         Named{"parallel.cp", p.cp}, Named{"parallel.ep", p.ep},
                         Named{"parallel.virtual_stages", p.virtual_stages}}) {
    if (f.value == 0) return fail(f.field, "must be >= 1");
  }
  if (p.zero_stage < 0 || p.zero_stage > 3) return fail("parallel.zero_stage", "must be 0, 1, 2 or 3");
  return {};
}

// Single-field upper bounds and the token bound: with them every byte count below fits in 64 bits.
Check bounds(const ModelSpec& m, const ParallelSpec& p) {
  for (const auto& [field, value, limit, text] :
       {std::tuple<const char*, std::uint64_t, std::uint64_t, const char*>{"model.layers", m.layers,
                                                                           kMaxLayers, "65536"},
        {"model.hidden", m.hidden, kMaxHidden, "1048576"},
        {"model.seq_len", m.seq_len, kMaxSeqLen, "16777216"},
        {"model.global_batch", m.global_batch, kMaxGlobalBatch, "16777216"},
        {"model.parameters", m.parameters, kMaxParameters, "2^50"},
        {"model.moe_experts", m.moe_experts, kMaxExperts, "65536"},
        {"model.moe_top_k", m.moe_top_k, kMaxTopK, "256"},
        {"parallel.tp", p.tp, kMaxParallelSize, "2^20"},
        {"parallel.pp", p.pp, kMaxParallelSize, "2^20"},
        {"parallel.dp", p.dp, kMaxParallelSize, "2^20"},
        {"parallel.cp", p.cp, kMaxParallelSize, "2^20"},
        {"parallel.ep", p.ep, kMaxParallelSize, "2^20"},
        {"parallel.virtual_stages", p.virtual_stages, kMaxParallelSize, "2^20"}}) {
    if (value > limit) return fail(field, std::string("must be <= ") + text);
  }
  if (!bounded_product(kMaxTokens, {m.micro_batch, m.seq_len})) {
    return fail("model.micro_batch", "* seq_len must be <= 2^28 tokens");
  }
  return {};
}

// Combinations of the parallel sizes with each other and with the model: each product is checked before
// it is used as a divisor, and against what the model can mean.
Check combinations(const ModelSpec& m, const ParallelSpec& p) {
  if (!bounded_product(kMaxWorldSize, {p.tp, p.pp, p.dp, p.cp})) {
    return fail("parallel", "tp * pp * dp * cp must be <= 2^24 NPUs (tp " + str(p.tp) + ", pp " + str(p.pp) +
                                ", dp " + str(p.dp) + ", cp " + str(p.cp) + ")");
  }
  // Every model chunk (pp * virtual_stages of them) holds at least one layer.
  const auto chunks = bounded_product(m.layers, {p.pp, p.virtual_stages});
  if (!chunks) {
    return fail(p.virtual_stages > 1 ? "parallel.virtual_stages" : "parallel.pp",
                "too large: pp * virtual_stages = " + str(std::uint64_t{p.pp} * p.virtual_stages) +
                    " model chunks, more than the " + str(m.layers) + " model.layers");
  }
  if (m.layers % *chunks != 0) return fail("model.layers", "must be divisible by pp * virtual_stages");
  if (p.virtual_stages > 1 && p.pp < 2) return fail("parallel.virtual_stages", "> 1 needs pp >= 2");
  // One micro-batch per DP rank at least.
  const auto per_step = bounded_product(m.global_batch, {m.micro_batch, p.dp});
  if (!per_step) {
    return fail("model.global_batch",
                "must be >= micro_batch * dp = " + str(std::uint64_t{m.micro_batch} * p.dp));
  }
  if (m.global_batch % *per_step != 0)
    return fail("model.global_batch", "must be divisible by micro_batch * dp");
  return {};
}

}  // namespace

Result<void> check(const ModelSpec& m, const ParallelSpec& p) {
  if (auto ok = positive(m, p); !ok) return ok;
  if (auto ok = bounds(m, p); !ok) return ok;
  if (auto ok = combinations(m, p); !ok) return ok;
  if (m.hidden % m.heads != 0) return fail("model.hidden", "must be divisible by model.heads");
  const std::uint32_t kvh = m.kv_heads == 0 ? m.heads : m.kv_heads;
  if (m.heads % kvh != 0) return fail("model.heads", "must be divisible by model.kv_heads");
  if (m.heads % p.tp != 0) return fail("model.heads", "must be divisible by tp");
  if (kvh % p.tp != 0) return fail("model.kv_heads", "must be divisible by tp");
  if (m.seq_len % p.cp != 0) return fail("model.seq_len", "must be divisible by cp");
  if (p.sequence_parallel && (m.seq_len / p.cp) % p.tp != 0) {
    return fail("parallel.sequence_parallel", "needs seq_len / cp divisible by tp");
  }
  if (m.moe_experts == 0) {
    if (p.ep != 1) return fail("parallel.ep", "> 1 needs model.moe_experts > 0");
    if (m.moe_top_k != 0) return fail("model.moe_top_k", "needs model.moe_experts > 0");
  } else {
    if (m.moe_top_k == 0 || m.moe_top_k > m.moe_experts)
      return fail("model.moe_top_k", "must be in 1..moe_experts");
    if (m.moe_experts % p.ep != 0) return fail("model.moe_experts", "must be divisible by ep");
    // dp * cp <= 2^24 after combinations().
    if ((std::uint64_t{p.dp} * p.cp) % p.ep != 0) return fail("parallel.ep", "must divide dp * cp");
    if (expert_parameters_wide(m) >= m.parameters) {
      return fail("model.parameters", "must exceed the expert parameters layers * experts * 8 * hidden^2");
    }
  }
  return {};
}

tl::expected<void, std::string> validate(const ModelSpec& m, const ParallelSpec& p) {
  return check(m, p).map_error([](const Error& e) { return e.detail; });
}

namespace {

// Products of validated inputs. check()'s bounds keep every one of them below 2^62 (docs/cost-model.md,
// Validation); computing them checked keeps that guarantee next to the arithmetic: an overflow is reported
// as an error instead of a wrapped count, should a bound ever be loosened.
class Products {
 public:
  std::uint64_t operator()(std::initializer_list<std::uint64_t> factors) {
    auto r = checked_product(factors);
    if (!r) overflow_ = true;
    return r.value_or(0);
  }
  bool overflowed() const { return overflow_; }

 private:
  bool overflow_ = false;
};

void add(CommVolume& v, Dimension dim, Collective kind, std::string what, std::uint64_t group,
         std::uint64_t bytes, std::uint64_t count) {
  if (group <= 1 || count == 0 || bytes == 0) return;
  // Group sizes are factors of the world size (<= 2^24 after check()).
  v.ops.push_back(CommOp{dim, kind, std::move(what), static_cast<std::uint32_t>(group), bytes, count});
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return a / b + (a % b != 0);
}

void add_tp(CommVolume& v, const ParallelSpec& p, std::uint64_t act, std::uint64_t per_pass) {
  if (!p.sequence_parallel) {
    add(v, Dimension::tp, Collective::all_reduce, "tp forward all-reduce (attention, mlp)", p.tp, act,
        per_pass);
    add(v, Dimension::tp, Collective::all_reduce, "tp backward all-reduce (attention, mlp)", p.tp, act,
        per_pass);
    return;
  }
  add(v, Dimension::tp, Collective::all_gather, "tp forward all-gather (sequence parallel)", p.tp, act,
      per_pass);
  add(v, Dimension::tp, Collective::reduce_scatter, "tp forward reduce-scatter (sequence parallel)", p.tp,
      act, per_pass);
  add(v, Dimension::tp, Collective::all_gather, "tp backward all-gather (sequence parallel)", p.tp, act,
      per_pass);
  add(v, Dimension::tp, Collective::reduce_scatter, "tp backward reduce-scatter (sequence parallel)", p.tp,
      act, per_pass);
}

void add_pp(CommVolume& v, const ParallelSpec& p, std::uint64_t act, Products& mul) {
  if (p.pp < 2) return;
  const std::uint64_t vs = p.virtual_stages;
  v.pp_crossings_per_microbatch = mul({vs, p.pp}) - 1;  // pp >= 2, so at least 1
  const std::uint64_t msg = p.sequence_parallel ? act / p.tp : act;
  // Busiest rank: a middle rank sends every chunk forward and backward; with pp = 2 each rank's
  // first or last chunk sits at a pipeline end and sends one message fewer.
  const std::uint64_t sends = p.pp == 2 ? mul({2, vs}) - 1 : mul({2, vs});
  add(v, Dimension::pp, Collective::send_recv, "pp activations forward + gradients backward (busiest rank)",
      p.pp, msg, mul({sends, v.micro_batches}));
}

void add_dp_group(CommVolume& v, const ParallelSpec& p, const std::string& label, std::uint64_t group,
                  std::uint64_t grad_bytes) {
  const std::uint64_t mb = v.micro_batches;
  switch (p.zero_stage) {
    case 0:
    case 1:
      add(v, Dimension::dp, Collective::all_reduce, label + " gradient all-reduce", group, grad_bytes, 1);
      break;
    case 2:
      add(v, Dimension::dp, Collective::reduce_scatter, label + " gradient reduce-scatter (per micro-batch)",
          group, grad_bytes, mb);
      add(v, Dimension::dp, Collective::all_gather, label + " parameter all-gather (after step)", group,
          grad_bytes, 1);
      break;
    default:
      add(v, Dimension::dp, Collective::reduce_scatter, label + " gradient reduce-scatter (per micro-batch)",
          group, grad_bytes, mb);
      add(v, Dimension::dp, Collective::all_gather, label + " parameter all-gather (forward)", group,
          grad_bytes, mb);
      add(v, Dimension::dp, Collective::all_gather, label + " parameter all-gather (backward)", group,
          grad_bytes, mb);
      break;
  }
}

}  // namespace

tl::expected<CommVolume, std::string> communication_volume(const ModelSpec& m, const ParallelSpec& p) {
  if (auto ok = validate(m, p); !ok) return tl::unexpected(ok.error());
  Products mul;
  // Divisors first: a (never expected) overflow must not turn into a division by zero.
  const std::uint64_t per_step = mul({m.micro_batch, p.dp});
  const std::uint64_t model_shards = mul({p.tp, p.pp});
  const std::uint64_t expert_shards = mul({p.tp, p.pp, p.ep});
  if (mul.overflowed()) return tl::unexpected(std::string("parallel: tp * pp * ep overflows 64 bits"));
  CommVolume v;
  v.micro_batches = m.global_batch / per_step;  // >= 1 and exact after check()
  const std::uint64_t d = m.dtype_bytes;
  const std::uint64_t seq_rank = m.seq_len / p.cp;
  const std::uint64_t act = mul({m.micro_batch, seq_rank, m.hidden, d});
  const std::uint64_t layers_per_rank = m.layers / p.pp;
  const std::uint64_t per_pass = mul({2, layers_per_rank, v.micro_batches});  // two regions/calls per layer

  add_tp(v, p, act, per_pass);
  add_pp(v, p, act, mul);

  const std::uint64_t dp_cp = mul({p.dp, p.cp});
  const std::uint64_t expert = m.moe_experts == 0 ? 0 : expert_parameters(m);
  const std::uint64_t dense_rank = ceil_div(m.parameters - expert, model_shards);
  const std::uint64_t expert_rank = expert / expert_shards;
  v.params_per_rank = dense_rank + expert_rank;  // both <= parameters <= 2^50
  add_dp_group(v, p, "dense", dp_cp, mul({dense_rank, d}));
  if (expert_rank > 0) add_dp_group(v, p, "expert", dp_cp / p.ep, mul({expert_rank, d}));

  if (m.moe_experts > 0) {
    const std::uint64_t tokens = mul({m.micro_batch, seq_rank}) / (p.sequence_parallel ? p.tp : 1);
    const std::uint64_t a2a = mul({tokens, m.moe_top_k, m.hidden, d});
    add(v, Dimension::ep, Collective::all_to_all, "ep forward all-to-all (dispatch, combine)", p.ep, a2a,
        per_pass);
    add(v, Dimension::ep, Collective::all_to_all, "ep backward all-to-all (dispatch, combine)", p.ep, a2a,
        per_pass);
  }

  if (p.cp > 1) {
    const std::uint32_t kvh = m.kv_heads == 0 ? m.heads : m.kv_heads;
    const std::uint64_t head_dim = m.hidden / m.heads;
    const std::uint64_t kv = mul({2, m.micro_batch, seq_rank, kvh / p.tp, head_dim, d});
    const std::uint64_t steps = mul({p.cp - 1u, layers_per_rank, v.micro_batches});
    add(v, Dimension::cp, Collective::send_recv, "cp ring forward (K,V chunk per step)", p.cp, kv, steps);
    add(v, Dimension::cp, Collective::send_recv, "cp ring backward (K,V and dK,dV per step)", p.cp, kv,
        mul({2, steps}));
  }
  if (mul.overflowed()) return tl::unexpected(std::string("model: a byte or call count overflows 64 bits"));
  return v;
}

}  // namespace hsns::cost
