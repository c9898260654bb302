//! A locklab adapter for the crate rslock (hexcowboy/rslock, Redlock on
//! redis-rs), feature `tokio-comp`: `LockManager` over every `--redis`
//! endpoint. See ../../README.md.
//!
//!     locklab runs:  rust/target/release/rslock [--using] --redis host:port,...
//!
//! - acquire: `LockManager::lock(resource, ttl)`, the library's own retry
//!   loop (`retry_count` attempts, each followed by a random sleep in
//!   [0, retry_delay)), with retry_delay its default 200 ms and retry_count
//!   1 + wait_ms / 100 (the mean sleep is 100 ms): wait_ms 0 = one attempt.
//!   `validity_ms` = the `Lock.validity_time` it returns; `attempt_ns` = when
//!   the attempt that won began, from that validity (`attempt_began`).
//! - release: `unlock(&lock)` (returns nothing). extend: `extend(&lock, ttl)`.
//! - `--using`: `LockManager::using(resource, ttl, routine)`, which acquires
//!   (looping until it gets the lock), runs the routine and extends the lock
//!   each time validity - 500 ms has passed; the routine here waits for the
//!   lab's release. `renews`; `held` = the using() task is still running;
//!   each extension using() makes is reported as a renewal (`Watch`).
//!
//! Timeouts: rslock 0.7.3 opens its connections with redis-rs's
//! `get_multiplexed_async_connection()`, whose defaults (redis 0.32) have no
//! connect and no response timeout, and offers no way to pass any; a
//! command to a partitioned node waits for ever and `join_all` with it. So
//! the adapter bounds each library call with `tokio::time::timeout`, as an
//! application would have to, and answers unknown when it fires.
use locklab_rust_adapters::protocol::{
    self, hex, monotonic_ns, ok, refused, renewed, str_field, u64_field, unhex, unknown, Response,
};
use rslock::{Lock, LockError, LockManager};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const VERSION: &str = env!("LOCKED_RSLOCK_VERSION");
/// rslock's DEFAULT_RETRY_DELAY (src/lock.rs): each failed attempt sleeps a
/// random [0, 200) ms before the next.
const RETRY_DELAY: Duration = Duration::from_millis(200);
/// The bound on a call beyond its wait (see the module's doc).
const CALL_TIMEOUT_MS: u64 = 1000;
/// rslock's CLOCK_DRIFT_FACTOR (src/lock.rs): drift = ttl * 0.01 + 2 ms.
const CLOCK_DRIFT_FACTOR: f32 = 0.01;

struct UsingRun {
    task: JoinHandle<Result<(), LockError>>,
    release: Option<oneshot::Sender<()>>,
}

struct Adapter {
    using: bool,
    manager: LockManager,
    quorum: usize,
    endpoints: Vec<protocol::Endpoint>,
    /// Locks acquired here, by owner (hex of the value rslock stored).
    held: HashMap<String, Lock>,
    /// --using: the using() tasks, by owner (an id of this adapter's).
    runs: HashMap<String, UsingRun>,
    next_run: u64,
}

fn connection_info(e: &protocol::Endpoint) -> redis::ConnectionInfo {
    let (username, password) = protocol::credentials();
    redis::ConnectionInfo {
        addr: redis::ConnectionAddr::Tcp(e.host.clone(), e.port),
        redis: redis::RedisConnectionInfo { db: 0, username, password, ..Default::default() },
    }
}

/// Runs a library call in its own task, bounded by `limit`: Err(message)
/// when the bound fired (the call is dropped, as `tokio::time::timeout`
/// drops it) or the call panicked (the panic hook records the incident).
async fn bounded<T: Send + 'static>(
    limit: Duration,
    call: impl Future<Output = T> + Send + 'static,
) -> Result<T, String> {
    let task = tokio::spawn(call);
    let abort = task.abort_handle();
    match tokio::time::timeout(limit, task).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) if e.is_panic() => Err("the library call panicked (see incidents)".into()),
        Ok(Err(e)) => Err(format!("the library call ended: {e}")),
        Err(_) => {
            abort.abort();
            Err(format!("no answer within {} ms (rslock sets no timeout; cancelled)", limit.as_millis()))
        }
    }
}

/// A future, and when (monotonic_ns) its first poll and the poll that
/// finished it began.
struct Dated<F: Future> {
    inner: Pin<Box<F>>,
    first_poll_ns: Option<i64>,
}

