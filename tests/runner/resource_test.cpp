#include "resource.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

TEST(ProtectedResource, FencingRejectsALowerTokenAndKeepsTheValue) {
  ProtectedResource store(/*fencing=*/true);
  EXPECT_TRUE(store.write("L", 1, 34).accepted);
  auto stale = store.write("L", 7, 33);
  EXPECT_FALSE(stale.accepted);
  EXPECT_NE(stale.reason.find("33 < 34"), std::string::npos);
  EXPECT_EQ(store.read("L"), 1);
  EXPECT_TRUE(store.write("L", 2, 34).accepted) << "an equal token is the same holder";
  EXPECT_TRUE(store.write("L", 3, std::nullopt).accepted)
      << "writes without a token are not fenced";
}

TEST(ProtectedResource, WithoutFencingEveryWriteLands) {
  ProtectedResource store(/*fencing=*/false);
  EXPECT_TRUE(store.write("L", 5, 34).accepted);
  EXPECT_TRUE(store.write("L", 6, 33).accepted);
  EXPECT_EQ(store.read("L"), 6);
  EXPECT_EQ(store.read("other"), 0);
}

}  // namespace
}  // namespace locklab
