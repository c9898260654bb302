#include "server_clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "virtual_time.h"

namespace locklab {
namespace {

constexpr auto kDriftStep = std::chrono::milliseconds(5);

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::filesystem::path running_executable_dir() {
  std::error_code error;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : exe.parent_path();
}

}  // namespace

std::filesystem::path ServerClock::shim_path() {
  std::vector<std::filesystem::path> candidates;
  if (const char* explicit_path = std::getenv("LOCKLAB_CLOCK_SHIM");
      explicit_path && *explicit_path)
    candidates.emplace_back(explicit_path);
#ifdef LOCKLAB_CLOCK_SHIM_BUILD_PATH
  candidates.emplace_back(LOCKLAB_CLOCK_SHIM_BUILD_PATH);
#endif
  if (auto dir = running_executable_dir(); !dir.empty())
    candidates.push_back(dir / "liblocklab_clock_shim.so");
  std::string tried;
  for (const auto& candidate : candidates) {
    if (std::filesystem::is_regular_file(candidate)) return std::filesystem::absolute(candidate);
    tried += (tried.empty() ? "" : ", ") + candidate.string();
  }
  throw std::runtime_error("clock shim library not found (tried: " + tried +
                           "); build the locklab_clock_shim target or set LOCKLAB_CLOCK_SHIM");
}

ServerClock::ServerClock()
    : dir_("locklab-clock"), file_(dir_.path() / "offset"), time_(bound_virtual_time()) {
  shim_ = shim_path();
  int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot create clock file " + file_.string() + ": " +
                             std::strerror(errno));
  if (::ftruncate(fd, sizeof(int64_t)) != 0) {
    int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot size clock file " + file_.string() + ": " +
                             std::strerror(error));
  }
  void* mapped = ::mmap(nullptr, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED)
    throw std::runtime_error("cannot map clock file " + file_.string() + ": " +
                             std::strerror(error));
  shared_offset_ = static_cast<int64_t*>(mapped);
  anchor_mono_ns_ = now_ns();
  publish_locked(anchor_mono_ns_);
}

int64_t ServerClock::now_ns() const {
  return time_ ? time_->now_ns() : steady_ns();
}

ServerClock::~ServerClock() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  if (drift_.joinable()) drift_.join();
  if (listener_) time_->remove_listener(*listener_);
  ::munmap(shared_offset_, sizeof(int64_t));
  std::error_code ignored;
  std::filesystem::remove(file_, ignored);
}

std::map<std::string, std::string> ServerClock::env() const {
  std::map<std::string, std::string> env{{"LD_PRELOAD", shim_.string()},
                                         {"LOCKLAB_CLOCK_FILE", file_.string()}};
  if (time_) env.merge(time_->env());
  return env;
}

int64_t ServerClock::offset_at_locked(int64_t mono_ns) const {
  return anchor_offset_ns_ +
         static_cast<int64_t>(std::llround((rate_ - 1.0) * double(mono_ns - anchor_mono_ns_)));
}

void ServerClock::publish_locked(int64_t mono_ns) {
  std::atomic_ref<int64_t>(*shared_offset_)
      .store(offset_at_locked(mono_ns), std::memory_order_relaxed);
}

void ServerClock::jump(std::chrono::nanoseconds delta) {
  std::lock_guard lock(mu_);
  int64_t now = now_ns();
  anchor_offset_ns_ = offset_at_locked(now) + delta.count();
  anchor_mono_ns_ = now;
  publish_locked(now);
}

void ServerClock::set_rate(double rate) {
  if (!(rate > 0.0) || !std::isfinite(rate))
    throw std::invalid_argument("ServerClock::set_rate: rate must be > 0, got " +
                                std::to_string(rate));
  std::lock_guard lock(mu_);
  int64_t now = now_ns();
  anchor_offset_ns_ = offset_at_locked(now);
  anchor_mono_ns_ = now;
  rate_ = rate;
  publish_locked(now);
  if (time_) {
    // The offset moves when the virtual clock does, and only then.
    if (!listener_)
      listener_ = time_->on_advance([this] {
        std::lock_guard lock(mu_);
        publish_locked(now_ns());
      });
  } else if (!drift_.joinable()) {
    drift_ = std::thread([this] { drift_loop(); });
    pthread_setname_np(drift_.native_handle(), "locklab-clock");  // for leak checks and debuggers
  }
}

std::chrono::nanoseconds ServerClock::offset() const {
  std::lock_guard lock(mu_);
  return std::chrono::nanoseconds(offset_at_locked(now_ns()));
}

void ServerClock::reset() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  if (drift_.joinable()) drift_.join();
  std::lock_guard lock(mu_);
  stopping_ = false;
  rate_ = 1.0;
  anchor_offset_ns_ = 0;
  anchor_mono_ns_ = now_ns();
  publish_locked(anchor_mono_ns_);
}

void ServerClock::drift_loop() {
  std::unique_lock lock(mu_);
  while (!stop_requested_.wait_for(lock, kDriftStep, [this] { return stopping_; }))
    publish_locked(now_ns());
}

}  // namespace locklab
