//! Sharded runs: `stats run --shard K/N` runs the K-th of N disjoint parts of a run's cells,
//! and `stats run merge` puts the parts back together into what one unsharded run writes
//! (docs/scale.md).
//!
//! Which cells a shard holds depends only on the run's cells in their seeded order, never
//! on the machine or the worker: cells are grouped by their question's text (whitespace
//! collapsed), groups numbered 0, 1, … in order of first appearance, and group g goes to
//! shard (g mod N) + 1. Round robin spreads both datasets (which come one after the other
//! in the seeded order) over the shards; grouping by text keeps every model call that two
//! cells can share (a call's cache key is its messages and sample, and every message names
//! the question) inside one shard, where the second is a cache hit as in the unsharded run.
//!
//! Each shard writes the usual `panel.csv`, `trajectories.jsonl` and `ledger.jsonl` of its
//! cells, and last `shard.json` ([`ShardManifest`]): the run's configuration, every cell of
//! the run with the shard that holds it, and the shard's number. A shard directory without
//! `shard.json` has not finished. The merge checks the manifests agree, that every shard
//! 1..N is there once, that each shard's files hold exactly its cells, and writes the cells'
//! records in the run's order, each trajectory record renamed to the merged run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cells::Cell;
use super::log::{write_outputs, RunOutput};
use super::setup::CellSettings;
use super::RunSpec;
use ragstats_core::io::{clip, sha256_hex, write_atomic};
use ragstats_core::ledger::LedgerRow;
use ragstats_core::questions::{Dataset, Question};
use ragstats_core::trajlog::Trajectory;
use ragstats_core::{Error, Result};

/// The file a finished shard writes last.
pub const MANIFEST: &str = "shard.json";
/// The `format` field of a [`ShardManifest`].
pub const FORMAT: &str = "ragstats-run-shard";
/// The `version` field of a [`ShardManifest`].
pub const VERSION: u32 = 1;

