//! The key text parser against serde_json's reading, the hasher's wiping, and a forked
//! child's nonce.

use super::*;

/// sha2's `zeroize` feature is on for the SHA-512 the signer hashes secrets with (a
/// compile-time check: without the feature, `Sha512` does not implement the trait).
#[test]
fn the_hasher_wipes_its_state_on_drop() {
    fn wiped_on_drop<T: zeroize::ZeroizeOnDrop>() {}
    wiped_on_drop::<Sha512>();
    wiped_on_drop::<ExpandedSecretKey>();
}

/// The JSON array as serde_json read it before (into a list of `u64`): the model the
/// hand-written reading must agree with, key for key and message for message.
fn serde_json_reading(text: &str) -> Result<SigningKey> {
    let text = text.trim();
    let numbers: Vec<u64> = serde_json::from_str(text).map_err(|_| {
        Error::invalid_key("the Ed25519 private key starts with '[' but is not a JSON array of integers 0..=255")
    })?;
    let bytes = numbers
        .iter()
        .map(|&n| u8::try_from(n))
        .collect::<std::result::Result<Vec<u8>, _>>()
        .map_err(|_| Error::invalid_key("the Ed25519 private key JSON array must hold integers 0..=255"))?;
    {
        let mut buffer = [0u8; 64];
        if let Some(head) = buffer.get_mut(..bytes.len()) {
            head.copy_from_slice(&bytes);
        }
        signing_key_from_bytes(&buffer, bytes.len())
    }
}

fn outcome(result: Result<SigningKey>) -> std::result::Result<[u8; 32], String> {
    result.map(|key| key.to_bytes()).map_err(|e| e.message().to_owned())
}

#[test]
fn a_json_array_key_is_read_as_serde_json_read_it() {
    let pair = SigningKey::from_bytes(&[0x9d; 32]).to_keypair_bytes();
    let list = |bytes: &[u8], sep: &str| bytes.iter().map(u8::to_string).collect::<Vec<_>>().join(sep);
    let mut cases: Vec<String> = vec![
        format!("[{}]", list(&pair, ",")),
        format!(" [ {} ]\n", list(&pair, " ,\t\r\n")),
        format!("[{}]", list(&pair[..32], ",")),
        format!("[{},7]", list(&pair, ",")),
        format!("[{},256]", list(&pair, ",")),
        format!("[{},1.5]", list(&pair, ",")),
        format!("[{}]", list(&[7; 500], ",")),
        format!("[{},", list(&pair, ",")),
    ];
    for text in [
        "[]",
        "[ ]",
        "[1]",
        "[0]",
        "[00]",
        "[01]",
        "[-0]",
        "[-1]",
        "[+1]",
        "[1.0]",
        "[1.]",
        "[1e2]",
        "[1E2]",
        "[256]",
        "[255]",
        "[18446744073709551615]",
        "[18446744073709551616]",
        "[99999999999999999999999]",
        "[1 2]",
        "[1,,2]",
        "[1,]",
        "[,1]",
        "[1,2]x",
        "[1,2] ",
        "[1,2]]",
        "[[1]]",
        "[\"1\"]",
        "[null]",
        "[true]",
        "[1,256,",
        "[256,1",
        "[",
        "[1",
        "[1;2]",
        "[\u{a0}1]",
        "[1\u{0}]",
        "[1]\u{0}",
    ] {
        cases.push(text.to_owned());
    }
    // And every short text of the characters that matter.
    let alphabet = b"[],019-.e \n";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = 1 + (state % 9) as usize;
        let text: String =
            (0..len).map(|i| alphabet[((state >> (8 + 5 * i)) % alphabet.len() as u64) as usize] as char).collect();
        cases.push(format!("[{text}"));
    }
    for text in &cases {
        assert_eq!(outcome(parse_ed25519_secret(text)), outcome(serde_json_reading(text)), "{text:?}");
    }
}

/// A forked child starts with a copy of the parent's random pool; without the fork
/// handler (`os_random.rs`) it would sign the same message with the parent's next nonce.
#[cfg(unix)]
#[test]
fn a_forked_child_does_not_repeat_the_parents_nonce() {
    let key = RequestKey::from_signing_key(&SigningKey::from_bytes(&[3; 32]));
    let message: &[u8] = b"v1,123e4567-e89b-42d3-a456-426614174000,1700000000123,{}";
    key.sign_parts(&[message]).unwrap();
    let (parent, child) = crate::os_random::drawn_in_parent_and_forked_child(|| {
        key.sign_parts(&[message]).ok().map(|signature| *signature.r_bytes())
    });
    assert_ne!(parent, child, "a forked child signed with the parent's nonce");
}
