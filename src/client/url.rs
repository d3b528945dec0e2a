//! The venue's base URLs, checked at `perps_client_new`: a URL is used exactly as written or
//! refused with a precise message, never silently changed. Lenient parsers drop a port out
//! of range (and send the bearer token to the default port), read `127.1` or `0x7f.1` as
//! 127.0.0.1, or cut a URL at a space; none of that can happen to a URL this module accepts.
//!
//! Accepted: `https://` (or `http://` to loopback, or anywhere with `allow_insecure_http`),
//! a host (DNS name, dotted-quad IPv4, or bracketed IPv6), an optional port 1–65535 and an
//! optional path; nothing else: no user info, query, fragment, spaces, control or non-ASCII
//! characters. One trailing `/` is dropped (paths are appended to the base URL).

use crate::error::{Error, Result, excerpt};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The parts of an accepted URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BaseUrl {
    /// The URL as written, without a trailing `/`.
    pub text: String,
    pub host: String,
    pub port: Option<u16>,
}

impl BaseUrl {
    /// `host:port`, the port written out (443 for `https`, 80 for `http` when the URL names
    /// none) and the host in one spelling: the venue host the per-IP limit and the stream
    /// connection limits are kept for, so each host is counted once however its URL writes
    /// it. A name in lower case; an IPv6 address in its canonical form (RFC 5952: `[::1]`
    /// for `[0::1]` or `[0:0:0:0:0:0:0:1]`), and an IPv4-mapped one (`[::ffff:127.0.0.1]`)
    /// as the IPv4 address it reaches, since the venue sees one client IP either way.
    pub fn host_and_port(&self) -> String {
        let default_port = if self.text.starts_with("https://") || self.text.starts_with("wss://") { 443 } else { 80 };
        let port = self.port.unwrap_or(default_port);
        let ipv6 =
            self.host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).and_then(|h| h.parse::<Ipv6Addr>().ok());
        match ipv6 {
            Some(address) => match address.to_ipv4_mapped() {
                Some(ipv4) => format!("{ipv4}:{port}"),
                None => format!("[{address}]:{port}"),
            },
            None => format!("{}:{port}", self.host.to_ascii_lowercase()),
        }
    }
}

/// The two schemes a URL may have: the secure one, and the plain one allowed only to loopback
/// (or anywhere with `allow_insecure_http`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Schemes {
    /// `https://` / `http://`: the REST base URLs.
    Http,
    /// `wss://` / `ws://`: the two WebSocket URLs (their auth frames carry the bearer token).
    WebSocket,
}

impl Schemes {
    fn secure(self) -> &'static str {
        match self {
            Schemes::Http => "https",
            Schemes::WebSocket => "wss",
        }
    }
    fn plain(self) -> &'static str {
        match self {
            Schemes::Http => "http",
            Schemes::WebSocket => "ws",
        }
    }
}

/// Check a base URL; `name` is the argument's name for the message.
pub(crate) fn check_url(url: &str, name: &str, allow_insecure_http: bool) -> Result<BaseUrl> {
    check_url_of(url, name, allow_insecure_http, Schemes::Http)
}

/// Check a URL of either kind by the same rules: used exactly as written or refused.
pub(crate) fn check_url_of(url: &str, name: &str, allow_insecure_http: bool, schemes: Schemes) -> Result<BaseUrl> {
    let (secure, plain) = (schemes.secure(), schemes.plain());
    let shown = shown_url(url);
    let refuse = |why: &str| Error::invalid_argument(format!("{name} {shown} {why}"));
    if url.is_empty() {
        return Err(Error::invalid_argument(format!("{name} is empty (expected e.g. https://host)")));
    }
    if let Some(c) = url.chars().find(|c| !c.is_ascii_graphic()) {
        let what = match c {
            ' ' => "a space".to_owned(),
            c if c.is_control() => "a control character".to_owned(),
            c if c.is_whitespace() => "a white-space character".to_owned(),
            _ => "a non-ASCII character (write an internationalised host name in its xn-- form)".to_owned(),
        };
        return Err(refuse(&format!("contains {what}: a URL is used exactly as written")));
    }
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme, rest),
        None => return Err(refuse("is not an absolute URL (expected e.g. https://host)")),
    };
    if url.contains('#') {
        return Err(refuse("must not have a query or fragment: it has a '#'"));
    }
    if url.contains('?') {
        return Err(refuse("must not have a query or fragment: it has a '?' (the library appends the venue's paths)"));
    }
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.contains('@') {
        return Err(Error::invalid_argument(format!(
            "{name} must not contain credentials (user info before '@'): the library sends its own token"
        )));
    }
    let (host, port) = split_host_port(authority).map_err(|why| refuse(&why))?;
    check_path(path).map_err(|why| refuse(&why))?;
    match scheme {
        s if s == secure => {}
        s if s == plain && (allow_insecure_http || is_loopback(&host)) => {}
        s if s == plain => {
            return Err(refuse(&format!(
                "is plain {plain} to a non-loopback host: a bearer token must not cross a network in clear \
                 (use {secure}, or set allow_insecure_http)"
            )));
        }
        s if s.eq_ignore_ascii_case(plain) || s.eq_ignore_ascii_case(secure) => {
            return Err(refuse(&format!("must spell its scheme in lower case ({secure}://)")));
        }
        _ => return Err(refuse(&format!("must start with {secure}:// (or {plain}:// for loopback)"))),
    }
    let text = url.strip_suffix('/').unwrap_or(url).to_owned();
    // The HTTP stack must read the URL as we did: the same host and port.
    let uri: ureq::http::Uri = text.parse().map_err(|_| refuse("is not a valid URL"))?;
    let parsed_host = uri.host().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
    if !parsed_host.eq_ignore_ascii_case(host.trim_start_matches('[').trim_end_matches(']')) || uri.port_u16() != port {
        return Err(refuse("is not read the same way by the HTTP stack"));
    }
    Ok(BaseUrl { text, host, port })
}

