//! What key material the imports and the signatures leave on the stack below their caller,
//! in the release build users run: none. Each call is made on a stack zeroed below it, then
//! the 48 KiB below are scanned for 12-byte windows of the seed (also reversed, as base58's
//! little-endian number holds it), of its expanded scalar and nonce prefix, and of the
//! scalar's 52-bit limbs. A control plants the seed below and must be found, so the scan is
//! shown to see what it looks for. (Debug builds leave copies deeper than the wipe reaches:
//! release only, as `scripts/test.sh` runs it.)
#![cfg(not(debug_assertions))]
use ed25519_dalek::{Digest, Sha512, SigningKey};
use std::hint::black_box;

const DEPTH: usize = 48 * 1024;

#[inline(never)]
fn clear_below() {
    let mut buf = [0u8; DEPTH + 4096];
    for b in buf.iter_mut() {
        unsafe { std::ptr::write_volatile(b, 0) };
    }
    black_box(&buf);
}

/// (needle index, offset of the hit below this function's local)
#[inline(never)]
fn scan_below(needles: &[(String, Vec<u8>)]) -> Vec<(String, usize)> {
    let marker = 0u8;
    let top = black_box(&marker) as *const u8 as usize - 64;
    let start = top - DEPTH;
    let mut hits = Vec::new();
    for (name, n) in needles {
        let mut off = 0;
        while off + n.len() <= DEPTH {
            let p = (start + off) as *const u8;
            let mut eq = true;
            for (j, &b) in n.iter().enumerate() {
                if unsafe { std::ptr::read_volatile(p.add(j)) } != b {
                    eq = false;
                    break;
                }
            }
            if eq {
                hits.push((name.clone(), top - (start + off)));
            }
            off += 1;
        }
    }
    hits
}

fn windows(name: &str, bytes: &[u8], out: &mut Vec<(String, Vec<u8>)>) {
    for (i, w) in bytes.windows(12).enumerate().step_by(4) {
        out.push((format!("{name}[{i}..]"), w.to_vec()));
    }
}

/// Needles computed on another thread (its own stack).
fn needles_for(seed: [u8; 32]) -> Vec<(String, Vec<u8>)> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let h = Sha512::digest(seed);
        let exp = ed25519_dalek::hazmat::ExpandedSecretKey::from_bytes(&h.into());
        let mut rev = seed;
        rev.reverse();
        windows("seed", &seed, &mut out);
        windows("seed-reversed", &rev, &mut out);
        windows("scalar", exp.scalar.as_bytes(), &mut out);
        windows("prefix", &exp.hash_prefix, &mut out);
        // 52-bit limbs of the scalar (UnpackedScalar, 64-bit backend)
        let s = exp.scalar.as_bytes();
        let mut words = [0u64; 4];
        for i in 0..4 {
            words[i] = u64::from_le_bytes(s[8 * i..8 * i + 8].try_into().unwrap());
        }
        let mask = (1u64 << 52) - 1;
        let limbs = [
            words[0] & mask,
            ((words[0] >> 52) | (words[1] << 12)) & mask,
            ((words[1] >> 40) | (words[2] << 24)) & mask,
            ((words[2] >> 28) | (words[3] << 36)) & mask,
            (words[3] >> 16) & ((1u64 << 48) - 1),
        ];
        let lb: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
        for i in 0..5 {
            out.push((format!("scalar-limb{i}"), lb[8 * i..8 * i + 8].to_vec()));
        }
        out
    })
    .join()
    .unwrap()
}

fn report(what: &str, hits: &[(String, usize)]) -> usize {
    let mut kinds: std::collections::BTreeMap<String, (usize, usize, usize)> = Default::default();
    for (name, depth) in hits {
        let kind = name.split('[').next().unwrap().to_string();
        let e = kinds.entry(kind).or_insert((0, usize::MAX, 0));
        e.0 += 1;
        e.1 = e.1.min(*depth);
        e.2 = e.2.max(*depth);
    }
    eprintln!("{what}: {} hits {:?}", hits.len(), kinds);
    hits.len()
}

const SEED: [u8; 32] = [
    0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4, 0x44, 0x49, 0xc5,
    0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60,
];

fn texts() -> Vec<(&'static str, String)> {
    let pair = SigningKey::from_bytes(&SEED).to_keypair_bytes();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    vec![
        ("hex-seed", hex(&SEED)),
        ("0X-hex-pair-upper", format!("0X{}", hex(&pair).to_uppercase())),
        ("b58-seed", bs58::encode(SEED).into_string()),
        ("b58-pair", bs58::encode(pair).into_string()),
        ("b58-seed-stray", format!("{}\"", bs58::encode(SEED).into_string())),
        ("json-pair", format!("{:?}", pair.to_vec())),
        ("json-pair-nospace", format!("{:?}", pair.to_vec()).replace(", ", ",")),
    ]
}

#[inline(never)]
fn plant_deep(seed: &[u8; 32]) {
    let pad = [1u8; 2048];
    black_box(&pad);
    plant(seed);
    black_box(&pad);
}
#[inline(never)]
fn plant(seed: &[u8; 32]) {
    let mut local = [0u8; 32];
    for i in 0..32 {
        local[i] = black_box(seed[i]);
    }
    black_box(&local);
}

#[test]
fn imports_and_signatures_leave_no_key_material_on_the_stack() {
    let needles = needles_for(SEED);
    clear_below();
    plant_deep(black_box(&SEED));
    assert!(report("control: plant", &scan_below(&needles)) > 0, "the scan does not see a planted seed");
    let texts = texts();
    let mut found = Vec::new();
    let mut check = |what: String, hits: usize| {
        if hits > 0 {
            found.push(what);
        }
    };
    for (name, text) in &texts {
        clear_below();
        let r = perps::keys::parse_ed25519_secret(black_box(text)).map(|k| k.to_bytes()[0]);
        black_box(&r);
        drop(r);
        check(
            format!("parse_ed25519_secret {name}"),
            report(&format!("parse_ed25519_secret {name}"), &scan_below(&needles)),
        );
        clear_below();
        let k = perps::keys::RequestKey::from_text(black_box(text));
        black_box(&k);
        drop(k);
        check(
            format!("RequestKey::from_text {name}"),
            report(&format!("RequestKey::from_text {name}"), &scan_below(&needles)),
        );
        clear_below();
        let a = perps::wallet::address(perps::wallet::Chain::Solana, black_box(text));
        black_box(&a);
        drop(a);
        check(format!("wallet::address {name}"), report(&format!("wallet::address {name}"), &scan_below(&needles)));
    }
    let sk = SigningKey::from_bytes(&SEED);
    let _warm = perps::keys::RequestKey::from_signing_key(&sk);
    clear_below();
    let k2 = perps::keys::RequestKey::from_signing_key(black_box(&sk));
    black_box(&k2);
    check("RequestKey::from_signing_key".into(), report("RequestKey::from_signing_key", &scan_below(&needles)));
    drop(k2);
    let key = perps::keys::RequestKey::from_text(&texts[0].1).unwrap();
    clear_below();
    let s = key.sign_parts(&[b"hello"]).unwrap();
    black_box(&s);
    check("sign_parts".into(), report("sign_parts", &scan_below(&needles)));
    clear_below();
    let s = key.sign_parts_deterministic(&[b"hello"]).unwrap();
    black_box(&s);
    check("sign_parts_deterministic".into(), report("sign_parts_deterministic", &scan_below(&needles)));
    assert!(found.is_empty(), "key material left on the stack by: {found:?}");
}
