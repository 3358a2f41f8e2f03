// MixtureFeed: micro-batches, phase LR scale, per-source metrics and checkpoint state of a mixture.
#include "feed/mixture_feed.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "dist/tensor_group.h"
#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::feed {
namespace {

std::vector<int64_t> source_sizes(const data::MixtureDataset& data) {
  std::vector<int64_t> sizes;
  for (size_t s = 0; s < data.sources(); ++s) sizes.push_back(data.source_size(s));
  return sizes;
}

}  // namespace

std::vector<data::MixturePhase> mixture_phases(const config::DataConfig& data) {
  std::vector<double> base;
  for (const config::DatasetSource& s : data.datasets) base.push_back(s.weight);
  std::vector<data::MixturePhase> phases{{0, base, 1.0}};
  for (const config::TrainingPhase& p : data.phases) {
    std::vector<double> weights = base;
    for (const auto& [name, w] : p.dataset_weights) {
      for (size_t s = 0; s < data.datasets.size(); ++s) {
        if (data.datasets[s].name == name) weights[s] = w;
      }
    }
    phases.push_back({p.start_step, std::move(weights), p.lr_scale});
  }
  return phases;
}

at::Tensor row_cross_entropy(const at::Tensor& logits, const at::Tensor& labels, const dist::Group* vocab) {
  const at::NoGradGuard no_grad;
  const int64_t b = labels.size(0), s = labels.size(1);
  const at::Tensor flat = logits.detach().to(at::kFloat).reshape({b * s, -1});
  const at::Tensor flat_labels = labels.reshape({-1});
  at::Tensor ce;
  if (vocab == nullptr || vocab->size() == 1) {
    ce = at::cross_entropy_loss(flat, flat_labels, {}, at::Reduction::None, -100);
  } else {  // logsumexp over every rank's columns, minus the label's logit from the rank holding it
    const at::Tensor shift = dist::reduced_over(*vocab, std::get<0>(flat.max(1)), dist::Reduce::Max);
    const at::Tensor sum_exp = dist::reduced_over(*vocab, (flat - shift.unsqueeze(1)).exp().sum(1));
    const int64_t width = flat.size(1), first = vocab->rank() * width;
    const at::Tensor here = flat_labels.ge(first).logical_and(flat_labels.lt(first + width));
    const at::Tensor column = (flat_labels - first).clamp(0, width - 1).unsqueeze(1);
    const at::Tensor label_logit = dist::reduced_over(*vocab, flat.gather(1, column).squeeze(1) * here);
    ce = (sum_exp.log() + shift - label_logit) * flat_labels.ne(-100);
  }
  ce = ce.reshape({b, s}).to(at::kDouble);
  return ce.sum(1) / labels.ne(-100).sum(1).to(at::kDouble);
}

MixtureFeed::MixtureFeed(const config::JobConfig& job, const data::MixtureDataset& data, const dist::Group& dp,
                         int64_t vocab_size, int64_t eos_id)
    : data_(data),
      dp_(dp),
      batch_size_(job.train.batch_size),
      grad_accum_(job.train.grad_accum_steps),
      seq_len_(job.train.seq_len),
      vocab_size_(vocab_size),
      eos_id_(eos_id),
      sampler_(source_sizes(data), mixture_phases(job.data), job.data.mix_temperature,
               static_cast<uint64_t>(job.train.effective_data_seed())) {}

std::vector<data::Batch> MixtureFeed::micro_batches(int64_t step, bool logged) {
  const size_t phase = sampler_.phase_at(step);
  if (phase != logged_phase_) {
    std::string mix;
    for (size_t s = 0; s < data_.sources(); ++s) {
      mix += fmt::format("{}'{}' {:.4f}", s ? ", " : "", data_.name(s), sampler_.probabilities(phase)[s]);
    }
    log::get().info("step {}: data phase {} of {} (from step {}): sampling {}; lr_scale {}", step + 1, phase,
                    sampler_.phases() - 1, sampler_.phase(phase).start_step, mix, sampler_.phase(phase).lr_scale);
    logged_phase_ = phase;
  }
  std::vector<data::Batch> batches;
  for (int64_t m = 0; m < grad_accum_; ++m) {
    const std::vector<data::MixtureDraw> draws = sampler_.draw(step, batch_size_ * dp_.size());
    std::vector<int64_t> indices, sources;
    for (int64_t row = dp_.rank() * batch_size_; row < (dp_.rank() + 1) * batch_size_; ++row) {
      const data::MixtureDraw& d = draws[static_cast<size_t>(row)];
      indices.push_back(data_.offset(static_cast<size_t>(d.source)) + d.element);
      sources.push_back(d.source);
    }
    data::Batch batch = data::make_batch(data_, indices, vocab_size_, eos_id_);
    if (logged) batch.sources = at::tensor(sources, at::kLong);
    batches.push_back(std::move(batch));
  }
  return batches;
}

