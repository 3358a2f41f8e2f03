// expect_scaled_preset_trains: a cluster preset on a few ranks and a small shape.
#include "core/train/scaled_preset.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/launch_job.h"
#include "support/read_file.h"

namespace kforge::test {

void expect_scaled_preset_trains(const std::string& preset, int ranks, const std::vector<std::string>& layout,
                                 int64_t n_layers) {
  SCOPED_TRACE(preset);
  TrainFixture fx;
  fx.toml = read_file(std::string(KFORGE_SOURCE_DIR) + "/configs/train/" + preset + ".toml");
  const std::vector<std::string> small = {"--model.dim=64",
                                          fmt::format("--model.n_layers={}", n_layers),
                                          "--model.n_heads=4",
                                          "--model.n_kv_heads=2",
                                          "--model.ffn_hidden_dim=128",
                                          "--model.vocab_size=64",
                                          "--model.max_seq_len=32",
                                          "--train.seq_len=16",
                                          "--train.batch_size=2",
                                          "--train.max_steps=6",
                                          "--scheduler.warmup_steps=1",
                                          "--optimizer.lr=1e-2",
                                          "--train.device=cpu",
                                          "--data.dataset_path=" + fx.data_dir.string(),
                                          "--eval.dataset_path=" + (fx.data_dir / "eval").string(),
                                          "--checkpoint.dir=" + fx.checkpoint_dir.string(),
                                          "--metrics.log_interval=1",
                                          "'--metrics.backends=[\"jsonl\"]'",
                                          "--profiling.trace_dir=" + (fx.root / "traces").string()};
  launch(fx, ranks, with(small, layout));
  const auto loss = metric(fx, "train/loss");
  ASSERT_TRUE(loss.count(1) && loss.count(6));
  EXPECT_LT(loss.at(6), loss.at(1));
}

}  // namespace kforge::test
