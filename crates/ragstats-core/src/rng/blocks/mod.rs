//! Bounded draws of many consecutive Philox blocks at once: the scalar reference and the
//! vectorised generators (AVX2 and AVX-512 on x86_64, NEON on aarch64), chosen at run time.
//!
//! [`Generator::fill_bounded`] computes, for blocks `first .. first + n` of a stream address
//! `[a0, a1, block]` (the counter words 0 to 2 of a domain, [`crate::rng::domain`]), the indices
//! in `[0, q)` that [`crate::rng::stream`] defines: word `w` of block `j` is Philox4x32-10 of
//! counter `[a0, a1, j, 0]`, bounded by Lemire's multiply-shift, and on a rejection the same
//! word of the blocks with retry 1, 2, ... ([`crate::rng::stream::redraw`]). Every generator
//! returns exactly the same words: the vector code runs the same 32-bit multiplies, xors
//! and key schedule on 4, 8 or 16 counters side by side, tests for a rejection in a whole
//! group at once, and hands any rejected word to the scalar [`redraw`], so a result never
//! depends on which generator ran (the tests compare them word for word).
//!
//! The generator is chosen per process by [`Generator::from_env`]: the environment
//! variable `STATS_CPU_RNG` (`auto`, `scalar`, `avx2`, `avx512`, `neon`) or, when it is
//! unset or `auto`, [`Generator::best`], the widest one the CPU supports that also
//! reproduces the scalar words on a built-in check.

use std::sync::OnceLock;

use crate::rng::domain;
use crate::rng::philox::philox4x32_10;
use crate::rng::stream::{lemire_accept, lemire_threshold, redraw};
use crate::{Error, Result};

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

/// What receives the draws of [`Generator::for_each_group`], a generator step at a time.
///
/// A trait rather than a closure so that an implementation can mark [`GroupSink::take`]
/// `#[inline(always)]`: it is then compiled into the vector generator's loop, where a
/// closure of any size was called out of line, and the call cost more than the adds.
pub trait GroupSink {
    /// The bounded draws `words` of blocks `first, first + 1, ...`, four per block.
    fn take(&mut self, first: u32, words: &[u32]);
}

/// The environment variable that forces a generator: `auto` (the default), `scalar`,
/// `avx2`, `avx512` or `neon`.
pub const ENV_VAR: &str = "STATS_CPU_RNG";

/// A CPU implementation of the bounded Philox draws. All of them give the same words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Generator {
    /// One block at a time in plain Rust: the reference, available everywhere.
    Scalar,
    /// x86_64 AVX2: four blocks per 256-bit vector, eight blocks per step.
    Avx2,
    /// x86_64 AVX-512F: eight blocks per 512-bit vector, sixteen blocks per step.
    Avx512,
    /// aarch64 NEON: four blocks per 128-bit vector, eight blocks per step.
    Neon,
}

impl Generator {
    /// Every generator, widest first (the order [`Generator::best`] tries them in).
    pub const ALL: [Generator; 4] = [
        Generator::Avx512,
        Generator::Avx2,
        Generator::Neon,
        Generator::Scalar,
    ];

