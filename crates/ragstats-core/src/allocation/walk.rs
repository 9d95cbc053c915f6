//! The exact-size paired walk of `stats allocate` (issue #45) as an engine job, with a CPU
//! backend ([`CpuWalk`]) and, in `ragstats-gpu`, its GPU twin (`GpuWalk`,
//! `crates/ragstats-gpu/shaders/walk.wgsl`). Both follow the contract below, so their sums
//! are bit-identical.
//!
//! # The walk (per replicate r and stratum d, independently)
//!
//! 1. The draws x_0, x_1, … are the bootstrap stream of (seed, r, d) over the stratum's
//!    q_d master units ([`crate::rng::stream`]: draw j is word j mod 4 of block j / 4,
//!    Lemire's bounded draw with retries), continued past draw q_d as long as needed.
//! 2. Allocation a is *open* while it has taken fewer than n_ad draws (its members, the
//!    sub-panel's units with a score); the walk stops when none is open.
//! 3. For each draw x_j in order, for each open allocation a in increasing a whose sub-panel
//!    holds x_j: its [`WalkJob::columns`] f32 accumulators (starting at 0.0) each get the
//!    unit's value added (`acc[c] = acc[c] + row[c]`, one IEEE f32 add, column order),
//!    and its count goes up by one.
//!
//! The values are the allocation's columns centred on their mean over its members, in f32
//! ([`WalkStratum::rows`]): f32 because WGSL has no f64, centred so that the f32 sums do not
//! cancel, as the resample engine's columns are ([`crate::resample::columns`]). Only adds,
//! no multiplies, so no FMA contraction can differ. Nothing refers to threads, batches or
//! device limits.
//!
//! # Units: questions or clusters
//!
//! The units are whatever rows the job holds. `stats allocate` walks the master panel's
//! questions ([`WALK_COLUMNS`] columns each); with `--cluster` it walks the master
//! stratum's **clusters** (numbered by first appearance, as the shared cluster draw
//! [`crate::resample::clusters`] numbers them), [`CLUSTER_WALK_COLUMNS`] columns each: a
//! cluster is a member of allocation a when it holds at least one of a's questions, n_ad is
//! the number of such clusters, and its row sums its a-questions' values. So x_j for
//! j < G_d is exactly the cluster draw `draw_index(seed, r, d, j, G_d)` of `bootstrap
//! --cluster`, and an allocation takes its own clusters' count of cluster draws: the
//! cluster bootstrap of its sub-panel, a cluster's questions coming along. The contract
//! above is unchanged; only the row width differs (1 to [`MAX_WALK_COLUMNS`]).

use std::ops::Range;

use crate::rng::blocks::Generator;
use crate::rng::domain;
use crate::rng::stream::seed_key;
use crate::{Error, Result};

/// Columns walked per allocation: the deviation, its square, tokens, model dollars and
/// searches (the count of draws is n_ad by construction and is not summed).
pub const WALK_COLUMNS: usize = 5;
/// Columns walked per allocation when the units are clusters: the cluster's sum of
/// deviations S, S², its questions M, S·M, M², tokens, model dollars and searches (the
/// clustered SE needs Σ S², Σ S·M and Σ M² over the drawn clusters).
pub const CLUSTER_WALK_COLUMNS: usize = 8;
/// Most columns a walk carries per allocation (the GPU kernel adds at most this many).
pub const MAX_WALK_COLUMNS: usize = 8;
/// Most allocations one walk carries (a 32-bit membership mask per question).
pub const MAX_ALLOCATIONS: usize = 32;

/// One stratum of a walk.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkStratum {
    /// Per master question, bit a set when it is in allocation a's sub-panel with a score.
    pub members: Vec<u32>,
    /// Per allocation, n_ad: its members (draws it takes).
    pub need: Vec<u32>,
    /// `rows[(q * allocations + a) * columns + c]`: unit q's centred column c for
    /// allocation a (0 outside its sub-panel, never read).
    pub rows: Vec<f32>,
}

/// A walk: the strata, the allocations' count, the columns per allocation, the seed and
/// the replicates.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkJob {
    pub strata: Vec<WalkStratum>,
    pub allocations: usize,
    /// Columns per unit and allocation: [`WALK_COLUMNS`] for questions,
    /// [`CLUSTER_WALK_COLUMNS`] for clusters (1 to [`MAX_WALK_COLUMNS`]).
    pub columns: usize,
    pub seed: u64,
    pub replicates: Range<u32>,
}

