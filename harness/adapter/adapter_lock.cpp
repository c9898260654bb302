#include "adapter_lock.h"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "adapter_pool.h"
#include "clock.h"
#include "redis_server.h"  // free_loopback_port

namespace locklab {

using nlohmann::json;

namespace {

// How long `connect` may take beyond the adapter's reply timeout
// (PROTOCOL.md, "Connecting"): the story's clock has not started, and a JVM
// building five Redisson clients beside other tests on two busy cores took
// more than the 8 s an adapter allows a request.
constexpr int64_t kConnectWaitMs = 20000;

// A response that breaks the protocol: "adapter 'COMMAND' <what>: <response>".
[[noreturn]] void protocol_error(const AdapterProcess& adapter, const std::string& what,
                                 const json& response) {
  std::string shown = response.dump();
  if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
  throw AdapterError("adapter '" + adapter.command() + "' " + what + ": " + shown);
}

std::optional<bool> optional_bool(const AdapterProcess& adapter, const json& response,
                                  const char* field) {
  auto it = response.find(field);
  if (it == response.end()) return std::nullopt;
  if (!it->is_boolean())
    protocol_error(adapter, std::string("sent a non-boolean \"") + field + "\"", response);
  return it->get<bool>();
}

// An integer field, or nullopt when it is missing or not an integer.
std::optional<int64_t> integer_field(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

// `redis`, when given, replaces the endpoints of --redis: the hello of a
// kept adapter's next run.
AdapterInfo say_hello(AdapterProcess& adapter, const std::string& redis = "") {
  json request = {{"op", "hello"}};
  if (!redis.empty()) request["redis"] = redis;
  const int64_t asked = machine_monotonic_ns();
  json response = adapter.request(request);
  const int64_t answered = machine_monotonic_ns();
  if (!response["ok"].get<bool>()) protocol_error(adapter, "refused hello", response);
  AdapterInfo info;
  auto name = response.find("name");
  if (name == response.end() || !name->is_string() || name->get<std::string>().empty())
    protocol_error(adapter, "answered hello without a \"name\"", response);
  info.name = name->get<std::string>();
  if (auto version = response.find("version"); version != response.end() && !version->is_null()) {
    if (!version->is_string())
      protocol_error(adapter, "answered hello with a \"version\" that is not a string", response);
    info.version = version->get<std::string>();
  }
  info.reentrant = optional_bool(adapter, response, "reentrant").value_or(false);
  info.fencing = optional_bool(adapter, response, "fencing").value_or(false);
  info.multi_node = optional_bool(adapter, response, "multi_node");
  info.renews = optional_bool(adapter, response, "renews").value_or(false);
  info.connect = optional_bool(adapter, response, "connect").value_or(false);
  info.incidents = optional_bool(adapter, response, "incidents").value_or(false);
  info.renewals = optional_bool(adapter, response, "renewals").value_or(false);
  info.reusable = optional_bool(adapter, response, "reusable").value_or(false);
  if (info.renewals && !info.renews)
    protocol_error(adapter, "said hello with \"renewals\" but not \"renews\"", response);
  // What it dates (renewals, attempts) is dated by its CLOCK_MONOTONIC: it
  // must be this machine's.
  info.monotonic_clock = response.contains("monotonic_ns");
  if (info.monotonic_clock || info.renewals) {
    const auto clock = integer_field(response, "monotonic_ns");
    if (!clock || *clock < asked || *clock > answered)
      protocol_error(adapter,
                     std::string(info.renewals ? "said hello with \"renewals\" but its"
                                               : "said hello with a") +
                         " \"monotonic_ns\" that is not this machine's CLOCK_MONOTONIC read "
                         "while it answered (" +
                         std::to_string(asked) + ".." + std::to_string(answered) + ")",
                     response);
  }
  if (auto steps = response.find("steps"); steps != response.end()) {
    if (!steps->is_array())
      protocol_error(adapter, "answered hello with \"steps\" that is not an array of names",
                     response);
    for (const auto& step : *steps) {
      if (!step.is_string() || step.get<std::string>().empty())
        protocol_error(adapter, "answered hello with \"steps\" that is not an array of names",
                       response);
      info.steps.push_back(step.get<std::string>());
    }
  }
  return info;
}

// An optional non-negative integer field of an ok:true response.
std::optional<int64_t> optional_depth(const AdapterProcess& adapter, const json& response,
                                      const char* field) {
  auto it = response.find(field);
  if (it == response.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    protocol_error(adapter,
                   std::string("sent a \"") + field + "\" that is not a non-negative integer",
                   response);
  return it->get<int64_t>();
}

// The "error" of an ok:false response, or a stand-in that says which kind it was.
std::string error_of(const json& response, bool unknown) {
  auto it = response.find("error");
  if (it != response.end() && it->is_string() && !it->get<std::string>().empty())
    return it->get<std::string>();
  return unknown ? "outcome unknown (the adapter gave no reason)"
                 : "refused (the adapter gave no reason)";
}

// Done for ok:true, Refused for ok:false, Unknown for ok:false + unknown:true.
Outcome outcome_of(const AdapterProcess& adapter, const json& response) {
  const bool unknown = optional_bool(adapter, response, "unknown").value_or(false);
  if (response["ok"].get<bool>()) {
    if (unknown) protocol_error(adapter, "answered both ok and unknown", response);
    return Outcome::Done;
  }
  return unknown ? Outcome::Unknown : Outcome::Refused;
}

// How long the holder may act: validity_ms if given (null = no deadline of its
// own, the library renews the lease), else the ttl it asked for.
std::optional<milliseconds> validity_of(const AdapterProcess& adapter, const json& response,
                                        milliseconds ttl) {
  auto it = response.find("validity_ms");
  if (it == response.end()) return ttl;
  if (it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    protocol_error(adapter, "sent a \"validity_ms\" that is not a non-negative integer or null",
                   response);
  return milliseconds(it->get<int64_t>());
}

// "host:port,host:port" as the adapter's --redis gives them.
std::string redis_list(const std::vector<Endpoint>& redis) {
  std::string out;
  for (const auto& endpoint : redis) out += (out.empty() ? "" : ",") + endpoint.str();
  return out;
}

}  // namespace

// The gate keeps its listeners for as long as it lives, possibly longer than
// this lock: the listener reaches the adapter only through this relay, which
// the lock empties before the adapter goes away.
struct AdapterLock::PauseRelay {
  std::mutex mu;
  AdapterProcess* adapter = nullptr;
};

AdapterInfo probe_adapter(const AdapterConfig& config) {
  AdapterProcess adapter(config, {Endpoint{"127.0.0.1", free_loopback_port()}}, "probe.stderr");
  return say_hello(adapter);
}

AdapterLock::AdapterLock(const AdapterConfig& config, const LockContext& context)
    : config_(config), context_(context) {
  if (!context_.endpoint)
    throw std::invalid_argument("AdapterLock: the LockContext has no endpoint");
  if (!context_.clock) throw std::invalid_argument("AdapterLock: the LockContext has no clock");
  std::vector<Endpoint> redis;
  for (size_t node = 0; node < context_.node_count; ++node)
    redis.push_back(context_.endpoint(node));
  const std::string log_name =
      context_.client_id.empty() ? "adapter.stderr" : "adapter-" + context_.client_id + ".stderr";
  if (config_.pool && !config.log_dir.empty()) run_log_ = config.log_dir / log_name;
  try {
    if (config_.pool) {
      // A kept adapter that cannot say hello again (it died idle) is stopped,
      // and a new one serves the run, as it would have without the pool.
      if ((adapter_ = config_.pool->take(config))) {
        std::error_code unknown_size;
        log_from_ = std::filesystem::file_size(adapter_->stderr_log(), unknown_size);
        try {
          info_ = say_hello(*adapter_, redis_list(redis));
        } catch (const AdapterError&) {
          adapter_.reset();
        }
      }
      if (!adapter_) {
        adapter_ = config_.pool->start(config, redis);
        log_from_ = 0;
        info_ = say_hello(*adapter_);
      }
    } else {
      adapter_ = std::make_unique<AdapterProcess>(config, redis, log_name);
      info_ = say_hello(*adapter_);
    }
    hello_at_ = std::chrono::steady_clock::now();
    if (info_.connect) {
      // Before the story's clock starts, so a slow connect costs no timing.
      json request = {{"op", "connect"}, {"wait_ms", kConnectWaitMs}};
      if (context_.story_ttl) request["ttl_ms"] = context_.story_ttl->count();
      json connected = adapter_->request(request);
      report_incidents(connected);
      if (!connected["ok"].get<bool>())
        throw AdapterError("adapter '" + adapter_->command() + "' could not connect to " +
                           redis_list(redis) + ": " + error_of(connected, false));
    }
  } catch (...) {
    // A pooled adapter logs to the pool's file: what it said before failing
    // belongs in the run's log, which the error message points to.
    copy_log();
    throw;
  }
  if (context_.gate) {
    relay_ = std::make_shared<PauseRelay>();
    relay_->adapter = adapter_.get();
    context_.gate->on_change([relay = relay_](bool closed) {
      std::lock_guard lock(relay->mu);
      if (!relay->adapter) return;
      closed ? relay->adapter->pause() : relay->adapter->resume();
    });
  }
}

AdapterLock::~AdapterLock() {
  if (relay_) {
    std::lock_guard lock(relay_->mu);
    relay_->adapter = nullptr;
  }
  if (!config_.pool) return;
  const bool kept = reset_for_the_pool();
  copy_log();
  if (kept) config_.pool->keep(config_, std::move(adapter_));
}

bool AdapterLock::reset_for_the_pool() {
  if (!finished_ || !info_.reusable || !adapter_->can_serve_again()) return false;
  try {
    // What the reset's answer carries (incidents, renewals) is of a run
    // that is over: the adapter is not asked for more than this.
    return adapter_->request({{"op", "reset"}})["ok"].get<bool>();
  } catch (const std::exception&) {
    return false;  // stopped, as an adapter of its own would be
  }
}

void AdapterLock::copy_log() noexcept {
  if (run_log_.empty() || !adapter_) return;
  try {
    std::ifstream in(adapter_->stderr_log(), std::ios::binary);
    in.seekg(std::streamoff(log_from_));
    std::ofstream out(run_log_, std::ios::binary | std::ios::trunc);
    if (in && in.peek() != std::ifstream::traits_type::eof()) out << in.rdbuf();
  } catch (const std::exception&) {
    // A log that cannot be copied costs the post-mortem, not the run.
  }
}

json AdapterLock::call(const json& request) {
  if (context_.gate) context_.gate->pass();
  json response = adapter_->request(request, [this](const std::string& step) {
    if (std::find(info_.steps.begin(), info_.steps.end(), step) == info_.steps.end())
      throw AdapterError("adapter '" + adapter_->command() + "' announced step \"" + step +
                         "\", which it did not declare in its hello \"steps\"");
    context_.step(step);
  });
  if (context_.gate) context_.gate->pass();
  report_incidents(response);
  report_renewals(response);
  return response;
}

void AdapterLock::report_renewals(const json& response) {
  auto list = response.find("renewals");
  if (list == response.end() || list->is_null()) return;
  if (!info_.renewals)
    protocol_error(*adapter_, "sent \"renewals\" but did not say hello with \"renewals\"",
                   response);
  if (!list->is_array())
    protocol_error(*adapter_, "sent \"renewals\" that is not an array", response);
  const int64_t now = machine_monotonic_ns();
  for (const json& renewal : *list) {
    const bool object = renewal.is_object();
    auto text = [&](const char* field) -> const json* {
      auto it = object ? renewal.find(field) : renewal.end();
      return object && it != renewal.end() && it->is_string() ? &*it : nullptr;
    };
    const auto ttl = object ? integer_field(renewal, "ttl_ms") : std::nullopt;
    const auto sent = object ? integer_field(renewal, "sent_ns") : std::nullopt;
    const auto answered = object ? integer_field(renewal, "answered_ns") : std::nullopt;
    const auto ok = object ? renewal.find("ok") : renewal.end();
    const auto unknown = object ? renewal.find("unknown") : renewal.end();
    const bool is_ok = object && ok != renewal.end() && ok->is_boolean() && ok->get<bool>();
    const bool is_unknown =
        object && unknown != renewal.end() && unknown->is_boolean() && unknown->get<bool>();
    if (!text("lock") || !text("owner") || !ttl || *ttl < 0 || !sent || !answered ||
        *answered < *sent || *answered > now || ok == renewal.end() || !ok->is_boolean() ||
        (unknown != renewal.end() && !unknown->is_boolean()) || (is_ok && is_unknown))
      protocol_error(*adapter_,
                     "sent a renewal that is not {\"lock\", \"owner\", \"ttl_ms\", \"sent_ns\" "
                     "<= \"answered_ns\" <= now (CLOCK_MONOTONIC), \"ok\", \"unknown\"}",
                     response);
    const Outcome outcome = is_ok        ? Outcome::Done
                            : is_unknown ? Outcome::Unknown
                                         : Outcome::Refused;
    context_.renewal_learnt(text("lock")->get<std::string>(), text("owner")->get<std::string>(),
                            milliseconds(*ttl), monotonic_ns_at(*sent), monotonic_ns_at(*answered),
                            outcome);
  }
}

void AdapterLock::report_incidents(const json& response) {
  auto list = response.find("incidents");
  if (list == response.end() || list->is_null()) return;
  if (!list->is_array())
    protocol_error(*adapter_, "sent \"incidents\" that is not an array", response);
  const auto since_hello = std::chrono::steady_clock::now() - hello_at_;
  for (const json& incident : *list) {
    const auto kind = incident.is_object() ? incident.find("kind") : incident.end();
    const auto message = incident.is_object() ? incident.find("message") : incident.end();
    const auto at = incident.is_object() ? incident.find("at_ms") : incident.end();
    std::optional<IncidentKind> known;
    if (kind != incident.end() && kind->is_string())
      known = incident_named(kind->get<std::string>());
    if (!known || message == incident.end() || !message->is_string() || at == incident.end() ||
        !at->is_number() || at->get<double>() < 0)
      protocol_error(*adapter_,
                     "sent an incident that is not {\"kind\": one of " + kIncidentKinds.list() +
                         ", \"message\": text, \"at_ms\": ms since hello}",
                     response);
    const auto happened = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double, std::milli>(at->get<double>()));
    context_.incident(*known, message->get<std::string>(),
                      std::max(std::chrono::nanoseconds(0), since_hello - happened));
  }
}

void AdapterLock::finish() {
  if (info_.incidents) call({{"op", "incidents"}});
  if (info_.renewals) call({{"op", "renewals"}});
  finished_ = true;
}

AcquireResult AdapterLock::acquire(const std::string& name, milliseconds ttl, milliseconds wait) {
  const int64_t started = context_.clock->now_ns();
  const int64_t asked = machine_monotonic_ns();
  json response =
      call({{"op", "acquire"}, {"lock", name}, {"ttl_ms", ttl.count()}, {"wait_ms", wait.count()}});
  const Outcome outcome = outcome_of(*adapter_, response);
  if (outcome != Outcome::Done)
    return {outcome, std::nullopt, error_of(response, outcome == Outcome::Unknown)};

  Lease lease;
  auto owner = response.find("owner");
  if (owner == response.end() || !owner->is_string() || owner->get<std::string>().empty())
    protocol_error(*adapter_, "answered acquire ok without an \"owner\"", response);
  lease.owner = owner->get<std::string>();
  auto token = response.find("token");
  if (token != response.end() && !token->is_null()) {
    if (!token->is_number_integer())
      protocol_error(*adapter_, "sent a \"token\" that is not an integer", response);
    lease.token = token->get<int64_t>();
  }
  if (info_.fencing && !lease.token)
    protocol_error(*adapter_, "said hello with fencing but acquired without a \"token\"", response);
  lease.validity = validity_of(*adapter_, response, ttl);
  lease.acquired_at_ns = started;
  lease.reentry = int(optional_depth(*adapter_, response, "reentry").value_or(1));
  if (auto attempt = response.find("attempt_ns");
      attempt != response.end() && !attempt->is_null()) {
    const auto sent = integer_field(response, "attempt_ns");
    const int64_t now = machine_monotonic_ns();
    if (!info_.monotonic_clock || !sent || *sent < asked || *sent > now)
      protocol_error(*adapter_,
                     "sent an \"attempt_ns\" that is not a CLOCK_MONOTONIC reading taken while "
                     "the acquire ran (" +
                         std::to_string(asked) + ".." + std::to_string(now) +
                         "; hello must carry \"monotonic_ns\")",
                     response);
    lease.attempt_sent_ns = monotonic_ns_at(*sent);
  }
  held_[name] = lease.owner;
  return {Outcome::Done, lease, ""};
}

ChangeResult AdapterLock::release(const std::string& name, const Lease& lease) {
  json request = {{"op", "release"}, {"lock", name}, {"owner", lease.owner}};
  // A caller that gives up waiting for the release (asyncio.wait_for, a
  // request timeout): the adapter cancels it in flight after this long.
  if (auto cancel = context_.param("release_cancel_after_ms")) request["cancel_after_ms"] = *cancel;
  json response = call(request);
  const Outcome outcome = outcome_of(*adapter_, response);
  if (outcome == Outcome::Done) {
    ChangeResult done{.outcome = Outcome::Done};
    if (auto left = optional_depth(*adapter_, response, "remaining")) done.remaining = int(*left);
    if (!done.remaining || *done.remaining == 0) held_.erase(name);
    return done;
  }
  return {outcome, error_of(response, outcome == Outcome::Unknown), std::nullopt};
}

bool AdapterLock::renewal_failed(const std::string& name) {
  if (!info_.renews) return false;
  auto owner = held_.find(name);
  if (owner == held_.end()) return false;
  json response = call({{"op", "held"}, {"lock", name}, {"owner", owner->second}});
  if (!response["ok"].get<bool>()) return false;  // it cannot tell: nothing reported lost
  auto held = response.find("held");
  if (held == response.end() || !held->is_boolean())
    protocol_error(*adapter_, "answered held without a boolean \"held\"", response);
  return !held->get<bool>();
}

ChangeResult AdapterLock::extend(const std::string& name, Lease& lease, milliseconds ttl) {
  const int64_t started = context_.clock->now_ns();
  json response =
      call({{"op", "extend"}, {"lock", name}, {"owner", lease.owner}, {"ttl_ms", ttl.count()}});
  const Outcome outcome = outcome_of(*adapter_, response);
  if (outcome != Outcome::Done)
    return {outcome, error_of(response, outcome == Outcome::Unknown), std::nullopt};
  lease.validity = validity_of(*adapter_, response, ttl);
  lease.acquired_at_ns = started;
  return {Outcome::Done, "", std::nullopt};
}

std::unique_ptr<Lock> make_adapter_lock(const AdapterConfig& config, const LockContext& context) {
  return std::make_unique<AdapterLock>(config, context);
}

}  // namespace locklab