    /// The name `STATS_CPU_RNG` and `stats bench` use: `scalar`, `avx2`, `avx512`, `neon`.
    pub fn name(self) -> &'static str {
        match self {
            Generator::Scalar => "scalar",
            Generator::Avx2 => "avx2",
            Generator::Avx512 => "avx512",
            Generator::Neon => "neon",
        }
    }

    /// Whether this CPU can run the generator (detected at run time).
    pub fn is_supported(self) -> bool {
        match self {
            Generator::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Generator::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Generator::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "aarch64")]
            Generator::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The generators this CPU supports, widest first (always ends with `Scalar`).
    pub fn supported() -> Vec<Generator> {
        Generator::ALL
            .into_iter()
            .filter(|g| g.is_supported())
            .collect()
    }

    /// The widest supported generator whose words equal the scalar ones on a fixed check
    /// ([`Generator::self_check`]); `Scalar` if none. Computed once per process.
    pub fn best() -> Generator {
        static BEST: OnceLock<Generator> = OnceLock::new();
        *BEST.get_or_init(|| {
            Generator::supported()
                .into_iter()
                .find(|g| g.self_check())
                .unwrap_or(Generator::Scalar)
        })
    }

    /// Parses a `STATS_CPU_RNG` value: `auto` (or empty) gives [`Generator::best`], a name
    /// gives that generator if this CPU supports it.
    ///
    /// # Errors
    /// [`Error::Usage`] for an unknown name or a generator this CPU cannot run.
    pub fn parse(value: &str) -> Result<Generator> {
        let v = value.trim().to_ascii_lowercase();
        if v.is_empty() || v == "auto" {
            return Ok(Generator::best());
        }
        let Some(g) = Generator::ALL.into_iter().find(|g| g.name() == v) else {
            return Err(Error::Usage(format!(
                "{ENV_VAR}={value}: unknown generator; expected auto, scalar, avx2, avx512 or neon"
            )));
        };
        if !g.is_supported() {
            let have: Vec<&str> = Generator::supported().iter().map(|g| g.name()).collect();
            return Err(Error::Usage(format!(
                "{ENV_VAR}={value}: this CPU cannot run the {} generator; it supports {}",
                g.name(),
                have.join(", ")
            )));
        }
        Ok(g)
    }

    /// The generator the CPU engine uses: `STATS_CPU_RNG` if set, else [`Generator::best`].
    ///
    /// # Errors
    /// As [`Generator::parse`].
    pub fn from_env() -> Result<Generator> {
        match std::env::var(ENV_VAR) {
            Ok(v) => Generator::parse(&v),
            Err(_) => Ok(Generator::best()),
        }
    }

    /// Fills `out` with the bounded indices of blocks `first .. first + out.len() / 4` at
    /// stream address `[addr[0], addr[1], block]` under `key`: `out[4 i + w]` is word `w`
    /// of block `first + i` mapped to `[0, q)` per [`crate::rng::stream`], exactly as
    /// [`crate::rng::stream::draw_index`] and [`redraw`] compute it. Block numbers wrap at
    /// 2^32.
    ///
    /// # Panics
    /// If `q == 0`, if `out.len()` is not a multiple of 4, or if this CPU does not support
    /// the generator (see [`Generator::is_supported`]).
    pub fn fill_bounded(self, key: [u32; 2], addr: [u32; 2], first: u32, q: u32, out: &mut [u32]) {
        assert!(q > 0, "fill_bounded: q must be at least 1");
        assert!(
            out.len().is_multiple_of(4),
            "fill_bounded: out holds whole blocks of 4 words"
        );
        self.fill_with_threshold(key, addr, first, q, lemire_threshold(q), out);
    }

    /// Calls `sink.take(j, words)` for consecutive groups of the blocks `first .. first + n` (block
    /// numbers wrapping at 2^32), in order: `words` are the bounded draws of blocks
    /// `j, j + 1, ...` of the group, four per block, exactly what [`Self::fill_bounded`]
    /// writes for them. A group is sixteen blocks; the last one may be shorter. (The CPU
    /// engine walks AVX2 draws its own way, `crate::resample::fused_avx2`.)
    ///
    /// Handing each group on as soon as it is drawn lets the core overlap the caller's
    /// work on one group (loads and adds) with drawing the next (vector arithmetic).
    ///
    /// # Panics
    /// If `q == 0`, or if this CPU does not support the generator.
    pub fn for_each_group(
        self,
        key: [u32; 2],
        addr: [u32; 2],
        first: u32,
        n: u32,
        q: u32,
        sink: &mut impl GroupSink,
    ) {
        assert!(q > 0, "for_each_group: q must be at least 1");
        let t = lemire_threshold(q);
        const GROUP: u32 = 16;
        let mut words = [0u32; 4 * GROUP as usize];
        let mut g = 0;
        while g < n {
            let len = (n - g).min(GROUP);
            let j = first.wrapping_add(g);
            let dst = &mut words[..4 * len as usize];
            self.fill_with_threshold(key, addr, j, q, t, dst);
            sink.take(j, dst);
            g += len;
        }
    }

    /// [`Self::fill_bounded`] with the threshold `t` = [`lemire_threshold`]`(q)` given.
    fn fill_with_threshold(
        self,
        key: [u32; 2],
        addr: [u32; 2],
        first: u32,
        q: u32,
        t: u32,
        out: &mut [u32],
    ) {
        match self {
            Generator::Scalar => fill_scalar(key, addr, first, q, t, out),
            #[cfg(target_arch = "x86_64")]
            Generator::Avx2 => {
                assert!(self.is_supported(), "this CPU has no AVX2");
                // SAFETY: the CPU supports AVX2 (checked above).
                unsafe { x86::fill_avx2(key, addr, first, q, t, out) }
            }
            #[cfg(target_arch = "x86_64")]
            Generator::Avx512 => {
                assert!(self.is_supported(), "this CPU has no AVX-512F");
                // SAFETY: the CPU supports AVX-512F (checked above).
                unsafe { x86::fill_avx512(key, addr, first, q, t, out) }
            }
            #[cfg(target_arch = "aarch64")]
            Generator::Neon => {
                assert!(self.is_supported(), "this CPU has no NEON");
                // SAFETY: the CPU supports NEON (checked above).
                unsafe { neon::fill_neon(key, addr, first, q, t, out) }
            }
            #[allow(unreachable_patterns)]
            _ => panic!(
                "the {} generator does not exist on this architecture",
                self.name()
            ),
        }
    }

    /// Whether the generator is supported and reproduces the scalar words on a fixed check:
    /// 300 blocks at a bound that rejects about half of all words (so the retry path runs
    /// in every vector group), at a small bound, and across the 2^32 block wrap.
    pub fn self_check(self) -> bool {
        if !self.is_supported() {
            return false;
        }
        let key = [0x9E37_79B9, 0x0123_4567];
        let cases: [([u32; 2], u32, u32); 3] = [
            ([3, 1], 0, 0x8000_0001),
            ([17, 0], 5, 223),
            ([0, 2], u32::MAX - 150, 1_000_003),
        ];
        cases.iter().all(|&(addr, first, q)| {
            let mut want = vec![0u32; 4 * 300];
            let mut got = vec![0u32; 4 * 300];
            Generator::Scalar.fill_bounded(key, addr, first, q, &mut want);
            self.fill_bounded(key, addr, first, q, &mut got);
            want == got
        })
    }
}

