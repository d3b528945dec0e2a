//! TLS mode (`--tls`): HTTPS in front of the plain HTTP venue.
//!
//! At start-up a certificate authority and a server certificate for localhost, 127.0.0.1,
//! ::1 (and the `--host` address) are generated with rcgen; the CA certificate is written to
//! a PEM file that a client passes as `ca_bundle_path`. A rustls front accepts TLS on the
//! public address and relays each connection, byte for byte, to the tiny_http listener on a
//! loopback port (one inner connection per client connection, so connection counts and the
//! `close_after_order` fault keep working: closing the inner connection closes the client's).

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use rustls::ServerConnection;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// TLS mode: the client behind each relay, keyed by the relay's address as the inner
/// listener sees it (the WebSocket connection limits count per client IP).
pub(crate) type PeerMap = Arc<std::sync::Mutex<std::collections::HashMap<SocketAddr, SocketAddr>>>;

/// How long a relay waits in `poll` before looking at the stop flag again.
const POLL_MS: libc::c_int = 200;

pub(crate) struct Certificates {
    pub config: Arc<rustls::ServerConfig>,
    pub ca_pem: String,
}

/// A CA and a server certificate signed by it, and the rustls configuration serving it.
pub(crate) fn generate(host: IpAddr) -> io::Result<Certificates> {
    let fail = |e: rcgen::Error| io::Error::other(format!("TLS certificate: {e}"));
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "perps-sandbox test CA");
    ca_params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
    let ca_key = rcgen::KeyPair::generate().map_err(fail)?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(fail)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);

    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    if !host.is_unspecified() && !host.is_loopback() {
        names.push(host.to_string());
    }
    let mut leaf_params = rcgen::CertificateParams::new(names).map_err(fail)?;
    leaf_params.distinguished_name.push(rcgen::DnType::CommonName, "perps-sandbox");
    let leaf_key = rcgen::KeyPair::generate().map_err(fail)?;
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).map_err(fail)?;

    let chain = vec![leaf.der().clone(), CertificateDer::from(ca_cert.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|e| io::Error::other(format!("TLS configuration: {e}")))?;
    Ok(Certificates { config: Arc::new(config), ca_pem: ca_cert.pem() })
}

/// Writes the CA certificate where a client can read it; the file is named after the
/// process and port so two sandboxes never share one.
pub(crate) fn write_ca(dir: &Path, port: u16, pem: &str) -> io::Result<PathBuf> {
    let path = dir.join(format!("perps-sandbox-{}-{port}-ca.pem", std::process::id()));
    std::fs::write(&path, pem)?;
    Ok(path)
}

/// Accepts TLS connections on `listener` and relays each to `inner` on its own thread,
/// until `stop` is set.
pub(crate) fn serve(
    listener: TcpListener,
    inner: SocketAddr,
    config: Arc<rustls::ServerConfig>,
    stop: Arc<AtomicBool>,
    peers: PeerMap,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name("perps-sandbox-tls".into()).spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            if !readable(&[listener.as_raw_fd()]).first().copied().unwrap_or(false) {
                continue;
            }
            let Ok((tcp, _)) = listener.accept() else {
                continue;
            };
            let (config, stop, peers) = (config.clone(), stop.clone(), peers.clone());
            let _ = std::thread::Builder::new().name("perps-sandbox-tls-conn".into()).spawn(move || {
                // A relay ends with its connection; its errors are the client's business.
                let _ = relay(tcp, inner, config, &stop, &peers);
            });
        }
    })
}

/// Which of `fds` are readable (or closed) within `POLL_MS`.
fn readable(fds: &[libc::c_int]) -> Vec<bool> {
    let mut polled: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    // SAFETY: a valid array of pollfd of the stated length; negative fds are ignored by poll.
    let n = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, POLL_MS) };
    if n <= 0 {
        return vec![false; fds.len()];
    }
    polled.iter().map(|p| p.revents != 0).collect()
}

fn relay(
    tcp: TcpStream,
    inner: SocketAddr,
    config: Arc<rustls::ServerConfig>,
    stop: &AtomicBool,
    peers: &PeerMap,
) -> io::Result<()> {
    let app = TcpStream::connect(inner)?;
    let key = (app.local_addr(), tcp.peer_addr());
    if let (Ok(relay), Ok(client)) = key {
        peers.lock().unwrap_or_else(|e| e.into_inner()).insert(relay, client);
    }
    let relayed = relay_bytes(tcp, app, config, stop);
    if let Ok(relay) = key.0 {
        peers.lock().unwrap_or_else(|e| e.into_inner()).remove(&relay);
    }
    relayed
}

fn relay_bytes(
    mut tcp: TcpStream,
    mut app: TcpStream,
    config: Arc<rustls::ServerConfig>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut tls = ServerConnection::new(config).map_err(io::Error::other)?;
    tcp.set_nodelay(true)?;
    app.set_nodelay(true)?;
    let mut buf = vec![0u8; 16 * 1024];
    let mut client_done = false;
    loop {
        while tls.wants_write() {
            tls.write_tls(&mut tcp)?;
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        // -1 makes poll skip the client socket once it has finished sending.
        let ready = readable(&[if client_done { -1 } else { tcp.as_raw_fd() }, app.as_raw_fd()]);
        if ready[0] {
            if tls.read_tls(&mut tcp)? == 0 {
                let _ = app.shutdown(Shutdown::Write);
                client_done = true;
                continue;
            }
            if let Err(e) = tls.process_new_packets() {
                // Send the alert rustls prepared, then give up on this connection.
                let _ = tls.write_tls(&mut tcp);
                return Err(io::Error::other(e));
            }
            loop {
                match tls.reader().read(&mut buf) {
                    Ok(0) => {
                        let _ = app.shutdown(Shutdown::Write);
                        client_done = true;
                        break;
                    }
                    Ok(n) => app.write_all(&buf[..n])?,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
        }
        if ready[1] {
            let n = app.read(&mut buf).unwrap_or(0);
            if n == 0 {
                // The venue closed (an answer ended, or close_after_order): close the client.
                tls.send_close_notify();
                while tls.wants_write() {
                    tls.write_tls(&mut tcp)?;
                }
                let _ = tcp.shutdown(Shutdown::Both);
                return Ok(());
            }
            tls.writer().write_all(&buf[..n])?;
        }
    }
}
