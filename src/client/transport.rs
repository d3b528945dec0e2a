//! The HTTP transport: one ureq `Agent` (keep-alive pool, TCP_NODELAY, no redirects,
//! rustls) and the one place where transport failures become library errors.
//!
//! `may_have_reached_venue` is decided here, from a fact rather than a guess: whether any
//! request bytes were written (see `sent_tracker`). Before that (DNS, refused connection,
//! TLS handshake, connect timeout) the venue cannot have seen the request; after it, the
//! venue may have read the whole request and acted on it.

use crate::client::options::ClientOptions;
use crate::client::sent_tracker::{self, SentTracking};
use crate::error::{Code, Error, Result};
use ureq::Agent;
use ureq::http::{Method, Request};
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{Connector, DefaultConnector};

/// A venue answer: status and body (UTF-8, within the size cap).
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

pub struct Transport {
    agent: Agent,
    max_response_bytes: u64,
}

impl Transport {
    pub fn new(options: &ClientOptions) -> Result<Transport> {
        let mut tls = TlsConfig::builder();
        if let Some(path) = &options.ca_bundle_path {
            tls = tls.root_certs(RootCerts::new_with_certs(&load_pem_bundle(path)?));
        }
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .no_delay(true)
            .user_agent(options.user_agent.as_str())
            .timeout_connect(Some(options.connect_timeout))
            .timeout_per_read(Some(options.read_timeout))
            .timeout_global(Some(options.total_timeout))
            .tls_config(tls.build())
            .build();
        let connector = DefaultConnector::default().chain(SentTracking);
        let agent = Agent::with_parts(config, connector, DefaultResolver::default());
        Ok(Transport { agent, max_response_bytes: options.max_response_bytes })
    }

    /// Send one request, exactly once. `body` is sent byte for byte when present.
    pub fn send(&self, method: Method, url: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Result<Reply> {
        let mut builder = Request::builder().method(method).uri(url);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        sent_tracker::reset();
        let response = match body {
            Some(bytes) => builder.body(bytes).map_err(bad_request).and_then(|r| self.agent.run(r).map_err(map_error)),
            None => builder.body(()).map_err(bad_request).and_then(|r| self.agent.run(r).map_err(map_error)),
        };
        let mut response = response?;
        let status = response.status().as_u16();
        let bytes =
            response.body_mut().with_config().limit(self.max_response_bytes).read_to_vec().map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(limit) => Error::bad_response(format!(
                    "the venue's answer (HTTP {status}) is larger than max_response_bytes ({limit})"
                ))
                .with_status(status)
                .reached_venue(true),
                other => map_error(other).with_status(status),
            })?;
        let body = String::from_utf8(bytes).map_err(|_| {
            Error::bad_response(format!("the venue's answer (HTTP {status}) is not UTF-8"))
                .with_status(status)
                .reached_venue(true)
        })?;
        Ok(Reply { status, body })
    }
}

fn bad_request(e: ureq::http::Error) -> Error {
    Error::invalid_argument(format!("the request cannot be built (bad URL or header value): {e}"))
}

/// Turn a ureq failure into our error. Whether the venue may have seen the request is
/// whether request bytes were written on this thread during this call.
fn map_error(e: ureq::Error) -> Error {
    let sent = sent_tracker::request_bytes_sent();
    let (code, what) = match &e {
        ureq::Error::Timeout(stage) => (Code::Timeout, format!("timed out ({stage:?})")),
        ureq::Error::HostNotFound => (Code::Transport, "the venue's host name could not be resolved".to_owned()),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::Pem(_) | ureq::Error::TlsRequired => {
            (Code::Transport, format!("TLS failure: {e}"))
        }
        ureq::Error::BadUri(uri) => return Error::invalid_argument(format!("bad URL: {uri}")),
        other => (Code::Transport, format!("HTTP exchange failed: {other}")),
    };
    if sent {
        Error::new(code, format!("{what} after the request was sent; the venue may have received it"))
            .reached_venue(true)
    } else {
        Error::new(code, format!("could not reach the venue ({what}): request not sent"))
    }
}

fn load_pem_bundle(path: &str) -> Result<Vec<Certificate<'static>>> {
    let pem = std::fs::read(path)
        .map_err(|e| Error::invalid_argument(format!("ca_bundle_path {path:?} cannot be read: {e}")))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => certs.push(cert),
            Ok(_) => {}
            Err(e) => return Err(Error::invalid_argument(format!("ca_bundle_path {path:?} is not valid PEM: {e}"))),
        }
    }
    if certs.is_empty() {
        return Err(Error::invalid_argument(format!("ca_bundle_path {path:?} holds no certificate")));
    }
    Ok(certs)
}
