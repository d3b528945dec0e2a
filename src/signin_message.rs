//! The text a wallet signs at sign-in, parsed strictly: EIP-4361 (Sign-In with Ethereum) for
//! bsc, and its Solana twin (Sign-In With Solana, "… wants you to sign in with your Solana
//! account:") for solana.
//!
//! The venue sends the text (`message`) beside the claims it signed (`domain`, `uri`,
//! `nonce`, …); the wallet signs only the text. So before any wallet signs, the library
//! parses the text and checks that it says what the claims say (`challenge::check_message`):
//! what a wallet signs is then exactly what was checked. Anything that is not a well-formed
//! message — an extra line, a CR, a field out of order, a second address — is refused, so
//! a venue cannot show the wallet one thing and the checks another.
//!
//! Layout (EIP-4361, its ABNF; `[ ]` optional):
//! ```text
//! [scheme://]domain wants you to sign in with your Ethereum account:
//! address
//!
//! [statement
//! ]
//! URI: uri
//! Version: 1
//! Chain ID: chain-id
//! Nonce: nonce
//! Issued At: issued-at
//! [Expiration Time: …]
//! [Not Before: …]
//! [Request ID: …]
//! [Resources:
//! - uri …]
//! ```
//! The Solana form is the same, with the Solana wording, a base58 address, a chain id that
//! may be a name (`mainnet`), and — as its wallet standard writes it — a single blank line
//! before the fields when there is no statement (both layouts are accepted).

/// Whose wording the first line uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Account {
    Ethereum,
    Solana,
}

impl Account {
    pub fn noun(self) -> &'static str {
        match self {
            Account::Ethereum => "Ethereum",
            Account::Solana => "Solana",
        }
    }

    /// "an Ethereum" / "a Solana".
    pub fn with_article(self) -> &'static str {
        match self {
            Account::Ethereum => "an Ethereum",
            Account::Solana => "a Solana",
        }
    }
}

/// A parsed sign-in message; every field borrows the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigninMessage<'a> {
    pub scheme: Option<&'a str>,
    pub domain: &'a str,
    pub account: Account,
    pub address: &'a str,
    pub statement: Option<&'a str>,
    pub uri: Option<&'a str>,
    pub version: Option<&'a str>,
    pub chain_id: Option<&'a str>,
    pub nonce: Option<&'a str>,
    pub issued_at: Option<&'a str>,
    pub expiration_time: Option<&'a str>,
    pub not_before: Option<&'a str>,
    pub request_id: Option<&'a str>,
    pub resources: Vec<&'a str>,
}

type Parsed<T> = std::result::Result<T, String>;

/// Characters a wallet's display may render as a line break (U+2028, U+2029), or that
/// reorder (bidirectional controls: U+202E shows what follows backwards) or hide text
/// (zero-width and other format characters, tag characters): none belongs in a sign-in message, whose
/// lines a person may read before approving it.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

const FIELDS: [&str; 8] =
    ["URI: ", "Version: ", "Chain ID: ", "Nonce: ", "Issued At: ", "Expiration Time: ", "Not Before: ", "Request ID: "];

/// Parse a sign-in message; the error says what is wrong, for a `PERPS_VERIFICATION_FAILED`.
pub fn parse(text: &str) -> Parsed<SigninMessage<'_>> {
    if let Some(c) = text.chars().find(|&c| c != '\n' && c.is_control()) {
        return Err(format!("it contains a control character ({})", c.escape_default()));
    }
    if let Some(c) = text.chars().find(|&c| is_invisible_format(c)) {
        return Err(format!(
            "it contains an invisible formatting character ({}): a wallet could show other lines or another \
             order of text than the ones checked",
            c.escape_unicode()
        ));
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let (scheme, domain, account) = first_line(lines[0])?;
    let address = *lines.get(1).ok_or("it ends after its first line")?;
    check_address(account, address)?;
    if lines.get(2) != Some(&"") {
        return Err("the address is not followed by a blank line".into());
    }
    // Where the fields start, and the statement if there is one.
    let (statement, fields_at) = match (lines.get(3), lines.get(4)) {
        (Some(&""), _) => (None, 4),
        (Some(line), _) if account == Account::Solana && line.starts_with("URI: ") => (None, 3),
        (Some(statement), Some(&"")) => (Some(*statement), 5),
        (Some(_), _) => return Err("the statement is not followed by a blank line".into()),
        (None, _) => return Err("it ends before its fields".into()),
    };
    if let Some(statement) = statement {
        check_statement(account, statement)?;
    }
    let mut message = SigninMessage {
        scheme,
        domain,
        account,
        address,
        statement,
        uri: None,
        version: None,
        chain_id: None,
        nonce: None,
        issued_at: None,
        expiration_time: None,
        not_before: None,
        request_id: None,
        resources: Vec::new(),
    };
    let mut rest = &lines[fields_at..];
    // Each field at most once, in the order of FIELDS.
    let mut next_field = 0;
    while let Some((&line, after)) = rest.split_first() {
        if line == "Resources:" {
            message.resources = resources(after)?;
            rest = &[];
            break;
        }
        let Some(index) = FIELDS.iter().position(|f| line.starts_with(f)) else {
            return Err(format!("unexpected line \"{}\"", crate::error::excerpt(line)));
        };
        if index < next_field {
            return Err(format!("its \"{}\" line is out of order or repeated", FIELDS[index].trim_end_matches(": ")));
        }
        next_field = index + 1;
        let value = &line[FIELDS[index].len()..];
        let slot = match index {
            0 => &mut message.uri,
            1 => &mut message.version,
            2 => &mut message.chain_id,
            3 => &mut message.nonce,
            4 => &mut message.issued_at,
            5 => &mut message.expiration_time,
            6 => &mut message.not_before,
            _ => &mut message.request_id,
        };
        *slot = Some(value);
        rest = after;
    }
    debug_assert!(rest.is_empty());
    check_fields(&message)?;
    Ok(message)
}

