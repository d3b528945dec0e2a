//! Which site a wallet may be asked to sign in to. The challenge is signed by a key that the
//! same host serves (its certs), so a valid signature proves nothing about the site the
//! message names: whoever answers at `base_url` — a hostile venue, a mistyped URL, a relay —
//! could have the wallet sign an EIP-4361 login for another site (`app.uniswap.org wants you
//! to sign in…`), which that site would accept. So unless the caller pins the domain or the
//! URI (`expected_domain`, `expected_uri`), the message must name the site it came from:
//! - its domain is the sign-in host or a parent domain of it of two labels or more
//!   (`api.standx.com` → `api.standx.com` or `standx.com`; never `com`);
//! - its URI's host is that site too, or the domain or a subdomain of it (the URI names the
//!   resource signed in to, e.g. `https://standx.com`).
//!
//! A loopback `base_url` (the sandbox, a relay the caller runs on this machine) names no site
//! to bind to, and is not checked: there the pins are the only binding.

use crate::challenge::Pins;
use crate::error::excerpt;
use std::net::IpAddr;

/// `Err(reason)` when the challenge's `domain` or `uri` claim names a site other than the one
/// the challenge came from (called once the message was found to say the same).
pub(crate) fn check(domain: &str, uri: &str, pins: &Pins<'_>) -> Result<(), String> {
    let Some(site) = pins.sign_in_host else { return Ok(()) };
    let domain_host = authority_host(domain);
    if pins.domain.is_none() {
        match domain_host {
            Some(host) if is_site_or_parent(host, site) => {}
            _ => {
                return Err(format!(
                    "the challenge's domain \"{}\" is neither the sign-in host \"{site}\" nor a parent domain of it: \
                     a wallet is never asked to sign in to another site (if it is the venue's own domain, pin it with \
                     the client option expected_domain)",
                    excerpt(domain)
                ));
            }
        }
    }
    if pins.uri.is_none() {
        let host = uri_authority(uri).and_then(authority_host);
        let fits = |host: &str| {
            is_site_or_parent(host, site) || domain_host.is_some_and(|domain| is_same_or_subdomain(host, domain))
        };
        if !host.is_some_and(fits) {
            return Err(format!(
                "the challenge's uri \"{}\" names no host of the sign-in site \"{site}\" or of its domain \"{}\" \
                 (if it is the venue's own, pin it with the client option expected_uri)",
                excerpt(uri),
                excerpt(domain)
            ));
        }
    }
    Ok(())
}

/// The host of an authority (`host`, `host:port`, `[v6]:port`), without its port; `None`
/// with user information (`user@host`: the site is then not what it seems at a glance) or
/// an empty host.
fn authority_host(authority: &str) -> Option<&str> {
    if authority.contains('@') {
        return None;
    }
    let host = if authority.starts_with('[') {
        &authority[..=authority.find(']')?]
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            Some(_) => return None,
            None => authority,
        }
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    (!host.is_empty()).then_some(host)
}

/// The authority of `scheme://authority/…`; `None` for a URI without one (`urn:…`).
fn uri_authority(uri: &str) -> Option<&str> {
    let (_, rest) = uri.split_once("://")?;
    Some(rest.split(['/', '?', '#']).next().unwrap_or(rest))
}

/// `host` is `site`, or a parent domain of it of two labels or more. Never for addresses:
/// `0.1` is no parent of `10.0.0.1`.
fn is_site_or_parent(host: &str, site: &str) -> bool {
    host.eq_ignore_ascii_case(site) || (host.split('.').count() >= 2 && is_same_or_subdomain(site, host))
}

/// `host` is `domain` or a subdomain of it.
fn is_same_or_subdomain(host: &str, domain: &str) -> bool {
    host.eq_ignore_ascii_case(domain) || (!is_address(domain) && !is_address(host) && is_proper_suffix(host, domain))
}

