//! Named stream domains: every random stream the crate draws from, in one place.
//!
//! A Philox draw is addressed by a key (from the user's seed, [`super::stream::seed_key`])
//! and a 128-bit counter. Each kind of stream owns a part of the counter space, set apart by
//! a domain tag in a fixed counter word (or by its own key), so two kinds of streams never
//! read the same block even under the same seed. The counter of each domain is built here
//! and nowhere else:
//!
//! | domain | key | counter | used by |
//! |---|---|---|---|
//! | bootstrap resamples | seed | `[replicate, stratum, block, retry]` | `resample` (CPU and `crates/ragstats-gpu/shaders/resample.wgsl`), `allocation` |
//! | permutations | seed | `[permutation, PERMUTE, block, retry]` | `correlate::permute` (and `crates/ragstats-gpu/shaders/permute.wgsl`) |
//! | MCQ option shuffles | shuffle seed | `[h0, h1, block, retry]`, `h` = SHA-256 of the item id | `mcq::shuffle` |
//! | allocation question order | seed | `[index, stratum, 0, ALLOCATION_ORDER]` | `allocation::allocate` |
//! | synthetic benchmark rows | seed ^ [`SYNTHETIC_ROWS_KEY`] | `[row, column / 4, SYNTHETIC_ROWS, 0]` | `resample::workload` |
//! | simultaneous critical values | [`MAX_T_KEY`] (keyed xoshiro) | the family's size | `inference::max_t` |
//! | retry jitter | clock and process id | `[n as u32, (n >> 32) as u32, JITTER, 0]` | `llm::retry` |
//!
//! Why they are disjoint: the bootstrap's word 1 is a stratum index, far below [`PERMUTE`];
//! its word 3 is a retry count, which is 0 except after a rejection (probability below
//! q / 2^32 each) and so never reaches [`ALLOCATION_ORDER`]. MCQ shuffles take a
//! `--shuffle-seed` of their own and never share a run with the resampling streams.
//!
//! The simulators draw from keyed xoshiro256** streams instead ([`super::keyed`]); their
//! tags are in [`sim`].
//!
//! Every value here is pinned: it fixes which numbers a seed gives (and the GPU shaders
//! repeat the counter layouts), so changing one changes every result drawn from it.

/// Counter word 1 of every permutation-test stream. The WGSL copy is `PERMUTE_STREAM` in
/// `crates/ragstats-gpu/shaders/permute.wgsl`.
pub const PERMUTE: u32 = 0xFFFF_FFFE;

/// Counter word 3 of the allocation question-order shuffle.
pub const ALLOCATION_ORDER: u32 = 0xA110C;

/// Counter word 2 of the synthetic benchmark rows.
pub const SYNTHETIC_ROWS: u32 = 0xBE4C;

/// Xored into the seed to key the synthetic benchmark rows, so the rows and the resamples
/// drawn from them by a benchmark with the same seed are unrelated.
pub const SYNTHETIC_ROWS_KEY: u64 = 0x5EED_DA7A;

/// Counter word 2 of the retry-jitter stream.
pub const JITTER: u32 = 0xB0FF;

/// Seed of the keyed stream behind the simultaneous critical values
/// (`inference::max_t`): fixed, so a critical value depends on the family's correlations,
/// degrees of freedom and level only, never on the run's seed.
pub const MAX_T_KEY: u64 = 0x3A7_C417;

/// The counter of the block at address `addr` (words 0 to 2) on retry `retry` (word 3).
/// The domains whose draws are redrawn on a Lemire rejection (bootstrap, permutations, MCQ
/// shuffles) give an address; the retry count is always word 3.
#[inline(always)]
pub fn counter(addr: [u32; 3], retry: u32) -> [u32; 4] {
    [addr[0], addr[1], addr[2], retry]
}

/// Address of block `block` (draws `4·block .. 4·block + 3`) of bootstrap replicate
/// `replicate`, stratum `stratum`. `crates/ragstats-gpu/shaders/resample.wgsl` builds the same counter.
#[inline(always)]
pub fn bootstrap(replicate: u32, stratum: u32, block: u32) -> [u32; 3] {
    [replicate, stratum, block]
}