impl<F: Future> Future for Dated<F> {
    type Output = (F::Output, Polls);
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let began = monotonic_ns();
        let first = *self.first_poll_ns.get_or_insert(began);
        self.inner.as_mut().poll(cx).map(|v| (v, Polls { first_ns: first, last_ns: began }))
    }
}

struct Polls {
    first_ns: i64,
    last_ns: i64,
}

/// When the attempt of `lock()` that won began (monotonic_ns), from what it
/// returned: rslock's exec_or_retry (src/lock.rs) reads
/// `start_time = Instant::now()` at the top of each attempt, before it sends
/// that attempt's SET to every node (join_all), and once their answers are
/// in computes `validity_time = ttl - drift - elapsed_ms`, `elapsed_ms` the
/// whole ms of `start_time.elapsed()`; on a quorum it returns that Lock in
/// the same poll (its `lock_inner()` mutex is never held across an await,
/// and `unconstrained` keeps tokio's budget from making it yield). So the
/// winning attempt began more than `elapsed_ms + 1` ms before the poll that
/// returned it began: `finished_poll_ns` minus that is never later than the
/// first SET of the winning attempt, whichever attempt won and however the
/// nodes answered. Instant is CLOCK_MONOTONIC on Linux, as is monotonic_ns.
/// The first poll of `lock()` began before any attempt did, so the later of
/// the two is still no later than the winning SET (and lies within the
/// acquire, as the lab requires, when the attempt took under a ms).
fn attempt_began(ttl_ms: u64, validity_ms: usize, polls: &Polls) -> Option<i64> {
    let ttl = ttl_ms as usize;
    let drift = (ttl as f32 * CLOCK_DRIFT_FACTOR) as usize + 2;
    let elapsed_ms = ttl.checked_sub(drift)?.checked_sub(validity_ms)?;
    Some((polls.last_ns - (elapsed_ms as i64 + 1) * 1_000_000).max(polls.first_ns))
}

/// What the adapter sees of one using() run, to report each extension it
/// makes as a renewal. using() (src/lock.rs) loops: `timeout(validity -
/// 500 ms, &mut routine)`, and each time that fires `self.extend(&lock,
/// ttl).await?` (3 attempts) before the next timeout. tokio's Timeout polls
/// the routine first on each of its polls, so while using() waits the
/// routine is polled on every poll of the task, and while it extends it is
/// not polled at all. Hence, with the task's future and the routine both
/// watched (`Watched`, `WatchedRoutine`):
/// - an extension begins in the poll where the routine was last polled
///   (its timer fired): `sent_ns` = when that routine poll began, before
///   extend sent anything;
/// - it ended well when the routine is polled again (the next timeout):
///   `answered_ns` = then; ok;
/// - it ended badly when using() returns an error (the only error after the
///   routine started is extend's `?`), or the run is dropped mid-extension
///   (the adapter's bound): ok false, unknown (rslock tells nothing of the
///   nodes: some may have extended; after a missed quorum it deleted its
///   keys, after TtlExceeded it did not).
/// Every extension is seen: each lies between two routine polls, or between
/// one and using()'s end.
struct Watch {
    lock: String,
    owner: String,
    ttl_ms: u64,
    /// The routine was polled (it has started, the lock is held).
    started: bool,
    /// The routine has finished (the lab's release): using() unlocks next.
    finished: bool,
    /// When the routine's last poll began.
    last_poll_ns: i64,
    /// The routine was polled within the task's current poll.
    polled: bool,
    /// An extension in flight, sent no earlier than this.
    extending_since: Option<i64>,
}

impl Watch {
    fn report(&mut self, sent_ns: i64, ok: bool) {
        renewed(&self.lock, &self.owner, self.ttl_ms, sent_ns, monotonic_ns(), ok, !ok);
    }
}

/// The using() future of a run, watched (see `Watch`).
struct Watched<F: Future> {
    inner: Pin<Box<F>>,
    watch: Arc<Mutex<Watch>>,
}