/// The K-th of N shards (1 ≤ K ≤ N), written `K/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// K, from 1.
    pub index: u32,
    /// N.
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = Error;
    /// Parses `K/N` with 1 ≤ K ≤ N.
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || {
            Error::Usage(format!(
                "'{}': expected K/N with 1 <= K <= N (e.g. 2/16)",
                clip(s)
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The shard (1-based) of each cell of `cells` (the run's cells in order) among `count`:
/// cells grouped by question text with its whitespace collapsed, groups numbered in order
/// of first appearance, group g in shard (g mod count) + 1.
pub fn assignment(cells: &[Cell], count: u32) -> Vec<u32> {
    let mut groups: HashMap<String, u32> = HashMap::new();
    cells
        .iter()
        .map(|c| {
            let text = c
                .question
                .question
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let next = groups.len() as u32;
            let g = *groups.entry(text).or_insert(next);
            g % count.max(1) + 1
        })
        .collect()
}

/// The cells of `shard`, in the run's order.
pub fn shard_cells(cells: &[Cell], shard: Shard) -> Vec<Cell> {
    assignment(cells, shard.count)
        .into_iter()
        .zip(cells)
        .filter(|(s, _)| *s == shard.index)
        .map(|(_, c)| c.clone())
        .collect()
}

/// What makes two runs the same run: everything their records depend on, and nothing they
/// do not (the model server's address, concurrency, rate limits, paths).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    pub model: String,
    /// The search backend's stable name (for a local index, its corpus's digest).
    pub search: String,
    /// SHA-256 of the mask patterns, one per line (`none` without a mask).
    pub mask: String,
    /// How many questions were loaded, and the SHA-256 of their JSON.
    pub questions: String,
    /// The design: the manifest's SHA-256, or questions per dataset, trajectories and reads.
    pub design: String,
    pub order_seed: u64,
    pub planners: String,
    pub selectors: String,
    pub steps: u32,
    pub k: usize,
    /// The sampling parameters as JSON.
    pub planner_params: String,
    pub reader_params: String,
    /// Extra request fields as JSON.
    pub extra: String,
    /// SHA-256 of the four prompt templates.
    pub prompts: String,
}

impl RunConfig {
    /// The configuration of a run of `spec` over `questions` with the cells of `cells`,
    /// searching `search` (a backend name) with `mask` patterns.
    ///
    /// # Errors
    /// The manifest of `cells` cannot be read.
    pub fn new(
        spec: &RunSpec,
        search: &str,
        mask: &[String],
        questions: &[Question],
        cells: &CellSettings,
    ) -> Result<RunConfig> {
        let design = match &cells.manifest {
            Some(m) => {
                let bytes = std::fs::read(m).map_err(|e| Error::io(m, e))?;
                format!("manifest sha256:{}", sha256_hex(bytes))
            }
            None => format!(
                "questions per dataset {}, trajectories {}, reads {}",
                cells
                    .questions_per_dataset
                    .map_or_else(|| "all".to_string(), |n| n.to_string()),
                cells.trajectories,
                cells.reads
            ),
        };
        let t = &spec.templates;
        let prompts = [
            &t.planner_system,
            &t.planner_user,
            &t.reader_system,
            &t.reader_user,
        ]
        .map(|s| sha256_hex(s.as_bytes()))
        .join(",");
        Ok(RunConfig {
            model: spec.model.clone(),
            search: search.to_string(),
            mask: if mask.is_empty() {
                "none".into()
            } else {
                format!("sha256:{}", sha256_hex(mask.join("\n")))
            },
            questions: format!(
                "{} loaded, sha256:{}",
                questions.len(),
                sha256_hex(json(questions))
            ),
            design,
            order_seed: cells.order_seed,
            planners: names(spec.arms.iter().map(|a| a.as_str())),
            selectors: names(spec.selectors.iter().map(|s| s.as_str())),
            steps: spec.steps,
            k: spec.k,
            planner_params: json(&spec.planner_params),
            reader_params: json(&spec.reader_params),
            extra: json(&spec.extra),
            prompts: sha256_hex(prompts),
        })
    }

    /// Each field's name and value, in declaration order.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("model", self.model.clone()),
            ("search", self.search.clone()),
            ("mask", self.mask.clone()),
            ("questions", self.questions.clone()),
            ("design", self.design.clone()),
            ("order seed", self.order_seed.to_string()),
            ("planners", self.planners.clone()),
            ("selectors", self.selectors.clone()),
            ("steps", self.steps.to_string()),
            ("k", self.k.to_string()),
            ("planner parameters", self.planner_params.clone()),
            ("reader parameters", self.reader_params.clone()),
            ("extra request fields", self.extra.clone()),
            ("prompts", self.prompts.clone()),
        ]
    }
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(",")
}

/// `v` as compact JSON (the values here always serialise).
fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// One cell of the run as a manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestCell {
    pub dataset: Dataset,
    pub question: String,
    pub trajectories: u32,
    pub reads: u32,
    /// The shard that holds it (K).
    pub shard: u32,
}

impl ManifestCell {
    fn name(&self) -> String {
        format!("{}/{}", dataset_name(self.dataset), self.question)
    }
}

/// `shard.json`: a finished shard's configuration, the whole run's cells and which shard
/// holds each, and the shard's number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardManifest {
    pub format: String,
    pub version: u32,
    pub shard: Shard,
    pub config: RunConfig,
    /// Every cell of the run, in the run's order.
    pub cells: Vec<ManifestCell>,
}

impl ShardManifest {
    /// The manifest of `shard` of a run of `cells` (all of them, in order) under `config`.
    pub fn new(config: RunConfig, cells: &[Cell], shard: Shard) -> ShardManifest {
        let cells = assignment(cells, shard.count)
            .into_iter()
            .zip(cells)
            .map(|(s, c)| ManifestCell {
                dataset: c.question.dataset,
                question: c.question.id.clone(),
                trajectories: c.trajectories,
                reads: c.reads,
                shard: s,
            })
            .collect();
        ShardManifest {
            format: FORMAT.into(),
            version: VERSION,
            shard,
            config,
            cells,
        }
    }

    /// Writes `dir/shard.json` atomically.
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be written.
    pub fn write(&self, dir: &Path) -> Result<()> {
        write_atomic(&dir.join(MANIFEST), |w| {
            serde_json::to_writer_pretty(&mut *w, self)?;
            w.write_all(b"\n")
        })
    }

