//! The rayon CPU backend: each (replicate, stratum) pair is computed serially by emulating
//! the GPU's 64 lanes, so its sums are bit-identical to the GPU backend's (see the
//! accumulation contract in [`super::engine`]). Pairs run in parallel; nothing a thread
//! does depends on which thread it is or how many there are. The draws come from the
//! scalar or a vectorised Philox generator ([`Generator`]); they are the same words either
//! way, so the sums are too.

use rayon::prelude::*;

use super::engine::{ResampleBackend, ResampleJob, CHUNK_ROWS, LANES};
use crate::rng::blocks::{Generator, GroupSink};
use crate::rng::domain;
use crate::rng::stream::seed_key;
use crate::{Error, Result};

/// Draws per progress step: replicates are processed in batches of about this many draws
/// (at least [`PairOrder::min_batch_replicates`] replicates), and `progress` is called
/// after each batch (from the calling thread, so it is monotone).
const DRAWS_PER_BATCH: u64 = 1 << 24;
/// Draws per rayon task, so that tiny strata (a few hundred rows) are not scheduled one
/// pair at a time.
pub(crate) const DRAWS_PER_TASK: u64 = 1 << 18;

/// The CPU backend. Uses the rayon pool it is called from.
#[derive(Debug, Clone, Default)]
pub struct CpuBackend {
    note: Option<String>,
    generator: Option<Generator>,
}

impl CpuBackend {
    /// A CPU backend.
    pub fn new() -> Self {
        CpuBackend::default()
    }

    /// A CPU backend chosen as a fallback; `note` (why no GPU) is shown in its description.
    pub fn with_note(note: String) -> Self {
        CpuBackend {
            note: Some(note),
            generator: None,
        }
    }

    /// This backend drawing with `generator` instead of the one [`Generator::from_env`]
    /// picks (`STATS_CPU_RNG`, else the widest the CPU supports). The sums are the same.
    pub fn with_generator(mut self, generator: Generator) -> Self {
        self.generator = Some(generator);
        self
    }

    /// The generator [`ResampleBackend::resample_sums`] draws with.
    ///
    /// # Errors
    /// [`Error::Usage`] for a bad `STATS_CPU_RNG`, or a forced generator this CPU cannot run.
    pub fn generator(&self) -> Result<Generator> {
        match self.generator {
            None => Generator::from_env(),
            Some(g) if g.is_supported() => Ok(g),
            Some(g) => Err(Error::Usage(format!(
                "the {g} random-number generator cannot run on this CPU"
            ))),
        }
    }
}

impl ResampleBackend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        let n = rayon::current_num_threads();
        let base = format!("rayon, {n} thread{}", if n == 1 { "" } else { "s" });
        match &self.note {
            Some(n) => format!("{base}; {n}"),
            None => base,
        }
    }

    fn resample_sums(
        &self,
        job: &ResampleJob,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f32>> {
        job.validate()?;
        let generator = self.generator()?;
        let k = job.k;
        let n_strata = job.strata.len();
        let mut out = vec![0f32; job.output_len()];
        if out.is_empty() {
            return Ok(out);
        }
        let rows = job.rows();
        let per_rep = job.draws_per_replicate().max(1);
        let order = PairOrder::for_strata(&job.strata);
        let batch_reps = (DRAWS_PER_BATCH / per_rep)
            .max(order.min_batch_replicates())
            .clamp(1, u32::MAX as u64) as usize;
        let key = seed_key(job.seed);
        let start = job.replicates.start;
        let mut done = 0usize;
        let mut buf = Vec::new();
        for batch in out.chunks_mut(batch_reps * n_strata * k) {
            let first = start + done as u32;
            order.fill(batch, &rows, k, &mut buf, |i, s, sums, scratch| {
                let draws = Draws::Stream {
                    generator,
                    key,
                    r: first + i as u32,
                    s: s as u32,
                };
                pair_sums(draws, job.strata[s], rows[s], k, sums, scratch);
            });
            done += batch.len() / (n_strata * k);
            progress(done as u64);
        }
        Ok(out)
    }
}

/// The order in which threads take the (replicate, stratum) pairs of a batch. The sums
/// are the same either way; only which rows are in cache together differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairOrder {
    /// Pairs in output order (replicate-major, strata interleaved), split among threads in
    /// runs of at least 2^18 draws: the finest balance, for tables that fit a core's L2
    /// whatever the interleaving.
    Interleaved,
    /// One stratum at a time, its replicates split among all threads, so the threads read
    /// the same table and the rows in cache at once are one table's, not one per thread.
    /// For tables past L2 ([`PairOrder::SHARED_PAST_BYTES`]). Measured on the 2-core Zen 4
    /// VM (docs/BENCHMARKS.md, medians of 5 alternated runs, the walks then unchanged):
    /// 2 x 500,000 rows, k = 4 (8 MB a table), 311 -> 470 M draws/s; k = 8, 168 -> 234;
    /// k = 1, 657 -> 708.
    StratumAtATime,
}