fn first_line(line: &str) -> Parsed<(Option<&str>, &str, Account)> {
    let (origin, account) = [Account::Ethereum, Account::Solana]
        .into_iter()
        .find_map(|a| {
            line.strip_suffix(&format!(" wants you to sign in with your {} account:", a.noun())).map(|o| (o, a))
        })
        .ok_or("its first line is not \"… wants you to sign in with your Ethereum (or Solana) account:\"")?;
    let (scheme, domain) = match origin.split_once("://") {
        Some((scheme, domain)) => {
            let valid = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
            if !valid {
                return Err(format!("its scheme \"{}\" is not a URI scheme", crate::error::excerpt(scheme)));
            }
            (Some(scheme), domain)
        }
        None => (None, origin),
    };
    // An RFC 3986 authority: [userinfo "@"] host [":" port].
    let authority_char = |b: u8| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:@[]".contains(&b);
    if domain.is_empty() || !domain.bytes().all(authority_char) {
        return Err(format!("its domain \"{}\" is not a URI authority", crate::error::excerpt(domain)));
    }
    Ok((scheme, domain, account))
}

fn check_address(account: Account, address: &str) -> Parsed<()> {
    let ok = match account {
        Account::Ethereum => {
            address.len() == 42 && address.starts_with("0x") && address[2..].bytes().all(|b| b.is_ascii_hexdigit())
        }
        Account::Solana => address.len() <= 44 && bs58::decode(address).into_vec().is_ok_and(|b| b.len() == 32),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "its address line \"{}\" is not {} address",
            crate::error::excerpt(address),
            account.with_article()
        ))
    }
}

/// EIP-4361: reserved, unreserved characters and spaces (ASCII, no line break). The Solana
/// standard only forbids a line break.
fn check_statement(account: Account, statement: &str) -> Parsed<()> {
    let ok = match account {
        Account::Ethereum => {
            statement.bytes().all(|b| b.is_ascii_alphanumeric() || b" -._~:/?#[]@!$&'()*+,;=".contains(&b))
        }
        Account::Solana => true, // control characters are refused for the whole message
    };
    if ok { Ok(()) } else { Err("its statement has a character EIP-4361 does not allow".into()) }
}

fn resources<'a>(lines: &[&'a str]) -> Parsed<Vec<&'a str>> {
    lines
        .iter()
        .map(|line| {
            let uri = line.strip_prefix("- ").ok_or_else(|| {
                format!("a line after \"Resources:\" is not \"- \" and a URI: \"{}\"", crate::error::excerpt(line))
            })?;
            check_uri(uri, "resource")?;
            Ok(uri)
        })
        .collect()
}

