//! Which code computes R = r·B, and what makes a fault in it harmless.
//!
//! - **Choice, once per process**: the fastest [`Build`] the CPU runs, unless the environment
//!   variable `PERPS_FAST_CURVE` says otherwise (read once, at the first signature or session):
//!   `0` (or `off`, `reference`) for the reference only; `ifma`, `adx`, `avx2` or `baseline`
//!   for that build alone (the reference if the CPU cannot run it; for benchmarks and tests);
//!   unset, empty, `1` or `auto` for the fastest. Any other value means the reference: a
//!   cautious deployment that misspells the switch must not get the fast code.
//! - **Known answers, at first use**: before the chosen build computes a signature's R, it must
//!   reproduce five known points (1·B, −B, and the public keys of RFC 8032's tests 1–3).
//! - **Every R checked**: a build returns its encoding with the on-curve check of the point it
//!   encodes (`Extended::compress_checked`); an encoding that failed is never used, and R is
//!   computed again by the reference.
//! - **Sticky**: after any failure of either, the whole process uses the reference only.
//!
//! The reference is curve25519-dalek's constant-time `EdwardsPoint::mul_base`, the code
//! ed25519-dalek's own signer runs.

use super::Checked;
use curve25519_dalek::{EdwardsPoint, Scalar};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// A build of the fixed-base multiplication (`curve.rs`), fastest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// AVX-512 IFMA lanes (`comb4x.rs`).
    Ifma,
    /// Four 64-bit limbs in `mulx`/`adcx`/`adox` assembly (`field64.rs`).
    Adx,
    /// Five 51-bit limbs compiled for AVX2 and BMI2.
    Avx2,
    /// Five 51-bit limbs, any CPU.
    Baseline,
}

impl Build {
    pub const ALL: [Build; 4] = [Build::Ifma, Build::Adx, Build::Avx2, Build::Baseline];

    pub fn name(self) -> &'static str {
        match self {
            Build::Ifma => "ifma",
            Build::Adx => "adx",
            Build::Avx2 => "avx2",
            Build::Baseline => "baseline",
        }
    }

    /// The CPU features the build needs.
    pub fn needs(self) -> &'static str {
        match self {
            Build::Ifma => "x86-64 with AVX2, BMI2, AVX-512F, AVX-512VL and AVX-512 IFMA",
            Build::Adx => "x86-64 with AVX2, BMI2 and ADX",
            Build::Avx2 => "x86-64 with AVX2 and BMI2",
            Build::Baseline => "any CPU",
        }
    }

    /// Whether this CPU can run the build.
    pub fn runnable(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return match self {
            Build::Ifma => super::has_ifma_build(),
            Build::Adx => super::has_adx_build(),
            Build::Avx2 => super::has_avx2_bmi2(),
            Build::Baseline => true,
        };
        #[cfg(not(target_arch = "x86_64"))]
        return self == Build::Baseline;
    }

    /// k·B by this build, checked (`None` if the CPU cannot run it). Not guarded: for tests.
    #[doc(hidden)]
    pub fn run(self, k: &Scalar) -> Option<Checked> {
        if !self.runnable() {
            return None;
        }
        // SAFETY (each arm): the CPU has the build's features (`runnable`, just above).
        #[cfg(target_arch = "x86_64")]
        return Some(match self {
            Build::Ifma => unsafe { super::mul_base_ifma(k) },
            Build::Adx => unsafe { super::mul_base_adx(k) },
            Build::Avx2 => unsafe { super::mul_base_avx2(k) },
            Build::Baseline => super::mul_base_baseline(k),
        });
        #[cfg(not(target_arch = "x86_64"))]
        return Some(super::mul_base_baseline(k));
    }

    fn from_index(i: u8) -> Build {
        Build::ALL[i as usize % 4]
    }

    fn index(self) -> u8 {
        Build::ALL.iter().position(|&b| b == self).unwrap_or(3) as u8
    }

    /// Whether the build reproduces every known answer.
    fn passes_self_test(self) -> bool {
        KNOWN_ANSWERS.iter().all(|(k, expected)| {
            let k = Scalar::from_bytes_mod_order(hex32(k));
            self.run(&k).is_some_and(|c| c.on_curve == u64::MAX && c.encoding == hex32(expected))
        })
    }
}