impl<T, F: Future<Output = Result<T, LockError>>> Future for Watched<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.watch.lock().unwrap().polled = false;
        let result = self.inner.as_mut().poll(cx);
        let mut w = self.watch.lock().unwrap();
        if w.started && !w.finished {
            match &result {
                // Not polling the routine: using() is extending.
                Poll::Pending if !w.polled => {
                    let since = w.last_poll_ns;
                    w.extending_since.get_or_insert(since);
                }
                Poll::Pending => {}
                // An extension failed: extend's error, returned by using().
                Poll::Ready(Err(_)) => {
                    let sent = w.extending_since.take().unwrap_or(w.last_poll_ns);
                    w.report(sent, false);
                }
                Poll::Ready(Ok(_)) => {}
            }
        }
        result
    }
}

impl<F: Future> Drop for Watched<F> {
    // Dropped by the adapter's bound in the middle of an extension: its
    // answer is lost.
    fn drop(&mut self) {
        if let Ok(mut w) = self.watch.lock() {
            if let Some(sent) = w.extending_since.take() {
                w.report(sent, false);
            }
        }
    }
}

/// The routine of a run, watched (see `Watch`).
struct WatchedRoutine<F: Future> {
    inner: Pin<Box<F>>,
    watch: Arc<Mutex<Watch>>,
}

impl<F: Future> Future for WatchedRoutine<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let now = monotonic_ns();
        {
            let mut w = self.watch.lock().unwrap();
            // Polled again after the task went on without it, or twice in
            // one poll of the task: an extension came back ok in between.
            let sent = w.extending_since.take().or(if w.polled { Some(w.last_poll_ns) } else { None });
            if let Some(sent) = sent {
                renewed(&w.lock, &w.owner, w.ttl_ms, sent, now, true, false);
            }
            w.started = true;
            w.polled = true;
            w.last_poll_ns = now;
        }
        let result = self.inner.as_mut().poll(cx);
        if result.is_ready() {
            self.watch.lock().unwrap().finished = true;
        }
        result
    }
}

impl Adapter {
    fn hello(&self) -> Response {
        ok(json!({
            "name": if self.using { "rslock-using" } else { "rslock" },
            "version": format!("rslock {VERSION}"),
            "reentrant": false, "fencing": false, "multi_node": true,
            "renews": self.using, "renewals": self.using, "connect": true, "incidents": true,
        }))
    }

    /// Opens rslock's connections (it connects lazily, one multiplexed
    /// connection per node) and loads its two scripts, with a compare-and-
    /// delete and a compare-and-extend of a value nobody holds; then checks
    /// that a quorum of nodes answers PING (rslock's unlock says nothing).
    async fn connect(&self) -> Response {
        let mut probe = self.manager.clone();
        probe.set_retry(1, RETRY_DELAY);
        let dummy = Lock {
            resource: b"locklab-connect".to_vec(),
            val: b"locklab-connect".to_vec(),
            validity_time: 0,
            lock_manager: probe.clone(),
        };
        let _ = bounded(Duration::from_millis(2000), async move {
            probe.unlock(&dummy).await;
            let _ = probe.extend(&dummy, Duration::from_millis(1000)).await;
        })
        .await;
        let mut reachable = 0;
        let mut errors = Vec::new();
        for e in &self.endpoints {
            let config = redis::AsyncConnectionConfig::new()
                .set_connection_timeout(Duration::from_millis(500))
                .set_response_timeout(Duration::from_millis(1000));
            let result = async {
                let client = redis::Client::open(connection_info(e))?;
                let mut con = client.get_multiplexed_async_connection_with_config(&config).await?;
                redis::cmd("PING").query_async::<String>(&mut con).await
            }
            .await;
            match result {
                Ok(_) => reachable += 1,
                Err(err) => errors.push(format!("{}:{}: {}", e.host, e.port, err)),
            }
        }
        if reachable >= self.quorum {
            ok(json!({}))
        } else {
            refused(format!("only {reachable} of {} nodes reachable: {}", self.endpoints.len(), errors.join("; ")))
        }
    }