fn check_fields(m: &SigninMessage<'_>) -> Parsed<()> {
    if m.account == Account::Ethereum {
        for (value, name) in [(m.uri, "URI"), (m.version, "Version"), (m.chain_id, "Chain ID"), (m.nonce, "Nonce")] {
            if value.is_none() {
                return Err(format!("it has no \"{name}\" line"));
            }
        }
        if m.issued_at.is_none() {
            return Err("it has no \"Issued At\" line".into());
        }
    }
    if let Some(uri) = m.uri {
        check_uri(uri, "URI")?;
    }
    if let Some(version) = m.version
        && version != "1"
    {
        return Err(format!("its version \"{}\" is not 1", crate::error::excerpt(version)));
    }
    if let Some(chain_id) = m.chain_id {
        let ok = match m.account {
            Account::Ethereum => !chain_id.is_empty() && chain_id.bytes().all(|b| b.is_ascii_digit()),
            Account::Solana => {
                (1..=64).contains(&chain_id.len())
                    && chain_id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-:_".contains(&b))
            }
        };
        if !ok {
            return Err(format!("its chain ID \"{}\" is not a chain id", crate::error::excerpt(chain_id)));
        }
    }
    if let Some(nonce) = m.nonce
        && (nonce.len() < 8 || !nonce.bytes().all(|b| b.is_ascii_alphanumeric()))
    {
        return Err(format!("its nonce \"{}\" is not 8 or more letters and digits", crate::error::excerpt(nonce)));
    }
    for (value, name) in
        [(m.issued_at, "Issued At"), (m.expiration_time, "Expiration Time"), (m.not_before, "Not Before")]
    {
        if let Some(value) = value
            && !is_rfc3339(value)
        {
            return Err(format!("its \"{name}\" \"{}\" is not an RFC 3339 date-time", crate::error::excerpt(value)));
        }
    }
    if let Some(id) = m.request_id {
        let pchar = |b: u8| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:@".contains(&b);
        if !id.bytes().all(pchar) {
            return Err(format!("its request ID \"{}\" has a character a URI path cannot", crate::error::excerpt(id)));
        }
    }
    Ok(())
}

