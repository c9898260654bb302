// Package protocol is the locklab adapter protocol (harness/adapter/PROTOCOL.md)
// for the Go adapters of this module: the --redis argument, go-redis clients
// with short timeouts and no hidden retries (one per endpoint), what a
// go-redis error means for the outcome, and the JSON-lines loop (one request
// per line on stdin, one response per line on stdout with the request's id).
// Each adapter (cmd/...) only maps hello / connect / acquire / release /
// extend to its library:
//
//	endpoints := protocol.Endpoints("what this adapter is")
//	clients := protocol.Clients(endpoints)
//	protocol.Serve(protocol.Handlers{Hello: ..., Acquire: ..., ...})
//
// Renewals: an adapter that sees every background renewal of its library
// (its own Extend loop) says hello with "renewals": true and reports each
// with Renewed; Serve dates hello with MonotonicNs and attaches the
// renewals not yet reported to the next response (PROTOCOL.md, "Renewals").
//
// Incidents: Go has no recoverable "uncaught" error on a library's goroutine.
// A panic there ends the whole process (the lab reports an adapter exit, with
// the panic's last line of stderr), so hello does not offer "incidents".
package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"
)

// Request is one line of the lab's: the fields of every op.
type Request struct {
	ID            int64  `json:"id"`
	Op            string `json:"op"`
	Lock          string `json:"lock"`
	Owner         string `json:"owner"`
	TTLms         int64  `json:"ttl_ms"`
	WaitMs        int64  `json:"wait_ms"`
	CancelAfterMs *int64 `json:"cancel_after_ms"`
}

// TTL is the lease asked for.
func (r *Request) TTL() time.Duration { return time.Duration(r.TTLms) * time.Millisecond }

// Response is what a handler answers, without "id".
type Response map[string]any

// Ok is a done outcome with the given fields.
func Ok(fields Response) Response {
	out := Response{"ok": true}
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// No is "definitely not": nothing of the request is left in Redis.
func No(format string, args ...any) Response {
	return Response{"ok": false, "error": oneLine(format, args...)}
}

// Unknown is "it may or may not have happened".
func Unknown(format string, args ...any) Response {
	return Response{"ok": false, "unknown": true, "error": oneLine(format, args...)}
}

// oneLine: errors.Join's lines (one per node) joined with "; ".
func oneLine(format string, args ...any) string {
	return strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "; ")
}

// Handler answers one request.
type Handler func(*Request) Response

// Handlers maps the protocol's ops to an adapter's functions; Hello is the
// answer to hello (it must not need Redis).
type Handlers struct {
	Hello   Response
	Connect Handler
	Acquire Handler
	Release Handler
	Extend  Handler
	Held    Handler
}

// Endpoints parses --redis host:port[,host:port...] (the lab's fault
// proxies, node 0 first); flags, when not nil, adds an adapter's own flags
// (its modes) to the command line.
func Endpoints(description string, flags func(*flag.FlagSet)) []string {
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "%s\nusage: %s [flags] --redis host:port[,host:port...]\n", description, os.Args[0])
		fs.PrintDefaults()
	}
	if flags != nil {
		flags(fs)
	}
	list := fs.String("redis", "", "host:port[,host:port...]")
	_ = fs.Parse(os.Args[1:])
	if *list == "" {
		fs.Usage()
		os.Exit(2)
	}
	return strings.Split(*list, ",")
}

// Timeouts of every client: a partitioned or paused server gives an unknown
// outcome within about a second.
const (
	DialTimeout  = 500 * time.Millisecond
	ReadTimeout  = time.Second
	WriteTimeout = time.Second
)

// Clients opens one go-redis client per endpoint (connections are dialled
// lazily, on the first command or on connect). MaxRetries -1 is go-redis'
// "no retries" (0 would mean its default, 3): a command that timed out is not
// sent again behind the library's back. DialerRetries 1: one dial per
// connection (go-redis' default is 5 dials 100 ms apart, 2.9 s through a
// black-holed link). On a target with credentials the lab passes them in the
// environment.
func Clients(endpoints []string) []*redis.Client {
	clients := make([]*redis.Client, len(endpoints))
	for i, addr := range endpoints {
		clients[i] = redis.NewClient(&redis.Options{
			Addr:          addr,
			Username:      os.Getenv("LOCKLAB_REDIS_USERNAME"),
			Password:      os.Getenv("LOCKLAB_REDIS_PASSWORD"),
			DialTimeout:   DialTimeout,
			ReadTimeout:   ReadTimeout,
			WriteTimeout:  WriteTimeout,
			MaxRetries:    -1,
			DialerRetries: 1,
		})
	}
	return clients
}

// Connect pings every client (the lab's connect op: dial and warm up before
// the story's clock starts). ok unless no endpoint answered.
func Connect(clients []*redis.Client) Response {
	var failed []string
	for i, c := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err != nil {
			failed = append(failed, fmt.Sprintf("node %d (%s): %v", i, c.Options().Addr, err))
			log.Printf("connect: node %d: %v", i, err)
		}
	}
	if len(failed) == len(clients) {
		return No("cannot reach Redis: %s", strings.Join(failed, "; "))
	}
	return Ok(nil)
}

