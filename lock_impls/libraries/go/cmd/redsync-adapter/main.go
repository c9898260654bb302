// Command redsync-adapter is a locklab adapter for go-redsync/redsync v4
// (github.com/go-redsync/redsync/v4, pinned in ../../go.mod): Redlock over
// every --redis endpoint (SET NX PX on each in parallel, a quorum, a validity
// of expiry - elapsed - drift), a Lua compare-and-delete to release, a Lua
// compare-and-pexpire to extend, on go-redis v9 through redsync's own goredis
// pool. See ../../README.md.
//
//	locklab runs:  go/bin/redsync-adapter --redis host:port[,host:port...]
//
// The protocol (the --redis argument, the clients' timeouts, the JSON-lines
// loop) is ../../protocol.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"locklab/libraries/go/protocol"
)

// meanDelay is the mean of redsync's default delay between two tries
// (rand(50..250 ms), redsync.go): an acquire that may wait wait_ms gets
// 1 + wait_ms/meanDelay tries, so that the expected sum of the delays is
// about wait_ms (0: one try).
const meanDelay = 150 * time.Millisecond

func tries(waitMs int64) int {
	return 1 + int(time.Duration(waitMs)*time.Millisecond/meanDelay)
}

type adapter struct {
	rs    *redsync.Redsync
	nodes int
	// Mutexes acquired here, by owner (the value redsync stored). One Mutex
	// per acquisition, kept after an unknown release or extend, as the
	// application would keep it and may try again.
	held map[string]*holding
	// --watchdog: each acquisition is kept alive by Extend every ttl/3;
	// --setnx-on-extend: its Mutexes are built WithSetNXOnExtend().
	watchdog, setNX bool
}

type holding struct {
	m    *redsync.Mutex
	lock string        // the lab's name of it
	ttl  time.Duration // its WithExpiry
	// The watchdog's (nil without --watchdog). A Mutex is not safe for
	// concurrent use: calls on it take mu.
	mu   sync.Mutex
	stop chan struct{}
	lost atomic.Bool
}

func main() {
	var watchdog, setNX bool
	endpoints := protocol.Endpoints("A locklab adapter for go-redsync/redsync v4 (Redlock over every endpoint).", func(fs *flag.FlagSet) {
		fs.BoolVar(&watchdog, "watchdog", false, "keep each lock alive: Extend every ttl/3 until released or an Extend fails (renews, answers held)")
		fs.BoolVar(&setNX, "setnx-on-extend", false, "build each Mutex WithSetNXOnExtend() (Extend sets a missing key again)")
	})
	clients := protocol.Clients(endpoints)
	pools := make([]redsyncredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = &tapPool{node: i, inner: goredis.NewPool(c)}
	}
	a := &adapter{rs: redsync.New(pools...), nodes: len(pools), held: map[string]*holding{}, watchdog: watchdog, setNX: setNX}
	name := "redsync"
	if watchdog {
		name += "-watchdog"
	}
	if setNX {
		name += "-setnx-on-extend"
	}
	hello := protocol.Response{
		"ok": true, "name": name,
		"version":   protocol.VersionOf("github.com/go-redsync/redsync/v4", "redsync"),
		"reentrant": false, "fencing": false, "multi_node": true, "connect": true,
	}
	if watchdog {
		// The watchdog is this adapter's own loop: it sees every renewal.
		hello["renews"] = true
		hello["renewals"] = true
	}
	protocol.Serve(protocol.Handlers{
		Hello:   hello,
		Connect: func(*protocol.Request) protocol.Response { return protocol.Connect(clients) },
		Acquire: a.acquire,
		Release: a.release,
		Extend:  a.extend,
		Held:    a.heldOp,
	})
}

// options of every Mutex built here.
func (a *adapter) options(opts ...redsync.Option) []redsync.Option {
	if a.setNX {
		opts = append(opts, redsync.WithSetNXOnExtend())
	}
	return opts
}

