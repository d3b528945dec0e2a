//! The test certificate of `tests/tls/` (a leaf for 127.0.0.1 signed by `ca.pem`): the server
//! side of the TLS tests, and the path a client trusts it by (`ca_bundle_path`).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;

/// A file of `tests/tls/`.
pub fn fixture(name: &str) -> String {
    format!("{}/tests/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A rustls server configuration serving the test certificate.
pub fn server_config() -> Arc<rustls::ServerConfig> {
    let certs = CertificateDer::pem_file_iter(fixture("server.pem")).unwrap().collect::<Result<Vec<_>, _>>().unwrap();
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    Arc::new(config)
}

/// A venue on 127.0.0.1 that runs `serve` on a thread of its own for each TCP connection it
/// accepts (with the connection's index, from 0); its port. The TLS is `serve`'s to do (or
/// not: a hostile venue), with `server_config()`.
#[allow(dead_code)] // not every test that includes this file serves connections
pub fn serve_connections(serve: impl Fn(usize, std::net::TcpStream) + Send + Sync + 'static) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for (i, tcp) in listener.incoming().enumerate() {
            let Ok(tcp) = tcp else { return };
            let serve = serve.clone();
            std::thread::spawn(move || serve(i, tcp));
        }
    });
    port
}
