#include "hiredis_connection.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

namespace locklab {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv;
  tv.tv_sec = ms.count() / 1000;
  tv.tv_usec = (ms.count() % 1000) * 1000;
  return tv;
}

// True when the server closed `fd` (or it failed) and nothing is left to
// read from it: a command sent on it now would be lost.
bool closed_by_peer(int fd) {
  pollfd p{fd, short(POLLIN | POLLRDHUP), 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLERR | POLLNVAL)) return true;
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_NIL:
      out.type = Reply::Type::Nil;
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::Status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::String;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::Array;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out.type = Reply::Type::Nil;
  }
  return out;
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  for (size_t i = 0; i < argv.size() && i < 3; ++i) {
    if (i) text += ' ';
    text += argv[i].size() > 40 ? argv[i].substr(0, 40) + "…" : argv[i];
  }
  if (argv.size() > 3) text += " …";
  return text;
}

}  // namespace

Endpoint Endpoint::parse(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw std::invalid_argument("not a host:port endpoint: '" + text + "'");
  Endpoint e;
  e.host = text.substr(0, colon);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']')
    e.host = e.host.substr(1, e.host.size() - 2);
  try {
    size_t used = 0;
    e.port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || e.port <= 0 || e.port > 65535)
      throw std::out_of_range("");
  } catch (const std::exception&) {
    throw std::invalid_argument("bad port in endpoint '" + text + "'");
  }
  return e;
}

std::string Reply::describe() const {
  switch (type) {
    case Type::Nil:
      return "(nil)";
    case Type::Status:
      return str;
    case Type::Error:
      return "(error) " + str;
    case Type::Integer:
      return "(integer) " + std::to_string(integer);
    case Type::String:
      return "\"" + str + "\"";
    case Type::Array: {
      std::string s = "[";
      for (size_t i = 0; i < elements.size(); ++i) s += (i ? ", " : "") + elements[i].describe();
      return s + "]";
    }
  }
  return "?";
}

HiredisConnection::HiredisConnection(std::function<Endpoint()> resolve, ConnectionOptions options)
    : resolve_(std::move(resolve)), options_(options) {}

HiredisConnection::HiredisConnection(Endpoint endpoint, ConnectionOptions options)
    : HiredisConnection([endpoint] { return endpoint; }, options) {
  current_ = endpoint;
}

HiredisConnection::~HiredisConnection() {
  disconnect();
}

void HiredisConnection::disconnect() {
  if (context_) redisFree(context_);
  context_ = nullptr;
  pending_.clear();
}

std::string HiredisConnection::describe() const {
  return "redis " + current_.str();
}

void HiredisConnection::fail(const std::string& what, bool maybe_executed) {
  std::string message = describe() + ": " + what;
  disconnect();
  throw RedisError(message, maybe_executed);
}

void HiredisConnection::connect() {
  try {
    current_ = resolve_();
  } catch (const std::exception& e) {
    throw RedisError(std::string("cannot find the server: ") + e.what(), false);
  }
  context_ = redisConnectWithTimeout(current_.host.c_str(), current_.port,
                                     to_timeval(options_.connect_timeout));
  if (!context_) fail("cannot connect: out of memory", false);
  if (context_->err) fail(std::string("cannot connect: ") + context_->errstr, false);
  timeval tv = to_timeval(options_.command_timeout);
  if (redisSetTimeout(context_, tv) != REDIS_OK) fail("cannot set the command timeout", false);
  if (options_.password.empty()) return;
  std::vector<std::string> argv{"AUTH"};
  if (!options_.username.empty()) argv.push_back(options_.username);
  argv.push_back(options_.password);
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) args.push_back(a.data()), lens.push_back(a.size());
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, int(args.size()), args.data(), lens.data()));
  if (!reply) fail(std::string("AUTH: ") + context_->errstr, false);
  const bool refused = reply->type == REDIS_REPLY_ERROR;
  const std::string text = refused ? std::string(reply->str, reply->len) : std::string();
  freeReplyObject(reply);
  if (refused) fail("AUTH refused: " + text, false);
}

void HiredisConnection::send(const std::vector<std::string>& argv) {
  // Like redis-py's pool and Redisson's channels, replace a connection the
  // server closed while it sat idle (a restart, a failover) before using it.
  if (context_ && pending_.empty() && closed_by_peer(context_->fd)) disconnect();
  if (!context_) connect();
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(context_, int(args.size()), args.data(), lens.data()) != REDIS_OK)
    fail(command_text(argv) + ": " + context_->errstr, false);
  int done = 0;
  bool wrote_any = false;
  while (!done) {
    if (redisBufferWrite(context_, &done) != REDIS_OK)
      fail(command_text(argv) + ": cannot send: " + context_->errstr,
           wrote_any || !pending_.empty());
    wrote_any = true;
  }
  pending_.push_back(command_text(argv));
}

Reply HiredisConnection::receive() {
  return receive_within(options_.command_timeout);
}

Reply HiredisConnection::receive_within(std::chrono::milliseconds timeout) {
  using std::chrono::steady_clock;
  if (!context_ || pending_.empty())
    throw RedisError(describe() + ": receive() without a command in flight", false);
  const std::string what = pending_.front();
  const steady_clock::time_point deadline = steady_clock::now() + timeout;
  void* raw = nullptr;
  // hiredis' blocking read waits its socket timeout per read(2); polling for
  // the time left keeps the whole reply within `timeout`, and a reply already
  // buffered (by hiredis or the kernel) is taken even when no time is left.
  for (;;) {
    if (redisGetReplyFromReader(context_, &raw) != REDIS_OK)
      fail(what + ": " + context_->errstr, true);
    if (raw) break;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady_clock::now());
    pollfd p{context_->fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::max<int64_t>(0, left.count())));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) fail(what + ": poll: " + std::strerror(errno), true);
    if (ready == 0)
      fail(what + ": timed out after " + std::to_string(timeout.count()) + " ms", true);
    if (redisBufferRead(context_) != REDIS_OK) fail(what + ": " + context_->errstr, true);
  }
  pending_.erase(pending_.begin());
  auto* reply = static_cast<redisReply*>(raw);
  Reply out = convert(reply);
  freeReplyObject(reply);
  return out;
}

}  // namespace locklab
