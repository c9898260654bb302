// Command bsm-redislock-adapter is a locklab adapter for bsm/redislock
// (github.com/bsm/redislock, pinned in ../../go.mod): one Redis node (the
// first --redis endpoint), a Lua MSETNX + PEXPIRE to obtain, a Lua
// compare-and-delete to release, a Lua compare-and-pexpire to refresh, on
// go-redis v9. See ../../README.md.
//
//	locklab runs:  go/bin/bsm-redislock-adapter --redis host:port[,host:port...]
//
// The protocol (the --redis argument, the client's timeouts, the JSON-lines
// loop) is ../../protocol.
package main

import (
	"context"
	"errors"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"locklab/libraries/go/protocol"
)

// retryEvery: the retry strategy of an acquire that may wait,
// LinearBackoff(100 ms) (the library's own example, example_test.go), bounded
// by a context deadline of wait_ms (its other example: "retry every 500ms,
// for up-to a minute" is LinearBackoff + context.WithDeadline). The
// library's default is NoRetry, used for wait_ms 0.
const retryEvery = 100 * time.Millisecond

type adapter struct {
	client *redis.Client
	sends  *protocol.Sends
	locker *redislock.Client
	// Locks obtained here, by owner (the token the library stored). The
	// library has no way to build a Lock for a value it did not obtain.
	held map[string]*redislock.Lock
}

func main() {
	endpoints := protocol.Endpoints("A locklab adapter for bsm/redislock (one Redis node, the first endpoint).", nil)
	clients := protocol.Clients(endpoints[:1])
	a := &adapter{client: clients[0], sends: protocol.DateSends(clients[0]), locker: redislock.New(clients[0]), held: map[string]*redislock.Lock{}}
	protocol.Serve(protocol.Handlers{
		Hello: protocol.Response{
			"ok": true, "name": "bsm-redislock",
			"version":   protocol.VersionOf("github.com/bsm/redislock", "redislock"),
			"reentrant": false, "fencing": false, "connect": true,
		},
		Connect: func(*protocol.Request) protocol.Response { return protocol.Connect(clients) },
		Acquire: a.acquire,
		Release: a.release,
		Extend:  a.extend,
	})
}

// outcome of a library error: unknown when the command may have reached
// Redis (a timeout, a connection lost after the write), else definitely not.
func outcome(err error) protocol.Response {
	if protocol.MaySent(err) {
		return protocol.Unknown("%v", err)
	}
	return protocol.No("%v", err)
}

// acquire: Obtain(ctx, lock, ttl, opts); for wait_ms > 0, RetryStrategy
// LinearBackoff(100 ms) and a ctx deadline wait_ms after the start (without
// a deadline the library caps its retries at the ttl).
func (a *adapter) acquire(req *protocol.Request) protocol.Response {
	ctx := context.Background()
	var opts *redislock.Options
	if req.WaitMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.WaitMs)*time.Millisecond)
		defer cancel()
		opts = &redislock.Options{RetryStrategy: redislock.LinearBackoff(retryEvery)}
	}
	asked := protocol.MonotonicNs()
	lock, err := a.locker.Obtain(ctx, req.Lock, req.TTL(), opts)
	if err != nil {
		if errors.Is(err, redislock.ErrNotObtained) {
			// Every attempt was answered "held" (a retry that ran out of
			// its deadline is ErrNotObtained joined with the context's).
			return protocol.No("%v", err)
		}
		return outcome(err)
	}
	a.held[lock.Token()] = lock
	// No validity: the library tells its user the TTL it asked for (and
	// TTL() on request, another round trip): the lab's default, ttl_ms from
	// the start of the acquire.
	resp := protocol.Response{"owner": lock.Token()}
	// Obtain runs its obtain script (MSETNX, then PEXPIRE) every retryEvery
	// until it answers OK: the last that succeeded, carrying the token, took
	// the lock.
	if sent, ok := a.sends.LastSucceeded(lock.Token(), asked); ok {
		resp["attempt_ns"] = sent
	}
	return protocol.Ok(resp)
}

// release: Lock.Release; ErrLockNotHeld when the value is not ours.
func (a *adapter) release(req *protocol.Request) protocol.Response {
	lock, ok := a.held[req.Owner]
	if !ok {
		return protocol.No("not held: no Lock obtained here as %q (the library cannot release a value it did not obtain)", req.Owner)
	}
	err := lock.Release(context.Background())
	if err == nil {
		delete(a.held, req.Owner)
		return protocol.Ok(nil)
	}
	if errors.Is(err, redislock.ErrLockNotHeld) {
		delete(a.held, req.Owner)
		return protocol.No("not held: %v", err)
	}
	return outcome(err)
}

// extend: Lock.Refresh(ctx, ttl, nil): one attempt (the default NoRetry).
func (a *adapter) extend(req *protocol.Request) protocol.Response {
	lock, ok := a.held[req.Owner]
	if !ok {
		return protocol.No("not held: no Lock obtained here as %q", req.Owner)
	}
	err := lock.Refresh(context.Background(), req.TTL(), nil)
	if err == nil {
		return protocol.Ok(nil)
	}
	if errors.Is(err, redislock.ErrNotObtained) {
		return protocol.No("not held: %v", err)
	}
	return outcome(err)
}