    async fn acquire(&mut self, request: &Value) -> Response {
        let resource = str_field(request, "lock").as_bytes().to_vec();
        let ttl = Duration::from_millis(u64_field(request, "ttl_ms"));
        let wait_ms = u64_field(request, "wait_ms");
        let limit = Duration::from_millis(wait_ms + CALL_TIMEOUT_MS);
        if self.using {
            let lock = str_field(request, "lock").to_string();
            return self.acquire_using(lock, resource, ttl, limit).await;
        }
        // One LockManager clone per acquisition: the clone shares the
        // connections but has its own retry settings.
        let mut manager = self.manager.clone();
        manager.set_retry(1 + (wait_ms / 100) as u32, RETRY_DELAY);
        let call = async move {
            let lock = tokio::task::coop::unconstrained(manager.lock(resource.as_slice(), ttl));
            Dated { inner: Box::pin(lock), first_poll_ns: None }.await
        };
        match bounded(limit, call).await {
            Ok((Ok(lock), polls)) => {
                let owner = hex(&lock.val);
                let validity = lock.validity_time;
                let attempt_ns = attempt_began(u64_field(request, "ttl_ms"), validity, &polls);
                self.held.insert(owner.clone(), lock);
                ok(json!({"owner": owner, "validity_ms": validity, "attempt_ns": attempt_ns}))
            }
            // Quorum missed on every attempt; after each, rslock ran its
            // compare-and-delete on every node.
            Ok((Err(LockError::Unavailable), _)) => refused("Resource is unavailable (quorum not reached)"),
            // The attempt outlasted ttl - drift: rslock returns at once,
            // without deleting the keys it set (src/lock.rs exec_or_retry).
            Ok((Err(e @ LockError::TtlExceeded), _)) => unknown(format!("{e}: the keys it set are left to expire")),
            Ok((Err(e), _)) => unknown(e.to_string()),
            Err(message) => unknown(message),
        }
    }

    /// --using: using() runs in a task of its own with a routine that
    /// announces it started (the lock is held) and then waits for the
    /// lab's release. acquire_no_guard, inside using(), loops until it gets
    /// the lock: past the wait the task is cancelled, maybe mid-attempt.
    /// The run and its routine are watched, to report each extension.
    async fn acquire_using(&mut self, lock: String, resource: Vec<u8>, ttl: Duration, limit: Duration) -> Response {
        let (started_tx, started_rx) = oneshot::channel::<()>();
        let (release_tx, release_rx) = oneshot::channel::<()>();
        self.next_run += 1;
        let owner = format!("using-{}-{}", std::process::id(), self.next_run);
        let watch = Arc::new(Mutex::new(Watch {
            lock,
            owner: owner.clone(),
            ttl_ms: ttl.as_millis() as u64,
            started: false,
            finished: false,
            last_poll_ns: 0,
            polled: false,
            extending_since: None,
        }));
        let manager = self.manager.clone();
        let routine_watch = watch.clone();
        let run = async move {
            manager
                .using(&resource, ttl, async move || {
                    let routine = async move {
                        let _ = started_tx.send(());
                        let _ = release_rx.await;
                    };
                    WatchedRoutine { inner: Box::pin(routine), watch: routine_watch }.await
                })
                .await
        };
        let task = tokio::spawn(Watched { inner: Box::pin(run), watch });
        match tokio::time::timeout(limit, started_rx).await {
            Ok(Ok(())) => {
                self.runs.insert(owner.clone(), UsingRun { task, release: Some(release_tx) });
                ok(json!({"owner": owner, "validity_ms": null}))
            }
            Ok(Err(_)) => match task.await {
                Ok(Ok(())) => unknown("using() ended before its routine started"),
                Ok(Err(e)) => unknown(format!("using(): {e}")),
                Err(_) => unknown("using() panicked (see incidents)"),
            },
            Err(_) => {
                task.abort();
                unknown(format!(
                    "using() had not got the lock within {} ms (it loops until it does; cancelled, maybe mid-attempt)",
                    limit.as_millis()
                ))
            }
        }
    }

    /// The Lock acquired here as `owner`, or one rebuilt from it (the value
    /// is all rslock needs to unlock or extend).
    fn lock_of(&self, request: &Value) -> Option<Lock> {
        let owner = str_field(request, "owner");
        if let Some(l) = self.held.get(owner) {
            return Some(Lock {
                resource: l.resource.clone(),
                val: l.val.clone(),
                validity_time: l.validity_time,
                lock_manager: self.manager.clone(),
            });
        }
        Some(Lock {
            resource: str_field(request, "lock").as_bytes().to_vec(),
            val: unhex(owner)?,
            validity_time: 0,
            lock_manager: self.manager.clone(),
        })
    }

