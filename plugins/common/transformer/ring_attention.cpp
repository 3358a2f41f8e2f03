// ring_attention: the online-softmax forward over the blocks passed around the ring, and the backward that recomputes
// each block's probabilities and passes the key/value gradients on with the blocks.
#include "ring_attention.h"

#include <ATen/ATen.h>
#include <kforge/sdk/context_parallel.h>
#include <kforge/sdk/error.h>
#include <torch/autograd.h>

#include <cmath>
#include <limits>
#include <string>

namespace kforge::builtin::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The queries of chunk `a` (0 or 1) of this rank against chunk `b` of the block from rank `source`: which keys each
// query sees, broadcastable to the scores (B, KV, G, c, c); undefined when it sees none of them.
struct ChunkPair {
  int64_t a, b;
  at::Tensor visible;
};

// A rank's chunk index of its local chunk `a`, in the load-balanced layout.
int64_t chunk_index(int rank, int size, int64_t a) { return a == 0 ? rank : 2 * size - 1 - rank; }

std::vector<ChunkPair> visible_pairs(const Ring& ring, int source, int64_t chunk, const at::Tensor& doc_starts,
                                     const at::TensorOptions& options) {
  std::vector<ChunkPair> pairs;
  const at::Tensor offsets = at::arange(chunk, options.dtype(at::kLong));
  for (int64_t a = 0; a < 2; ++a) {
    const int64_t qi = chunk_index(ring.rank, ring.size, a);
    for (int64_t b = 0; b < 2; ++b) {
      const int64_t ki = chunk_index(source, ring.size, b);
      if (ki > qi) continue;  // every key after every query
      const at::Tensor q_pos = offsets + qi * chunk, k_pos = offsets + ki * chunk;
      at::Tensor visible = k_pos.unsqueeze(0).le(q_pos.unsqueeze(1));  // (c, c)
      if (doc_starts.defined()) {
        const at::Tensor starts = doc_starts.narrow(1, a * chunk, chunk);  // (B, c)
        visible = visible.logical_and(k_pos.view({1, 1, chunk}).ge(starts.unsqueeze(-1)));
        pairs.push_back({a, b, visible.view({visible.size(0), 1, 1, chunk, chunk})});
      } else {
        pairs.push_back({a, b, visible.view({1, 1, 1, chunk, chunk})});
      }
    }
  }
  return pairs;
}

// (B, KV, G, c, c) masked scores of query chunk a against key chunk b.
at::Tensor pair_scores(const at::Tensor& q5, const at::Tensor& k, const ChunkPair& p, int64_t chunk, double scale) {
  const at::Tensor qa = q5.narrow(3, p.a * chunk, chunk);
  const at::Tensor kb = k.narrow(2, p.b * chunk, chunk).unsqueeze(2);
  return (at::matmul(qa, kb.transpose(-2, -1)) * scale)
      .masked_fill(p.visible.logical_not(), -std::numeric_limits<double>::infinity());
}