impl std::fmt::Display for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The scalar reference: one Philox block at a time.
fn fill_scalar(key: [u32; 2], addr: [u32; 2], first: u32, q: u32, t: u32, out: &mut [u32]) {
    for (i, words) in out.chunks_exact_mut(4).enumerate() {
        let a = [addr[0], addr[1], first.wrapping_add(i as u32)];
        let b = philox4x32_10(domain::counter(a, 0), key);
        for (w, (o, &x)) in words.iter_mut().zip(&b).enumerate() {
            *o = match lemire_accept(x, q, t) {
                Some(v) => v,
                None => redraw(key, a, w, q, t),
            };
        }
    }
}

/// Replaces the words of blocks `first ..` in `out` that Lemire's test rejected by their
/// redraws. The vector generators call it, rarely, for a group in which some word was
/// rejected; the accepted words are left as the vector code wrote them (they are the same).
#[cold]
#[inline(never)]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]
fn fix_rejected(key: [u32; 2], addr: [u32; 2], first: u32, q: u32, t: u32, out: &mut [u32]) {
    for (i, words) in out.chunks_exact_mut(4).enumerate() {
        let a = [addr[0], addr[1], first.wrapping_add(i as u32)];
        let b = philox4x32_10(domain::counter(a, 0), key);
        for (w, (o, &x)) in words.iter_mut().zip(&b).enumerate() {
            if lemire_accept(x, q, t).is_none() {
                *o = redraw(key, a, w, q, t);
            }
        }
    }
}

/// The ten round keys of Philox4x32-10 for `key`: `key + i (W0, W1)`, wrapping.
#[inline(always)]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]
fn round_keys(key: [u32; 2]) -> [[u32; 2]; 10] {
    use crate::rng::philox::{PHILOX_W0, PHILOX_W1};
    let mut ks = [key; 10];
    for i in 1..10 {
        ks[i] = [
            ks[i - 1][0].wrapping_add(PHILOX_W0),
            ks[i - 1][1].wrapping_add(PHILOX_W1),
        ];
    }
    ks
}

