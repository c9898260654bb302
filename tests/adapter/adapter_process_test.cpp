// Broken adapters: each must give one clear AdapterError, quickly, and leave
// no process behind. None of these needs Redis: they break before using it.
#include <errno.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <functional>

#include "adapter_test_support.h"
#include "redis_server.h"  // free_loopback_port

namespace locklab::testing {
namespace {

// An endpoint where nothing listens.
std::vector<Endpoint> nowhere() {
  return {Endpoint{"127.0.0.1", free_loopback_port()}};
}

struct Failure {
  std::string message;
  std::chrono::milliseconds took;
};

// Runs `action`, which must throw AdapterError.
Failure failure_of(const std::function<void()>& action) {
  const auto start = std::chrono::steady_clock::now();
  std::string message = "(no AdapterError)";
  try {
    action();
    ADD_FAILURE() << "expected an AdapterError";
  } catch (const AdapterError& e) {
    message = e.what();
  }
  return {message, std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - start)};
}

TEST(BrokenAdapter, MissingProgramSaysNotFound) {
  Failure f = failure_of([] { probe_adapter({.command = "locklab-no-such-adapter --flag"}); });
  EXPECT_NE(f.message.find("adapter 'locklab-no-such-adapter --flag'"), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("command not found"), std::string::npos) << f.message;
  // The shell's own words, from the adapter's stderr.
  EXPECT_NE(f.message.find("locklab-no-such-adapter: not found"), std::string::npos) << f.message;
  EXPECT_LT(f.took, 5s);
}

TEST(BrokenAdapter, ExitGivesStatusAndLastStderrLine) {
  AdapterClient client(broken_adapter("exits_after_hello.sh"), "c1", nowhere());
  EXPECT_EQ(client.lock->info().name, "exits-after-hello");
  Failure f = failure_of([&] { client.lock->acquire("L", 1000ms, 0ms); });
  EXPECT_NE(f.message.find("exits_after_hello.sh'"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("exited with status 3"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("request 2 (acquire)"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("giving up: this adapter exits after hello"), std::string::npos)
      << f.message;
  EXPECT_LT(f.took, 5s);
  // A dead adapter stays an error, at once, with the same message.
  Failure again = failure_of([&] { client.lock->release("L", Lease{.owner = "x"}); });
  EXPECT_EQ(again.message, f.message);
  EXPECT_LT(again.took, 100ms);
}

TEST(BrokenAdapter, GarbageIsQuoted) {
  Failure f = failure_of([] { probe_adapter(broken_adapter("prints_garbage.sh")); });
  EXPECT_NE(f.message.find("not JSON"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("\"Traceback (most recent call last): this is not a JSON response\""),
            std::string::npos)
      << f.message;
  EXPECT_LT(f.took, 5s);
}

TEST(BrokenAdapter, SilenceAtStartEndsAtTheStartTimeout) {
  Failure f = failure_of([] { probe_adapter(broken_adapter("never_answers.sh", 300ms)); });
  EXPECT_NE(f.message.find("did not answer request 1 (hello) within 300 ms"), std::string::npos)
      << f.message;
  EXPECT_GE(f.took, 300ms);
  EXPECT_LT(f.took, 5s);  // the timeout, plus up to 1 s to stop an adapter that ignores its stdin
}

TEST(BrokenAdapter, SilenceEndsAtTheReplyTimeoutPlusWait) {
  AdapterConfig config = broken_adapter("silent_after_hello.sh");
  config.reply_timeout = 300ms;
  AdapterClient client(config, "c1", nowhere());
  Failure f = failure_of([&] { client.lock->acquire("L", 1000ms, 200ms); });
  EXPECT_NE(f.message.find("did not answer request 2 (acquire) within 500 ms"), std::string::npos)
      << f.message;
  EXPECT_GE(f.took, 500ms);
  EXPECT_LT(f.took, 5s);
}

TEST(BrokenAdapter, WrongIdIsNamed) {
  Failure f = failure_of([] { probe_adapter(broken_adapter("wrong_id.sh")); });
  EXPECT_NE(f.message.find("answered id 2 to request 1 (hello)"), std::string::npos) << f.message;
  EXPECT_LT(f.took, 5s);
}

TEST(BrokenAdapter, MissingOkIsNamed) {
  Failure f = failure_of([] { probe_adapter(broken_adapter("missing_ok.sh")); });
  EXPECT_NE(f.message.find("without a boolean \"ok\""), std::string::npos) << f.message;
  EXPECT_LT(f.took, 5s);
}

TEST(BrokenAdapter, FencingWithoutTokenIsNamed) {
  AdapterClient client(broken_adapter("fencing_without_token.sh"), "c1", nowhere());
  EXPECT_TRUE(client.lock->info().fencing);
  Failure f = failure_of([&] { client.lock->acquire("L", 1000ms, 0ms); });
  EXPECT_NE(f.message.find("said hello with fencing but acquired without a \"token\""),
            std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("\"owner\":\"o-2\""), std::string::npos) << f.message;
}

TEST(ScriptedAdapter, ReentrantDepthsAreReadAndANegativeOneIsNamed) {
  AdapterClient client(broken_adapter("scripted_depths.sh"), "c1", nowhere());
  EXPECT_TRUE(client.lock->reentrant());
  AcquireResult acquired = client.lock->acquire("L", 1000ms, 0ms);
  ASSERT_EQ(acquired.outcome, Outcome::Done);
  EXPECT_EQ(acquired.lease->reentry, 2);
  ChangeResult released = client.lock->release("L", *acquired.lease);
  ASSERT_EQ(released.outcome, Outcome::Done);
  EXPECT_EQ(released.remaining, 1);
  Failure f = failure_of([&] { client.lock->release("L", *acquired.lease); });
  EXPECT_NE(f.message.find("\"remaining\" that is not a non-negative integer"), std::string::npos)
      << f.message;
}

TEST(AdapterProcess, AnAdapterThatIgnoresTheEndOfStdinIsKilled) {
  pid_t pid = -1;
  const auto start = std::chrono::steady_clock::now();
  {
    AdapterProcess adapter(broken_adapter("never_answers.sh"), nowhere());
    pid = adapter.pid();
    ASSERT_EQ(::kill(pid, 0), 0) << "the adapter should be running";
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH) << "adapter " << pid << " outlived its AdapterProcess";
}

}  // namespace
}  // namespace locklab::testing