    /// Reads `dir/shard.json`.
    ///
    /// # Errors
    /// [`Error::Input`] naming the directory when it has no manifest (an unfinished shard,
    /// or not a shard), or the file when it is not a shard manifest of this version.
    pub fn read(dir: &Path) -> Result<ShardManifest> {
        let path = dir.join(MANIFEST);
        if !path.exists() {
            return Err(Error::input(
                dir,
                None,
                format!("no {MANIFEST}: not the directory of a finished shard of a run (a shard that stopped: run the same command again to finish it)"),
            ));
        }
        let text = ragstats_core::io::read_text(&path)?;
        let m: ShardManifest = serde_json::from_str(&text).map_err(|e| {
            Error::input(
                &path,
                Some(e.line() as u64),
                format!("not a shard manifest: {e}"),
            )
        })?;
        if m.format != FORMAT || m.version != VERSION {
            return Err(Error::input(
                &path,
                None,
                format!(
                    "format '{}' version {}; expected '{FORMAT}' version {VERSION}",
                    clip(&m.format),
                    m.version
                ),
            ));
        }
        Ok(m)
    }
}

/// What a merge wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MergeReport {
    pub shards: u32,
    pub cells: usize,
    pub trajectory_records: usize,
    pub panel_rows: usize,
    pub ledger_rows: usize,
    /// Keyed calls (ledger keys) made by more than one shard: each shard paid for its own,
    /// and the merged ledger, like the unsharded run's, bills each once.
    pub shared_keys: usize,
}

/// The dataset's name as the panel and ledger write it.
fn dataset_name(d: Dataset) -> &'static str {
    match d {
        Dataset::Hotpotqa => "hotpotqa",
        Dataset::Musique => "musique",
    }
}

/// At most this many cells are named in an error; the rest are counted.
const NAMED: usize = 5;

fn list_cells(cells: &[&ManifestCell]) -> String {
    let mut s = cells
        .iter()
        .take(NAMED)
        .map(|c| c.name())
        .collect::<Vec<_>>()
        .join(", ");
    if cells.len() > NAMED {
        s.push_str(&format!(" and {} more", cells.len() - NAMED));
    }
    s
}

/// Checks that the manifests of `dirs` are one run's shards 1..N, each once: the same
/// configuration and cells, the same N, no shard twice, none missing. Returns the manifests
/// in shard order with their directories.
///
/// # Errors
/// [`Error::Usage`] naming the directory given twice, the configuration field that differs
/// (with both values and both directories), the shard given twice, or each missing shard
/// with the cells it holds.
pub fn check_shards(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, ShardManifest)>> {
    if dirs.is_empty() {
        return Err(Error::Usage("give the shard directories to merge".into()));
    }
    let mut seen: HashMap<PathBuf, &PathBuf> = HashMap::new();
    for d in dirs {
        let canon = d.canonicalize().unwrap_or_else(|_| d.clone());
        if let Some(first) = seen.insert(canon, d) {
            return Err(Error::Usage(format!(
                "{} is given twice (also as {})",
                d.display(),
                first.display()
            )));
        }
    }
    let manifests = dirs
        .iter()
        .map(|d| Ok((d.clone(), ShardManifest::read(d)?)))
        .collect::<Result<Vec<_>>>()?;
    let (d0, m0) = &manifests[0];
    for (d, m) in &manifests[1..] {
        let differ: Vec<String> = m0
            .config
            .fields()
            .into_iter()
            .zip(m.config.fields())
            .filter(|(a, b)| a.1 != b.1)
            .map(|((name, a), (_, b))| {
                format!(
                    "{name}: '{}' in {} but '{}' in {}",
                    clip(&a),
                    d0.display(),
                    clip(&b),
                    d.display()
                )
            })
            .collect();
        if !differ.is_empty() {
            return Err(Error::Usage(format!(
                "the shards come from different configurations: {}",
                differ.join("; ")
            )));
        }
        if m.shard.count != m0.shard.count {
            return Err(Error::Usage(format!(
                "{} is shard {} but {} is shard {}: the shards of one run share N",
                d0.display(),
                m0.shard,
                d.display(),
                m.shard
            )));
        }
        if m.cells != m0.cells {
            return Err(Error::Usage(format!(
                "{} and {} list different cells of the run (written by different versions of stats?)",
                d0.display(),
                d.display()
            )));
        }
    }
    let n = m0.shard.count;
    let mut by: BTreeMap<u32, &PathBuf> = BTreeMap::new();
    for (d, m) in &manifests {
        if let Some(other) = by.insert(m.shard.index, d) {
            let held: Vec<&ManifestCell> = m0
                .cells
                .iter()
                .filter(|c| c.shard == m.shard.index)
                .collect();
            return Err(Error::Usage(format!(
                "shard {} is given twice, in {} and {}: its {} cell(s) ({}) would be duplicated",
                m.shard,
                other.display(),
                d.display(),
                held.len(),
                list_cells(&held)
            )));
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !by.contains_key(k))
        .map(|k| {
            let held: Vec<&ManifestCell> = m0.cells.iter().filter(|c| c.shard == k).collect();
            if held.is_empty() {
                format!("shard {k}/{n} (no cells)")
            } else {
                format!(
                    "shard {k}/{n} with {} cell(s): {}",
                    held.len(),
                    list_cells(&held)
                )
            }
        })
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "missing {}; run the missing shard(s) of {n} and merge again",
            missing.join("; ")
        )));
    }
    let mut manifests = manifests;
    manifests.sort_by_key(|(_, m)| m.shard.index);
    Ok(manifests)
}