/// Counter words 0 and 1 of every block of bootstrap replicate `replicate`, stratum
/// `stratum` (the block number is word 2): the stream address that
/// [`super::blocks::Generator::fill_bounded`] takes. Same layout as [`bootstrap`].
#[inline(always)]
pub fn bootstrap_stream(replicate: u32, stratum: u32) -> [u32; 2] {
    let a = bootstrap(replicate, stratum, 0);
    [a[0], a[1]]
}

/// Address of block `block` of permutation `p`. `crates/ragstats-gpu/shaders/permute.wgsl` builds the same
/// counter.
#[inline(always)]
pub fn permutation(p: u32, block: u32) -> [u32; 3] {
    [p, PERMUTE, block]
}

/// Address of block `block` of the option shuffle of the item whose id hashes to
/// `id_words`.
#[inline(always)]
pub fn mcq_shuffle(id_words: [u32; 2], block: u32) -> [u32; 3] {
    [id_words[0], id_words[1], block]
}

/// The block whose words 0 and 1 give the sort key of question `index` of stratum `stratum`
/// in the seeded allocation question order.
#[inline(always)]
pub fn allocation_order(index: u32, stratum: u32) -> [u32; 4] {
    [index, stratum, 0, ALLOCATION_ORDER]
}

/// The block holding columns `4·column_block .. 4·column_block + 3` of synthetic row `row`
/// (under the key of `seed ^ SYNTHETIC_ROWS_KEY`).
#[inline(always)]
pub fn synthetic_rows(row: u32, column_block: u32) -> [u32; 4] {
    [row, column_block, SYNTHETIC_ROWS, 0]
}

/// The block of jitter draw `n`.
#[inline(always)]
pub fn jitter(n: u64) -> [u32; 4] {
    [n as u32, (n >> 32) as u32, JITTER, 0]
}

/// Tags of the simulators' keyed streams ([`super::keyed::KeyedStream::new`]`(seed,
/// &[TAG, indices...])`): which random effect or token count a stream draws.
pub mod sim {
    /// Question effect shared by all arms, `[SHARED_Q, stratum, question]`.
    pub const SHARED_Q: u64 = 1;
    /// Trajectory effect shared by all arms, `[SHARED_T, stratum, question, trajectory]`.
    pub const SHARED_T: u64 = 2;
    /// Read effect shared by all arms, `[SHARED_R, stratum, question, trajectory, read]`.
    pub const SHARED_R: u64 = 3;
    /// Arm `a`'s question contrast effect, `[CONTRAST_Q, stratum, question, a]`.
    pub const CONTRAST_Q: u64 = 4;
    /// Arm `a`'s trajectory contrast effect, `[CONTRAST_T, stratum, question, trajectory, a]`.
    pub const CONTRAST_T: u64 = 5;
    /// Arm `a`'s read contrast effect, `[CONTRAST_R, stratum, question, trajectory, read, a]`.
    pub const CONTRAST_R: u64 = 6;
    /// Gaussian nested model: question effect, `[NORMAL_Q, stratum, question]`.
    pub const NORMAL_Q: u64 = 11;
    /// Gaussian nested model: trajectory effect, `[NORMAL_T, stratum, question, trajectory]`.
    pub const NORMAL_T: u64 = 12;
    /// Gaussian nested model: read effect, `[NORMAL_R, stratum, question, trajectory, read]`.
    pub const NORMAL_R: u64 = 13;
    /// Planner call tokens, `[PLANNER, stratum, question, trajectory, arm, step]` (arm is
    /// [`SHARED_ARM`] for the shared step 0).
    pub const PLANNER: u64 = 21;
    /// Reader input tokens, `[READER_IN, stratum, question, trajectory, arm]`.
    pub const READER_IN: u64 = 22;
    /// Reader output tokens, `[READER_OUT, stratum, question, trajectory, arm, read]`.
    pub const READER_OUT: u64 = 23;
    /// The arm index of a call every arm shares (the first planner call of a trajectory):
    /// no real arm has it.
    pub const SHARED_ARM: u64 = u64::MAX;
}
