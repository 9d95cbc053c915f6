//! Replicates files: every replicate's statistics, so that runs split by replicate range
//! on many machines merge into exactly the single run.
//!
//! Layout (little-endian): the 8-byte magic `RGSREP02`; a u64 header length; the header,
//! UTF-8 JSON of [`ReplicatesHeader`]; then `(end − start) × n_statistics` f64 values,
//! replicate-major; last, the 32-byte SHA-256 of everything before it, so a flipped bit or
//! a truncation anywhere in the file (payload included) is refused on reading. The header holds nothing machine-specific (no paths, no backend), so
//! shards computed anywhere merge byte for byte into the file a single run writes.

use std::io::{BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use super::stratified::data_digest;
use super::stratified::BootstrapPlan;
use crate::resample::summary::Method;
use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"RGSREP02";
/// Bytes of the SHA-256 trailer.
const DIGEST_LEN: usize = 32;

/// What a replicates file says about the run that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplicatesHeader {
    pub seed: u64,
    /// Replicates `[start, end)` held in this file.
    pub range: [u32; 2],
    pub method: Method,
    pub confidence: f64,
    /// SHA-256 of the f32 rows sent to the engine: shards of different data never merge.
    pub data_sha256: String,
    pub plan: BootstrapPlan,
    /// The statistics at the data.
    pub point: Vec<f64>,
    /// BCa accelerations (present when the method is BCa).
    pub acceleration: Option<Vec<f64>>,
}

/// A header plus its replicate statistics (row-major, `n_replicates × n_statistics`).
#[derive(Debug, Clone, PartialEq)]
pub struct Replicates {
    pub header: ReplicatesHeader,
    pub values: Vec<f64>,
}

impl Replicates {
    /// Writes the file atomically ([`crate::io::write_atomic`]): a failure midway leaves
    /// no truncated file.
    ///
    /// # Errors
    /// [`Error::Io`] naming the path.
    pub fn write(&self, path: &Path) -> Result<()> {
        let header = serde_json::to_vec(&self.header).map_err(|e| Error::Runtime(e.to_string()))?;
        let mut bytes = Vec::with_capacity(16 + header.len() + 8 * self.values.len() + DIGEST_LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&header);
        for v in &self.values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let digest = Sha256::digest(&bytes);
        crate::io::write_atomic(path, |w| {
            w.write_all(&bytes)?;
            w.write_all(&digest)
        })
    }

    /// Reads and checks a file.
    ///
    /// # Errors
    /// [`Error::Input`] when the file is not a replicates file, is truncated, or its body
    /// does not match its header.
    pub fn read(path: &Path) -> Result<Self> {
        let mut r = BufReader::new(std::fs::File::open(path).map_err(|e| Error::io(path, e))?);
        let bad = |msg: String| Error::input(path, None, msg);
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic)
            .map_err(|_| bad("too short to be a replicates file".into()))?;
        if &magic == b"RGSREP01" {
            return Err(bad(
                "a replicates file of an older version (no checksum); write it again with the bootstrap".into(),
            ));
        }
        if &magic != MAGIC {
            return Err(bad("not a replicates file written by the bootstrap".into()));
        }
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).map_err(|e| Error::io(path, e))?;
        if rest.len() < 8 + DIGEST_LEN {
            return Err(bad("truncated header".into()));
        }
        let (body, digest) = rest.split_at(rest.len() - DIGEST_LEN);
        let mut h = Sha256::new();
        h.update(magic);
        h.update(body);
        if h.finalize().as_slice() != digest {
            return Err(bad(
                "checksum mismatch: the file is corrupted or truncated".into()
            ));
        }
        let len = u64::from_le_bytes(body[..8].try_into().expect("8 bytes"));
        let body = &body[8..];
        if len > body.len() as u64 {
            return Err(bad("truncated header".into()));
        }
        let (header, body) = body.split_at(len as usize);
        let header: ReplicatesHeader =
            serde_json::from_slice(header).map_err(|e| bad(format!("unreadable header: {e}")))?;
        let n = header.plan.statistics.len();
        let reps = header.range[1].saturating_sub(header.range[0]) as usize;
        if body.len() != reps * n * 8 {
            return Err(bad(format!(
                "holds {} bytes of replicates; its header promises {reps} replicates x {n} statistics = {} bytes (truncated?)",
                body.len(),
                reps * n * 8
            )));
        }
        let values = body
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8-byte chunk")))
            .collect();
        Ok(Replicates { header, values })
    }

    /// Merges shards into one run: every header must agree except for the range, and the
    /// ranges, sorted, must tile `[first start, last end)` with no gap or overlap.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the offending shard.
    pub fn merge(mut shards: Vec<(String, Replicates)>) -> Result<Replicates> {
        if shards.is_empty() {
            return Err(Error::Usage(
                "merge needs at least one replicates file".into(),
            ));
        }
        shards.sort_by_key(|(_, s)| s.header.range[0]);
        let (first_name, first) = &shards[0];
        let mut header = first.header.clone();
        let mut values = Vec::new();
        let mut end = header.range[0];
        for (name, s) in &shards {
            let mut h = s.header.clone();
            h.range = header.range;
            if h != header {
                let what = if s.header.data_sha256 != header.data_sha256 {
                    "were computed from different data"
                } else if s.header.seed != header.seed {
                    "used different seeds"
                } else {
                    "were made with different settings"
                };
                return Err(Error::Usage(format!(
                    "cannot merge {name} with {first_name}: they {what}"
                )));
            }
            if s.header.range[0] != end {
                return Err(Error::Usage(format!(
                    "cannot merge: {name} holds replicates {}..{}, but the previous files end at {end} ({})",
                    s.header.range[0],
                    s.header.range[1],
                    if s.header.range[0] < end { "overlap" } else { "gap" }
                )));
            }
            end = s.header.range[1];
            values.extend_from_slice(&s.values);
        }
        header.range[1] = end;
        Ok(Replicates { header, values })
    }

    /// Checks that these (merged) replicates are all of the run's `0..total`: a missing
    /// first or last shard leaves no gap between the files, only a shorter range.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the replicates that are missing.
    pub fn require_all(&self, total: u32) -> Result<()> {
        let [a, b] = self.header.range;
        if [a, b] == [0, total] {
            return Ok(());
        }
        let mut missing = Vec::new();
        if a > 0 {
            missing.push(format!("0..{}", a.min(total)));
        }
        if b < total {
            missing.push(format!("{}..{total}", b.max(a)));
        }
        let extra = if b > total {
            format!("; they go past the run's end at {total}")
        } else {
            String::new()
        };
        Err(Error::Usage(format!(
            "the files hold replicates {a}..{b}, but the run has 0..{total}{}{extra}: a shard \
             is missing or the run's number of replicates differs",
            if missing.is_empty() {
                String::new()
            } else {
                format!(" (missing {})", missing.join(" and "))
            }
        )))
    }
}