/// Why R is computed by the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceReason {
    /// `PERPS_FAST_CURVE` asked for it (or named a build this CPU cannot run, or a value
    /// this library does not know).
    Requested,
    /// The build failed its known-answer self-test.
    SelfTestFailed(Build),
    /// An R from the build failed the on-curve check.
    CheckFailed(Build),
}

/// What signs now, and how often the reference has computed R (for tests and diagnostics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignerStatus {
    /// The build in use; `None` when the reference computes every R.
    pub build: Option<Build>,
    pub reference_reason: Option<ReferenceReason>,
    /// R values computed by the reference in this process (deterministic signatures
    /// included: they always use it).
    pub reference_computations: u64,
}

/// (k, k·B): 1·B, (l−1)·B = −B, and RFC 8032 §7.1 tests 1–3 (the clamped secret scalar
/// reduced modulo l, and the public key the RFC gives).
const KNOWN_ANSWERS: [(&str, &str); 5] = [
    (
        "0100000000000000000000000000000000000000000000000000000000000000",
        "5866666666666666666666666666666666666666666666666666666666666666",
    ),
    (
        "ecd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010",
        "58666666666666666666666666666666666666666666666666666666666666e6",
    ),
    (
        "7c2cac12e69be96ae9065065462385e8fcff2768d980c0a3a520f006904de90f",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    ),
    (
        "c799d106d5927970e5989f5671131fa27e6c6b3b7f821c5e259a24b02e502e01",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    ),
    (
        "ef76bea4dae9a6cb6013cf2cbce0e2a8b94d7f4ec5c2f51b1325a181991ea90c",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    ),
];

fn hex32(text: &str) -> [u8; 32] {
    let digit = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
    std::array::from_fn(|i| digit(text.as_bytes()[2 * i]) << 4 | digit(text.as_bytes()[2 * i + 1]))
}

/// The build chosen for this process (`None`: the reference), made once.
static CHOICE: OnceLock<Option<Build>> = OnceLock::new();
/// 0 while no failure has happened; else 1 + [`ReferenceReason`] code (see `encode`).
static REFERENCE_ONLY: AtomicU8 = AtomicU8::new(0);
static REFERENCE_COMPUTATIONS: AtomicU64 = AtomicU64::new(0);

fn encode(reason: ReferenceReason) -> u8 {
    match reason {
        ReferenceReason::Requested => 1,
        ReferenceReason::SelfTestFailed(b) => 2 + b.index(),
        ReferenceReason::CheckFailed(b) => 6 + b.index(),
    }
}

fn decode(code: u8) -> Option<ReferenceReason> {
    match code {
        0 => None,
        1 => Some(ReferenceReason::Requested),
        2..=5 => Some(ReferenceReason::SelfTestFailed(Build::from_index(code - 2))),
        _ => Some(ReferenceReason::CheckFailed(Build::from_index(code - 6))),
    }
}

/// From now on, the reference only (the first reason is kept).
fn fall_back(reason: ReferenceReason) {
    let _ = REFERENCE_ONLY.compare_exchange(0, encode(reason), Ordering::AcqRel, Ordering::Acquire);
}

/// What `PERPS_FAST_CURVE` asks for: `None` for the reference, else the build to use.
fn requested() -> Option<Build> {
    let value = std::env::var("PERPS_FAST_CURVE").unwrap_or_default();
    let fastest = || Build::ALL.into_iter().find(|b| b.runnable());
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "auto" => fastest(),
        name => Build::ALL.into_iter().find(|b| b.name() == name && b.runnable()),
    }
}