impl WalkJob {
    /// Checks the shape: 1 to [`MAX_ALLOCATIONS`] allocations, 1 to [`MAX_WALK_COLUMNS`]
    /// columns, every stratum with 1 to
    /// 2^32 − 1 questions, its `need` and `rows` of the right lengths, each need at most its
    /// members and each member bit a real allocation.
    ///
    /// # Errors
    /// [`Error::Usage`] for too many allocations, [`Error::Data`] for a bad stratum.
    pub fn validate(&self) -> Result<()> {
        if self.allocations == 0 || self.allocations > MAX_ALLOCATIONS {
            return Err(Error::Usage(format!(
                "the paired allocation bootstrap takes 1 to {MAX_ALLOCATIONS} allocations, got {}",
                self.allocations
            )));
        }
        if self.columns == 0 || self.columns > MAX_WALK_COLUMNS {
            return Err(Error::Usage(format!(
                "the paired allocation bootstrap walks 1 to {MAX_WALK_COLUMNS} columns, got {}",
                self.columns
            )));
        }
        let a = self.allocations;
        for (d, s) in self.strata.iter().enumerate() {
            let q = s.members.len();
            let ok = q > 0
                && q < u32::MAX as usize
                && s.need.len() == a
                && s.rows.len() == q * a * self.columns
                && (a == 32 || s.members.iter().all(|&m| m >> a == 0))
                && (0..a).all(|i| {
                    s.need[i] as usize <= s.members.iter().filter(|&&m| m >> i & 1 == 1).count()
                });
            if !ok {
                return Err(Error::Data(format!(
                    "paired allocation bootstrap: stratum {d} is malformed ({q} questions, {} needs, {} values for {a} allocations)",
                    s.need.len(),
                    s.rows.len()
                )));
            }
        }
        Ok(())
    }

    /// Length of a backend's output: replicates × strata × allocations × columns.
    pub fn output_len(&self) -> usize {
        (self.replicates.end - self.replicates.start) as usize
            * self.strata.len()
            * self.allocations
            * self.columns
    }
}

/// A backend that walks a [`WalkJob`] per the contract of the module.
pub trait WalkBackend: Send + Sync {
    /// `"cpu"` or `"gpu"`.
    fn name(&self) -> &'static str;
    /// Human description, e.g. `"rayon, 2 threads"` or the adapter.
    fn description(&self) -> String;
    /// `out[(((r − start) · S + d) · A + a) · columns + c]`: replicate r's sum of
    /// column c over allocation a's draws in stratum d. `progress` gets replicates done.
    ///
    /// # Errors
    /// Those of [`WalkJob::validate`]; [`Error::Gpu`] for device failures.
    fn walk(&self, job: &WalkJob, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<f32>>;
}

/// Draws generated per Philox call (16 blocks of 4).
const BATCH_DRAWS: usize = 64;
/// Replicates per progress step.
const PROGRESS_REPLICATES: u32 = 256;

/// The rayon CPU walk: replicates in parallel, each (replicate, stratum) walked serially.
#[derive(Debug, Clone, Default)]
pub struct CpuWalk;

impl CpuWalk {
    /// Replicate `r`'s sums, `[stratum][allocation][column]` flattened, into `out`.
    fn replicate(job: &WalkJob, generator: Generator, r: u32, out: &mut [f32]) {
        let a_n = job.allocations;
        let k = job.columns;
        let key = seed_key(job.seed);
        let mut buf = [0u32; BATCH_DRAWS];
        for (d, s) in job.strata.iter().enumerate() {
            let q = s.members.len() as u32;
            let sums = &mut out[d * a_n * k..(d + 1) * a_n * k];
            let mut taken = vec![0u32; a_n];
            let mut open: u32 = (0..a_n)
                .filter(|&a| s.need[a] > 0)
                .fold(0, |m, a| m | 1 << a);
            let mut block = 0u32;
            while open != 0 {
                generator.fill_bounded(
                    key,
                    domain::bootstrap_stream(r, d as u32),
                    block,
                    q,
                    &mut buf,
                );
                block = block.wrapping_add((BATCH_DRAWS / 4) as u32);
                for &x in &buf {
                    let mut hit = s.members[x as usize] & open;
                    while hit != 0 {
                        let a = hit.trailing_zeros() as usize;
                        hit &= hit - 1;
                        let row = &s.rows[(x as usize * a_n + a) * k..][..k];
                        for (acc, v) in sums[a * k..][..k].iter_mut().zip(row) {
                            *acc += v;
                        }
                        taken[a] += 1;
                        if taken[a] == s.need[a] {
                            open &= !(1 << a);
                        }
                    }
                    if open == 0 {
                        break;
                    }
                }
            }
        }
    }
}

impl WalkBackend for CpuWalk {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        format!("rayon, {} threads", rayon::current_num_threads())
    }

