#include "scheduling/cost/comm_volume.h"

#include <string>

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

using Check = tl::expected<void, std::string>;

Check fail(std::string why) {
  return tl::unexpected(std::move(why));
}

// __extension__: a GCC built-in type, so -Wpedantic does not flag it.
__extension__ typedef unsigned __int128 u128;

// Exact even for out-of-range inputs (at most 2^16 * 2^32 * 8 * 2^64 < 2^128).
u128 expert_parameters_wide(const ModelSpec& m) {
  const u128 h = m.hidden;
  return static_cast<u128>(m.layers) * m.moe_experts * 8 * h * h;
}

std::uint64_t expert_parameters(const ModelSpec& m) {
  return static_cast<std::uint64_t>(expert_parameters_wide(m));
}

Check bounds(const ModelSpec& m, const ParallelSpec& p) {
  if (m.layers > 65536) return fail("model.layers must be <= 65536");
  if (m.hidden > (1u << 20)) return fail("model.hidden must be <= 1048576");
  if (m.seq_len > (1u << 24)) return fail("model.seq_len must be <= 16777216");
  if (static_cast<std::uint64_t>(m.micro_batch) * m.seq_len > (1ull << 28)) {
    return fail("model.micro_batch * seq_len must be <= 2^28 tokens");
  }
  if (m.global_batch > (1u << 24)) return fail("model.global_batch must be <= 16777216");
  if (m.parameters > (1ull << 50)) return fail("model.parameters must be <= 2^50");
  if (m.moe_experts > 65536) return fail("model.moe_experts must be <= 65536");
  if (m.moe_top_k > 256) return fail("model.moe_top_k must be <= 256");
  for (std::uint32_t size : {p.tp, p.pp, p.dp, p.cp, p.ep, p.virtual_stages}) {
    if (size > (1u << 20)) return fail("parallel sizes (tp, pp, dp, cp, ep, virtual_stages) must be <= 2^20");
  }
  return {};
}

}  // namespace

tl::expected<void, std::string> validate(const ModelSpec& m, const ParallelSpec& p) {
  if (m.parameters == 0) return fail("model.parameters must be > 0");
  if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.seq_len == 0 || m.micro_batch == 0 ||
      m.global_batch == 0) {
    return fail("model.layers, hidden, heads, seq_len, micro_batch and global_batch must all be > 0");
  }
  if (m.dtype_bytes == 0 || m.dtype_bytes > 8) return fail("model.dtype_bytes must be in 1..8");
  if (auto ok = bounds(m, p); !ok) return ok;
  if (m.hidden % m.heads != 0) return fail("model.hidden must be divisible by model.heads");
  const std::uint32_t kvh = m.kv_heads == 0 ? m.heads : m.kv_heads;
  if (m.heads % kvh != 0) return fail("model.heads must be divisible by model.kv_heads");
  if (p.tp == 0 || p.pp == 0 || p.dp == 0 || p.cp == 0 || p.ep == 0 || p.virtual_stages == 0) {
    return fail("parallelism tp, pp, dp, cp, ep and virtual_stages must all be >= 1");
  }
  if (p.zero_stage < 0 || p.zero_stage > 3) return fail("parallelism.zero_stage must be 0, 1, 2 or 3");
  if (m.heads % p.tp != 0) return fail("model.heads must be divisible by tp");
  if (kvh % p.tp != 0) return fail("model.kv_heads must be divisible by tp");
  if (m.layers % (p.pp * p.virtual_stages) != 0) {
    return fail("model.layers must be divisible by pp * virtual_stages");
  }
  if (p.virtual_stages > 1 && p.pp < 2) return fail("virtual_stages > 1 needs pp >= 2");
  if (m.seq_len % p.cp != 0) return fail("model.seq_len must be divisible by cp");
  if (p.sequence_parallel && (m.seq_len / p.cp) % p.tp != 0) {
    return fail("with sequence_parallel, seq_len / cp must be divisible by tp");
  }
  const std::uint64_t per_step = static_cast<std::uint64_t>(m.micro_batch) * p.dp;
  if (m.global_batch % per_step != 0) {
    return fail("model.global_batch must be divisible by micro_batch * dp");
  }
  if (m.moe_experts == 0) {
    if (p.ep != 1) return fail("ep > 1 needs model.moe_experts > 0");
    if (m.moe_top_k != 0) return fail("model.moe_top_k needs model.moe_experts > 0");
  } else {
    if (m.moe_top_k == 0 || m.moe_top_k > m.moe_experts) {
      return fail("model.moe_top_k must be in 1..moe_experts");
    }
    if (m.moe_experts % p.ep != 0) return fail("model.moe_experts must be divisible by ep");
    if ((p.dp * p.cp) % p.ep != 0) return fail("ep must divide dp * cp");
    if (expert_parameters_wide(m) >= m.parameters) {
      return fail("model.parameters must exceed the expert parameters layers * experts * 8 * hidden^2");
    }
  }
  return {};
}

