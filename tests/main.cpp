// Shared main of every test binary: the lab's interrupt cleanup first, so a
// Ctrl-C during a test stops the servers the test started.
#include <gtest/gtest.h>

#include "process.h"

int main(int argc, char** argv) {
  locklab::install_termination_cleanup();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
