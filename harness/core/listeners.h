// Callbacks to be told that something happened (a clock advanced, a link
// changed), added and removed from any thread.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace locklab {

class Listeners {
 public:
  // Adds `listener`; returns an id for remove().
  int add(std::function<void()> listener) {
    std::lock_guard lock(mu_);
    listeners_.emplace(next_id_, std::move(listener));
    return next_id_++;
  }

  // Removes the listener `id`; nothing when it is gone. A notify() already
  // under way may still call it.
  void remove(int id) {
    std::lock_guard lock(mu_);
    listeners_.erase(id);
  }

  // Calls every listener, in the order they were added, with no lock held:
  // a listener may add or remove listeners, or take locks of its own.
  void notify() const {
    std::vector<std::function<void()>> listeners;
    {
      std::lock_guard lock(mu_);
      for (const auto& [id, listener] : listeners_) listeners.push_back(listener);
    }
    for (const auto& listener : listeners) listener();
  }

 private:
  mutable std::mutex mu_;
  std::map<int, std::function<void()>> listeners_;
  int next_id_ = 0;
};

}  // namespace locklab