namespace {

void add(CommVolume& v, Dimension dim, Collective kind, std::string what, std::uint32_t group,
         std::uint64_t bytes, std::uint64_t count) {
  if (group <= 1 || count == 0 || bytes == 0) return;
  v.ops.push_back(CommOp{dim, kind, std::move(what), group, bytes, count});
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

void add_tp(CommVolume& v, const ModelSpec& m, const ParallelSpec& p, std::uint64_t act,
            std::uint64_t layers_per_rank) {
  const std::uint64_t per_pass = 2 * layers_per_rank * v.micro_batches;  // attention + mlp per layer
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
  (void)m;
}

void add_pp(CommVolume& v, const ParallelSpec& p, std::uint64_t act) {
  if (p.pp < 2) return;
  const std::uint64_t vs = p.virtual_stages;
  v.pp_crossings_per_microbatch = vs * p.pp - 1;
  const std::uint64_t msg = p.sequence_parallel ? act / p.tp : act;
  // Busiest rank: a middle rank sends every chunk forward and backward; with pp = 2 each rank's
  // first or last chunk sits at a pipeline end and sends one message fewer.
  const std::uint64_t sends = p.pp == 2 ? 2 * vs - 1 : 2 * vs;
  add(v, Dimension::pp, Collective::send_recv, "pp activations forward + gradients backward (busiest rank)",
      p.pp, msg, sends * v.micro_batches);
}

void add_dp_group(CommVolume& v, const ParallelSpec& p, const std::string& label, std::uint32_t group,
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
  CommVolume v;
  v.micro_batches = m.global_batch / (static_cast<std::uint64_t>(m.micro_batch) * p.dp);
  const std::uint64_t d = m.dtype_bytes;
  const std::uint64_t seq_rank = m.seq_len / p.cp;
  const std::uint64_t act = static_cast<std::uint64_t>(m.micro_batch) * seq_rank * m.hidden * d;
  const std::uint64_t layers_per_rank = m.layers / p.pp;

  add_tp(v, m, p, act, layers_per_rank);
  add_pp(v, p, act);

  const std::uint64_t expert = m.moe_experts == 0 ? 0 : expert_parameters(m);
  const std::uint64_t dense_rank = ceil_div(m.parameters - expert, static_cast<std::uint64_t>(p.tp) * p.pp);
  const std::uint64_t expert_rank = expert / (static_cast<std::uint64_t>(p.tp) * p.pp * p.ep);
  v.params_per_rank = dense_rank + expert_rank;
  add_dp_group(v, p, "dense", p.dp * p.cp, dense_rank * d);
  if (expert_rank > 0) add_dp_group(v, p, "expert", p.dp * p.cp / p.ep, expert_rank * d);

  if (m.moe_experts > 0) {
    const std::uint64_t tokens = m.micro_batch * seq_rank / (p.sequence_parallel ? p.tp : 1);
    const std::uint64_t a2a = tokens * m.moe_top_k * m.hidden * d;
    const std::uint64_t per_pass = 2 * layers_per_rank * v.micro_batches;  // dispatch + combine
    add(v, Dimension::ep, Collective::all_to_all, "ep forward all-to-all (dispatch, combine)", p.ep, a2a,
        per_pass);
    add(v, Dimension::ep, Collective::all_to_all, "ep backward all-to-all (dispatch, combine)", p.ep, a2a,
        per_pass);
  }

  if (p.cp > 1) {
    const std::uint32_t kvh = m.kv_heads == 0 ? m.heads : m.kv_heads;
    const std::uint64_t head_dim = m.hidden / m.heads;
    const std::uint64_t kv = 2 * m.micro_batch * seq_rank * (kvh / p.tp) * head_dim * d;
    const std::uint64_t steps = static_cast<std::uint64_t>(p.cp - 1) * layers_per_rank * v.micro_batches;
    add(v, Dimension::cp, Collective::send_recv, "cp ring forward (K,V chunk per step)", p.cp, kv, steps);
    add(v, Dimension::cp, Collective::send_recv, "cp ring backward (K,V and dK,dV per step)", p.cp, kv,
        2 * steps);
  }
  return v;
}

}  // namespace hsns::cost
