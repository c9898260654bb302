#include "hiredis_connection.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>
#include <utility>

#include "clock.h"
#include "simulated_link.h"

namespace locklab {
namespace {

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

// `argv` as a RESP array of bulk strings, appended to `out`.
void append_resp_array(std::string& out, const std::vector<std::string>& argv) {
  char digits[24];
  auto append_header = [&](char kind, size_t n) {
    out += kind;
    out.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
    out += "\r\n";
  };
  append_header('*', argv.size());
  for (const auto& arg : argv) {
    append_header('$', arg.size());
    out += arg;
    out += "\r\n";
  }
}

// `argv` shortened for a message, into `text` (whose buffer is reused).
void describe_command(const std::vector<std::string>& argv, std::string& text) {
  text.clear();
  for (size_t i = 0; i < argv.size() && i < 3; ++i) {
    if (i) text += ' ';
    if (argv[i].size() > 40)
      text.append(argv[i], 0, 40) += "…";
    else
      text += argv[i];
  }
  if (argv.size() > 3) text += " …";
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  describe_command(argv, text);
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
  if (stream_) stream_->close();
  stream_.reset();
  waiter_.reset();  // it leaves the fiber thread's epoll before the socket closes
  if (context_) redisFree(context_);
  context_ = nullptr;
  first_pending_ = pending_end_ = 0;
}

void HiredisConnection::check_fate(LinkedStream::Fate fate, const std::string& what,
                                   std::chrono::milliseconds timeout) {
  if (fate == LinkedStream::Fate::Broken)
    fail(what + ": the connection was reset on its link", true);
  if (fate == LinkedStream::Fate::TimedOut)
    fail(what + ": timed out after " + std::to_string(timeout.count()) + " ms", true);
}

std::string HiredisConnection::describe() const {
  return "redis " + (options_.name.empty() ? current_.str() : options_.name);
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
  // A non-blocking socket throughout: on a fiber every wait below suspends
  // only the calling client (fibers.h).
  if (options_.link && options_.link->refuses_connections())
    fail("cannot connect: Connection refused (its link refuses connections)", false);
  context_ = redisConnectNonBlock(current_.host.c_str(), current_.port);
  if (!context_) fail("cannot connect: out of memory", false);
  if (context_->err) fail(std::string("cannot connect: ") + context_->errstr, false);
  // Programs the lab starts later (a restarted server) must not inherit it.
  ::fcntl(context_->fd, F_SETFD, FD_CLOEXEC);
  waiter_.emplace(context_->fd);
  const auto deadline = std::chrono::steady_clock::now() + options_.connect_timeout;
  if (!waiter_->wait(POLLOUT, deadline))
    fail("cannot connect: timed out after " + std::to_string(options_.connect_timeout.count()) +
             " ms",
         false);
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(context_->fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  if (error != 0) fail(std::string("cannot connect: ") + std::strerror(error), false);
  if (options_.link) {
    stream_ = LinkedStream::open(*options_.link, context_->fd);
    stream_->on_written([this] { waiter_->set_requests_out(stream_->unread()); });
  }
  if (options_.password.empty()) return;
  std::vector<std::string> argv{"AUTH"};
  if (!options_.username.empty()) argv.push_back(options_.username);
  argv.push_back(options_.password);
  Reply reply;
  try {
    write_command(argv);
    pending_[first_pending_] = "AUTH";  // messages never show the credentials
    reply = receive();
  } catch (const RedisError& e) {
    // No command of the caller's was sent yet.
    throw RedisError(e.what(), false);
  }
  if (reply.is_error()) fail("AUTH refused: " + reply.str, false);
}

void HiredisConnection::send(const std::vector<std::string>& argv) {
  // Like redis-py's pool and Redisson's channels, replace a connection the
  // server closed while it sat idle (a restart, a failover) before using it.
  if (context_ && first_pending_ == pending_end_ &&
      ((stream_ && stream_->broken()) || closed_by_peer(context_->fd)))
    disconnect();
  if (!context_) connect();
  write_command(argv);
}

void HiredisConnection::write_command(const std::vector<std::string>& argv) {
  // RESP by hand into a reused buffer: hiredis' own formatting
  // (redisAppendCommandArgv) costs more user time than the rest of a command.
  request_.clear();
  append_resp_array(request_, argv);
  if (stream_) {
    // The link carries it: at once, later, or never (linked_stream.h).
    stream_->send(request_);
    if (pending_end_ == pending_.size()) pending_.emplace_back();
    describe_command(argv, pending_[pending_end_++]);
    waiter_->set_requests_out(stream_->unread());
    return;
  }
  const bool in_flight = first_pending_ != pending_end_;
  const auto deadline = std::chrono::steady_clock::now() + options_.command_timeout;
  for (size_t sent = 0; sent < request_.size();) {
    const ssize_t n =
        ::send(context_->fd, request_.data() + sent, request_.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      waiter_->drained(POLLOUT);
      if (waiter_->wait(POLLOUT, deadline)) continue;
      fail(command_text(argv) + ": cannot send: timed out after " +
               std::to_string(options_.command_timeout.count()) + " ms",
           in_flight || sent > 0);
    }
    fail(command_text(argv) + ": cannot send: " + std::strerror(errno), in_flight || sent > 0);
  }
  if (pending_end_ == pending_.size()) pending_.emplace_back();
  describe_command(argv, pending_[pending_end_++]);
  waiter_->set_requests_out(pending_end_ - first_pending_);
}

Reply HiredisConnection::receive() {
  return receive_within(options_.command_timeout);
}

Reply HiredisConnection::receive_within(std::chrono::milliseconds timeout) {
  if (!context_ || first_pending_ == pending_end_)
    throw RedisError(describe() + ": receive() without a command in flight", false);
  const std::string& what = pending_[first_pending_];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!stream_) {
    Reply reply = read_reply(what, timeout, deadline);
    if (options_.answers_take_time) answer_received();
    return reply;
  }
  // Over a simulated link: the request reaches the server (the answer is
  // then in the socket at once: the clock stands still while it is out),
  // and the answer crosses back.
  const int64_t deadline_ns = monotonic_ns() + std::chrono::nanoseconds(timeout).count();
  check_fate(stream_->await_written(deadline_ns), what, timeout);
  Reply reply = read_reply(what, timeout, deadline);
  waiter_->set_requests_out(stream_->unread() - 1);
  check_fate(stream_->await_answer(deadline_ns), what, timeout);
  if (options_.answers_take_time) answer_received();
  return reply;
}

Reply HiredisConnection::read_reply(const std::string& what, std::chrono::milliseconds timeout,
                                    std::chrono::steady_clock::time_point deadline) {
  void* raw = nullptr;
  for (;;) {
    if (redisGetReplyFromReader(context_, &raw) != REDIS_OK)
      fail(what + ": " + context_->errstr, true);
    if (raw) break;
    // Read even once the time is up: a reply already in the socket's buffer
    // is taken, however little time was left.
    const bool may_be_ready = waiter_->wait(POLLIN, deadline);
    char buffer[16 * 1024];
    const ssize_t n = ::read(context_->fd, buffer, sizeof buffer);
    if (n > 0) {
      if (size_t(n) < sizeof buffer) waiter_->drained(POLLIN);  // else more may be waiting
      if (redisReaderFeed(context_->reader, buffer, size_t(n)) != REDIS_OK)
        fail(what + ": " + context_->reader->errstr, true);
      continue;
    }
    if (n == 0) fail(what + ": the server closed the connection", true);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail(what + ": " + std::strerror(errno), true);
    waiter_->drained(POLLIN);
    if (!may_be_ready)
      fail(what + ": timed out after " + std::to_string(timeout.count()) + " ms", true);
  }
  if (++first_pending_ == pending_end_) first_pending_ = pending_end_ = 0;
  if (!stream_) waiter_->set_requests_out(pending_end_ - first_pending_);
  auto* reply = static_cast<redisReply*>(raw);
  Reply out = convert(reply);
  freeReplyObject(reply);
  return out;
}

}  // namespace locklab
