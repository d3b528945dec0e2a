//! A sandbox venue: the venue's side of the sign-in and body-signature protocol
//! (`seed-auth-and-signing.md` and `venue-facts.md`), served on 127.0.0.1 so the client can
//! be tested against a real HTTP server. Its own crate: it shares no code with the library
//! (the `perps` crate), so the two cannot share a mistake.
//!
//! Layout: `{root}/auth/v1/offchain/{prepare-signin,certs,login}` (the `base_url`),
//! `{root}/perps/api/*` (the `perps_url`), `{root}/_sandbox/{faults,rotate-key,stats}`.

mod admin;
mod auth;
mod body_verify;
mod chain;
mod clock;
mod config;
mod es256;
mod faults;
mod http;
mod order_check;
mod random;
mod rate_limit;
mod replay;
mod socket;
mod state;
mod trading;
mod wallet_verify;

pub use config::SandboxConfig;
pub use faults::{Faults, Stats};

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use http::{Incoming, Reply, error};
use state::Shared;

/// A running sandbox venue. Dropping it stops the workers, the listener and every client
/// connection, and joins the worker threads.
pub struct Sandbox {
    shared: Arc<Shared>,
    server: Option<Arc<tiny_http::Server>>,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
}

// Tests share one sandbox between threads (or keep it in a static): keep it Send + Sync.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Sandbox>();
};

impl Sandbox {
    /// Binds 127.0.0.1:`config.port` and starts `config.worker_threads` workers.
    pub fn start(config: SandboxConfig) -> io::Result<Sandbox> {
        config.validate()?;
        let listener = std::net::TcpListener::bind(("127.0.0.1", config.port))?;
        socket::set_nodelay_inherited(&listener);
        let server = tiny_http::Server::from_listener(listener, None).map_err(io::Error::other)?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| io::Error::other("the sandbox listener has no IP address"))?;
        let server = Arc::new(server);
        let shared = Arc::new(Shared::new(config, port));
        let stop = Arc::new(AtomicBool::new(false));
        let mut sandbox = Sandbox { shared, server: Some(server.clone()), stop, workers: Vec::new() };
        for i in 0..sandbox.shared.config.worker_threads.max(1) {
            let (server, shared, stop) = (server.clone(), sandbox.shared.clone(), sandbox.stop.clone());
            let worker = std::thread::Builder::new()
                .name(format!("perps-sandbox-{i}"))
                .spawn(move || work(&server, &shared, &stop))?;
            sandbox.workers.push(worker);
        }
        Ok(sandbox)
    }

    /// `http://127.0.0.1:PORT/auth`: prepare-signin, certs and login live under it.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/auth", self.port())
    }

    /// `http://127.0.0.1:PORT/perps`: the trading endpoints live under it.
    pub fn perps_url(&self) -> String {
        format!("http://127.0.0.1:{}/perps", self.port())
    }

    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// Replaces the whole fault set; it stays until replaced again.
    pub fn set_faults(&self, faults: Faults) {
        self.shared.state().faults = faults;
    }

    /// Signs with a new ES256 key (new kid) from now on; certs serve only the new key.
    /// Challenges signed before still verify at login.
    pub fn rotate_key(&self) {
        self.shared.keys().rotate();
    }

    pub fn stats(&self) -> Stats {
        self.shared.state().stats.clone()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
        // Dropping the last Arc closes the listener (tiny_http wakes its accept thread).
        self.server.take();
        // tiny_http keeps a kept-alive connection's thread reading until the client hangs up;
        // shutting the sockets down ends those threads and tells clients the venue is gone.
        socket::shutdown_connections(self.shared.port, None);
    }
}

/// One worker: take requests until the sandbox stops. The timeout only bounds how long a
/// stop takes to be noticed; a request wakes the worker at once.
fn work(server: &tiny_http::Server, shared: &Shared, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match server.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(rq)) => {
                // A panic in a handler must not kill the worker; tiny_http answers 500 for
                // the request dropped during unwinding.
                let _ = catch_unwind(AssertUnwindSafe(|| serve(shared, rq)));
            }
            Ok(None) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn serve(shared: &Shared, mut rq: tiny_http::Request) {
    let admin = rq.url().starts_with("/_sandbox/");
    if !admin {
        shared.note_request(rq.remote_addr().copied());
    }
    let reply = match Incoming::read(&mut rq) {
        Ok(inc) => route(shared, &inc),
        Err(reply) => reply,
    };
    let (status, body) = match reply {
        Reply::Json(status, value) => (status, value.to_string()),
        Reply::Text(status, text) => (status, text),
        Reply::CloseSilently => {
            let peer = rq.remote_addr().copied();
            // Take the writer first so that dropping the request cannot write a 500.
            let writer = rq.into_writer();
            if socket::shutdown_connections(shared.port, peer) == 0 {
                eprintln!("perps-sandbox: close_after_order could not find the client socket");
            }
            drop(writer);
            return;
        }
    };
    let content_type = tiny_http::Header::from_bytes("Content-Type", "application/json").expect("a valid header");
    let response = tiny_http::Response::from_string(body).with_status_code(status).with_header(content_type);
    // A client that hung up is its own problem; nothing to do here.
    let _ = rq.respond(response);
}

fn route(shared: &Shared, inc: &Incoming) -> Reply {
    let path = inc.path.as_str();
    if let Some(name) = path.strip_prefix("/perps/api/") {
        return match (inc.method.as_str(), name) {
            ("GET", "kline/time") => trading::server_time(shared),
            (_, "kline/time") => error(405, "method not allowed"),
            _ => trading::handle(shared, inc, name),
        };
    }
    if let Some(name) = path.strip_prefix("/_sandbox/") {
        return admin::handle(shared, inc, name);
    }
    match (inc.method.as_str(), path) {
        ("POST", "/auth/v1/offchain/prepare-signin") => auth::prepare_signin(shared, inc),
        ("GET", "/auth/v1/offchain/certs") => auth::certs(shared),
        ("POST", "/auth/v1/offchain/login") => auth::login(shared, inc),
        (_, "/auth/v1/offchain/prepare-signin" | "/auth/v1/offchain/certs" | "/auth/v1/offchain/login") => {
            error(405, "method not allowed")
        }
        _ => error(404, format!("no endpoint {path}")),
    }
}
