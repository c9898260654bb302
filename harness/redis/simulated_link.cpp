#include "simulated_link.h"

#include <algorithm>

#include "clock.h"
#include "linked_stream.h"

namespace locklab {

SimulatedLink::SimulatedLink(uint64_t seed) : jitter_rng_(seed) {}

void SimulatedLink::changed(std::unique_lock<std::mutex>& lock) {
  ++changes_;
  lock.unlock();
  change_.notify_all();
  listeners_.notify();
}

void SimulatedLink::pass() {
  std::unique_lock lock(mu_);
  if (mode_ == Mode::Blackhole) ++heals_;
  mode_ = Mode::Pass;
  to_server_ = to_client_ = {};
  changed(lock);
}

void SimulatedLink::delay(Direction direction, std::chrono::milliseconds fixed,
                          std::chrono::milliseconds jitter) {
  std::unique_lock lock(mu_);
  const Latency latency{std::chrono::nanoseconds(fixed).count(),
                        std::chrono::nanoseconds(jitter).count()};
  if (direction != Direction::ToClient) to_server_ = latency;
  if (direction != Direction::ToServer) to_client_ = latency;
  changed(lock);
}

void SimulatedLink::blackhole() {
  std::unique_lock lock(mu_);
  if (mode_ != Mode::Blackhole) breaks_.push_back(monotonic_ns());
  mode_ = Mode::Blackhole;
  changed(lock);
}

void SimulatedLink::reject() {
  std::unique_lock lock(mu_);
  mode_ = Mode::Reject;
  ++closes_;
  breaks_.push_back(monotonic_ns());
  changed(lock);
}

void SimulatedLink::cut() {
  std::unique_lock lock(mu_);
  ++closes_;
  breaks_.push_back(monotonic_ns());
  changed(lock);
}

void SimulatedLink::hold() {
  std::unique_lock lock(mu_);
  held_ = true;
  changed(lock);
}

void SimulatedLink::release() {
  std::unique_lock lock(mu_);
  held_ = false;
  changed(lock);
}

bool SimulatedLink::refuses_connections() const {
  std::lock_guard lock(mu_);
  return mode_ == Mode::Reject;
}

bool SimulatedLink::drops_requests() const {
  std::lock_guard lock(mu_);
  return mode_ == Mode::Blackhole;
}

bool SimulatedLink::holds_requests() const {
  std::lock_guard lock(mu_);
  return held_;
}

uint64_t SimulatedLink::closes() const {
  std::lock_guard lock(mu_);
  return closes_;
}

uint64_t SimulatedLink::heals() const {
  std::lock_guard lock(mu_);
  return heals_;
}

int64_t SimulatedLink::arrival(const Latency& latency, int64_t from_ns) {
  int64_t at = from_ns + latency.fixed_ns;
  if (latency.jitter_ns > 0)
    at += std::uniform_int_distribution<int64_t>(0, latency.jitter_ns)(jitter_rng_);
  return at;
}

int64_t SimulatedLink::request_arrival(int64_t sent_ns) {
  std::lock_guard lock(mu_);
  return arrival(to_server_, sent_ns);
}

int64_t SimulatedLink::answer_arrival(int64_t given_ns) {
  std::lock_guard lock(mu_);
  return arrival(to_client_, given_ns);
}

bool SimulatedLink::broke_between(int64_t from_ns, int64_t until_ns) const {
  std::lock_guard lock(mu_);
  return std::any_of(breaks_.begin(), breaks_.end(),
                     [&](int64_t at) { return at >= from_ns && at < until_ns; });
}

void SimulatedLink::wait_for_change(int64_t deadline_ns) {
  std::unique_lock lock(mu_);
  const uint64_t seen = changes_;
  while (changes_ == seen && monotonic_ns() < deadline_ns) change_.wait_until(lock, deadline_ns);
}

int SimulatedLink::on_change(std::function<void()> listener) {
  return listeners_.add(std::move(listener));
}

void SimulatedLink::remove_listener(int id) {
  listeners_.remove(id);
}

void SimulatedLink::linger(std::shared_ptr<LinkedStream> stream) {
  std::lock_guard lock(mu_);
  lingering_.push_back(std::move(stream));
}

void SimulatedLink::forget(const LinkedStream* stream) {
  std::shared_ptr<LinkedStream> last;  // let go after the lock
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(lingering_.begin(), lingering_.end(),
                           [stream](const auto& s) { return s.get() == stream; });
    if (it == lingering_.end()) return;
    last = std::move(*it);
    lingering_.erase(it);
  }
}

}  // namespace locklab
