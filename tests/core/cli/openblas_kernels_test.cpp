// The front-end gives kforge-host OpenBLAS's kernels for this CPU where OpenBLAS falls back to older ones (a CPU
// model newer than it), unless the user's OPENBLAS_CORETYPE says otherwise; check-env reports and warns.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "launch/openblas_kernels.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using launch::openblas_kernels_for, launch::VectorIsa;

TEST(OpenBlasKernels, KernelSetsWithoutAvx2GiveWayToTheCpusOnAnAvx2Cpu) {
  const VectorIsa avx512{true, true}, avx2{true, false}, sse{false, false};
  EXPECT_EQ(openblas_kernels_for("Prescott", avx512), "SkylakeX");
  EXPECT_EQ(openblas_kernels_for("Prescott", avx2), "Haswell");
  EXPECT_EQ(openblas_kernels_for("Sandybridge", avx512), "SkylakeX");
  EXPECT_EQ(openblas_kernels_for("Nehalem", avx2), "Haswell");
  EXPECT_EQ(openblas_kernels_for("Piledriver", avx2), "Haswell");
  // OpenBLAS's own choice stands where it has AVX2 kernels, where the CPU has no AVX2, and for a name not listed.
  for (const char* good : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "Excavator"}) {
    EXPECT_EQ(openblas_kernels_for(good, avx512), std::nullopt) << good;
    EXPECT_EQ(openblas_kernels_for(good, avx2), std::nullopt) << good;
  }
  EXPECT_EQ(openblas_kernels_for("Prescott", sse), std::nullopt);
  EXPECT_EQ(openblas_kernels_for("SomeFutureCore", avx512), std::nullopt);
  EXPECT_EQ(openblas_kernels_for("", avx512), std::nullopt);  // not OpenBLAS
}

// `kforge check-env --json --no-gemm`, run by `program` (the front-end or kforge-host) with `env_prefix` before it.
nlohmann::json check_env(const std::string& env_prefix, const std::string& program) {
  std::string out;
  const int status = run_command(env_prefix + " '" + program + "' check-env --json --no-gemm 2>/dev/null", &out);
  EXPECT_EQ(status, 0) << out;
  return nlohmann::json::parse(out);
}

bool warns_of_openblas_kernels(const nlohmann::json& report) {
  for (const auto& w : report.at("warnings")) {
    if (w.get<std::string>().find("OpenBLAS runs its") != std::string::npos) return true;
  }
  return false;
}

std::string host_bin() { return (std::filesystem::path(KFORGE_BIN).parent_path() / "kforge-host").string(); }

TEST(OpenBlasKernels, TheHostStartedByTheFrontEndRunsKernelsForThisCpuUnlessTheUserChoseThem) {
  const VectorIsa isa = launch::this_cpus_vector_isa();
  // On its own kforge-host runs what OpenBLAS picks, and says so when that is not this CPU's.
  const nlohmann::json direct = check_env("env -u OPENBLAS_CORETYPE", host_bin());
  const std::string picked = direct.at("blas").at("openblas_kernels");
  ASSERT_FALSE(picked.empty()) << "scripts/setup.sh selects OpenBLAS as libblas.so.3: " << direct.dump();
  const std::optional<std::string> better = openblas_kernels_for(picked, isa);
  EXPECT_EQ(warns_of_openblas_kernels(direct), better.has_value()) << direct.dump();

  // Started by the front-end, it runs this CPU's kernels.
  const nlohmann::json started = check_env("env -u OPENBLAS_CORETYPE", KFORGE_BIN);
  EXPECT_EQ(started.at("blas").at("openblas_kernels"), better.value_or(picked));
  EXPECT_EQ(started.at("blas").at("OPENBLAS_CORETYPE"), better.value_or(""));
  EXPECT_FALSE(warns_of_openblas_kernels(started)) << started.dump();

  // The user's choice wins, and is warned about when it is not this CPU's.
  const nlohmann::json chosen = check_env("env OPENBLAS_CORETYPE=Prescott", KFORGE_BIN);
  EXPECT_EQ(chosen.at("blas").at("openblas_kernels"), "Prescott");
  EXPECT_EQ(chosen.at("blas").at("OPENBLAS_CORETYPE"), "Prescott");
  EXPECT_EQ(warns_of_openblas_kernels(chosen), isa.avx2_fma) << chosen.dump();
}

}  // namespace
}  // namespace kforge::test
