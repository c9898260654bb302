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
//!   `validity_ms` = the `Lock.validity_time` it returns.
//! - release: `unlock(&lock)` (returns nothing). extend: `extend(&lock, ttl)`.
//! - `--using`: `LockManager::using(resource, ttl, routine)`, which acquires
//!   (looping until it gets the lock), runs the routine and extends the lock
//!   each time validity - 500 ms has passed; the routine here waits for the
//!   lab's release. `renews`; `held` = the using() task is still running.
//!
//! Timeouts: rslock 0.7.3 opens its connections with redis-rs's
//! `get_multiplexed_async_connection()`, whose defaults (redis 0.32) have no
//! connect and no response timeout, and offers no way to pass any; a
//! command to a partitioned node waits for ever and `join_all` with it. So
//! the adapter bounds each library call with `tokio::time::timeout`, as an
//! application would have to, and answers unknown when it fires.
use locklab_rust_adapters::protocol::{self, hex, ok, refused, str_field, u64_field, unhex, unknown, Response};
use rslock::{Lock, LockError, LockManager};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const VERSION: &str = env!("LOCKED_RSLOCK_VERSION");
/// rslock's DEFAULT_RETRY_DELAY (src/lock.rs): each failed attempt sleeps a
/// random [0, 200) ms before the next.
const RETRY_DELAY: Duration = Duration::from_millis(200);
/// The bound on a call beyond its wait (see the module's doc).
const CALL_TIMEOUT_MS: u64 = 1000;

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

impl Adapter {
    fn hello(&self) -> Response {
        ok(json!({
            "name": if self.using { "rslock-using" } else { "rslock" },
            "version": format!("rslock {VERSION}"),
            "reentrant": false, "fencing": false, "multi_node": true,
            "renews": self.using, "connect": true, "incidents": true,
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
            return self.acquire_using(resource, ttl, limit).await;
        }
        // One LockManager clone per acquisition: the clone shares the
        // connections but has its own retry settings.
        let mut manager = self.manager.clone();
        manager.set_retry(1 + (wait_ms / 100) as u32, RETRY_DELAY);
        match bounded(limit, async move { manager.lock(resource.as_slice(), ttl).await }).await {
            Ok(Ok(lock)) => {
                let owner = hex(&lock.val);
                let validity = lock.validity_time;
                self.held.insert(owner.clone(), lock);
                ok(json!({"owner": owner, "validity_ms": validity}))
            }
            // Quorum missed on every attempt; after each, rslock ran its
            // compare-and-delete on every node.
            Ok(Err(LockError::Unavailable)) => refused("Resource is unavailable (quorum not reached)"),
            // The attempt outlasted ttl - drift: rslock returns at once,
            // without deleting the keys it set (src/lock.rs exec_or_retry).
            Ok(Err(e @ LockError::TtlExceeded)) => unknown(format!("{e}: the keys it set are left to expire")),
            Ok(Err(e)) => unknown(e.to_string()),
            Err(message) => unknown(message),
        }
    }

    /// --using: using() runs in a task of its own with a routine that
    /// announces it started (the lock is held) and then waits for the
    /// lab's release. acquire_no_guard, inside using(), loops until it gets
    /// the lock: past the wait the task is cancelled, maybe mid-attempt.
    async fn acquire_using(&mut self, resource: Vec<u8>, ttl: Duration, limit: Duration) -> Response {
        let (started_tx, started_rx) = oneshot::channel::<()>();
        let (release_tx, release_rx) = oneshot::channel::<()>();
        let manager = self.manager.clone();
        let task = tokio::spawn(async move {
            manager
                .using(&resource, ttl, async move || {
                    let _ = started_tx.send(());
                    let _ = release_rx.await;
                })
                .await
        });
        match tokio::time::timeout(limit, started_rx).await {
            Ok(Ok(())) => {
                self.next_run += 1;
                let owner = format!("using-{}-{}", std::process::id(), self.next_run);
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
