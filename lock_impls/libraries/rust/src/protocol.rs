//! The locklab adapter protocol (harness/adapter/PROTOCOL.md) for the Rust
//! adapters: the `--redis` argument, the credentials of the environment, the
//! JSON-lines loop (one request per line on stdin, one response per line on
//! stdout with the request's id, flushed), the incidents (panics) the
//! adapter reports, and the renewals it saw its library make. Each adapter
//! only maps hello / connect / acquire / release / extend / held to its
//! library:
//!
//! ```ignore
//! let endpoints = protocol::endpoints();           // from --redis
//! protocol::serve(|request| async { ... })         // on a tokio runtime
//! ```
//!
//! Renewals: an adapter that sees every background renewal of its library
//! says hello with "renewals": true and reports each with `renewed`; `serve`
//! dates hello with `monotonic_ns` and attaches the renewals not yet
//! reported to the next response (PROTOCOL.md, "Renewals").

use serde_json::{json, Map, Value};
use std::future::Future;
use std::io::{BufRead, Write};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// A response without its id: `{"ok":...}` and the rest.
pub type Response = Map<String, Value>;

/// One Redis endpoint of `--redis host:port[,host:port...]`, in order.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

/// The endpoints of `--redis` (the lab's fault proxies), and the adapter's
/// other arguments (flags such as `--using`). Exits with a one-line error on
/// stderr when `--redis` is missing or malformed.
pub fn arguments() -> (Vec<Endpoint>, Vec<String>) {
    let mut endpoints = None;
    let mut flags = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = if arg == "--redis" {
            args.next()
        } else if let Some(v) = arg.strip_prefix("--redis=") {
            Some(v.to_string())
        } else {
            flags.push(arg);
            continue;
        };
        let value = value.unwrap_or_else(|| fail("--redis needs host:port[,host:port...]"));
        let parsed: Vec<Endpoint> = value
            .split(',')
            .map(|hp| {
                let (host, port) = hp.rsplit_once(':').unwrap_or_else(|| fail(&format!("bad endpoint {hp:?}")));
                let port = port.parse().unwrap_or_else(|_| fail(&format!("bad port in {hp:?}")));
                Endpoint { host: host.to_string(), port }
            })
            .collect();
        endpoints = Some(parsed);
    }
    (endpoints.unwrap_or_else(|| fail("usage: ADAPTER --redis host:port[,host:port...]")), flags)
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2)
}

/// What to AUTH with on a target that needs it (LOCKLAB_REDIS_USERNAME,
/// LOCKLAB_REDIS_PASSWORD); None when absent or empty.
pub fn credentials() -> (Option<String>, Option<String>) {
    let get = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    (get("LOCKLAB_REDIS_USERNAME"), get("LOCKLAB_REDIS_PASSWORD"))
}

/// `{"ok":true}` plus fields.
pub fn ok(fields: Value) -> Response {
    let mut r = Response::new();
    r.insert("ok".into(), Value::Bool(true));
    if let Value::Object(m) = fields {
        r.extend(m);
    }
    r
}

/// `{"ok":false,"error":...}`: definitely not done.
pub fn refused(error: impl Into<String>) -> Response {
    let mut r = Response::new();
    r.insert("ok".into(), Value::Bool(false));
    r.insert("error".into(), Value::String(error.into()));
    r
}

/// `{"ok":false,"unknown":true,"error":...}`: may or may not have happened.
pub fn unknown(error: impl Into<String>) -> Response {
    let mut r = refused(error);
    r.insert("unknown".into(), Value::Bool(true));
    r
}

// ---- incidents -------------------------------------------------------------

struct Incidents {
    since_hello: Option<Instant>,
    pending: Vec<Value>,
}

fn incidents() -> &'static Mutex<Incidents> {
    static INCIDENTS: OnceLock<Mutex<Incidents>> = OnceLock::new();
    INCIDENTS.get_or_init(|| Mutex::new(Incidents { since_hello: None, pending: Vec::new() }))
}

/// Records every panic, on any thread or tokio task, as an incident
/// ("uncaught-exception": Rust's nearest kin), then lets Rust's default hook
/// print it to stderr as it would in an application. A panic inside a tokio
/// task does not end the process (tokio catches it; the task's JoinHandle
/// holds a JoinError), so an application on tokio's defaults that does not
/// await the task never sees it but for that stderr line.
pub fn record_panics() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(non-string panic payload)".into());
        let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        record("uncaught-exception", &format!("panic on thread '{thread}': {text}{at}"));
        default_hook(info);
    }));
}