// MaySent tells whether a go-redis error may have come after the command
// reached Redis (a read timeout, a connection lost after the write): the
// outcome is then unknown. It is false for a reply of Redis itself (an error
// reply such as READONLY, or nil) and for errors before anything was written
// (the dial failed or timed out, the pool had no connection, the context was
// done before a connection was handed out: with ContextTimeoutEnabled off,
// go-redis' default, a context only matters before the write).
func MaySent(err error) bool {
	if err == nil {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	if errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return true
}

// VersionOf reads a dependency's version from the binary's build info, i.e.
// the version go.mod pinned when it was built: "github.com/bsm/redislock
// v0.10.0" gives "redislock v0.10.0" with short = "redislock".
func VersionOf(module, short string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == module {
				if dep.Replace != nil {
					dep = dep.Replace
				}
				return short + " " + dep.Version
			}
		}
	}
	return short + " (unknown version)"
}

// Deadline: a request the library has not answered after this long (plus
// its wait_ms) gets unknown, under the lab's 10 s reply timeout; the
// library's call goes on in the background and its result is dropped.
const Deadline = 8 * time.Second

// Serve answers each request until stdin closes, then exits.
func Serve(h Handlers) {
	log.SetFlags(log.Lmicroseconds)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var req Request
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			log.Fatalf("adapter protocol error: %v in %q", err, line)
		}
		resp := handle(h, &req)
		resp["id"] = req.ID
		if req.Op == "hello" {
			resp["monotonic_ns"] = MonotonicNs()
		}
		if reported := takeRenewals(); len(reported) > 0 || req.Op == "renewals" {
			resp["renewals"] = reported
		}
		b, err := json.Marshal(resp)
		if err != nil {
			log.Fatalf("adapter: cannot encode %v: %v", resp, err)
		}
		out.Write(b)
		out.WriteByte('\n')
		if err := out.Flush(); err != nil {
			log.Fatalf("adapter: stdout: %v", err)
		}
	}
	os.Exit(0)
}

func handle(h Handlers, req *Request) Response {
	var fn Handler
	switch req.Op {
	case "hello":
		return copyOf(h.Hello)
	case "renewals":
		return Ok(nil)
	case "connect":
		fn = h.Connect
	case "acquire":
		fn = h.Acquire
	case "release":
		fn = h.Release
	case "extend":
		fn = h.Extend
	case "held":
		fn = h.Held
	}
	if fn == nil {
		return No("unknown op %q", req.Op)
	}
	done := make(chan Response, 1)
	go func() { done <- fn(req) }()
	budget := Deadline + time.Duration(req.WaitMs)*time.Millisecond
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case resp := <-done:
		return resp
	case <-timer.C:
		log.Printf("%s: no answer from the library within %v; its call goes on in the background", req.Op, budget)
		return Unknown("the library did not answer within %d ms; its call goes on in the background", budget.Milliseconds())
	}
}

func copyOf(r Response) Response {
	out := Response{}
	for k, v := range r {
		out[k] = v
	}
	return out
}

// Ms is a duration in whole milliseconds (rounded down).
func Ms(d time.Duration) int64 { return int64(d / time.Millisecond) }

// MonotonicNs is this machine's CLOCK_MONOTONIC in ns, the clock the lab
// dates renewals by (Go's own monotonic readings count from the process's
// start, so they cannot be compared with the lab's).
func MonotonicNs() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

var renewals struct {
	sync.Mutex
	pending []Response
}

// Renewed reports one background renewal of owner's lease on lock, asking
// for ttl: sent and answered are MonotonicNs readings taken before it was
// sent and once its answer came; ok = renewed, unknown = its answer was
// lost (ok false and unknown false: refused). Safe from any goroutine.
func Renewed(lock, owner string, ttl time.Duration, sent, answered int64, ok, unknown bool) {
	renewals.Lock()
	defer renewals.Unlock()
	renewals.pending = append(renewals.pending, Response{
		"lock": lock, "owner": owner, "ttl_ms": Ms(ttl), "sent_ns": sent, "answered_ns": answered,
		"ok": ok, "unknown": unknown && !ok,
	})
}

// takeRenewals: the renewals not yet reported, in the order reported.
func takeRenewals() []Response {
	renewals.Lock()
	defer renewals.Unlock()
	out := renewals.pending
	renewals.pending = nil
	if out == nil {
		out = []Response{}
	}
	return out
}

// Sends dates the commands a go-redis client sends (AddHook), so that an
// adapter can tell when the command that took its lock was sent (the
// acquire's attempt_ns). Safe from any goroutine.
type Sends struct {
	mu     sync.Mutex
	last   map[string]int64 // argument -> MonotonicNs when the latest command carrying it that succeeded was sent
	counts int
}

// DateSends hooks client so that every command it sends is dated.
func DateSends(client *redis.Client) *Sends {
	s := &Sends{last: map[string]int64{}}
	client.AddHook(s)
	return s
}

// DialHook passes dials through.
func (s *Sends) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook dates the command before sending it and, once it succeeded,
// keeps that time for each of its string arguments (bounded: the map is
// cleared every 10000 commands).
func (s *Sends) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		sent := MonotonicNs()
		err := next(ctx, cmd)
		if err == nil {
			s.mu.Lock()
			if s.counts++; s.counts > 10000 {
				s.last, s.counts = map[string]int64{}, 0
			}
			for _, arg := range cmd.Args() {
				if text, ok := arg.(string); ok {
					s.last[text] = sent
				}
			}
			s.mu.Unlock()
		}
		return err
	}
}

// ProcessPipelineHook passes pipelines through undated.
func (s *Sends) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// LastSucceeded is when the latest command carrying value that succeeded was
// sent, if one was sent at or after since (both MonotonicNs readings).
func (s *Sends) LastSucceeded(value string, since int64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sent, ok := s.last[value]
	return sent, ok && sent >= since
}
