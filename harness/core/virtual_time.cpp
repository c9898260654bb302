#include "virtual_time.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "clock.h"

namespace locklab {
namespace {

thread_local VirtualTime* bound = nullptr;

}  // namespace

std::string_view time_mode_name(TimeMode mode) {
  return kTimeModes.name(mode);
}

TimeMode time_mode_named(std::string_view name) {
  if (auto mode = kTimeModes.named(name)) return *mode;
  throw std::invalid_argument("unknown time \"" + std::string(name) +
                              "\" (known: " + kTimeModes.list() + ")");
}

VirtualTime::VirtualTime()
    : dir_("locklab-vtime"),
      file_(dir_.path() / "wall"),
      start_mono_ns_(real_monotonic_ns()),
      now_ns_(start_mono_ns_) {
  const int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot create virtual clock file " + file_.string() + ": " +
                             std::strerror(errno));
  if (::ftruncate(fd, sizeof(int64_t)) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot size virtual clock file " + file_.string() + ": " +
                             std::strerror(error));
  }
  void* mapped = ::mmap(nullptr, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED)
    throw std::runtime_error("cannot map virtual clock file " + file_.string() + ": " +
                             std::strerror(error));
  shared_wall_ = static_cast<int64_t*>(mapped);
  std::atomic_ref<int64_t>(*shared_wall_).store(wall_ns(), std::memory_order_release);
}

VirtualTime::~VirtualTime() {
  ::munmap(shared_wall_, sizeof(int64_t));
}

int64_t VirtualTime::now_ns() const {
  return now_ns_.load(std::memory_order_acquire);
}

int64_t VirtualTime::wall_ns() const {
  return kStartWallNs + (now_ns() - start_mono_ns_);
}

std::map<std::string, std::string> VirtualTime::env() const {
  return {{"LOCKLAB_VIRTUAL_CLOCK_FILE", file_.string()}};
}

void VirtualTime::advance_to(int64_t at_ns) {
  if (at_ns <= now_ns()) return;
  now_ns_.store(at_ns, std::memory_order_release);
  std::atomic_ref<int64_t>(*shared_wall_).store(wall_ns(), std::memory_order_release);
  listeners_.notify();
}

int VirtualTime::on_advance(std::function<void()> listener) {
  return listeners_.add(std::move(listener));
}

void VirtualTime::remove_listener(int id) {
  listeners_.remove(id);
}

VirtualTime* bound_virtual_time() {
  return bound;
}

VirtualTimeBinding::VirtualTimeBinding(VirtualTime* time) : previous_(bound) {
  bound = time;
}

VirtualTimeBinding::~VirtualTimeBinding() {
  bound = previous_;
}

}  // namespace locklab