    fn walk(&self, job: &WalkJob, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<f32>> {
        use rayon::prelude::*;
        job.validate()?;
        let per = job.strata.len() * job.allocations * job.columns;
        let mut out = vec![0.0f32; job.output_len()];
        if per == 0 {
            return Ok(out);
        }
        let generator = Generator::best();
        let start = job.replicates.start;
        for (i, chunk) in out
            .chunks_mut(per * PROGRESS_REPLICATES as usize)
            .enumerate()
        {
            let first = start + i as u32 * PROGRESS_REPLICATES;
            chunk
                .par_chunks_mut(per)
                .enumerate()
                .for_each(|(j, rep)| Self::replicate(job, generator, first + j as u32, rep));
            progress(u64::from(first - start) + (chunk.len() / per) as u64);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream::draw_index;

    /// A known answer worked by hand from [`draw_index`]: one stratum of 4 questions,
    /// allocation 0 = questions {0, 1, 2, 3} (need 4), allocation 1 = {1, 3} (need 2), the
    /// value of question q in column c being 10q + c for allocation 0 and 100 + q for
    /// allocation 1 (small integers, so f32 sums are exact). The walk is replayed here from
    /// the stream's draws, independently of the backend's batching.
    #[test]
    fn the_cpu_walk_takes_the_first_draws_landing_in_each_sub_panel() {
        let mut rows = vec![0.0f32; 4 * 2 * WALK_COLUMNS];
        for q in 0..4 {
            for c in 0..WALK_COLUMNS {
                rows[(q * 2) * WALK_COLUMNS + c] = (10 * q + c) as f32;
                if q % 2 == 1 {
                    rows[(q * 2 + 1) * WALK_COLUMNS + c] = (100 + q) as f32;
                }
            }
        }
        let job = WalkJob {
            strata: vec![WalkStratum {
                members: vec![0b01, 0b11, 0b01, 0b11],
                need: vec![4, 2],
                rows,
            }],
            allocations: 2,
            columns: WALK_COLUMNS,
            seed: 7,
            replicates: 3..6,
        };
        let out = CpuWalk.walk(&job, &|_| {}).unwrap();
        for r in 3..6u32 {
            // Allocation 0 takes draws 0..4 (every question is its member).
            let first4: Vec<u32> = (0..4).map(|j| draw_index(7, r, 0, j, 4)).collect();
            // Allocation 1 takes the first two odd draws.
            let odd: Vec<u32> = (0..)
                .map(|j| draw_index(7, r, 0, j, 4))
                .filter(|x| x % 2 == 1)
                .take(2)
                .collect();
            let got = &out[((r - 3) as usize * 2) * WALK_COLUMNS..][..2 * WALK_COLUMNS];
            for c in 0..WALK_COLUMNS {
                let want0: u32 = first4.iter().map(|&q| 10 * q + c as u32).sum();
                assert_eq!(got[c], want0 as f32, "replicate {r} column {c}");
                let want1: u32 = odd.iter().map(|&q| 100 + q).sum();
                assert_eq!(
                    got[WALK_COLUMNS + c],
                    want1 as f32,
                    "replicate {r} column {c}"
                );
            }
        }
    }

    #[test]
    fn a_malformed_job_is_refused() {
        let job = WalkJob {
            strata: vec![WalkStratum {
                members: vec![0b01, 0b10],
                need: vec![2, 1],
                rows: vec![0.0; 2 * 2 * WALK_COLUMNS],
            }],
            allocations: 2,
            columns: WALK_COLUMNS,
            seed: 1,
            replicates: 0..1,
        };
        // Allocation 0 has one member and needs two: it could never be filled.
        assert!(matches!(CpuWalk.walk(&job, &|_| {}), Err(Error::Data(_))));
        let too_many = WalkJob {
            allocations: 33,
            ..job
        };
        assert!(matches!(too_many.validate(), Err(Error::Usage(_))));
        let too_wide = WalkJob {
            allocations: 2,
            columns: MAX_WALK_COLUMNS + 1,
            ..too_many
        };
        assert!(matches!(too_wide.validate(), Err(Error::Usage(_))));
    }
}