/// An RFC 3986 URI, as far as a sign-in message needs: a scheme, ':', then visible ASCII
/// without the characters a URI never holds unescaped.
fn check_uri(uri: &str, name: &str) -> Parsed<()> {
    let scheme_ok = uri.split_once(':').is_some_and(|(scheme, _)| {
        scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    let chars_ok = uri.bytes().all(|b| b.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&b));
    if scheme_ok && chars_ok {
        Ok(())
    } else {
        Err(format!("its {name} \"{}\" is not a URI", crate::error::excerpt(uri)))
    }
}

/// RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, each part in range.
pub fn is_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) =
        (digits(0..4), digits(5..7), digits(8..10), digits(11..13), digits(14..16), digits(17..19))
    else {
        return false;
    };
    let separators = b.get(4) == Some(&b'-')
        && b.get(7) == Some(&b'-')
        && matches!(b.get(10), Some(b'T' | b't'))
        && b.get(13) == Some(&b':')
        && b.get(16) == Some(&b':');
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => 0,
    };
    if !separators || day == 0 || day > days || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut rest = &b[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|d| d.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') <= 23
                && (m1 - b'0') * 10 + (m2 - b'0') <= 59
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The EIP-4361 examples (implicit scheme; explicit port; explicit scheme).
    const EIP_EXAMPLE: &str = "example.com wants you to sign in with your Ethereum account:\n\
        0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2\n\n\
        I accept the ExampleOrg Terms of Service: https://example.com/tos\n\n\
        URI: https://example.com/login\nVersion: 1\nChain ID: 1\nNonce: 32891756\n\
        Issued At: 2021-09-30T16:25:24Z\nResources:\n\
        - ipfs://bafybeiemxf5abjwjbikoz4mc3a3dla6ual3jsgpdr4cjr3oz3evfyavhwq/\n\
        - https://example.com/my-web2-claim.json";

    #[test]
    fn the_eip_4361_examples_parse() {
        let m = parse(EIP_EXAMPLE).unwrap();
        assert_eq!((m.scheme, m.domain, m.account), (None, "example.com", Account::Ethereum));
        assert_eq!(m.address, "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2");
        assert_eq!(m.statement, Some("I accept the ExampleOrg Terms of Service: https://example.com/tos"));
        assert_eq!(
            (m.uri, m.version, m.chain_id, m.nonce),
            (Some("https://example.com/login"), Some("1"), Some("1"), Some("32891756"))
        );
        assert_eq!(m.issued_at, Some("2021-09-30T16:25:24Z"));
        assert_eq!(m.resources.len(), 2);
        let port = EIP_EXAMPLE.replacen("example.com wants", "example.com:3388 wants", 1);
        assert_eq!(parse(&port).unwrap().domain, "example.com:3388");
        let scheme = EIP_EXAMPLE.replacen("example.com wants", "https://example.com wants", 1);
        let m = parse(&scheme).unwrap();
        assert_eq!((m.scheme, m.domain), (Some("https"), "example.com"));
    }

    #[test]
    fn optional_lines_and_both_solana_layouts() {
        let minimal = "a.example wants you to sign in with your Ethereum account:\n\
            0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2\n\n\n\
            URI: https://a.example\nVersion: 1\nChain ID: 56\nNonce: abcdEFGH1\n\
            Issued At: 2021-09-30T16:25:24.5+02:00\nExpiration Time: 2021-09-30T16:28:24Z\n\
            Not Before: 2021-09-30T16:25:24Z\nRequest ID: 8bK4Gzm";
        let m = parse(minimal).unwrap();
        assert_eq!((m.statement, m.request_id), (None, Some("8bK4Gzm")));
        let address = "4zvwRjXUKGfvwnParsHAS3HuSVzV5cA4McphgmoCtajS";
        for layout in ["\n\n\n", "\n\n"] {
            let solana = format!(
                "a.example wants you to sign in with your Solana account:\n{address}{layout}\
                 URI: https://a.example\nVersion: 1\nChain ID: mainnet\nNonce: abcdEFGH1\nIssued At: 2024-02-29T00:00:00Z"
            );
            let m = parse(&solana).unwrap();
            assert_eq!((m.account, m.chain_id, m.statement), (Account::Solana, Some("mainnet"), None));
        }
        assert!(parse(&minimal.replace("\n\n\n", "\n\n")).is_err(), "EIP-4361 needs two blank lines");
    }

    #[test]
    fn anything_malformed_is_refused() {
        let cases: Vec<(String, &str)> = vec![
            (EIP_EXAMPLE.replace('\n', "\r\n"), "control character"),
            (EIP_EXAMPLE.replace("Terms of Service", "Terms\u{2028}URI: https://evil.example"), "invisible formatting"),
            (
                EIP_EXAMPLE.replace("Terms of Service", "Terms \u{202E}ecivreS"),
                "invisible formatting character (\\u{202e})",
            ),
            (EIP_EXAMPLE.replace("Terms of Service", "Terms\u{200B}of Service"), "invisible formatting"),
            (EIP_EXAMPLE.replace("Terms of Service", "Terms\u{E0041}of Service"), "invisible formatting"),
            (EIP_EXAMPLE.replace("Terms of Service", "Terms\u{2066}of\u{2069} Service"), "invisible formatting"),
            (format!("{EIP_EXAMPLE}\n"), "not \"- \""),
            (EIP_EXAMPLE.replace("Ethereum account", "Ethereum wallet"), "first line"),
            (EIP_EXAMPLE.replace("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "0xC02a"), "not an Ethereum address"),
            (EIP_EXAMPLE.replace("Version: 1", "Version: 2"), "not 1"),
            (EIP_EXAMPLE.replace("Chain ID: 1", "Chain ID: one"), "not a chain id"),
            (EIP_EXAMPLE.replace("Nonce: 32891756", "Nonce: 1234"), "nonce"),
            (EIP_EXAMPLE.replace("2021-09-30T16:25:24Z", "2021-02-30T16:25:24Z"), "RFC 3339"),
            (EIP_EXAMPLE.replace("2021-09-30T16:25:24Z", "2021-09-30 16:25:24Z"), "RFC 3339"),
            (EIP_EXAMPLE.replace("URI: https://example.com/login\n", ""), "no \"URI\""),
            (EIP_EXAMPLE.replace("Version: 1\n", "Version: 1\nVersion: 1\n"), "out of order or repeated"),
            (EIP_EXAMPLE.replace("Version: 1\nChain ID: 1", "Chain ID: 1\nVersion: 1"), "out of order"),
            (EIP_EXAMPLE.replace("Nonce: 32891756", "Nonce: 32891756\nAddress: 0x00"), "unexpected line"),
            (EIP_EXAMPLE.replace("Terms of Service", "Terms of \"Service\""), "statement"),
            (EIP_EXAMPLE.replace("URI: https://example.com/login", "URI: example com"), "not a URI"),
            (EIP_EXAMPLE.replace("https://example.com/tos\n\n", "https://example.com/tos\n"), "blank line"),
            ("example.com wants you to sign in with your Ethereum account:".to_owned(), "ends after"),
        ];
        for (text, fragment) in cases {
            let why = parse(&text).expect_err(fragment);
            assert!(why.contains(fragment), "{fragment:?} not in {why:?}");
        }
    }

    #[test]
    fn rfc3339_dates() {
        for good in ["2024-02-29T23:59:60Z", "1999-12-31t00:00:00.000001z", "2021-01-01T00:00:00-05:30"] {
            assert!(is_rfc3339(good), "{good}");
        }
        for bad in [
            "2023-02-29T00:00:00Z",
            "2021-13-01T00:00:00Z",
            "2021-01-01T24:00:00Z",
            "2021-01-01T00:00:00",
            "2021-01-01T00:00:00.Z",
            "2021-01-01T00:00:00+0100",
            "2021-1-01T00:00:00Z",
            "２021-01-01T00:00:00Z",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }
}