/// `host[:port]`, with every way of writing them that a lenient parser would reinterpret
/// refused.
fn split_host_port(authority: &str) -> std::result::Result<(String, Option<u16>), String> {
    if authority.is_empty() {
        return Err("has no host (expected e.g. https://host)".into());
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']').ok_or("has an IPv6 address without its closing ']'")?;
        if inside.parse::<Ipv6Addr>().is_err() {
            return Err(format!("has \"[{}]\", which is not an IPv6 address", excerpt(inside)));
        }
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or("has text after its IPv6 address")?),
        };
        (format!("[{inside}]"), port)
    } else {
        if authority.matches(':').count() > 1 {
            return Err("has an IPv6 address without brackets (write http://[::1]:8080)".into());
        }
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        check_host(host)?;
        (host.to_ascii_lowercase(), port)
    };
    let port = match port {
        None => None,
        Some("") => return Err("has ':' but no port after it".into()),
        Some(p) if !p.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(format!("has port \"{}\", which is not a number", excerpt(p)));
        }
        Some(p) if p.len() > 1 && p.starts_with('0') => {
            return Err(format!("has port \"{}\": write it without leading zeros", excerpt(p)));
        }
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n >= 1 => Some(n),
            _ => return Err(format!("has port {}, out of range (1 to 65535)", excerpt(p))),
        },
    };
    Ok((host, port))
}

/// A DNS name (letters, digits, '-'; labels of 1–63, not starting or ending with '-'), or
/// an IPv4 address in exactly four decimal parts: a host whose last label is a number is
/// an address, and `127.1`, `0177.0.0.1` or `2130706433` are refused rather than guessed.
fn check_host(host: &str) -> std::result::Result<(), String> {
    if host.is_empty() {
        return Err("has no host (expected e.g. https://host)".into());
    }
    let shown = excerpt(host);
    let last = host.rsplit('.').next().unwrap_or("");
    if !last.is_empty() && (last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x")) {
        return match host.parse::<Ipv4Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!("has host \"{shown}\", which is not an IPv4 address in four decimal parts")),
        };
    }
    if host.len() > 253 {
        return Err("has a host name longer than 253 characters".into());
    }
    for label in host.split('.') {
        let ok = (1..=63).contains(&label.len())
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !ok {
            return Err(format!(
                "has host \"{shown}\", which is not a host name (letters, digits and '-' in dot-separated labels)"
            ));
        }
    }
    Ok(())
}

/// A path of plain segments: no empty or dot segments (a server would collapse them) and
/// percent signs only in valid escapes.
fn check_path(path: &str) -> std::result::Result<(), String> {
    let path = path.strip_suffix('/').unwrap_or(path);
    if path.is_empty() {
        return Ok(());
    }
    for segment in path[1..].split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!(
                "has an empty, '.' or '..' segment in its path \"{}\", which a server would rewrite",
                excerpt(path)
            ));
        }
    }
    let bytes = path.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        let allowed = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%".contains(b);
        if !allowed {
            return Err(format!("has '{}' in its path (percent-encode it)", *b as char));
        }
        if *b == b'%' && !(bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))) {
            return Err("has a '%' that is not followed by two hex digits in its path".into());
        }
    }
    Ok(())
}

/// A URL quoted in a message: cut short (an error never carries a huge input back), and not
/// shown at all when it may hold credentials (`user:password@`).
fn shown_url(url: &str) -> String {
    if url.contains('@') { "(not shown: it contains '@')".to_owned() } else { format!("\"{}\"", excerpt(url)) }
}

pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    // `to_canonical`: an IPv4-mapped address (`::ffff:127.0.0.1`) reaches the IPv4 host, so
    // it is loopback exactly when that host is.
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.to_canonical().is_loopback())
}

#[cfg(test)]
mod tests {
    use super::check_url;