    async fn release(&mut self, request: &Value) -> Response {
        let limit = Duration::from_millis(request.get("cancel_after_ms").and_then(Value::as_u64).unwrap_or(CALL_TIMEOUT_MS));
        if self.using {
            return self.release_using(request, limit).await;
        }
        let Some(lock) = self.lock_of(request) else {
            return refused("not held: not an owner this library could have stored");
        };
        let manager = self.manager.clone();
        match bounded(limit, async move { manager.unlock(&lock).await }).await {
            // unlock() returns nothing: its user goes on as released.
            Ok(()) => {
                self.held.remove(str_field(request, "owner"));
                ok(json!({}))
            }
            Err(message) => unknown(message),
        }
    }

    async fn release_using(&mut self, request: &Value, limit: Duration) -> Response {
        let Some(mut run) = self.runs.remove(str_field(request, "owner")) else {
            return refused("not held: no using() of this adapter holds this owner");
        };
        if let Some(tx) = run.release.take() {
            let _ = tx.send(());
        }
        let abort = run.task.abort_handle();
        match tokio::time::timeout(limit, run.task).await {
            Ok(Ok(Ok(()))) => ok(json!({})),
            // The lock was lost before: an extension failed, using() returned
            // the error (after rslock deleted its keys) and dropped the routine.
            Ok(Ok(Err(e))) => refused(format!("not held: using() had ended with: {e}")),
            Ok(Err(_)) => unknown("using() panicked (see incidents)"),
            Err(_) => {
                abort.abort();
                unknown(format!("no answer within {} ms (rslock sets no timeout; cancelled)", limit.as_millis()))
            }
        }
    }

    async fn extend(&mut self, request: &Value) -> Response {
        if self.using {
            return refused("using() extends by itself; no extend in this mode");
        }
        let Some(lock) = self.lock_of(request) else {
            return refused("not held: not an owner this library could have stored");
        };
        let ttl = Duration::from_millis(u64_field(request, "ttl_ms"));
        let manager = self.manager.clone();
        match bounded(Duration::from_millis(CALL_TIMEOUT_MS), async move { manager.extend(&lock, ttl).await }).await {
            Ok(Ok(lock)) => {
                let validity = lock.validity_time;
                self.held.insert(hex(&lock.val), lock);
                ok(json!({"validity_ms": validity}))
            }
            // Quorum missed: rslock ran its compare-and-delete on every node
            // after each of its 3 attempts: the lock is gone.
            Ok(Err(LockError::Unavailable)) => {
                self.held.remove(str_field(request, "owner"));
                refused("not held: extend missed the quorum (rslock then deleted its keys)")
            }
            Ok(Err(e @ LockError::TtlExceeded)) => unknown(format!("{e}: the extension outlasted the TTL")),
            Ok(Err(e)) => unknown(e.to_string()),
            Err(message) => unknown(message),
        }
    }

    fn held(&self, request: &Value) -> Response {
        if !self.using {
            return refused("held: only with --using");
        }
        match self.runs.get(str_field(request, "owner")) {
            Some(run) => ok(json!({"held": !run.task.is_finished()})),
            None => ok(json!({"held": false})),
        }
    }

    async fn handle(&mut self, request: Value) -> Response {
        match str_field(&request, "op") {
            "hello" => self.hello(),
            "connect" => self.connect().await,
            "acquire" => self.acquire(&request).await,
            "release" => self.release(&request).await,
            "extend" => self.extend(&request).await,
            "held" => self.held(&request),
            op => refused(format!("unknown op {op:?}")),
        }
    }
}

fn main() {
    protocol::record_panics();
    let (endpoints, flags) = protocol::arguments();
    let using = flags.iter().any(|f| f == "--using");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    runtime.block_on(async move {
        // LockManager::new connects nothing yet (RestorableConnection opens
        // each node's connection on its first command).
        let manager = LockManager::new(endpoints.iter().map(connection_info).collect());
        let quorum = endpoints.len() / 2 + 1;
        let adapter = std::rc::Rc::new(tokio::sync::Mutex::new(Adapter {
            using,
            manager,
            quorum,
            endpoints,
            held: HashMap::new(),
            runs: HashMap::new(),
            next_run: 0,
        }));
        protocol::serve(move |request| {
            let adapter = adapter.clone();
            async move { adapter.lock().await.handle(request).await }
        })
        .await;
    });
}
