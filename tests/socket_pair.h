// Two connected, non-blocking Unix sockets for tests of what waits on a
// socket (fibers, virtual time), closed with the test.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace locklab {

struct SocketPair {
  int ends[2] = {-1, -1};
  SocketPair() {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) != 0)
      throw std::runtime_error("socketpair failed");
  }
  ~SocketPair() {
    ::close(ends[0]);
    ::close(ends[1]);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;

  void write_byte(int end) { ASSERT_EQ(::write(ends[end], "x", 1), 1); }
  // Reads what is there; the number of bytes, 0 when nothing was.
  int read_all(int end) {
    char buffer[64];
    const ssize_t n = ::read(ends[end], buffer, sizeof buffer);
    return n > 0 ? int(n) : 0;
  }
};

}  // namespace locklab
