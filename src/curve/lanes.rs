//! Four 64-bit lanes: the vector operations the four-way field (`field4x.rs`) and its comb
//! (`comb4x.rs`) are written in, with two implementations:
//! - [`Ifma`]: one 256-bit register, AVX-512 IFMA's 52-bit multiply-accumulate (`vpmadd52luq`,
//!   `vpmadd52huq`) and AVX2/AVX-512VL lane moves. Used on CPUs that have them.
//! - [`Emulated`]: the same operations on four `u64`s in plain Rust. It is the executable
//!   definition of what `Ifma` computes, so the tests check the two against each other, and it
//!   lets the comb's data flow be checked for constant time under valgrind, whose virtual CPU
//!   has no AVX-512.
//!
//! Every operation is lane-wise or moves whole lanes by a constant pattern: none depends on a
//! lane's value, and none takes a data-dependent time on hardware.

/// Four 64-bit lanes. `IMM` patterns follow `vpermq`: lane i of the result is lane
/// `(IMM >> 2i) & 3` of the input.
pub(crate) trait Lanes: Copy {
    fn splat(x: u64) -> Self;
    fn load(words: &[u64; 4]) -> Self;
    fn store(self) -> [u64; 4];
    fn add(self, b: Self) -> Self;
    fn sub(self, b: Self) -> Self;
    fn and(self, b: Self) -> Self;
    fn or(self, b: Self) -> Self;
    fn xor(self, b: Self) -> Self;
    fn shr<const BITS: i32>(self) -> Self;
    fn shl<const BITS: i32>(self) -> Self;
    /// `self` plus the low 52 bits of the product of `a`'s and `b`'s low 52 bits.
    fn madd52lo(self, a: Self, b: Self) -> Self;
    /// `self` plus bits 52..104 of the product of `a`'s and `b`'s low 52 bits.
    fn madd52hi(self, a: Self, b: Self) -> Self;
    fn permute<const IMM: i32>(self) -> Self;
    /// Lane i from `b` where bit i of `mask` is set, else from `self` (`mask` is a constant
    /// at every call site, never data).
    fn blend(self, b: Self, mask: u8) -> Self;
}

const LOW_52: u64 = (1 << 52) - 1;

/// The lanes as plain words (any CPU).
#[derive(Clone, Copy)]
pub(crate) struct Emulated(pub(crate) [u64; 4]);

impl Emulated {
    #[inline(always)]
    fn zip(self, b: Emulated, f: impl Fn(u64, u64) -> u64) -> Emulated {
        Emulated(std::array::from_fn(|i| f(self.0[i], b.0[i])))
    }

    #[inline(always)]
    fn product52(a: u64, b: u64) -> u128 {
        (a & LOW_52) as u128 * (b & LOW_52) as u128
    }
}