impl PairOrder {
    /// Tables of more bytes than this (a core's L2 here) are taken one stratum at a time.
    pub const SHARED_PAST_BYTES: usize = 1 << 20;

    /// [`PairOrder::StratumAtATime`] when some table (`k` values a row) is past L2.
    pub fn for_strata(strata: &[&[f32]]) -> PairOrder {
        let bytes = strata.iter().map(|d| std::mem::size_of_val(*d)).max();
        if bytes.unwrap_or(0) > PairOrder::SHARED_PAST_BYTES {
            PairOrder::StratumAtATime
        } else {
            PairOrder::Interleaved
        }
    }

    /// The order's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            PairOrder::Interleaved => "strata interleaved",
            PairOrder::StratumAtATime => "one stratum at a time",
        }
    }

    /// Fewest replicates a batch should hold: one stratum at a time, a batch's replicates
    /// are all the tasks there are, so each thread gets four.
    pub(crate) fn min_batch_replicates(self) -> u64 {
        match self {
            PairOrder::Interleaved => 1,
            PairOrder::StratumAtATime => 4 * rayon::current_num_threads() as u64,
        }
    }

    /// Fills `batch` (replicate-major: pair `(i, s)` at `(i n_strata + s) k`, `k` values,
    /// `n_strata = rows.len()`) by calling `f(i, s, sums, scratch)` for every pair, in
    /// parallel; `buf` is reused between calls.
    pub(crate) fn fill(
        self,
        batch: &mut [f32],
        rows: &[u32],
        k: usize,
        buf: &mut Vec<f32>,
        f: impl Fn(usize, usize, &mut [f32], &mut Vec<f32>) + Sync,
    ) {
        let n_strata = rows.len();
        match self {
            PairOrder::Interleaved => {
                let per_rep: u64 = rows.iter().map(|&q| q as u64).sum::<u64>().max(1);
                let min_pairs = (DRAWS_PER_TASK * n_strata as u64 / per_rep).max(1) as usize;
                batch
                    .par_chunks_mut(k)
                    .with_min_len(min_pairs)
                    .enumerate()
                    .for_each_init(Vec::new, |scratch, (p, sums)| {
                        f(p / n_strata, p % n_strata, sums, scratch)
                    });
            }
            PairOrder::StratumAtATime => {
                let reps = batch.len() / (n_strata * k);
                for (s, &q) in rows.iter().enumerate() {
                    buf.clear();
                    buf.resize(reps * k, 0.0);
                    let min_reps = (DRAWS_PER_TASK / (q as u64).max(1)).max(1) as usize;
                    buf.par_chunks_mut(k)
                        .with_min_len(min_reps)
                        .enumerate()
                        .for_each_init(Vec::new, |scratch, (i, sums)| f(i, s, sums, scratch));
                    for (i, sums) in buf.chunks(k).enumerate() {
                        batch[(i * n_strata + s) * k..][..k].copy_from_slice(sums);
                    }
                }
            }
        }
    }
}

/// Where the row indices of one (replicate, stratum) pair come from.
#[derive(Debug, Clone, Copy)]
pub enum Draws<'a> {
    /// Drawn by `generator` from the bootstrap stream of replicate `r`, stratum `s` under
    /// `key`, as the accumulation contract defines them.
    Stream {
        generator: Generator,
        key: [u32; 2],
        r: u32,
        s: u32,
    },
    /// Given, in draw order (each `< q`): the adds alone, for measuring them.
    Given(&'a [u32]),
}