/// A cell's identity in the records: dataset and question id.
type CellId = (Dataset, String);
/// A shard's records by cell: trajectory records and ledger rows, each in file order.
type ByCell = HashMap<CellId, (Vec<Trajectory>, Vec<LedgerRow>)>;

/// Reads the shard in `dir` under `m`: its trajectory records and ledger rows grouped by
/// cell, each group in file order; checks they are exactly the shard's cells, with
/// planners × trajectories records each.
fn read_shard(dir: &Path, m: &ShardManifest, arms: usize) -> Result<ByCell> {
    let mine: HashMap<CellId, &ManifestCell> = m
        .cells
        .iter()
        .filter(|c| c.shard == m.shard.index)
        .map(|c| ((c.dataset, c.question.clone()), c))
        .collect();
    // The ledger labels a row's cell by the dataset's name and the question id as text.
    let by_label: HashMap<(&str, &str), &CellId> = mine
        .keys()
        .map(|id| ((dataset_name(id.0), id.1.as_str()), id))
        .collect();
    let mut out = ByCell::new();
    let tpath = dir.join("trajectories.jsonl");
    let text = ragstats_core::io::read_text(&tpath)?;
    for (i, line) in text.lines().enumerate() {
        let at = |msg: String| Error::input(&tpath, Some(i as u64 + 1), msg);
        let t: Trajectory =
            serde_json::from_str(line).map_err(|e| at(format!("not a trajectory record: {e}")))?;
        let id = (t.dataset, t.question_id.clone());
        if !mine.contains_key(&id) {
            return Err(at(format!(
                "a record of {}/{}, which is not a cell of shard {}",
                dataset_name(id.0),
                clip(&id.1),
                m.shard
            )));
        }
        out.entry(id).or_default().0.push(t);
    }
    let lpath = dir.join("ledger.jsonl");
    let text = ragstats_core::io::read_text(&lpath)?;
    for (i, line) in text.lines().enumerate() {
        let at = |msg: String| Error::input(&lpath, Some(i as u64 + 1), msg);
        let r: LedgerRow =
            serde_json::from_str(line).map_err(|e| at(format!("not a ledger row: {e}")))?;
        let label = |l: &Option<ragstats_core::ledger::Label>| {
            l.as_ref()
                .map(|l| l.text().into_owned())
                .unwrap_or_default()
        };
        let (d, q) = (label(&r.dataset), label(&r.question));
        let Some(&id) = by_label.get(&(d.as_str(), q.as_str())) else {
            return Err(at(format!(
                "a row of {}/{}, which is not a cell of shard {}",
                clip(&d),
                clip(&q),
                m.shard
            )));
        };
        out.entry(id.clone()).or_default().1.push(r);
    }
    for (id, c) in &mine {
        let got = out.get(id).map_or(0, |(t, _)| t.len());
        let want = arms * c.trajectories as usize;
        if got != want {
            return Err(Error::input(
                &tpath,
                None,
                format!(
                    "{} trajectory record(s) of {}, expected {want} ({arms} planner(s) x {} trajectories): an unfinished or edited shard",
                    got,
                    c.name(),
                    c.trajectories
                ),
            ));
        }
    }
    Ok(out)
}

