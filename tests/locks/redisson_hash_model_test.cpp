// A state-machine property of redisson-hash's re-entrancy: random sequences of
// acquire / release / extend by three owners (different client ids), on a real
// server, checked after every step against a model of who holds the lock and
// how many times.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <array>

#include "lock_test_support.h"

namespace locklab::testing {
namespace {

constexpr int kOwners = 3;

struct Model {
  int holder = -1;  // owner index; -1 = free
  int depth = 0;
  std::array<bool, kOwners> has_lease{};  // has acquired once, so has a lease to release or extend
};

struct System {
  const RedisServer& server;
  std::vector<std::unique_ptr<TestClient>> owners;
  std::array<std::optional<Lease>, kOwners> leases;
};

using Command = rc::state::Command<Model, System>;

// Redis holds exactly what the model says: no key when free, else one field
// (the holder's) with the depth as its count.
void expect_redis_matches(const Model& model, System& system) {
  if (model.holder < 0) {
    RC_ASSERT(redis_command(system.server, {"EXISTS", "L"}).integer == 0);
    return;
  }
  const std::string field = system.leases[model.holder]->owner;
  RC_ASSERT(redis_command(system.server, {"HLEN", "L"}).integer == 1);
  RC_ASSERT(redis_command(system.server, {"HGET", "L", field}).str == std::to_string(model.depth));
}

struct Acquire : Command {
  int owner = *rc::gen::inRange(0, kOwners);

  void apply(Model& model) const override {
    if (model.holder >= 0 && model.holder != owner) return;
    model.holder = owner;
    ++model.depth;
    model.has_lease[owner] = true;
  }

  void run(const Model& before, System& system) const override {
    AcquireResult result = system.owners[owner]->lock().acquire("L", 10'000ms, 0ms);
    Model after = before;
    apply(after);
    if (before.holder >= 0 && before.holder != owner) {
      RC_ASSERT(result.outcome == Outcome::Refused);
    } else {
      RC_ASSERT(result.outcome == Outcome::Done);
      RC_ASSERT(result.lease->reentry == after.depth);
      system.leases[owner] = result.lease;
    }
    expect_redis_matches(after, system);
  }

  void show(std::ostream& os) const override { os << "acquire by c" << owner; }
};

struct Release : Command {
  int owner = *rc::gen::inRange(0, kOwners);

  void checkPreconditions(const Model& model) const override { RC_PRE(model.has_lease[owner]); }

  void apply(Model& model) const override {
    if (model.holder != owner) return;
    --model.depth;
    if (model.depth == 0) model.holder = -1;
  }

  void run(const Model& before, System& system) const override {
    ChangeResult result = system.owners[owner]->lock().release("L", *system.leases[owner]);
    RC_ASSERT(result.outcome == (before.holder == owner ? Outcome::Done : Outcome::Refused));
    Model after = before;
    apply(after);
    if (result.outcome == Outcome::Done)
      RC_ASSERT(result.remaining == std::optional<int>(after.depth));
    expect_redis_matches(after, system);
  }

  void show(std::ostream& os) const override { os << "release by c" << owner; }
};

struct Extend : Command {
  int owner = *rc::gen::inRange(0, kOwners);

  void checkPreconditions(const Model& model) const override { RC_PRE(model.has_lease[owner]); }

  void run(const Model& model, System& system) const override {
    ChangeResult result = system.owners[owner]->lock().extend("L", *system.leases[owner], 20'000ms);
    if (model.holder == owner) {
      RC_ASSERT(result.outcome == Outcome::Done);
      RC_ASSERT(redis_command(system.server, {"PTTL", "L"}).integer > 10'000);
    } else {
      RC_ASSERT(result.outcome == Outcome::Refused);
    }
    expect_redis_matches(model, system);
  }

  void show(std::ostream& os) const override { os << "extend by c" << owner; }
};

RC_GTEST_PROP(RedissonHashModel, ReentrancyOfSeveralOwnersMatchesTheModel, ()) {
  static RedisServer server;  // one server for the whole property
  redis_command(server, {"FLUSHALL"});
  System system{server, {}, {}};
  for (int i = 0; i < kOwners; ++i)
    system.owners.push_back(std::make_unique<TestClient>("redisson-hash", "c" + std::to_string(i),
                                                         std::vector{server.endpoint()}));
  rc::state::check(Model{}, system, rc::state::gen::execOneOfWithArgs<Acquire, Release, Extend>());
}

}  // namespace
}  // namespace locklab::testing