struct RingAttention : torch::autograd::Function<RingAttention> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q_in, const at::Tensor& k_in,
                            const at::Tensor& v_in, const Ring* ring, const at::Tensor* starts) {
    const at::Tensor& doc_starts = *starts;  // not an input: it has no gradient, and may be undefined
    const at::ScalarType work = q_in.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
    const int64_t batch = q_in.size(0), heads = q_in.size(1), local = q_in.size(2), hd = q_in.size(3);
    const int64_t kv_heads = k_in.size(1), group = heads / kv_heads, chunk = local / 2;
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    const at::Tensor q5 = q_in.to(work).reshape({batch, kv_heads, group, local, hd});
    at::Tensor k = k_in.to(work).contiguous(), v = v_in.to(work).contiguous();
    at::Tensor acc = at::zeros({batch, kv_heads, group, local, hd}, q5.options());
    at::Tensor row_max = at::full({batch, kv_heads, group, local}, -std::numeric_limits<double>::infinity(), q5.options());
    at::Tensor row_sum = at::zeros_like(row_max);
    for (int step = 0; step < ring->size; ++step) {
      const int source = (ring->rank - step + ring->size) % ring->size;
      for (const ChunkPair& p : visible_pairs(*ring, source, chunk, doc_starts, q5.options())) {
        const at::Tensor s = pair_scores(q5, k, p, chunk, scale);
        at::Tensor m = row_max.narrow(3, p.a * chunk, chunk), l = row_sum.narrow(3, p.a * chunk, chunk);
        at::Tensor o = acc.narrow(3, p.a * chunk, chunk);
        const at::Tensor new_max = at::maximum(m, std::get<0>(s.max(-1)));
        // A row that has seen no key yet keeps its -inf maximum: shift it by 0 so exp gives 0, not NaN.
        const at::Tensor shift = new_max.masked_fill(new_max.isinf(), 0);
        const at::Tensor probs = at::exp(s - shift.unsqueeze(-1));
        const at::Tensor decay = at::exp(m - shift);
        l.mul_(decay).add_(probs.sum(-1));
        o.mul_(decay.unsqueeze(-1)).add_(at::matmul(probs, v.narrow(2, p.b * chunk, chunk).unsqueeze(2)));
        m.copy_(new_max);
      }
      if (step + 1 < ring->size) {
        const std::vector<at::Tensor> next = ring->pass({k, v});
        k = next[0];
        v = next[1];
      }
    }
    // Every query sees at least itself: its sum is positive.
    const at::Tensor out = acc / row_sum.unsqueeze(-1);
    const at::Tensor lse = row_max + at::log(row_sum);
    ctx->save_for_backward({q_in, k_in, v_in, out, lse});
    ctx->saved_data["ring"] = reinterpret_cast<int64_t>(ring);
    ctx->saved_data["doc_starts"] = doc_starts;
    return out.reshape({batch, heads, local, hd}).to(q_in.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &q_in = saved[0], &k_in = saved[1], &v_in = saved[2], &out = saved[3], &lse = saved[4];
    const at::Tensor doc_starts = ctx->saved_data["doc_starts"].toTensor();
    const Ring* ring = reinterpret_cast<const Ring*>(ctx->saved_data["ring"].toInt());
    const at::ScalarType work = out.scalar_type();
    const int64_t batch = q_in.size(0), heads = q_in.size(1), local = q_in.size(2), hd = q_in.size(3);
    const int64_t kv_heads = k_in.size(1), group = heads / kv_heads, chunk = local / 2;
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    const at::Tensor q5 = q_in.to(work).reshape({batch, kv_heads, group, local, hd});
    const at::Tensor d_out = grads[0].to(work).reshape({batch, kv_heads, group, local, hd});
    const at::Tensor delta = (d_out * out).sum(-1);  // (B, KV, G, Sl): rowsum(dO * O)
    at::Tensor d_q = at::zeros_like(q5);
    at::Tensor k = k_in.to(work).contiguous(), v = v_in.to(work).contiguous();
    at::Tensor d_k = at::zeros_like(k), d_v = at::zeros_like(v);  // of the block held now, travelling with it
    for (int step = 0; step < ring->size; ++step) {
      const int source = (ring->rank - step + ring->size) % ring->size;
      for (const ChunkPair& p : visible_pairs(*ring, source, chunk, doc_starts, q5.options())) {
        const at::Tensor s = pair_scores(q5, k, p, chunk, scale);
        const at::Tensor probs = at::exp(s - lse.narrow(3, p.a * chunk, chunk).unsqueeze(-1));  // (B, KV, G, c, c)
        const at::Tensor d_oa = d_out.narrow(3, p.a * chunk, chunk);
        const at::Tensor vb = v.narrow(2, p.b * chunk, chunk).unsqueeze(2);
        d_v.narrow(2, p.b * chunk, chunk).add_(at::matmul(probs.transpose(-2, -1), d_oa).sum(2));
        const at::Tensor d_s =
            probs * (at::matmul(d_oa, vb.transpose(-2, -1)) - delta.narrow(3, p.a * chunk, chunk).unsqueeze(-1)) *
            scale;
        d_q.narrow(3, p.a * chunk, chunk).add_(at::matmul(d_s, k.narrow(2, p.b * chunk, chunk).unsqueeze(2)));
        d_k.narrow(2, p.b * chunk, chunk)
            .add_(at::matmul(d_s.transpose(-2, -1), q5.narrow(3, p.a * chunk, chunk)).sum(2));
      }
      // The last pass brings every block's gradients home: the block held after size - 1 passes is the next rank's.
      if (step + 1 < ring->size) {
        const std::vector<at::Tensor> next = ring->pass({k, v, d_k, d_v});
        k = next[0];
        v = next[1];
        d_k = next[2];
        d_v = next[3];
      } else if (ring->size > 1) {
        const std::vector<at::Tensor> home = ring->pass({d_k, d_v});
        d_k = home[0];
        d_v = home[1];
      }
    }
    return {d_q.reshape({batch, heads, local, hd}).to(q_in.scalar_type()), d_k.to(k_in.scalar_type()),
            d_v.to(v_in.scalar_type()), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor ring_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const Ring& ring,
                          const at::Tensor& doc_starts) {
  const int64_t local = q.size(2);
  if (local % 2 != 0 || k.size(2) != local || v.size(2) != local || q.size(1) % k.size(1) != 0) {
    throw sdk::Error("ring attention: this rank's queries, keys and values need the same even number of positions "
                     "(two chunks of the load-balanced layout) and a multiple of the key heads as query heads; got q " +
                     c10::str(q.sizes()) + ", k " + c10::str(k.sizes()) + ", v " + c10::str(v.sizes()));
  }
  if (doc_starts.defined() && doc_starts.sizes() != at::IntArrayRef{q.size(0), local}) {
    throw sdk::Error("ring attention: document starts " + c10::str(doc_starts.sizes()) + " need (B, Sl) = (" +
                     std::to_string(q.size(0)) + ", " + std::to_string(local) + ")");
  }
  return RingAttention::apply(q, k, v, &ring, &doc_starts);
}

}  // namespace kforge::builtin::models
