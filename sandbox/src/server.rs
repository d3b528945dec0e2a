//! The HTTP side: worker threads taking requests from tiny_http, the URL layout, the request
//! log, and writing the answer.
//!
//! Layout (issue 17: real clients join paths to a plain `http://host:port`, so everything
//! is served at the root; the prefixed forms of earlier versions keep working):
//! `/v1/offchain/{prepare-signin,certs,login}` and `/auth/v1/offchain/…`;
//! `/api/*` and `/perps/api/*`; `/ws-stream/v1`, `/ws-api/v1` and under `/perps` (WebSocket
//! handshakes, served by `ws`); `/_sandbox/*` (admin).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::api::{self, Ctx};
use super::http::{Incoming, Reply, error};
use super::request_log::{Entry, Notes};
use super::state::Shared;
use super::{admin, auth, socket, ws};

/// One worker: take requests until the sandbox stops. The timeout only bounds how long a
/// stop takes to be noticed; a request wakes the worker at once.
pub(crate) fn work(server: &tiny_http::Server, shared: &Arc<Shared>, stop: &AtomicBool) {
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

fn serve(shared: &Arc<Shared>, mut rq: tiny_http::Request) {
    let admin = rq.url().starts_with("/_sandbox/");
    if !admin {
        shared.note_request(rq.remote_addr().copied());
    }
    if let Some(endpoint) = ws::upgrade::endpoint_of(rq.url()) {
        return ws::upgrade::handle(shared, rq, endpoint);
    }
    let (reply, verdict_note, notes, entry) = match Incoming::read(&mut rq) {
        Ok(inc) => {
            let peer = rq.remote_addr().map(|a| a.ip());
            let mut ctx = Ctx { shared, inc: &inc, peer, notes: Notes::default(), note: None };
            let reply = route(&mut ctx);
            let entry = Entry {
                at_ms: shared.clock.now_ms(),
                method: inc.method.clone(),
                path: inc.path.clone(),
                query: inc.raw_query.clone(),
                headers: inc.headers.clone(),
                body: inc.body.clone(),
            };
            (reply, ctx.note, ctx.notes, Some(entry))
        }
        Err(reply) => (reply, None, Notes::default(), None),
    };
    if !admin {
        let entry = entry.unwrap_or_else(|| Entry {
            at_ms: shared.clock.now_ms(),
            method: rq.method().as_str().to_owned(),
            path: rq.url().split('?').next().unwrap_or_default().to_owned(),
            query: rq.url().split_once('?').map(|(_, q)| q.to_owned()).unwrap_or_default(),
            headers: Vec::new(),
            body: Vec::new(),
        });
        let line = shared.log().record(&entry, reply.status(), &reply.verdict(verdict_note.as_deref()), notes);
        if shared.config.log {
            eprintln!("{line}");
        }
    }
    let (status, body, content_type) = match reply {
        Reply::Json(status, value) => (status, value.to_string(), "application/json"),
        Reply::Text(status, text) => (status, text, "application/json"),
        Reply::Plain(status, text) => (status, text, "text/plain; charset=utf-8"),
        Reply::CloseSilently => {
            let peer = rq.remote_addr().copied();
            // Take the writer first so that dropping the request cannot write a 500.
            let writer = rq.into_writer();
            if socket::shutdown_connections(shared.listener, peer) == 0 {
                eprintln!("perps-sandbox: close_after_order could not find the client socket");
            }
            drop(writer);
            return;
        }
    };
    let content_type = tiny_http::Header::from_bytes("Content-Type", content_type).expect("a valid header");
    let response = tiny_http::Response::from_string(body).with_status_code(status).with_header(content_type);
    // A client that hung up is its own problem; nothing to do here.
    let _ = rq.respond(response);
}

fn route(ctx: &mut Ctx<'_>) -> Reply {
    let (shared, inc) = (ctx.shared, ctx.inc);
    let path = inc.path.as_str();
    if let Some(name) = path.strip_prefix("/_sandbox/") {
        return admin::handle(shared, inc, name);
    }
    // The venue's per-IP limit comes before anything else, public endpoints and sign-in
    // included (WebSocket handshakes have their own limits, `ws::limits`).
    if !shared.allow_ip(ctx.peer) {
        return error(429, "rate limit: too many requests from this IP address (50 a second)");
    }
    if let Some(name) = path.strip_prefix("/api/").or_else(|| path.strip_prefix("/perps/api/")) {
        return api::handle(ctx, name);
    }
    let Some(name) = path.strip_prefix("/v1/offchain/").or_else(|| path.strip_prefix("/auth/v1/offchain/")) else {
        return error(404, format!("no endpoint {path}"));
    };
    let method = match name {
        "prepare-signin" | "login" => "POST",
        "certs" => "GET",
        _ => return error(404, format!("no endpoint {path}")),
    };
    if inc.method != method {
        return error(405, "method not allowed");
    }
    let faults = shared.take_faults(name);
    if faults.slow_ms > 0 {
        std::thread::sleep(Duration::from_millis(faults.slow_ms));
    }
    if faults.close_after_order {
        return Reply::CloseSilently;
    }
    if let Some(status) = faults.status {
        return error(status, format!("sandbox fault: HTTP {status}"));
    }
    match name {
        "prepare-signin" => auth::prepare_signin(shared, inc, &faults),
        "certs" => auth::certs(shared, &faults),
        _ => auth::login(shared, inc, &faults),
    }
}