double MixtureFeed::lr_scale(int64_t step) const { return sampler_.phase(sampler_.phase_at(step)).lr_scale; }

sdk::MetricList MixtureFeed::step_metrics(const std::vector<data::Batch>& batches,
                                          const std::vector<at::Tensor>& row_losses) {
  const auto n = static_cast<int64_t>(data_.sources());
  at::Tensor sums = at::zeros({2, n}, at::kDouble);  // [0]: row losses, [1]: rows
  for (size_t m = 0; m < batches.size() && m < row_losses.size(); ++m) {
    const at::Tensor losses = row_losses[m].cpu();  // a CUDA run's losses and rows, next to the host's sums
    const at::Tensor finite = losses.isfinite();
    const at::Tensor sources = batches[m].sources.cpu().masked_select(finite);
    sums[0].index_add_(0, sources, losses.masked_select(finite));
    sums[1].index_add_(0, sources, at::ones({sources.numel()}, at::kDouble));
  }
  dp_.all_reduce(sums);
  const data::MixtureSampler::Position pos = sampler_.position();
  sdk::MetricList out;
  for (int64_t s = 0; s < n; ++s) {
    const std::string& name = data_.name(static_cast<size_t>(s));
    out.emplace_back(fmt::format("data/{}/tokens", name),
                     static_cast<double>(pos.draws[static_cast<size_t>(s)] * seq_len_));
    const double rows = sums[1][s].item<double>();
    if (rows > 0) out.emplace_back(fmt::format("loss/{}", name), sums[0][s].item<double>() / rows);
  }
  return out;
}

nlohmann::json MixtureFeed::state() const {
  const data::MixtureSampler::Position pos = sampler_.position();
  nlohmann::json sources = nlohmann::json::array();
  for (size_t s = 0; s < data_.sources(); ++s) {
    sources.push_back({{"name", data_.name(s)}, {"windows", data_.source_size(s)}, {"draws", pos.draws[s]}});
  }
  return {{"samples", pos.samples}, {"sources", sources}};
}

void MixtureFeed::save_position(nlohmann::json& entry, nlohmann::json& train_state, int64_t steps_drawn) const {
  entry["epoch"] = 0;
  entry["batches_yielded"] = steps_drawn * grad_accum_;
  train_state["mixture"] = state();
}

void MixtureFeed::resume(const nlohmann::json& train_state, int64_t step) {
  if (train_state.contains("mixture")) return restore(train_state.at("mixture"));
  log::get().warn("the checkpoint of step {} has no mixture position: the mixture's sample order starts afresh", step);
}

void MixtureFeed::restore(const nlohmann::json& state) {
  data::MixtureSampler::Position pos{state.at("samples").get<int64_t>(), {}};
  const nlohmann::json& sources = state.at("sources");
  std::string saved, here;
  for (const auto& s : sources) {
    saved += fmt::format("{}'{}' ({} windows)", saved.empty() ? "" : ", ", s.at("name").get<std::string>(),
                         s.at("windows").get<int64_t>());
    pos.draws.push_back(s.at("draws").get<int64_t>());
  }
  for (size_t s = 0; s < data_.sources(); ++s) {
    here += fmt::format("{}'{}' ({} windows)", here.empty() ? "" : ", ", data_.name(s), data_.source_size(s));
  }
  if (saved != here) {
    throw sdk::Error(fmt::format(
        "cannot continue the mixture's sample order: the checkpoint mixed {}, this run mixes {}; resume with the "
        "checkpoint's [[data.datasets]] and train.seq_len",
        saved, here));
  }
  sampler_.restore(std::move(pos));
}

}  // namespace kforge::feed