fn choose() -> Option<Build> {
    let Some(build) = requested() else {
        fall_back(ReferenceReason::Requested);
        return None;
    };
    if !build.passes_self_test() {
        fall_back(ReferenceReason::SelfTestFailed(build));
        return None;
    }
    Some(build)
}

/// The build to use now, if any.
#[inline]
fn active() -> Option<Build> {
    if REFERENCE_ONLY.load(Ordering::Acquire) != 0 {
        return None;
    }
    *CHOICE.get_or_init(choose)
}

/// Make the choice (read the environment, run the self-test) now rather than inside the
/// first signature.
pub(crate) fn prepare() {
    let _ = active();
}

/// The encoding of r·B for the nonce `r`: by the chosen build when its result passes the
/// check, by the reference otherwise.
pub(crate) fn nonce_commitment(r: &Scalar) -> [u8; 32] {
    if let Some(build) = active()
        && let Some(checked) = build.run(r)
    {
        if declassified(checked.on_curve) == u64::MAX {
            return checked.encoding;
        }
        fall_back(ReferenceReason::CheckFailed(build));
    }
    reference_commitment(r)
}

/// r·B by curve25519-dalek (the reference).
pub(crate) fn reference_commitment(r: &Scalar) -> [u8; 32] {
    REFERENCE_COMPUTATIONS.fetch_add(1, Ordering::Relaxed);
    EdwardsPoint::mul_base(r).compress().to_bytes()
}

pub fn signer_status() -> SignerStatus {
    let build = active();
    SignerStatus {
        build,
        reference_reason: decode(REFERENCE_ONLY.load(Ordering::Acquire)),
        reference_computations: REFERENCE_COMPUTATIONS.load(Ordering::Relaxed),
    }
}

/// The check's verdict is public: it says only whether the hardware faulted. Computed from the
/// secret nonce, though, so valgrind's memcheck (`tests/constant_time.rs`) would report the
/// branch on it; this tells memcheck the value is public (a client request: natively a few
/// rotations of a register that change nothing). The signer's own checks (`keys.rs`) use it
/// for their verdict too.
#[inline(always)]
pub(crate) fn declassified(value: u64) -> u64 {
    let cell = value;
    mark_public((&cell as *const u64).cast(), 8);
    // SAFETY: reads our own initialised local.
    unsafe { std::ptr::read_volatile(&cell) }
}

/// A signature's R, declared public to memcheck: it is computed from the secret nonce, but
/// it is the same R every released signature of that nonce shows (a fault after R leaves it
/// as it is), so reading it in variable time — decompressing it to check a signature — reveals
/// nothing. Its s is never declared: a faulty s beside a good one gives the key away, so it
/// is only ever handled by constant-time code until it has passed.
pub(crate) fn declassified_commitment(commitment: [u8; 32]) -> [u8; 32] {
    mark_public(commitment.as_ptr(), commitment.len());
    // SAFETY: reads our own initialised local.
    unsafe { std::ptr::read_volatile(&commitment) }
}

/// memcheck's MAKE_MEM_DEFINED client request on `len` bytes at `address`; natively nothing.
#[inline(always)]
fn mark_public(address: *const u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        // memcheck's MAKE_MEM_DEFINED request: ('M' << 24 | 'C' << 16) + 2.
        let args: [u64; 6] = [0x4d43_0002, address as u64, len as u64, 0, 0, 0];
        // SAFETY: valgrind's "magic sequence": four rotations of rdi adding up to a full turn
        // (rdi is unchanged) and an exchange of rbx with itself; natively nothing changes.
        unsafe {
            std::arch::asm!(
                "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
                inout("rdx") 0u64 => _,
                in("rax") args.as_ptr(),
                inout("rdi") 0u64 => _,
                options(nostack),
            );
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    let _ = (address, len);
}

#[cfg(test)]
pub(crate) mod fault;

#[cfg(test)]
mod tests;