    fn refused(url: &str) -> String {
        check_url(url, "u", false).expect_err(url).message().to_owned()
    }

    #[test]
    fn urls_are_used_exactly_as_written() {
        assert_eq!(check_url("https://api.example.com/", "u", false).unwrap().text, "https://api.example.com");
        let u = check_url("http://127.0.0.1:8080/auth", "u", false).unwrap();
        assert_eq!((u.text.as_str(), u.host.as_str(), u.port), ("http://127.0.0.1:8080/auth", "127.0.0.1", Some(8080)));
        assert_eq!(check_url("http://[::1]:8080", "u", false).unwrap().port, Some(8080));
        assert!(check_url("http://localhost:1", "u", false).is_ok());
        assert!(check_url("http://[::ffff:127.0.0.1]:1", "u", false).is_ok(), "IPv4-mapped loopback");
        assert!(check_url("http://[::ffff:7f00:2]:1", "u", false).is_ok(), "IPv4-mapped 127.0.0.2");
        assert!(check_url("http://[::ffff:10.0.0.1]:1", "u", false).is_err(), "IPv4-mapped, not loopback");
        assert!(check_url("https://perps.example:65535/v1%2Fx/y_z~", "u", false).is_ok());
        assert!(check_url("http://10.0.0.1", "u", true).is_ok());
    }

    #[test]
    fn the_venue_host_names_its_port() {
        let host = |url: &str| check_url(url, "u", true).unwrap().host_and_port();
        assert_eq!(host("https://Perps.Example/api"), "perps.example:443");
        assert_eq!(host("http://perps.example"), "perps.example:80");
        assert_eq!(host("http://127.0.0.1:8080/perps"), "127.0.0.1:8080");
        assert_eq!(host("http://[::1]:8080"), "[::1]:8080");
    }

    #[test]
    fn an_ipv6_host_is_keyed_in_one_spelling() {
        let host = |url: &str| check_url(url, "u", true).unwrap().host_and_port();
        for url in ["http://[0::1]:8080", "http://[0:0:0:0:0:0:0:1]:8080", "http://[0000::0001]:8080/x"] {
            assert_eq!(host(url), "[::1]:8080", "{url}");
        }
        assert_eq!(host("https://[2001:DB8:0:0:0:0:0:1]"), "[2001:db8::1]:443");
        assert_eq!(host("https://[2001:db8::0:1]:443"), "[2001:db8::1]:443");
        // An IPv4-mapped address reaches the IPv4 host: one host with it.
        assert_eq!(host("http://[::ffff:127.0.0.1]:8080"), "127.0.0.1:8080");
        assert_eq!(host("http://[::FFFF:7f00:1]:8080"), "127.0.0.1:8080");
        // The URL itself is kept as written.
        assert_eq!(check_url("http://[0::1]:8080", "u", false).unwrap().text, "http://[0::1]:8080");
    }

    #[test]
    fn everything_else_is_refused_precisely() {
        for (url, fragment) in [
            ("", "is empty"),
            ("http://10.0.0.1", "plain http"),
            ("ftp://x", "must start with https://"),
            ("HTTPS://x", "lower case"),
            ("https://user:pw@x", "must not contain credentials"),
            ("https://@x", "must not contain credentials"),
            ("https://x/?a=1", "it has a '?'"),
            ("https://x/#top", "it has a '#'"),
            ("/relative", "not an absolute URL"),
            ("https://", "has no host"),
            ("https://:443", "has no host"),
            ("https:///path", "has no host"),
            ("http://127.0.0.1:99999", "out of range"),
            ("http://127.0.0.1:0", "out of range"),
            ("http://127.0.0.1:", "no port"),
            ("http://127.0.0.1:08080", "leading zeros"),
            ("http://127.0.0.1:80a", "not a number"),
            ("http://::1:8080", "without brackets"),
            ("http://[::1", "closing ']'"),
            ("http://[::g]:1", "not an IPv6 address"),
            ("http://[::1]x", "after its IPv6"),
            ("http://127.1:8080", "four decimal parts"),
            ("http://0177.0.0.1", "four decimal parts"),
            ("http://2130706433", "four decimal parts"),
            ("http://0x7f.1", "four decimal parts"),
            ("https://exa mple.com", "a space"),
            (" https://example.com", "a space"),
            ("https://example.com\n", "a control character"),
            ("https://exämple.com", "non-ASCII"),
            ("https://-x.example", "not a host name"),
            ("https://x..example", "not a host name"),
            ("https://x_y.example", "not a host name"),
            ("https://x.example//v1", "segment"),
            ("https://x.example/a/../b", "segment"),
            ("https://x.example/a%zz", "'%'"),
            ("https://x.example/a\"b", "percent-encode"),
        ] {
            let message = refused(url);
            assert!(message.contains(fragment), "{url:?}: {message}");
        }
        assert!(!refused("https://u:hunter2@x").contains("hunter2"));
    }
}