/// Sums of the `q` draws of one (replicate, stratum) pair into `out` (`k` values), per the
/// accumulation contract. `data` holds `q` rows of `k` values.
///
/// # Panics
/// If `k` is not in `1..=16`, `data` has fewer than `q` rows, or given draws are not `q`.
pub fn pair_sums(
    draws: Draws,
    data: &[f32],
    q: u32,
    k: usize,
    out: &mut [f32],
    scratch: &mut Vec<f32>,
) {
    if let Draws::Given(rows) = draws {
        assert_eq!(rows.len(), q as usize, "pair_sums: {q} draws expected");
    }
    macro_rules! dispatch {
        ($($n:literal)*) => {
            match k {
                $($n => pair_sums_k::<$n>(draws, data, q, out, scratch),)*
                _ => panic!("pair_sums: k = {k}, expected 1 to 16"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// Blocks drawn per call of the generator: the rows of a batch are drawn first and only
/// then handed on, so the gathers that follow are independent loads back to back, which
/// the core overlaps, instead of each waiting behind a Philox block. 256 blocks (4 KB of
/// indices) stay in L1 and are a whole number of steps of every vector generator.
const BATCH_BLOCKS: u32 = 256;

/// Draws per batch: [`BATCH_BLOCKS`] blocks of four.
const BATCH_DRAWS: usize = 4 * BATCH_BLOCKS as usize;

/// Calls `f(j0, rows)` for every batch of (r, s) in order: `rows` are the drawn row indices
/// of draws `4 j0 ..` (blocks `j0, j0 + 1, ...`, words 0..3 each), at most
/// `4 BATCH_BLOCKS` of them, the last batch cut at draw `q`.
#[inline(always)]
pub(crate) fn walk_batches(
    generator: Generator,
    key: [u32; 2],
    r: u32,
    s: u32,
    q: u32,
    mut f: impl FnMut(u32, &[u32]),
) {
    walk_batches_ahead(generator, key, r, s, q, 0, |j0, rows, _| f(j0, rows));
}

/// [`walk_batches`], with `window` handed on too: the batch's draws followed by up to
/// `ahead` (at most [`PREFETCH_DRAWS`]) of the next, fewer only at draw `q`. The window
/// slides: after each batch its last `ahead` draws move to the front, and the next batch
/// is drawn after them, so every draw is drawn once.
///
/// # Panics
/// If `ahead` is more than [`PREFETCH_DRAWS`] or not a multiple of 4.
#[inline(always)]
fn walk_batches_ahead(
    generator: Generator,
    key: [u32; 2],
    r: u32,
    s: u32,
    q: u32,
    ahead: usize,
    mut f: impl FnMut(u32, &[u32], &[u32]),
) {
    assert!(ahead <= PREFETCH_DRAWS && ahead.is_multiple_of(4));
    let addr = domain::bootstrap_stream(r, s);
    let q = q as usize;
    let mut buf = [0u32; BATCH_DRAWS + PREFETCH_DRAWS];
    let window = &mut buf[..BATCH_DRAWS + ahead];
    // Draws blocks from draw `first` on into window[from..] (as many as fit, up to the
    // block holding draw q - 1); returns how many words it wrote.
    let fill = |window: &mut [u32], from: usize, first: usize| {
        let n = (window.len() - from).min(q.next_multiple_of(4) - first);
        generator.fill_bounded(
            key,
            addr,
            (first / 4) as u32,
            q as u32,
            &mut window[from..from + n],
        );
        n
    };
    let mut have = fill(window, 0, 0);
    let mut first = 0;
    while first < q {
        let len = BATCH_DRAWS.min(q - first);
        let view = &window[..have.min(q - first)];
        f((first / 4) as u32, &view[..len], view);
        first += len;
        if first >= q {
            break;
        }
        // Here len = BATCH_DRAWS; the draws past it go to the front, the next after them.
        let kept = have - len;
        window.copy_within(len..have, 0);
        have = kept + fill(window, kept, first + kept);
    }
}

/// How [`walk_blocks`] hands the draws to the adds. Whichever walk, the adds and their
/// order are the same; only how they overlap with drawing and loading differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// A generator step at a time ([`Generator::for_each_group`], or fused with the adds
    /// for AVX2: [`super::fused_avx2`]), right after it is drawn, so the adds of one step
    /// overlap the drawing of the next: best while the table is read at L2 or near-L3
    /// latency.
    Steps,
    /// In batches of [`BATCH_BLOCKS`] blocks drawn first, each block's adds preceded by a
    /// prefetch of the rows [`PREFETCH_DRAWS`] draws later: for tables past the L3 share
    /// or the TLB's reach, whose loads the core alone cannot overlap enough.
    Prefetched,
}

impl Walk {
    /// Largest table (bytes) walked in [`Walk::Steps`]; larger ones are
    /// [`Walk::Prefetched`]. Measured on the Zen 4 VM with the threads on one stratum at
    /// a time ([`PairOrder::StratumAtATime`]; medians of alternated runs,
    /// docs/BENCHMARKS.md), steps against prefetched batches: 2 x 500,000 rows, k = 1
    /// (2 MB), 796 against 521 M draws/s; k = 2 (4 MB), 635 against 521; k = 3 (6 MB),
    /// 474 against 298; 8 MB even (k = 4: 464 against 434; 2 x 1,000,000, k = 2: 340
    /// against 404); 10 MB (k = 5) 183 against 286, and from 16 MB far apart (k = 8:
    /// 86 against 191). At 4 MiB a stratum with more rows than [`CHUNK_ROWS`] is past
    /// the threshold even at k = 1, so the several-chunk sums never walk in steps.
    pub const STEPS_MAX_BYTES: usize = 4 << 20;

    /// The walk's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Walk::Steps => "steps",
            Walk::Prefetched => "prefetched batches",
        }
    }

    /// The walk for a stratum table of `bytes` bytes.
    pub fn for_table(bytes: usize) -> Walk {
        if bytes <= Walk::STEPS_MAX_BYTES {
            Walk::Steps
        } else {
            Walk::Prefetched
        }
    }
}

/// How the CPU engine walks a stratum table of `bytes` bytes, for reports: `"steps"` (up
/// to 4 MiB: each generator step's rows added before the next is drawn, fused with the
/// AVX2 generator) or `"prefetched batches"` (larger: 1,024 draws drawn, then their rows
/// added, each asked for 64 draws ahead). The sums are the same whichever walk.
pub fn walk_name(bytes: usize) -> &'static str {
    Walk::for_table(bytes).name()
}

/// Which table sizes get which walk, for reports: "steps up to 4 MiB of rows, prefetched
/// batches above", from the threshold itself.
pub fn walk_legend() -> String {
    format!(
        "{} up to {} MiB of rows, {} above",
        Walk::Steps.name(),
        Walk::STEPS_MAX_BYTES >> 20,
        Walk::Prefetched.name()
    )
}

/// Calls `f(lane, rows)` for every block `j` of (r, s), in increasing `j`: `rows` are the
/// block's drawn row indices (words 0..3; fewer for the last block when 4 ∤ q) and `lane`
/// is `j % LANES`, so each lane sees its blocks in increasing `j` and words 0..3 within a
/// block, the contract's order, whichever `walk`.
///
/// In [`Walk::Prefetched`], before each block it also calls `ahead(row)` for the draws
/// [`PREFETCH_DRAWS`] past the block's first (across batch boundaries; none past draw
/// `q`), so a caller can ask for those rows' cache lines while it adds the block's.
/// [`Walk::Steps`] never calls `ahead`.
#[inline(always)]
pub(crate) fn walk_blocks(
    walk: Walk,
    draws: Draws,
    q: u32,
    mut ahead: impl FnMut(u32),
    mut f: impl FnMut(usize, &[u32]),
) {
    match walk {
        Walk::Steps => each_step(draws, q, &mut BlockWalk { q, f }),
        Walk::Prefetched => batches_ahead(draws, q, |j0, rows, window| {
            for (b, block) in rows.chunks(4).enumerate() {
                let i = 4 * b + PREFETCH_DRAWS;
                if let Some(upcoming) = window.get(i..i + 4) {
                    for &row in upcoming {
                        ahead(row);
                    }
                } else {
                    for &row in window.get(i..).unwrap_or_default() {
                        ahead(row);
                    }
                }
                f((j0 as usize + b) & (LANES - 1), block);
            }
        }),
    }
}

/// How many draws ahead of the adds [`walk_blocks`] asks for rows in [`Walk::Prefetched`]:
/// enough loads in flight to cover memory latency, few enough that the lines are still
/// in L1 when their adds come. On the Zen 4 VM (2 x 500,000 rows, k = 4, a busy host)
/// 32, 64, 96 and 128 draws did alike within the noise, all about 1.6 times no prefetch.
pub(crate) const PREFETCH_DRAWS: usize = 64;

/// Calls `f(j0, rows, window)` for every batch of the draws in order, as
/// [`walk_batches_ahead`] does for a stream: `window` is the batch's draws followed by up
/// to [`PREFETCH_DRAWS`] of the next.
#[inline(always)]
fn batches_ahead(draws: Draws, q: u32, mut f: impl FnMut(u32, &[u32], &[u32])) {
    match draws {
        Draws::Stream {
            generator,
            key,
            r,
            s,
        } => walk_batches_ahead(generator, key, r, s, q, PREFETCH_DRAWS, f),
        Draws::Given(rows) => {
            for (i, batch) in rows.chunks(BATCH_DRAWS).enumerate() {
                let start = i * BATCH_DRAWS;
                let window = &rows[start..(start + BATCH_DRAWS + PREFETCH_DRAWS).min(rows.len())];
                f((i * BATCH_DRAWS / 4) as u32, batch, window);
            }
        }
    }
}

/// [`prefetch`] of a row: of its first value, and of its last too when the row may span
/// two cache lines. The allocator's buffers are 16-byte aligned here (glibc), so a row
/// whose size divides 16 bytes (k = 1, 2, 4) never does; larger ones mostly do, and
/// fetching only their first line measured half the rate (2 x 500,000 rows, k = 16:
/// 46 against 97 M draws/s). A wrong guess costs one hint, never a value.
#[inline(always)]
fn prefetch_row<const K: usize>(row: &[f32; K]) {
    prefetch(&row[0]);
    if 16 % (4 * K) != 0 {
        prefetch(&row[K - 1]);
    }
}

/// Asks the core to load the cache line holding `x` into L1 now, without waiting for it
/// (a hint: it never faults and changes no value). Other targets do without it.
#[inline(always)]
fn prefetch<T>(x: &T) {
    let p: *const T = x;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing into the program and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above; PRFM is a hint.
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

/// Hands the draws to `sink` a generator step at a time ([`Generator::for_each_group`]);
/// given draws in steps of [`GIVEN_STEP_BLOCKS`] blocks.
#[inline(always)]
fn each_step(draws: Draws, q: u32, sink: &mut impl GroupSink) {
    match draws {
        Draws::Stream {
            generator,
            key,
            r,
            s,
        } => {
            let addr = domain::bootstrap_stream(r, s);
            generator.for_each_group(key, addr, 0, q.div_ceil(4), q, sink);
        }
        Draws::Given(rows) => {
            for (i, step) in rows.chunks(4 * GIVEN_STEP_BLOCKS).enumerate() {
                sink.take((i * GIVEN_STEP_BLOCKS) as u32, step);
            }
        }
    }
}

/// Blocks per step of given draws: 12, the step of the engine's former AVX2 walk. (The
/// fused AVX2 walk, `super::fused_avx2`, takes 8 and reads word-major indices, so the
/// adds-alone row times the block-major adds of the other generators' steps walk.)
const GIVEN_STEP_BLOCKS: usize = 12;

/// The [`GroupSink`] of [`walk_blocks`]: hands each block of a group to `f` with its lane,
/// the last block cut at draw `q`.
struct BlockWalk<F> {
    q: u32,
    f: F,
}

impl<F: FnMut(usize, &[u32])> GroupSink for BlockWalk<F> {
    #[inline(always)]
    fn take(&mut self, j0: u32, words: &[u32]) {
        // 4 j0 < q for every block j0 < ceil(q / 4); the last block may hold fewer draws.
        let draws = ((self.q - 4 * j0) as usize).min(words.len());
        let blocks = words[..draws].chunks_exact(4);
        let last = blocks.remainder();
        let n = blocks.len();
        for (jj, block) in blocks.enumerate() {
            (self.f)((j0 as usize + jj) & (LANES - 1), block);
        }
        if !last.is_empty() {
            (self.f)((j0 as usize + n) & (LANES - 1), last);
        }
    }
}

/// Tree reduction over lanes of `acc` (LANES rows of `K`, row-major): stride 32, 16, ..., 1,
/// `acc[l] += acc[l + stride]` for `l < stride`.
#[inline(always)]
fn tree_reduce<const K: usize>(acc: &mut [f32]) {
    let mut stride = LANES / 2;
    while stride > 0 {
        let (lo, hi) = acc.split_at_mut(stride * K);
        for (a, b) in lo.iter_mut().zip(&hi[..stride * K]) {
            *a += *b;
        }
        stride /= 2;
    }
}

/// Row `row` of a table of `K`-wide rows. Lemire draws are `< q` = `table.len()`, so the
/// clamp to the last row never changes a row; it replaces a panicking index check.
#[inline(always)]
fn row_of<const K: usize>(table: &[[f32; K]], row: u32) -> &[f32; K] {
    &table[(row as usize).min(table.len() - 1)]
}

/// `a += row` for each of `rows` in order (one lane's adds for one block).
#[inline(always)]
fn add_rows<const K: usize>(a: &mut [f32; K], table: &[[f32; K]], rows: &[u32]) {
    // The sums are worked on in a local copy, not through `a`: through the reference, a
    // closure that the compiler kept out of line did one scalar add at a time, each
    // stored and reloaded (a profile at k = 16); the copy lives in vector registers.
    let mut t = *a;
    // Every block but the last has four draws: a fixed count the compiler unrolls.
    if let Ok(four) = <&[u32; 4]>::try_from(rows) {
        for &row in four {
            add_row(&mut t, row_of::<K>(table, row));
        }
    } else {
        for &row in rows {
            add_row(&mut t, row_of::<K>(table, row));
        }
    }
    *a = t;
}

/// `a += src`, value by value.
#[inline(always)]
fn add_row<const K: usize>(a: &mut [f32; K], src: &[f32; K]) {
    for c in 0..K {
        a[c] += src[c];
    }
}

/// The lane sums by the fused AVX2 walk ([`super::fused_avx2`]), when it applies: draws
/// from the AVX2 generator and a table walked in steps. `None` otherwise; the lanes are
/// the same either way.
#[inline(always)]
fn fused_lane_sums<const K: usize>(
    walk: Walk,
    draws: Draws,
    q: u32,
    table: &[[f32; K]],
) -> Option<[[f32; K]; LANES]> {
    #[cfg(target_arch = "x86_64")]
    if let Draws::Stream {
        generator: Generator::Avx2,
        key,
        r,
        s,
    } = draws
    {
        if walk == Walk::Steps {
            let addr = domain::bootstrap_stream(r, s);
            return Some(super::fused_avx2::lane_sums(key, addr, q, table));
        }
    }
    let _ = (walk, draws, q, table);
    None
}

fn pair_sums_k<const K: usize>(
    draws: Draws,
    data: &[f32],
    q: u32,
    out: &mut [f32],
    scratch: &mut Vec<f32>,
) {
    let table = &data.as_chunks::<K>().0[..q as usize];
    let n_chunks = (q as usize).div_ceil(CHUNK_ROWS);
    if n_chunks == 1 {
        // The lane accumulators are LANES packed K-vectors (row-major, like the data): a
        // block's four draws all go to one lane, whose K sums stay in registers for them.
        let mut acc = [[0f32; K]; LANES];
        let walk = Walk::for_table(std::mem::size_of_val(table));
        if let Some(lanes) = fused_lane_sums(walk, draws, q, table) {
            acc = lanes;
        } else {
            let add = |lane: usize, rows: &[u32]| {
                let mut a = acc[lane];
                add_rows::<K>(&mut a, table, rows);
                acc[lane] = a;
            };
            let ahead = |row| prefetch_row::<K>(row_of::<K>(table, row));
            walk_blocks(walk, draws, q, ahead, add);
        }
        let flat = acc.as_flattened_mut();
        tree_reduce::<K>(flat);
        for c in 0..K {
            out[c] = 0.0f32 + flat[c];
        }
        return;
    }
    // Several chunks: one set of lane accumulators per chunk, filled in a single pass over
    // the draws. Each lane still sees its blocks in increasing order within every chunk,
    // which is the order the GPU's one-dispatch-per-chunk walk produces.
    scratch.clear();
    scratch.resize(n_chunks * LANES * K, 0.0);
    let walk = Walk::for_table(std::mem::size_of_val(table));
    let ahead = |row| prefetch_row::<K>(row_of::<K>(table, row));
    walk_blocks(walk, draws, q, ahead, |lane, rows| {
        for &row in rows {
            let chunk = row as usize / CHUNK_ROWS;
            let src = row_of::<K>(table, row);
            let base = (chunk * LANES + lane) * K;
            let a = &mut scratch[base..base + K];
            for c in 0..K {
                a[c] += src[c];
            }
        }
    });
    out[..K].fill(0.0);
    for chunk in scratch.chunks_exact_mut(LANES * K) {
        tree_reduce::<K>(chunk);
        for c in 0..K {
            out[c] += chunk[c];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resample::workload::synthetic_rows;
    use crate::rng::draw_index;

    fn sums(generator: Generator, job: &ResampleJob) -> Vec<u32> {
        CpuBackend::new()
            .with_generator(generator)
            .resample_sums(job, &|_| {})
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    }

    #[test]
    fn every_generator_gives_the_same_sums_bit_for_bit() {
        // Strata of 1, 5 (4 ∤ q), 223, 1,027 (a partial last batch and vector step) and
        // 2,049 rows (batch boundaries at 256 blocks), k from 1 to 16; scalar is the reference.
        for k in [1usize, 3, 4, 5, 8, 16] {
            let data: Vec<Vec<f32>> = [1usize, 5, 223, 1027, 2049]
                .iter()
                .enumerate()
                .map(|(s, &q)| synthetic_rows(s as u64 + 10, q, k))
                .collect();
            let job = ResampleJob {
                strata: data.iter().map(|d| &d[..]).collect(),
                k,
                seed: 0x5EED_0000_0000_0007,
                replicates: 3..9,
            };
            let want = sums(Generator::Scalar, &job);
            for g in Generator::supported() {
                assert_eq!(sums(g, &job), want, "{g}, k = {k}");
            }
        }
    }

    #[test]
    fn every_generator_gives_the_same_sums_across_data_chunks() {
        // 2^20 + 5 rows: two accumulation chunks (the multi-chunk path).
        let q = CHUNK_ROWS + 5;
        let data = synthetic_rows(4, q, 1);
        let job = ResampleJob {
            strata: vec![&data],
            k: 1,
            seed: 12,
            replicates: 0..2,
        };
        let want = sums(Generator::Scalar, &job);
        for g in Generator::supported() {
            assert_eq!(sums(g, &job), want, "{g}");
        }
    }

    /// The accumulation contract written out plainly for a single-chunk stratum: lane l
    /// adds blocks l, l + 64, ... (words in order) from draw_index, then the tree.
    fn contract_sums(seed: u64, r: u32, s: u32, data: &[f32], k: usize) -> Vec<u32> {
        let q = (data.len() / k) as u32;
        let blocks = q.div_ceil(4) as usize;
        let mut acc = vec![vec![0f32; k]; LANES];
        for (l, a) in acc.iter_mut().enumerate() {
            for j in (l..blocks).step_by(LANES) {
                for i in 4 * j as u64..(4 * j as u64 + 4).min(q as u64) {
                    let row = draw_index(seed, r, s, i, q) as usize;
                    for c in 0..k {
                        a[c] += data[row * k + c];
                    }
                }
            }
        }
        let mut stride = LANES / 2;
        while stride > 0 {
            for l in 0..stride {
                let upper = acc[l + stride].clone();
                for (a, b) in acc[l].iter_mut().zip(upper) {
                    *a += b;
                }
            }
            stride /= 2;
        }
        acc[0].iter().map(|x| (0.0f32 + x).to_bits()).collect()
    }

    #[test]
    fn every_walk_gives_the_contract_sums() {
        // 223 rows x 3 columns (2.7 KB) and 20,000 rows x 16 columns (1.3 MB, past L2):
        // adds after each generator step; 70,001 rows x 16 columns (4.5 MB, past
        // Walk::STEPS_MAX_BYTES): prefetched batches.
        let cases = [
            (223usize, 3usize, Walk::Steps),
            (20_000, 16, Walk::Steps),
            (70_001, 16, Walk::Prefetched),
        ];
        for (q, k, walk) in cases {
            assert_eq!(Walk::for_table(q * k * 4), walk, "q {q}, k {k}");
            let data = synthetic_rows(q as u64, q, k);
            let job = ResampleJob {
                strata: vec![&data],
                k,
                seed: 77,
                replicates: 5..7,
            };
            for g in Generator::supported() {
                let got = sums(g, &job);
                for (i, r) in (5u32..7).enumerate() {
                    assert_eq!(
                        &got[i * k..(i + 1) * k],
                        &contract_sums(77, r, 0, &data, k)[..],
                        "{g}: q {q}, k {k}, replicate {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn pairs_of_unequal_strata_get_the_contract_sums_one_stratum_at_a_time() {
        // A table past L2 (70,001 rows x 4, 1.1 MB) between two small ones: the threads
        // take one stratum at a time, and every (replicate, stratum) slot still holds the
        // contract's sums for that replicate and stratum.
        let (k, rows) = (4usize, [5usize, 70_001, 223]);
        let data: Vec<Vec<f32>> = rows
            .iter()
            .map(|&q| synthetic_rows(q as u64, q, k))
            .collect();
        let job = ResampleJob {
            strata: data.iter().map(|d| &d[..]).collect(),
            k,
            seed: 91,
            replicates: 3..12,
        };
        assert_eq!(
            PairOrder::for_strata(&job.strata),
            PairOrder::StratumAtATime
        );
        for g in Generator::supported() {
            let got = sums(g, &job);
            for (i, r) in job.replicates.clone().enumerate() {
                for (s, d) in data.iter().enumerate() {
                    let at = (i * rows.len() + s) * k;
                    assert_eq!(
                        &got[at..at + k],
                        &contract_sums(91, r, s as u32, d, k)[..],
                        "{g}: replicate {r}, stratum {s}"
                    );
                }
            }
        }
    }

    #[test]
    fn both_pair_orders_fill_each_pair_its_own_slot() {
        // Each pair writes its (i, s, c) as a code; either order must leave pair (i, s) at
        // (i n_strata + s) k, whatever the strata's sizes (which set the tasks' lengths).
        let (k, rows, reps) = (3usize, [5u32, 300_000, 7], 5usize);
        let want: Vec<f32> = (0..reps * rows.len() * k)
            .map(|x| (x / (rows.len() * k) * 100 + x / k % rows.len() * 10 + x % k) as f32)
            .collect();
        for order in [PairOrder::Interleaved, PairOrder::StratumAtATime] {
            let mut batch = vec![f32::NAN; want.len()];
            let mut buf = vec![1.0; 2];
            order.fill(&mut batch, &rows, k, &mut buf, |i, s, sums, _| {
                for (c, v) in sums.iter_mut().enumerate() {
                    *v = (i * 100 + s * 10 + c) as f32;
                }
            });
            assert_eq!(batch, want, "{order:?}");
        }
        // Small tables keep the interleaved order; one table past L2 switches it.
        let small = vec![0f32; PairOrder::SHARED_PAST_BYTES / 4];
        let large = vec![0f32; PairOrder::SHARED_PAST_BYTES / 4 + 1];
        assert_eq!(
            PairOrder::for_strata(&[&small, &small]),
            PairOrder::Interleaved
        );
        assert_eq!(
            PairOrder::for_strata(&[&small, &large]),
            PairOrder::StratumAtATime
        );
        assert_eq!(PairOrder::for_strata(&[]), PairOrder::Interleaved);
    }

    /// What [`walk_blocks`] did, in order: `Block(lane, rows)` for each `f` call and
    /// `Ahead(row)` for each `ahead` call.
    #[derive(Debug, PartialEq)]
    enum Event {
        Block(usize, Vec<u32>),
        Ahead(u32),
    }

    fn events(walk: Walk, draws: Draws, q: u32) -> Vec<Event> {
        let seen = std::cell::RefCell::new(Vec::new());
        walk_blocks(
            walk,
            draws,
            q,
            |row| seen.borrow_mut().push(Event::Ahead(row)),
            |lane, rows| seen.borrow_mut().push(Event::Block(lane, rows.to_vec())),
        );
        seen.into_inner()
    }

    #[test]
    fn walk_blocks_visits_every_draw_in_contract_order() {
        // Block j goes to lane j % 64 with draws 4j .. 4j + 3 (fewer at the end), as
        // draw_index defines them, for every generator and walk. 5 draws: one partial
        // block; 1,088: a batch and exactly the draws prefetched past it (the sliding
        // window draws nothing more); 2,048: two whole batches; 2,403: three batches, the
        // last partial.
        let (seed, r, s) = (31u64, 4u32, 1u32);
        for q in [5u32, 1088, 2048, 2403] {
            let want: Vec<Event> = (0..q.div_ceil(4) as u64)
                .map(|j| {
                    let rows = (4 * j..(4 * j + 4).min(q as u64))
                        .map(|i| draw_index(seed, r, s, i, q))
                        .collect();
                    Event::Block(j as usize % LANES, rows)
                })
                .collect();
            let given: Vec<u32> = (0..q as u64)
                .map(|i| draw_index(seed, r, s, i, q))
                .collect();
            for g in Generator::supported() {
                let stream = Draws::Stream {
                    generator: g,
                    key: seed_key(seed),
                    r,
                    s,
                };
                for walk in [Walk::Steps, Walk::Prefetched] {
                    for (name, draws) in [("stream", stream), ("given", Draws::Given(&given))] {
                        let mut got = events(walk, draws, q);
                        if walk == Walk::Prefetched {
                            check_ahead(&got, &given, &format!("{g}, {name}, q {q}"));
                        }
                        got.retain(|e| matches!(e, Event::Block(..)));
                        assert_eq!(got, want, "{g}: {walk:?} of {name} draws, q {q}");
                    }
                }
            }
        }
    }

    /// In a prefetched walk, draw i (i >= PREFETCH_DRAWS) is asked for once, in order,
    /// just before the block holding draw i - PREFETCH_DRAWS is added.
    fn check_ahead(events: &[Event], draws: &[u32], what: &str) {
        let mut asked = 0usize;
        let mut block = 0usize;
        for e in events {
            match e {
                Event::Ahead(row) => {
                    let i = PREFETCH_DRAWS + asked;
                    assert_eq!(*row, draws[i], "{what}: prefetch {asked}");
                    assert_eq!(
                        i / 4 - PREFETCH_DRAWS / 4,
                        block,
                        "{what}: draw {i} early or late"
                    );
                    asked += 1;
                }
                Event::Block(..) => block += 1,
            }
        }
        assert_eq!(asked, draws.len().saturating_sub(PREFETCH_DRAWS), "{what}");
    }

    #[test]
    fn walk_names_follow_the_table_size_thresholds() {
        let (mib, kib) = (1usize << 20, 1usize << 10);
        let cases = [
            (4, "steps"),
            (mib, "steps"),
            (mib + 4, "steps"),
            (4 * mib, "steps"),
            (4 * mib + 4, "prefetched batches"),
            (64 * mib, "prefetched batches"),
        ];
        for (bytes, name) in cases {
            assert_eq!(walk_name(bytes), name, "{} KiB", bytes / kib);
        }
        // The legend `stats bench` prints names the same thresholds.
        assert_eq!(
            walk_legend(),
            "steps up to 4 MiB of rows, prefetched batches above"
        );
    }

    #[test]
    fn a_forced_generator_the_cpu_lacks_is_a_usage_error() {
        for g in Generator::ALL {
            let b = CpuBackend::new().with_generator(g);
            match b.generator() {
                Ok(got) => assert!(got == g && g.is_supported()),
                Err(e) => {
                    assert!(!g.is_supported());
                    assert_eq!(e.exit_code(), 2);
                    assert!(e.to_string().contains("cannot run on this CPU"), "{e}");
                }
            }
        }
    }
}