// acquire: NewMutex(lock, WithExpiry(ttl), WithTries(1 + wait/150 ms)), the
// default delay (rand 50-250 ms), drift factor (0.01) and timeout factor
// (0.05), then LockContext.
func (a *adapter) acquire(req *protocol.Request) protocol.Response {
	m := a.rs.NewMutex(req.Lock, a.options(redsync.WithExpiry(req.TTL()), redsync.WithTries(tries(req.WaitMs)))...)
	rec := newRecorder()
	start := time.Now()
	err := m.LockContext(rec.context())
	if err == nil {
		h := &holding{m: m, lock: req.Lock, ttl: req.TTL()}
		a.held[m.Value()] = h
		resp := protocol.Response{"owner": m.Value()}
		// lockContext returns at the first try that reached a quorum, so the
		// try under way when it returned won: its first SET NX is the
		// attempt (recorder.setNX, below).
		if sent, ok := rec.lastTry(); ok {
			resp["attempt_ns"] = sent
		}
		if a.watchdog {
			h.stop = make(chan struct{})
			// The ticker starts before the answer, so that a pause right
			// after it finds the first Extend already due.
			go a.keepAlive(h, time.NewTicker(h.ttl/3))
			// Its user has no deadline: the watchdog extends the lease.
			resp["validity_ms"] = nil
			return protocol.Ok(resp)
		}
		// Until() = the end of the winning try + expiry - its elapsed time -
		// drift: what redsync tells its user; the lab counts from the start
		// of the request.
		resp["validity_ms"] = protocol.Ms(m.Until().Sub(start))
		return protocol.Ok(resp)
	}
	// After a try below quorum (or past its validity) redsync deletes its
	// value on every node; a key may remain where a SET may have run and no
	// delete was answered.
	if left := rec.mayHold(); len(left) > 0 {
		return protocol.Unknown("%v; a key may remain on nodes %v", err, left)
	}
	return protocol.No("%v", err)
}

// keepAlive is the extension loop a redsync user writes (redsync has none;
// bsm/redislock's README shows the same one): a ticker every ttl/3 calls
// Extend, and the first Extend that fails ends it and marks the lock lost.
// A ticker that was stopped (SIGSTOP) fires once on resuming.
func (a *adapter) keepAlive(h *holding, t *time.Ticker) {
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		select {
		case <-h.stop:
			h.mu.Unlock()
			return
		default:
		}
		start := time.Now()
		sent := protocol.MonotonicNs()
		log.Printf("watchdog: Extend of %s", h.m.Value())
		rec := newRecorder()
		ok, err := h.m.ExtendContext(rec.context())
		// A failed Extend is unknown only when the masters that extended the
		// key and those whose reply was lost could make a quorum (redlock5.js
		// counts its votes alike): answered 0 by a quorum (the key gone, or
		// another's), it moved no lease a majority holds.
		protocol.Renewed(h.lock, h.m.Value(), h.ttl, sent, protocol.MonotonicNs(), ok,
			!ok && rec.mayHaveTouched() >= a.nodes/2+1)
		h.mu.Unlock()
		if !ok {
			h.lost.Store(true)
			log.Printf("watchdog: Extend of %s failed after %v, lock lost: %v", h.m.Value(), time.Since(start), err)
			return
		}
		log.Printf("watchdog: Extend of %s ok after %v", h.m.Value(), time.Since(start))
	}
}

// heldOp: with --watchdog, whether no Extend has failed yet and the
// validity redsync tells its user (Until(), from the acquire or the last
// Extend) has not passed: the check before acting that redsync's docs point
// to ("Valid ... Deprecated: Use Until instead"). Without it, an Extend
// still to come (or waiting for its replies) would leave a lapsed lease
// looking held (README.md).
func (a *adapter) heldOp(req *protocol.Request) protocol.Response {
	h, ok := a.held[req.Owner]
	if !a.watchdog || !ok || h.stop == nil {
		return protocol.No("no watchdog for %q", req.Owner)
	}
	h.mu.Lock()
	until := h.m.Until()
	h.mu.Unlock()
	return protocol.Ok(protocol.Response{"held": !h.lost.Load() && time.Now().Before(until)})
}

// stopWatchdog ends h's extension loop (and waits for an Extend in flight).
func stopWatchdog(h *holding) {
	if h != nil && h.stop != nil {
		h.mu.Lock()
		select {
		case <-h.stop:
		default:
			close(h.stop)
		}
		h.mu.Unlock()
	}
}

