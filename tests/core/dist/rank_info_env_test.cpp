// RankInfo from a malformed launcher environment (issue 13): every variable is validated, and a bad
// one is a ConfigError naming it (exit 2 from kforge), never an uncaught exception; and the free
// port a local launch rendezvouses on.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "dist/rank_info.h"
#include "kforge/sdk/error.h"
#include "launch/free_port.h"

namespace kforge::test {
namespace {

// Sets SLURM_NTASKS=1 and `name`=`value` for one test, and unsets both afterwards.
class SlurmVariable {
 public:
  SlurmVariable(const char* name, const char* value) : name_(name) {
    ::setenv("SLURM_NTASKS", "1", 1);
    ::setenv(name, value, 1);
  }
  ~SlurmVariable() {
    ::unsetenv(name_);
    ::unsetenv("SLURM_NTASKS");
  }

 private:
  const char* name_;
};

// The message of the ConfigError that rank_info_from_env raises; "" (and a failure) when none.
std::string rank_info_error() {
  try {
    dist::rank_info_from_env();
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "rank_info_from_env accepted the environment";
  return "";
}

TEST(RankInfoEnv, NonNumericSlurmJobIdIsAConfigErrorNamingIt) {
  const SlurmVariable job("SLURM_JOB_ID", "abc");
  EXPECT_NE(rank_info_error().find("SLURM_JOB_ID='abc' is not an integer"), std::string::npos);
}

TEST(RankInfoEnv, OverflowingSlurmJobIdIsAConfigErrorNamingIt) {
  const SlurmVariable job("SLURM_JOB_ID", "99999999999999999999999");
  EXPECT_NE(rank_info_error().find("SLURM_JOB_ID='99999999999999999999999'"), std::string::npos);
}

TEST(RankInfoEnv, NumericSlurmJobIdPicksThePort) {
  const SlurmVariable job("SLURM_JOB_ID", "123456");
  EXPECT_EQ(dist::rank_info_from_env().master_port, 15000 + 123456 % 15000);
}

TEST(RankInfoEnv, NonNumericTasksPerNodeIsAConfigErrorNamingIt) {
  const SlurmVariable per_node("SLURM_NTASKS_PER_NODE", "abc");
  EXPECT_NE(rank_info_error().find("SLURM_NTASKS_PER_NODE='abc'"), std::string::npos);
}

TEST(RankInfoEnv, WorldSizeBeyondAnIntIsAConfigErrorNamingIt) {
  ::setenv("WORLD_SIZE", "4294967297", 1);
  EXPECT_NE(rank_info_error().find("WORLD_SIZE='4294967297' is not an integer"), std::string::npos);
  ::unsetenv("WORLD_SIZE");
}

TEST(RankInfoEnv, NodeListWithoutAHostIsAConfigErrorNamingIt) {
  const SlurmVariable nodes("SLURM_NODELIST", ",gpu1");
  EXPECT_NE(rank_info_error().find("SLURM_NODELIST=',gpu1' names no host"), std::string::npos);
}

// The default rendezvous port of a local launch lies outside the kernel's ephemeral range (so no
// Gloo pair or outgoing connection of a concurrent job takes it before rank 0 binds it) and a
// listener can bind it.
TEST(FreeLocalPort, IsOutsideTheEphemeralRangeAndBindable) {
  int low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  for (int i = 0; i < 20; ++i) {
    const int port = launch::free_local_port();
    EXPECT_TRUE(port < low || port > high) << port << " is in the ephemeral range " << low << ".." << high;
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << port;
    EXPECT_EQ(::listen(fd, 1), 0) << port;
    ::close(fd);
  }
}

}  // namespace
}  // namespace kforge::test
