// Faults done to a Redis server itself rather than to its network or clock.
// Crash, restart and SIGSTOP/SIGCONT are RedisServer::kill(), restart(),
// pause() and resume().
#pragma once

#include <chrono>

#include "connection.h"

namespace locklab {

// Makes the server at `server` sleep inside a command (DEBUG SLEEP) for
// `duration`: it serves no client and runs no timer meanwhile, though the
// process stays alive and its sockets keep accepting bytes. Needs a server
// started with --enable-debug-command local (RedisServer's default).
// Blocks until the server answers, i.e. until the sleep is over (run it on
// a thread of its own to do other things meanwhile). Throws RedisError if
// the server cannot be reached, std::runtime_error if it refuses.
// `auth` carries the credentials of a server that asks for them.
void debug_sleep(const Endpoint& server, std::chrono::milliseconds duration,
                 const ConnectionOptions& auth = {});

// Returns once the server at `server` has finished loading its data set
// (INFO persistence reports loading:0). A server restarted with persistence
// answers PING while it replays its AOF, but every data command meanwhile
// fails with LOADING. Throws std::runtime_error after `timeout`.
void wait_until_loaded(const Endpoint& server, std::chrono::milliseconds timeout);

}  // namespace locklab