// mutexOf: the Mutex acquired here as owner (when it has the lease asked
// for), or one built for that value (WithValue), as redsync lets an
// application rebuild a lock from its value.
func (a *adapter) mutexOf(req *protocol.Request) *redsync.Mutex {
	if h, ok := a.held[req.Owner]; ok && (req.TTLms == 0 || req.TTL() == h.ttl) {
		return h.m
	}
	opts := []redsync.Option{redsync.WithValue(req.Owner)}
	if req.TTLms > 0 {
		opts = append(opts, redsync.WithExpiry(req.TTL()))
	}
	return a.rs.NewMutex(req.Lock, a.options(opts...)...)
}

// release: the watchdog stopped, then UnlockContext; true on a quorum of
// deletes.
func (a *adapter) release(req *protocol.Request) protocol.Response {
	stopWatchdog(a.held[req.Owner])
	m := a.mutexOf(&protocol.Request{Lock: req.Lock, Owner: req.Owner})
	rec := newRecorder()
	ok, err := m.UnlockContext(rec.context())
	if ok {
		delete(a.held, req.Owner)
		return protocol.Ok(nil)
	}
	if rec.anyMaySent() {
		return protocol.Unknown("not released on a quorum (%v); a reply was lost", err)
	}
	if rec.anyApplied() {
		// A minority of deletes ran: not "nothing happened".
		delete(a.held, req.Owner)
		return protocol.Unknown("not released on a quorum (%v); deleted on a minority", err)
	}
	delete(a.held, req.Owner)
	return protocol.No("not held: %v", err)
}

// extend: ExtendContext (PEXPIRE where the value is ours; with
// --setnx-on-extend, else SET NX), with the lease asked for.
func (a *adapter) extend(req *protocol.Request) protocol.Response {
	m := a.mutexOf(req)
	if h, ok := a.held[req.Owner]; ok && h.m == m {
		h.mu.Lock()
		defer h.mu.Unlock()
	}
	rec := newRecorder()
	start := time.Now()
	ok, err := m.ExtendContext(rec.context())
	if ok {
		if h, held := a.held[req.Owner]; !held || h.m != m {
			a.held[req.Owner] = &holding{m: m, lock: req.Lock, ttl: req.TTL()}
		}
		return protocol.Ok(protocol.Response{"validity_ms": protocol.Ms(m.Until().Sub(start))})
	}
	if errors.Is(err, redsync.ErrExtendFailed) {
		return protocol.Unknown("%v: extended on a quorum, but too late for any validity", err)
	}
	if left := rec.mayHold(); len(left) > 0 || rec.anyMaySent() {
		return protocol.Unknown("not extended on a quorum (%v); extended or unanswered on nodes %v", err, left)
	}
	return protocol.No("not held: %v", err)
}

// ---------------------------------------------------------------------------
// The tap: each pool notes what its commands did for the operation that
// sent them (a recorder carried in the context redsync passes to Pool.Get),
// so that an acquire, release or extend that failed can tell "definitely
// not" from "unknown": redsync returns only a count and joined errors. For
// an acquire it also dates its tries (the acquire's attempt_ns).
//
// How the tries are told apart (mutex.go, lockContext): one value for every
// try of a LockContext (genValue runs once, before the loop), so the value
// cannot tell them apart. But each try is one actOnPoolsAsync of SET NX, one
// goroutine per node, and actOnPoolsAsync waits for every goroutine's reply
// (failFast is off: this adapter never sets WithFailFast) before lockContext
// looks at the count. A try that fell short then runs a second
// actOnPoolsAsync, the compare-and-delete on every node, before the delay
// and the next try. So every SET NX of one try is called after every
// compare-and-delete of the try before and before any of its own: a SET NX
// after a delete begins a new try. A try whose deletes never reached a Conn
// (Pool.Get failing, which redsync's goredis pool never does) would merge
// with the next: its first SET NX is earlier, which is safe.
//
// Why that try's first SET NX: redsync counts a node for a try only when
// that try's own SET NX answered OK (acquire: the SetNX reply), and SET NX
// answers nil where any value is set, ours from an earlier try included. So
// the quorum that won is made of SET NX commands of the winning try, each
// run by Redis after it was sent, hence after the first of them was dated.

type recorderKey struct{}