/// `name` ends with `.suffix` (ASCII case ignored), every label of `suffix` non-empty.
/// Compared as bytes, so that no slice falls inside a character, whatever a host holds.
fn is_proper_suffix(name: &str, suffix: &str) -> bool {
    let (name, suffix) = (name.as_bytes(), suffix.as_bytes());
    !suffix.split(|&b| b == b'.').any(<[u8]>::is_empty)
        && name.len() > suffix.len() + 1
        && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
        && name[name.len() - suffix.len() - 1] == b'.'
}

fn is_address(host: &str) -> bool {
    host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(domain: &str, uri: &str, site: &str) -> Result<(), String> {
        check(domain, uri, &Pins { sign_in_host: Some(site), ..Pins::default() })
    }

    #[test]
    fn the_venues_own_site_and_its_parent_domain_are_accepted() {
        for (domain, uri, site) in [
            ("standx.com", "https://standx.com", "api.standx.com"),
            ("api.standx.com", "https://api.standx.com/login", "api.standx.com"),
            ("StandX.com", "https://app.standx.com/", "API.standx.com"),
            ("standx.com:443", "https://standx.com:443?x=1", "api.standx.com"),
            ("standx.com", "https://api.standx.com", "api.standx.com"),
            ("venue.co.uk", "https://venue.co.uk#top", "auth.venue.co.uk"),
            ("10.0.0.5:8443", "https://10.0.0.5:8443/", "10.0.0.5"),
            ("[2001:db8::1]", "https://[2001:db8::1]/", "[2001:db8::1]"),
        ] {
            assert_eq!(bound(domain, uri, site), Ok(()), "{domain} {uri} from {site}");
        }
    }

    #[test]
    fn another_site_is_refused_whatever_its_spelling() {
        for (domain, site) in [
            ("app.uniswap.org", "api.standx.com"),
            ("com", "api.standx.com"),
            ("standx.com.evil.example", "api.standx.com"),
            ("evilstandx.com", "api.standx.com"),
            ("x.api.standx.com", "api.standx.com"),
            ("standx.com@evil.example", "api.standx.com"),
            ("evil.example:443@standx.com", "api.standx.com"),
            ("standx.com:https", "api.standx.com"),
            ("", "api.standx.com"),
            ("x\u{e9}m", "vm"),
            ("\u{e9}.standx.com", "api.standx.com"),
            (".standx.com", "api.standx.com"),
            ("0.5", "10.0.0.5"),
            ("0.0.5", "10.0.0.5"),
            ("standx.com", "10.0.0.5"),
        ] {
            let e = bound(domain, &format!("https://{domain}"), site).unwrap_err();
            assert!(e.contains("is neither the sign-in host") && e.contains("expected_domain"), "{domain}: {e}");
        }
    }

    #[test]
    fn a_uri_of_another_site_is_refused() {
        for uri in [
            "https://app.uniswap.org",
            "https://standx.com.evil.example/",
            "https://standx.com@evil.example/",
            "urn:standx.com",
            "https://",
            "standx.com",
            "https://com/",
            "https://x\u{e9}m",
            "https://\u{e9}standx.com",
        ] {
            let e = bound("standx.com", uri, "api.standx.com").unwrap_err();
            assert!(e.contains("names no host of the sign-in site") && e.contains("expected_uri"), "{uri}: {e}");
        }
    }

    #[test]
    fn pins_and_loopback_replace_the_binding() {
        // The caller pinned the domain: another host is the venue's own (a relay before it).
        let pinned = Pins { domain: Some("standx.com"), uri: None, sign_in_host: Some("relay.internal") };
        assert_eq!(check("standx.com", "https://standx.com", &pinned), Ok(()));
        assert_eq!(check("standx.com", "https://perps.standx.com", &pinned), Ok(()));
        assert!(check("standx.com", "https://evil.example", &pinned).unwrap_err().contains("expected_uri"));
        let both = Pins { domain: Some("standx.com"), uri: Some("https://standx.com"), sign_in_host: Some("x.y") };
        assert_eq!(check("standx.com", "https://standx.com", &both), Ok(()));
        // No sign-in host (loopback): nothing to bind to.
        assert_eq!(check("app.uniswap.org", "https://app.uniswap.org", &Pins::default()), Ok(()));
    }
}
