// The interfaces Gloo binds (issue 55): GLOO_SOCKET_IFNAME parsed as PyTorch reads it, the interface that owns the
// routing answer when it is unset, and loopback refused, naming GLOO_SOCKET_IFNAME, when the master is elsewhere.
#include "dist/socket_interface.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kforge/sdk/error.h"
#include "support/expect_text.h"

namespace kforge::dist {
namespace {

// The message of the sdk::Error a call throws.
const auto error_of = &test::error_of<sdk::Error>;

// A host with loopback, eth0 (IPv6 listed first) and ib0.
const std::vector<NetInterface> kHost = {{"lo", "127.0.0.1", true},
                                         {"eth0", "fe80::1", false},
                                         {"eth0", "10.78.0.12", false},
                                         {"ib0", "192.168.5.2", false}};

TEST(SocketInterface, IfnameIsACommaSeparatedListAndAnEmptyEntryIsAConfigErrorNamingTheVariable) {
  EXPECT_EQ(parse_socket_ifname("eth0"), std::vector<std::string>{"eth0"});
  EXPECT_EQ(parse_socket_ifname("eth0,ib0"), (std::vector<std::string>{"eth0", "ib0"}));
  for (const std::string bad : {"", "eth0,", ",eth0", "eth0,,ib0"}) {
    try {
      parse_socket_ifname(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const sdk::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("GLOO_SOCKET_IFNAME='" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(SocketInterface, WithoutIfnameTheInterfaceOwningTheRoutesSourceAddressIsBound) {
  const auto chosen = choose_interfaces(std::nullopt, "10.78.0.11", false, "10.78.0.12", kHost);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].name, "eth0");
  EXPECT_EQ(chosen[0].address, "10.78.0.12");
  const auto other = choose_interfaces(std::nullopt, "192.168.5.1", false, "192.168.5.2", kHost);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].name, "ib0");
}

TEST(SocketInterface, IfnameBindsOneDevicePerNamedInterfaceAtItsIpv4Address) {
  const auto chosen = choose_interfaces(std::string("ib0,eth0"), "10.78.0.11", false, "", kHost);
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].name, "ib0");
  EXPECT_EQ(chosen[1].name, "eth0");
  EXPECT_EQ(chosen[1].address, "10.78.0.12");  // not fe80::1, listed first
}

TEST(SocketInterface, LoopbackWhileTheMasterIsElsewhereIsAnErrorNamingTheVariable) {
  const std::string named = error_of([] { choose_interfaces(std::string("lo"), "10.78.0.11", false, "", kHost); });
  EXPECT_NE(named.find("loopback address 127.0.0.1 (interface lo)"), std::string::npos) << named;
  EXPECT_NE(named.find("Set GLOO_SOCKET_IFNAME"), std::string::npos) << named;
  const std::string routed =
      error_of([] { choose_interfaces(std::nullopt, "10.78.0.11", false, "127.0.0.1", kHost); });
  EXPECT_NE(routed.find("GLOO_SOCKET_IFNAME"), std::string::npos) << routed;
  // With the master on loopback too, every rank is on this host: loopback is right.
  EXPECT_EQ(choose_interfaces(std::nullopt, "127.0.0.1", true, "127.0.0.1", kHost)[0].name, "lo");
}

TEST(SocketInterface, AnUnknownInterfaceOrAnUnownedSourceIsAnErrorListingWhatTheHostHas) {
  const std::string unknown = error_of([] { choose_interfaces(std::string("eth7"), "10.78.0.11", false, "", kHost); });
  EXPECT_NE(unknown.find("GLOO_SOCKET_IFNAME='eth7' names interface 'eth7'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("eth0 (10.78.0.12)"), std::string::npos) << unknown;
  const std::string unowned = error_of([] { choose_interfaces(std::nullopt, "10.1.0.1", false, "10.9.9.9", kHost); });
  EXPECT_NE(unowned.find("no interface of this host owns 10.9.9.9"), std::string::npos) << unowned;
}

TEST(SocketInterface, AMasterNameResolvingToLoopbackAcrossHostsTakesTheSoleNetworkInterfaceOrNamesTheVariable) {
  const std::vector<NetInterface> one = {{"lo", "127.0.0.1", true}, {"eth0", "fe80::1", false},
                                         {"eth0", "10.78.0.11", false}, {"lo", "::1", true}};
  EXPECT_EQ(sole_network_interface("node1", one).address, "10.78.0.11");  // eth0 once, at its IPv4 address
  const std::string several = error_of([] { sole_network_interface("node1", kHost); });
  EXPECT_NE(several.find("MASTER_ADDR 'node1' resolves to loopback on this host"), std::string::npos) << several;
  EXPECT_NE(several.find("several other interfaces to listen on (eth0 (10.78.0.12), ib0 (192.168.5.2))"),
            std::string::npos)
      << several;
  EXPECT_NE(several.find("set GLOO_SOCKET_IFNAME"), std::string::npos) << several;
  const std::string none = error_of([] { sole_network_interface("node1", {{"lo", "127.0.0.1", true}}); });
  EXPECT_NE(none.find("has no other interfaces"), std::string::npos) << none;
}

TEST(SocketInterface, TheRouteToALoopbackMasterLeavesFromLoopback) {
  const MasterRoute route = route_to("127.0.0.1", 29500);
  EXPECT_TRUE(route.master_loopback);
  EXPECT_EQ(route.source, "127.0.0.1");
}

}  // namespace
}  // namespace kforge::dist