type recorder struct {
	mu      sync.Mutex
	hold    map[int]bool // node -> our value may be there
	touched map[int]bool // node -> a set or touch ran there, or its reply was lost
	sent    bool         // some command's reply was lost
	applied bool         // some command changed a key (set, extended, deleted)
	// The acquire's tries: when the first SET NX of the latest try was
	// called (MonotonicNs, before go-redis sends it), and whether a
	// compare-and-delete came since (the try fell short: the next SET NX
	// begins another).
	trySent  int64
	tried    bool
	tryEnded bool
}

func newRecorder() *recorder { return &recorder{hold: map[int]bool{}, touched: map[int]bool{}} }

func (r *recorder) context() context.Context {
	return context.WithValue(context.Background(), recorderKey{}, r)
}

func (r *recorder) note(node int, op string, set bool, err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	unsure := protocol.MaySent(err)
	if unsure {
		r.sent = true
	}
	if set && err == nil {
		r.applied = true
	}
	if (op == "set" || op == "touch") && ((set && err == nil) || unsure) {
		r.touched[node] = true
	}
	switch op {
	case "set": // SET NX PX, or a touch that may SET or PEXPIRE our value
		if set || unsure {
			r.hold[node] = true
		}
	case "touch": // PEXPIRE where the value is ours: answered 0 = not ours
		if err == nil {
			r.hold[node] = set
		}
	case "delete": // compare-and-delete answered: our value is gone
		if err == nil {
			r.hold[node] = false
		}
	}
}

// setNX notes a SET NX about to be sent at sent: the first of a new try
// after a compare-and-delete (or the first of all), else one more of the
// same try, sent concurrently by its own goroutine: the try's time is the
// earliest, whichever goroutine gets here first.
func (r *recorder) setNX(sent int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.tried || r.tryEnded {
		r.trySent, r.tried, r.tryEnded = sent, true, false
	} else if sent < r.trySent {
		r.trySent = sent
	}
}

// deleting notes a compare-and-delete: the try before it is over.
func (r *recorder) deleting() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tryEnded = true
}

// lastTry: when the first SET NX of the latest try was called, if one was.
// It is no later than any SET NX of that try, so no later than the ones
// that made its quorum.
func (r *recorder) lastTry() (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trySent, r.tried && !r.tryEnded
}

func (r *recorder) mayHold() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var nodes []int
	for n, h := range r.hold {
		if h {
			nodes = append(nodes, n)
		}
	}
	sort.Ints(nodes)
	return nodes
}

// mayHaveTouched: on how many nodes a set or touch (an Extend's script)
// ran or may have.
func (r *recorder) mayHaveTouched() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.touched)
}

func (r *recorder) anyApplied() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applied
}

func (r *recorder) anyMaySent() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent
}

type tapPool struct {
	node  int
	inner redsyncredis.Pool
}

func (p *tapPool) Get(ctx context.Context) (redsyncredis.Conn, error) {
	conn, err := p.inner.Get(ctx)
	if err != nil {
		return nil, err
	}
	var rec *recorder
	if ctx != nil {
		rec, _ = ctx.Value(recorderKey{}).(*recorder)
	}
	return &tapConn{Conn: conn, node: p.node, rec: rec}, nil
}

type tapConn struct {
	redsyncredis.Conn
	node int
	rec  *recorder
}

func (c *tapConn) SetNX(name string, value string, expiry time.Duration) (bool, error) {
	// Dated before go-redis writes it (goredis' conn.SetNX is one
	// client.SetNX).
	c.rec.setNX(protocol.MonotonicNs())
	ok, err := c.Conn.SetNX(name, value, expiry)
	c.rec.note(c.node, "set", ok, err)
	return ok, err
}

func (c *tapConn) Eval(script *redsyncredis.Script, keysAndArgs ...any) (any, error) {
	if strings.Contains(script.Src, `"DEL"`) {
		c.rec.deleting()
	}
	v, err := c.Conn.Eval(script, keysAndArgs...)
	status, _ := v.(int64)
	switch {
	case strings.Contains(script.Src, `"DEL"`):
		c.rec.note(c.node, "delete", status == 1, err)
	case strings.Contains(script.Src, `"SET"`):
		c.rec.note(c.node, "set", status != 0, err)
	case strings.Contains(script.Src, `"PEXPIRE"`):
		c.rec.note(c.node, "touch", status != 0, err)
	default:
		c.rec.note(c.node, "other", false, err)
	}
	return v, err
}
