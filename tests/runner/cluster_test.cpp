// A cluster's relays for node 0 follow a failover: what a client that keeps
// its connection finds at its next command.
#include "cluster.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace locklab {
namespace {

// A plain TCP connection to `at`, closed by its destructor.
struct Socket {
  int fd = -1;
  explicit Socket(const Endpoint& at) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(uint16_t(at.port));
    ::inet_pton(AF_INET, at.host.c_str(), &address.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
  // Sends PING and reads the answer (at most 1 s).
  std::string ping() const {
    const std::string request = "*1\r\n$4\r\nPING\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != ssize_t(request.size()))
      return "";
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 1000) != 1) return "";
    char buffer[64];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    return n > 0 ? std::string(buffer, size_t(n)) : "";
  }
  // Whether the other side has closed the connection (waiting at most `ms`).
  bool closed_within(int ms) const {
    pollfd ready{fd, short(POLLIN | POLLRDHUP), 0};
    if (::poll(&ready, 1, ms) != 1) return false;
    char byte;
    return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }
};

TEST(Cluster, RedirectingNode0ClosesTheRelaysOpenConnectionsAtOnce) {
  ClusterShape shape;
  shape.replicas = 1;
  Cluster cluster(shape, 1, 1);
  const Endpoint relay = cluster.stable_endpoint(0, 0);
  Socket before(relay);
  ASSERT_GE(before.fd, 0);
  ASSERT_EQ(before.ping(), "+PONG\r\n");

  cluster.redirect_node0(1);
  // Nothing else closes it here (the old master and its links stay up): the
  // redirect itself must, so that the next command reconnects.
  EXPECT_TRUE(before.closed_within(1000)) << "the connection to the old master stayed open";
  Socket after(relay);
  ASSERT_GE(after.fd, 0);
  EXPECT_EQ(after.ping(), "+PONG\r\n") << "a new connection reaches the new node 0";
}

}  // namespace
}  // namespace locklab
