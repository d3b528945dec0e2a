//! The rustls configuration of the WebSockets: the same as the HTTP transport's (ureq with
//! rustls and ring, TLS 1.2 and 1.3, the WebPKI roots — or, with `ca_bundle_path`, only the
//! CAs of that PEM file). Built by us because ureq does not expose its own.

use crate::error::{Error, Result};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::sync::Arc;

pub fn client_config(ca_bundle_path: Option<&str>) -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_bundle_path {
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| Error::invalid_argument(format!("ca_bundle_path {path:?} cannot be read: {e}")))?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert
                    .map_err(|e| Error::invalid_argument(format!("ca_bundle_path {path:?} is not valid PEM: {e}")))?;
                roots.add(cert).map_err(|e| {
                    Error::invalid_argument(format!("ca_bundle_path {path:?}: unusable certificate: {e}"))
                })?;
            }
            if roots.is_empty() {
                return Err(Error::invalid_argument(format!("ca_bundle_path {path:?} holds no certificate")));
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(crate::Code::Transport, format!("TLS configuration failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