impl Lanes for Emulated {
    #[inline(always)]
    fn splat(x: u64) -> Self {
        Emulated([x; 4])
    }
    #[inline(always)]
    fn load(words: &[u64; 4]) -> Self {
        Emulated(*words)
    }
    #[inline(always)]
    fn store(self) -> [u64; 4] {
        self.0
    }
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        self.zip(b, u64::wrapping_add)
    }
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        self.zip(b, u64::wrapping_sub)
    }
    #[inline(always)]
    fn and(self, b: Self) -> Self {
        self.zip(b, |x, y| x & y)
    }
    #[inline(always)]
    fn or(self, b: Self) -> Self {
        self.zip(b, |x, y| x | y)
    }
    #[inline(always)]
    fn xor(self, b: Self) -> Self {
        self.zip(b, |x, y| x ^ y)
    }
    #[inline(always)]
    fn shr<const BITS: i32>(self) -> Self {
        Emulated(self.0.map(|x| x >> BITS))
    }
    #[inline(always)]
    fn shl<const BITS: i32>(self) -> Self {
        Emulated(self.0.map(|x| x << BITS))
    }
    #[inline(always)]
    fn madd52lo(self, a: Self, b: Self) -> Self {
        Emulated(std::array::from_fn(|i| self.0[i].wrapping_add(Self::product52(a.0[i], b.0[i]) as u64 & LOW_52)))
    }
    #[inline(always)]
    fn madd52hi(self, a: Self, b: Self) -> Self {
        Emulated(std::array::from_fn(|i| self.0[i].wrapping_add((Self::product52(a.0[i], b.0[i]) >> 52) as u64)))
    }
    #[inline(always)]
    fn permute<const IMM: i32>(self) -> Self {
        Emulated(std::array::from_fn(|i| self.0[(IMM as usize >> (2 * i)) & 3]))
    }
    #[inline(always)]
    fn blend(self, b: Self, mask: u8) -> Self {
        Emulated(std::array::from_fn(|i| if mask >> i & 1 == 1 { b.0[i] } else { self.0[i] }))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use ifma::Ifma;

#[cfg(target_arch = "x86_64")]
mod ifma {
    use super::Lanes;
    use std::arch::x86_64::*;

    /// The lanes in one 256-bit register. Only code compiled with `avx2,avx512f,avx512vl,
    /// avx512ifma` enabled, and run on a CPU that has them, may use it: its methods are inlined
    /// into such callers and compile to one instruction each.
    #[derive(Clone, Copy)]
    pub(crate) struct Ifma(__m256i);

    // SAFETY (every method): the intrinsics need the features named above, which the only
    // callers (`curve::mul_base_compressed_ifma` and the tests, after checking the CPU)
    // enable; loads and stores go through references to exactly four words.
    impl Lanes for Ifma {
        #[inline(always)]
        fn splat(x: u64) -> Self {
            Ifma(unsafe { _mm256_set1_epi64x(x as i64) })
        }
        #[inline(always)]
        fn load(words: &[u64; 4]) -> Self {
            Ifma(unsafe { _mm256_loadu_si256(words.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self) -> [u64; 4] {
            let mut words = [0u64; 4];
            unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), self.0) };
            words
        }
        #[inline(always)]
        fn add(self, b: Self) -> Self {
            Ifma(unsafe { _mm256_add_epi64(self.0, b.0) })
        }
        #[inline(always)]
        fn sub(self, b: Self) -> Self {
            Ifma(unsafe { _mm256_sub_epi64(self.0, b.0) })
        }
        #[inline(always)]
        fn and(self, b: Self) -> Self {
            Ifma(unsafe { _mm256_and_si256(self.0, b.0) })
        }
        #[inline(always)]
        fn or(self, b: Self) -> Self {
            Ifma(unsafe { _mm256_or_si256(self.0, b.0) })
        }
        #[inline(always)]
        fn xor(self, b: Self) -> Self {
            Ifma(unsafe { _mm256_xor_si256(self.0, b.0) })
        }
        #[inline(always)]
        fn shr<const BITS: i32>(self) -> Self {
            Ifma(unsafe { _mm256_srli_epi64::<BITS>(self.0) })
        }
        #[inline(always)]
        fn shl<const BITS: i32>(self) -> Self {
            Ifma(unsafe { _mm256_slli_epi64::<BITS>(self.0) })
        }
        #[inline(always)]
        fn madd52lo(self, a: Self, b: Self) -> Self {
            Ifma(unsafe { _mm256_madd52lo_epu64(self.0, a.0, b.0) })
        }
        #[inline(always)]
        fn madd52hi(self, a: Self, b: Self) -> Self {
            Ifma(unsafe { _mm256_madd52hi_epu64(self.0, a.0, b.0) })
        }
        #[inline(always)]
        fn permute<const IMM: i32>(self) -> Self {
            Ifma(unsafe { _mm256_permute4x64_epi64::<IMM>(self.0) })
        }
        #[inline(always)]
        fn blend(self, b: Self, mask: u8) -> Self {
            Ifma(unsafe { _mm256_mask_blend_epi64(mask, self.0, b.0) })
        }
    }
}