/// The one vector generator, written once over a lane type ([`Lanes`]): each instruction
/// set supplies only its primitives, and its `#[target_feature]` entry point
/// (`x86::fill_avx2`, `x86::fill_avx512`, `neon::fill_neon`) calls [`lanes::fill`], which
/// is `#[inline(always)]` down to the primitives so that it is compiled inside the entry
/// point with that instruction set enabled.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod lanes {
    use super::{fix_rejected, round_keys};
    use crate::rng::philox::{PHILOX_M0, PHILOX_M1};

    /// The most blocks one step of [`fill`] may take (the size of its tail buffer).
    const MAX_STEP: usize = 16;

    /// A vector holding one 32-bit Philox word of [`Lanes::BLOCKS`] consecutive blocks,
    /// lane `i` for block `j + i`, and the few operations the generator needs on it.
    ///
    /// A lane may be wider than 32 bits (on x86 a word sits in the low half of a 64-bit
    /// lane, so that one `vpmuludq` is the 32x32->64 multiply): the generator only ever
    /// reads the low 32 bits of a lane, and the primitives must give those correctly
    /// whatever the rest of the lane holds.
    ///
    /// # Safety
    /// Every method needs the CPU feature of the implementation (the caller checks it); all
    /// are `#[inline(always)]`, to be compiled into a `#[target_feature]` function.
    pub(crate) trait Lanes: Copy {
        /// Blocks per vector.
        const BLOCKS: usize;

        /// `x` in every lane.
        unsafe fn splat(x: u32) -> Self;

        /// The block numbers `j + i` (wrapping at 2^32) in lane `i`.
        unsafe fn blocks(j: u32) -> Self;

        /// `(hi, lo)`: the high and the low 32 bits of the 64-bit products `a · b`, lane by
        /// lane (Philox's `mulhilo`; Lemire's `m = x · q`).
        unsafe fn mulhilo(a: Self, b: Self) -> (Self, Self);

        /// `a ^ b`.
        unsafe fn xor(a: Self, b: Self) -> Self;

        /// `a ^ b ^ c` (one instruction where the instruction set has one).
        #[inline(always)]
        unsafe fn xor3(a: Self, b: Self, c: Self) -> Self {
            Self::xor(Self::xor(a, b), c)
        }

        /// The unsigned minimum of the low 32 bits, lane by lane (the rest of a lane is
        /// unspecified).
        unsafe fn min(a: Self, b: Self) -> Self;

        /// Whether the low 32 bits of some lane of `least` are below `t`.
        unsafe fn any_below(least: Self, t: u32) -> bool;

        /// Stores word vectors `w[0..4]` block-major: `dst[4 i + k]` := lane `i` of `w[k]`.
        /// `dst` must be valid for `4 · BLOCKS` writes.
        unsafe fn store4(w: [Self; 4], dst: *mut u32);
    }

    /// What every step of one call shares: broadcast multipliers, round keys and bound, and
    /// the parts of the first three rounds that do not depend on the block number.
    ///
    /// Counter words 0, 1 and 3 (`a0`, `a1`, retry 0) are the same for every block of a
    /// call; only word 2 (the block) varies. So in round 0 the product `a0 · M0`, and with
    /// it the new words 2 and 3, are constants; in round 1 the product of that constant
    /// word 2 with M1, and the new word 1, are constants too; round 2 xors that constant
    /// word 1. Folding them leaves round 0 one multiply, round 1 one multiply and round 2
    /// one xor fewer: the words are the same, and 10 of the 80 vector operations of the
    /// ten rounds are gone.
    pub(crate) struct Plan<L> {
        /// Round 0: `a1 ^ k0[0]`, xored into the high word of `block · M1`.
        r0_c0: L,
        /// Round 1: `hi(C2 · M1) ^ k1[0]` for word 0 and `C3 ^ k1[1]` for word 2.
        r1_c0: L,
        r1_c2: L,
        /// Round 2: `lo(C2 · M1) ^ k2[0]` for word 0 (word 1 is that constant low word).
        r2_c0: L,
        /// The ten round keys, broadcast (rounds 0 and 1 only through the constants above).
        ks: [[L; 2]; 10],
        m0: L,
        m1: L,
        /// The bound `q` and Lemire's threshold `t = 2^32 mod q`.
        pub(crate) q: L,
        pub(crate) t: u32,
    }

    impl<L: Lanes> Plan<L> {
        /// The plan of draws below `q` (Lemire threshold `t`) from stream `addr` under `key`.
        #[inline(always)]
        pub(crate) unsafe fn new(key: [u32; 2], addr: [u32; 2], q: u32, t: u32) -> Self {
            let k = round_keys(key);
            let mul = |a: u32, m: u32| {
                let p = a as u64 * m as u64;
                ((p >> 32) as u32, p as u32)
            };
            // Round 0 on [a0, a1, j, 0]: word 2 := hi(a0 M0) ^ 0 ^ k0[1], word 3 := lo(a0 M0).
            let (hi0, lo0) = mul(addr[0], PHILOX_M0);
            let c2 = hi0 ^ k[0][1];
            let c3 = lo0;
            // Round 1: word 0 := hi(c2 M1) ^ c1 ^ k1[0], word 1 := lo(c2 M1) (constant),
            // word 2 := hi(c0 M0) ^ c3 ^ k1[1].
            let (hi1, lo1) = mul(c2, PHILOX_M1);
            // A loop rather than `k.map(..)`: a closure would not be `#[inline(always)]`.
            let mut ks = [[L::splat(0); 2]; 10];
            for (v, k) in ks.iter_mut().zip(&k) {
                *v = [L::splat(k[0]), L::splat(k[1])];
            }
            Plan {
                r0_c0: L::splat(addr[1] ^ k[0][0]),
                r1_c0: L::splat(hi1 ^ k[1][0]),
                r1_c2: L::splat(c3 ^ k[1][1]),
                r2_c0: L::splat(lo1 ^ k[2][0]),
                ks,
                m0: L::splat(PHILOX_M0),
                m1: L::splat(PHILOX_M1),
                q: L::splat(q),
                t,
            }
        }
    }

    /// The ten Philox rounds on blocks `j .. j + V · BLOCKS`: counter word `w` of block
    /// `j + BLOCKS · v + i` is lane `i` of `[c0, c1, c2, c3][w][v]`.
    ///
    /// A round is, per vector, two `mulhilo` and two three-way xors:
    ///
    /// ```text
    /// (hi0, lo0) = mulhilo(c0, M0);  (hi1, lo1) = mulhilo(c2, M1)
    /// c0' = hi1 ^ c1 ^ k0;  c1' = lo1;  c2' = hi0 ^ c3 ^ k1;  c3' = lo0
    /// ```
    ///
    /// with rounds 0 to 2 shortened by the constants of [`Plan`]. `V` vectors are in
    /// flight per round so that the multiplies of one hide the latency of another.
    #[inline(always)]
    pub(crate) unsafe fn rounds<L: Lanes, const V: usize>(plan: &Plan<L>, j: u32) -> [[L; V]; 4] {
        let [mut c0, mut c1, mut c2, mut c3] = [[plan.m0; V]; 4];
        for v in 0..V {
            let block = L::blocks(j.wrapping_add((L::BLOCKS * v) as u32));
            // Round 0: only block · M1 varies.
            let (hi1, lo1) = L::mulhilo(block, plan.m1);
            let r0 = L::xor(hi1, plan.r0_c0);
            // Round 1 (words 0, 2, 3; word 1 is constant): words 1 and 3 of round 0 are
            // lo1 and the constant folded into r1_c2.
            let (hi0, lo0) = L::mulhilo(r0, plan.m0);
            let w0 = L::xor(lo1, plan.r1_c0);
            let w2 = L::xor(hi0, plan.r1_c2);
            let w3 = lo0;
            // Round 2: word 1 is the constant folded into r2_c0.
            let (hi0, lo0) = L::mulhilo(w0, plan.m0);
            let (hi1, lo1) = L::mulhilo(w2, plan.m1);
            c0[v] = L::xor(hi1, plan.r2_c0);
            c1[v] = lo1;
            c2[v] = L::xor3(hi0, w3, plan.ks[2][1]);
            c3[v] = lo0;
        }
        for k in &plan.ks[3..] {
            for v in 0..V {
                let (hi0, lo0) = L::mulhilo(c0[v], plan.m0);
                let (hi1, lo1) = L::mulhilo(c2[v], plan.m1);
                c0[v] = L::xor3(hi1, c1[v], k[0]);
                c1[v] = lo1;
                c2[v] = L::xor3(hi0, c3[v], k[1]);
                c3[v] = lo0;
            }
        }
        [c0, c1, c2, c3]
    }

    /// Bounded words of blocks `j .. j + V · BLOCKS` into `dst` (block-major); returns
    /// whether any word was rejected (those words in `dst` are then wrong and must be
    /// fixed).
    ///
    /// Lemire: `(index, low) = mulhilo(x, q)`, rejected when `low < t`. The minimum of
    /// all the low words is kept and tested against `t` once per step.
    #[inline(always)]
    unsafe fn group<L: Lanes, const V: usize>(plan: &Plan<L>, j: u32, dst: &mut [u32]) -> bool {
        assert_eq!(dst.len(), 4 * L::BLOCKS * V);
        let c = rounds::<L, V>(plan, j);
        let mut least = L::splat(u32::MAX);
        for v in 0..V {
            let mut idx = [least; 4];
            for (w, cw) in c.iter().enumerate() {
                let (hi, lo) = L::mulhilo(cw[v], plan.q);
                idx[w] = hi;
                least = L::min(least, lo);
            }
            // In bounds: `dst` holds 4 · BLOCKS · V words (asserted above).
            L::store4(idx, dst.as_mut_ptr().add(4 * L::BLOCKS * v));
        }
        L::any_below(least, plan.t)
    }

    /// [`super::Generator::fill_bounded`] (threshold `t` given) on `V` vectors of lane type
    /// `L` per step: whole steps straight into `out`, then a partial last step computed
    /// whole into a buffer and cut; a step with a rejected word goes to the scalar
    /// [`fix_rejected`]. `out.len()` is a multiple of 4.
    ///
    /// # Safety
    /// The CPU must support `L`'s instruction set; call it from a `#[target_feature]`
    /// function enabling it, into which it is inlined.
    #[inline(always)]
    pub(crate) unsafe fn fill<L: Lanes, const V: usize>(
        key: [u32; 2],
        addr: [u32; 2],
        first: u32,
        q: u32,
        t: u32,
        out: &mut [u32],
    ) {
        let step = L::BLOCKS * V;
        assert!(step <= MAX_STEP);
        let plan = Plan::<L>::new(key, addr, q, t);
        let n = out.len() / 4;
        let mut g = 0;
        while g + step <= n {
            let dst = &mut out[4 * g..4 * (g + step)];
            let j = first.wrapping_add(g as u32);
            if group::<L, V>(&plan, j, dst) {
                fix_rejected(key, addr, j, q, t, dst);
            }
            g += step;
        }
        if g < n {
            let mut tmp = [0u32; 4 * MAX_STEP];
            let j = first.wrapping_add(g as u32);
            let rejected = group::<L, V>(&plan, j, &mut tmp[..4 * step]);
            let dst = &mut out[4 * g..];
            dst.copy_from_slice(&tmp[..dst.len()]);
            if rejected {
                fix_rejected(key, addr, j, q, t, dst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream::{draw_index, seed_key};

    /// The vectorised generators this machine can run (never empty on x86_64 with AVX2;
    /// empty means only the scalar path is exercised here).
    fn vector_generators() -> Vec<Generator> {
        Generator::supported()
            .into_iter()
            .filter(|g| *g != Generator::Scalar)
            .collect()
    }

    /// A key under which word 0..3 of block `block` at `addr` has at least one word that
    /// Lemire's test rejects for bound `q` (found by trying keys in order).
    fn key_with_rejection(addr: [u32; 2], block: u32, q: u32) -> [u32; 2] {
        let t = lemire_threshold(q);
        (0u32..)
            .map(|k| [k, 0xA5A5_0000 ^ k])
            .find(|&key| {
                philox4x32_10(domain::counter([addr[0], addr[1], block], 0), key)
                    .iter()
                    .any(|&x| lemire_accept(x, q, t).is_none())
            })
            .expect("some key rejects")
    }

    #[test]
    fn scalar_fill_equals_draw_index() {
        // draw_index is the stream contract's definition; fill_bounded(Scalar) must agree.
        for &(seed, r, s, q) in &[
            (7u64, 3u32, 1u32, 223u32),
            (0x0123_4567_89ab_cdef, 0, 0, 0x8000_0001),
            (99, 12, 5, 1),
            (5, 1, 2, u32::MAX),
        ] {
            let mut out = vec![0u32; 4 * 37];
            Generator::Scalar.fill_bounded(seed_key(seed), [r, s], 0, q, &mut out);
            for (i, &v) in out.iter().enumerate() {
                assert_eq!(
                    v,
                    draw_index(seed, r, s, i as u64, q),
                    "seed {seed} q {q} i {i}"
                );
            }
        }
    }

    #[test]
    fn every_vector_path_equals_scalar_over_many_keys_counters_and_bounds() {
        let gens = vector_generators();
        eprintln!("vector generators on this machine: {gens:?}");
        let bounds = [
            1u32,
            2,
            3,
            7,
            223,
            1000,
            20_000,
            500_000,
            1_000_003,
            0x8000_0001,
            0xC000_0001,
            u32::MAX - 1,
            u32::MAX,
        ];
        // Lengths cover partial vector groups (1 block, 7, 9, 15, 17, 33) and long runs;
        // first blocks cover 0, odd starts and the 2^32 wrap.
        let shapes: [(u32, usize); 8] = [
            (0, 1),
            (0, 7),
            (1, 9),
            (5, 15),
            (64, 17),
            (1000, 33),
            (u32::MAX - 20, 64),
            (123_456, 256),
        ];
        for g in gens {
            let mut compared = 0usize;
            for seed in 0u64..24 {
                let key = seed_key(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed);
                let addr = [seed as u32 * 7 + 1, (seed % 3) as u32];
                for &q in &bounds {
                    for &(first, n) in &shapes {
                        let mut want = vec![0u32; 4 * n];
                        let mut got = vec![0xDEAD_BEEF; 4 * n];
                        Generator::Scalar.fill_bounded(key, addr, first, q, &mut want);
                        g.fill_bounded(key, addr, first, q, &mut got);
                        assert_eq!(
                            got, want,
                            "{g}: key {key:08x?} addr {addr:?} first {first} blocks {n} q {q}"
                        );
                        compared += 4 * n;
                    }
                }
            }
            assert!(compared > 500_000, "{g}: compared {compared} words");
        }
    }

    #[test]
    fn vector_paths_take_the_retry_branch_like_scalar() {
        // Crafted keys: each puts a rejected word in a chosen block, at the first, a middle
        // and the last position of a vector group and in a partial tail group, for a bound
        // that rejects often (2^31 + 1), one that rejects rarely (1,000,003: t = 2^32 mod q)
        // and 3 (t = 1: only a product with low half 0 is rejected).
        for g in vector_generators() {
            for (q, blocks) in [
                (0x8000_0001u32, &[0u32, 3, 7, 8, 15, 16, 18][..]),
                (1_000_003, &[0, 5, 9][..]),
            ] {
                for &block in blocks {
                    let addr = [11, 2];
                    let key = key_with_rejection(addr, block, q);
                    let n = 19; // two full groups of 8 (one of 16), then a partial one
                    let mut want = vec![0u32; 4 * n];
                    let mut got = vec![0u32; 4 * n];
                    Generator::Scalar.fill_bounded(key, addr, 0, q, &mut want);
                    g.fill_bounded(key, addr, 0, q, &mut got);
                    assert_eq!(got, want, "{g}: q {q}, rejection in block {block}");
                    // And the rejected word really went through redraw (retry >= 1).
                    let t = lemire_threshold(q);
                    let raw = philox4x32_10([addr[0], addr[1], block, 0], key);
                    let w = raw
                        .iter()
                        .position(|&x| lemire_accept(x, q, t).is_none())
                        .unwrap();
                    let i = 4 * block as usize + w;
                    assert_eq!(got[i], redraw(key, [addr[0], addr[1], block], w, q, t));
                }
            }
        }
    }

    #[test]
    fn vector_paths_agree_where_the_threshold_is_one() {
        // q = 3 and q = 2^32 - 1 have t = 2^32 mod q = 1: only a product whose low half is
        // 0 is rejected, the edge of the vector compare (low half < t).
        for g in vector_generators() {
            for q in [3u32, u32::MAX] {
                let key = seed_key(42);
                let mut want = vec![0u32; 4 * 4096];
                let mut got = vec![0u32; 4 * 4096];
                Generator::Scalar.fill_bounded(key, [1, 0], 0, q, &mut want);
                g.fill_bounded(key, [1, 0], 0, q, &mut got);
                assert_eq!(got, want, "{g}: q {q}");
            }
        }
    }

    #[test]
    fn every_vector_path_equals_scalar_at_every_length_and_writes_only_its_blocks() {
        // Every length from 0 to 40 blocks: every tail of an 8-block (AVX2, NEON) and a
        // 16-block (AVX-512) step, alone and after whole steps, across the 2^32 wrap and
        // not, at a bound that rejects about half of all words (so tails take the retry
        // path) and one that rejects rarely. `out` is the middle of a larger buffer: the
        // words around it must stay as they were (values below q never equal SENTINEL).
        const SENTINEL: u32 = 0xDEAD_BEEF;
        for g in vector_generators() {
            for n in 0..=40usize {
                for (first, q) in [(u32::MAX - 3, 0x8000_0001u32), (9, 1000)] {
                    let key = seed_key(n as u64 ^ u64::from(q));
                    let addr = [n as u32, 3];
                    let mut want = vec![0u32; 4 * n];
                    Generator::Scalar.fill_bounded(key, addr, first, q, &mut want);
                    let mut buf = vec![SENTINEL; 4 + 4 * n + 8];
                    g.fill_bounded(key, addr, first, q, &mut buf[4..4 + 4 * n]);
                    assert_eq!(&buf[4..4 + 4 * n], &want[..], "{g}: n {n} q {q}");
                    assert_eq!(buf[..4], [SENTINEL; 4], "{g}: n {n} q {q}");
                    assert_eq!(buf[4 + 4 * n..], [SENTINEL; 8], "{g}: n {n} q {q}");
                }
            }
        }
    }

    /// Every group `for_each_group` hands on, concatenated, with its first block.
    struct Collect(Vec<(u32, usize)>, Vec<u32>);

    impl GroupSink for Collect {
        fn take(&mut self, first: u32, words: &[u32]) {
            self.0.push((first, words.len()));
            self.1.extend_from_slice(words);
        }
    }

    #[test]
    fn for_each_group_hands_on_exactly_the_filled_words_in_order() {
        // Every generator (scalar too), lengths that end mid-step, the 2^32 wrap, a bound
        // that rejects about half of all words and one with t = 0 (q a power of two).
        for g in Generator::supported() {
            for &(first, n) in &[
                (0u32, 1u32),
                (0, 8),
                (3, 9),
                (7, 33),
                (u32::MAX - 5, 20),
                (0, 1000),
            ] {
                for q in [0x8000_0001u32, 20_000, 1 << 20, 1] {
                    let key = seed_key(u64::from(first) ^ u64::from(q));
                    let addr = [first ^ 5, 9];
                    let mut want = vec![0u32; 4 * n as usize];
                    Generator::Scalar.fill_bounded(key, addr, first, q, &mut want);
                    let mut got = Collect(Vec::new(), Vec::new());
                    g.for_each_group(key, addr, first, n, q, &mut got);
                    assert_eq!(got.1, want, "{g}: first {first} n {n} q {q}");
                    // Groups are contiguous and start where the previous one ended.
                    let mut next = first;
                    for &(j, len) in &got.0 {
                        assert_eq!(j, next, "{g}");
                        assert!(len > 0 && len % 4 == 0, "{g}");
                        next = next.wrapping_add(len as u32 / 4);
                    }
                    assert_eq!(next, first.wrapping_add(n), "{g}");
                }
            }
        }
    }

    #[test]
    fn for_each_group_fixes_rejections_like_scalar() {
        for g in Generator::supported() {
            // First, middle and last block of a 12-block AVX2 step, and in a partial last step.
            for block in [0u32, 7, 8, 11, 12, 13, 16] {
                let (addr, q) = ([4, 1], 1_000_003);
                let key = key_with_rejection(addr, block, q);
                let mut want = vec![0u32; 4 * 17];
                Generator::Scalar.fill_bounded(key, addr, 0, q, &mut want);
                let mut got = Collect(Vec::new(), Vec::new());
                g.for_each_group(key, addr, 0, 17, q, &mut got);
                assert_eq!(got.1, want, "{g}: rejection in block {block}");
            }
        }
    }

    #[test]
    fn parse_names_and_errors() {
        assert_eq!(Generator::parse("scalar").unwrap(), Generator::Scalar);
        assert_eq!(Generator::parse(" Scalar ").unwrap(), Generator::Scalar);
        assert_eq!(Generator::parse("auto").unwrap(), Generator::best());
        assert_eq!(Generator::parse("").unwrap(), Generator::best());
        let e = Generator::parse("sse9").unwrap_err().to_string();
        assert!(e.contains("STATS_CPU_RNG=sse9: unknown generator"), "{e}");
        for g in Generator::ALL {
            match Generator::parse(g.name()) {
                Ok(p) => assert!(p == g && g.is_supported()),
                Err(e) => {
                    assert!(!g.is_supported());
                    assert!(e.to_string().contains("this CPU cannot run"), "{e}");
                }
            }
        }
    }

    #[test]
    fn best_is_supported_and_passes_its_check() {
        let b = Generator::best();
        assert!(b.is_supported() && b.self_check());
        assert!(Generator::Scalar.self_check());
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            assert_ne!(b, Generator::Scalar, "AVX2 present but not chosen");
        }
    }

    #[test]
    fn round_keys_follow_the_weyl_schedule() {
        let ks = round_keys([0xFFFF_FFFF, 1]);
        assert_eq!(ks[0], [0xFFFF_FFFF, 1]);
        assert_eq!(ks[1], [0x9E37_79B8, 0xBB67_AE86]);
        assert_eq!(
            ks[9],
            [
                0xFFFF_FFFFu32.wrapping_add(9u32.wrapping_mul(0x9E37_79B9)),
                1u32.wrapping_add(9u32.wrapping_mul(0xBB67_AE85))
            ]
        );
    }
}