/// Records one incident (also logged to stderr).
pub fn record(kind: &str, message: &str) {
    let message = message.replace('\n', " ");
    eprintln!("incident: {kind}: {message}");
    if let Ok(mut i) = incidents().lock() {
        let at_ms = i.since_hello.map(|t| t.elapsed().as_millis() as u64).unwrap_or(0);
        i.pending.push(json!({"kind": kind, "message": message, "at_ms": at_ms}));
    }
}

fn take_incidents() -> Vec<Value> {
    incidents().lock().map(|mut i| std::mem::take(&mut i.pending)).unwrap_or_default()
}

// ---- the clock and the renewals -------------------------------------------

/// This machine's CLOCK_MONOTONIC in ns, the clock the lab dates renewals
/// and `attempt_ns` by. std's Instant reads the same clock on Linux but
/// does not show its value; glibc's clock_gettime (which std links anyway)
/// does, with time_t and the ns field both C longs.
pub fn monotonic_ns() -> i64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: std::os::raw::c_long,
        tv_nsec: std::os::raw::c_long,
    }
    extern "C" {
        fn clock_gettime(clock: std::os::raw::c_int, ts: *mut Timespec) -> std::os::raw::c_int;
    }
    const CLOCK_MONOTONIC: std::os::raw::c_int = 1; // Linux
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid, writable struct timespec.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

fn renewals() -> &'static Mutex<Vec<Value>> {
    static RENEWALS: OnceLock<Mutex<Vec<Value>>> = OnceLock::new();
    RENEWALS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Reports one background renewal of `owner`'s lease on `lock` (the lab's
/// names) asking for `ttl_ms`: `sent_ns` and `answered_ns` are
/// `monotonic_ns` readings taken before it was sent and once its answer
/// came; ok = renewed, unknown = its answer was lost (neither: refused).
/// From any task or thread; call it in the order they were answered.
pub fn renewed(lock: &str, owner: &str, ttl_ms: u64, sent_ns: i64, answered_ns: i64, ok: bool, unknown: bool) {
    if let Ok(mut pending) = renewals().lock() {
        pending.push(json!({
            "lock": lock, "owner": owner, "ttl_ms": ttl_ms, "sent_ns": sent_ns,
            "answered_ns": answered_ns, "ok": ok, "unknown": unknown && !ok,
        }));
    }
}

fn take_renewals() -> Vec<Value> {
    renewals().lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default()
}

// ---- the loop ----------------------------------------------------------------

fn write_line(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

/// Answers each request with `handle(request).await` until stdin closes,
/// then exits at once. stdin is read on its own thread, so that the
/// library's tasks run on the runtime while the adapter waits for the next
/// request. `hello` is answered by `handle` too, and dated here with
/// `monotonic_ns`; `incidents` and `renewals` are answered here. Every
/// response carries the incidents and the renewals not yet reported.
pub async fn serve<F, Fut>(mut handle: F)
where
    F: FnMut(Value) -> Fut,
    Fut: Future<Output = Response>,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        })
        .expect("stdin thread");
    while let Some(line) = rx.recv().await {
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("not JSON: {e}: {line}");
                continue;
            }
        };
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let op = request.get("op").and_then(Value::as_str).unwrap_or("").to_string();
        let mut response = if op == "incidents" || op == "renewals" {
            ok(json!({}))
        } else {
            handle(request).await
        };
        if op == "hello" {
            if let Ok(mut i) = incidents().lock() {
                i.since_hello.get_or_insert_with(Instant::now);
            }
            response.insert("monotonic_ns".into(), json!(monotonic_ns()));
        }
        let left = take_incidents();
        if op == "incidents" || !left.is_empty() {
            response.insert("incidents".into(), Value::Array(left));
        }
        let renewed = take_renewals();
        if op == "renewals" || !renewed.is_empty() {
            response.insert("renewals".into(), Value::Array(renewed));
        }
        response.insert("id".into(), id);
        write_line(&Value::Object(response));
    }
    std::process::exit(0)
}

/// The `lock` field of a request, and the integer fields.
pub fn str_field<'a>(request: &'a Value, name: &str) -> &'a str {
    request.get(name).and_then(Value::as_str).unwrap_or("")
}

pub fn u64_field(request: &Value, name: &str) -> u64 {
    request.get(name).and_then(Value::as_u64).unwrap_or(0)
}

/// Lowercase hex of bytes, and back (None when not hex).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}