/// Merges the shards in `dirs` (any order) into `out`: checks them ([`check_shards`]),
/// reads each shard's records, and writes `panel.csv`, `trajectories.jsonl` and
/// `ledger.jsonl` with every cell's records in the run's order and each trajectory record's
/// `run` set to `run_name` — the bytes one unsharded run named `run_name` writes.
///
/// # Errors
/// Those of [`check_shards`]; [`Error::Input`] naming the file and line of a record that is
/// not one of its shard's cells, or a cell with too few records.
pub fn merge(dirs: &[PathBuf], out: &Path, run_name: &str) -> Result<MergeReport> {
    let shards = check_shards(dirs)?;
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if let Some((d, _)) = shards.iter().find(|(d, _)| canon(d) == canon(out)) {
        return Err(Error::setting(
            "out",
            format!(
                "{} is the shard directory {}: its files would be overwritten; merge into another directory",
                out.display(),
                d.display()
            ),
        ));
    }
    let m0 = shards[0].1.clone();
    let arms = m0.config.planners.split(',').count();
    let mut parts = Vec::new();
    for (d, m) in &shards {
        parts.push(read_shard(d, m, arms)?);
    }
    let mut owners: HashMap<String, HashSet<u32>> = HashMap::new();
    let mut merged = RunOutput::default();
    for c in &m0.cells {
        let part = &mut parts[(c.shard - 1) as usize];
        let (mut t, l) = part
            .remove(&(c.dataset, c.question.clone()))
            .unwrap_or_default();
        for r in &mut t {
            r.run = run_name.to_string();
        }
        for r in &l {
            if let Some(k) = &r.key {
                owners
                    .entry(k.text().into_owned())
                    .or_default()
                    .insert(c.shard);
            }
        }
        merged.trajectories.extend(t);
        merged.ledger.extend(l);
    }
    write_outputs(out, &merged)?;
    Ok(MergeReport {
        shards: m0.shard.count,
        cells: m0.cells.len(),
        trajectory_records: merged.trajectories.len(),
        panel_rows: merged.trajectories.iter().map(|t| t.reads.len()).sum(),
        ledger_rows: merged.ledger.len(),
        shared_keys: owners.values().filter(|s| s.len() > 1).count(),
    })
}

/// A run's name: the last component of its output directory (`run` when it has none).
pub fn run_name(out: &Path) -> String {
    out.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(id: &str, text: &str) -> Cell {
        Cell {
            question: Question {
                id: id.into(),
                dataset: Dataset::Hotpotqa,
                question: text.into(),
                answers: vec!["x".into()],
                supporting: vec![],
                cluster: None,
            },
            trajectories: 1,
            reads: 1,
        }
    }

    #[test]
    fn shard_parses_k_of_n() {
        assert_eq!(
            "2/16".parse::<Shard>().unwrap(),
            Shard {
                index: 2,
                count: 16
            }
        );
        for bad in ["0/3", "4/3", "3", "a/3", "1/0", ""] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("expected K/N with 1 <= K <= N"), "{bad}: {e}");
        }
    }

    #[test]
    fn round_robin_over_question_texts() {
        // Texts a, b, a (whitespace differs), c, d: groups 0, 1, 0, 2, 3.
        let cells = [
            cell("q0", "a"),
            cell("q1", "b"),
            cell("q2", " a "),
            cell("q3", "c"),
            cell("q4", "d"),
        ];
        assert_eq!(assignment(&cells, 3), [1, 2, 1, 3, 1]);
        assert_eq!(assignment(&cells, 1), [1, 1, 1, 1, 1]);
        let ids = |s: Vec<Cell>| s.into_iter().map(|c| c.question.id).collect::<Vec<_>>();
        let one = ids(shard_cells(&cells, "1/3".parse().unwrap()));
        assert_eq!(one, ["q0", "q2", "q4"]);
        assert_eq!(ids(shard_cells(&cells, "2/3".parse().unwrap())), ["q1"]);
        // More shards than groups: the last ones are empty.
        assert!(shard_cells(&cells, "5/5".parse().unwrap()).is_empty());
    }
}
