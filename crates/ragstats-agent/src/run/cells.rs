//! Which questions a run asks, with how many trajectories and reads, in which order; and the
//! dry-run count of calls and tokens.
//!
//! Without a manifest, each dataset of the question file contributes its first
//! `questions` questions in a seeded order, each with `trajectories` × `reads`. The order
//! within a dataset sorts its questions (file order index i, dataset index d in
//! [`Dataset`] order) by words 0–1 of the Philox block at counter
//! [`domain::allocation_order`]`(i, d)` under the key of the seed (the domain
//! `stats allocate --seed` draws from), so a smaller run's questions are a prefix of a
//! larger one's.
//! A manifest (`id,questions...`) fixes the cells instead (below).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use ragstats_core::io::CsvReader;
use ragstats_core::questions::{Dataset, Question};
use ragstats_core::rng::{domain, philox::philox4x32_10, stream::seed_key};
use ragstats_core::{Error, Result};

/// One question of the run with its design.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub question: Question,
    pub trajectories: u32,
    pub reads: u32,
}

/// The most trajectories a question may have (planner sample indices are
/// `trajectory · 100 + step`, reader ones `trajectory · 1000 + read`).
pub const MAX_TRAJECTORIES: u32 = 1_000;
/// The most reads per trajectory.
pub const MAX_READS: u32 = 1_000;
/// The most planning steps per trajectory.
pub const MAX_STEPS: u32 = 100;

/// The questions of each dataset in the seeded order (file order when `seed` is `None`).
pub fn seeded_order(
    questions: &[Question],
    seed: Option<u64>,
) -> BTreeMap<Dataset, Vec<&Question>> {
    let mut by: BTreeMap<Dataset, Vec<&Question>> = BTreeMap::new();
    for q in questions {
        by.entry(q.dataset).or_default().push(q);
    }
    if let Some(seed) = seed {
        let key = seed_key(seed);
        for (d, qs) in by.iter_mut() {
            let d = *d as u32;
            let mut idx: Vec<(u64, usize)> = (0..qs.len())
                .map(|i| {
                    let w = philox4x32_10(domain::allocation_order(i as u32, d), key);
                    ((w[0] as u64) << 32 | w[1] as u64, i)
                })
                .collect();
            idx.sort();
            *qs = idx.into_iter().map(|(_, i)| qs[i]).collect();
        }
    }
    by
}

/// The cells of a run without a manifest: per dataset, the first `questions` (all when
/// `None`) in the seeded order, datasets in [`Dataset`] order.
///
/// # Errors
/// [`Error::Usage`] for zero trajectories or reads, or counts above the limits.
pub fn uniform_cells(
    questions: &[Question],
    per_dataset: Option<usize>,
    trajectories: u32,
    reads: u32,
    seed: Option<u64>,
) -> Result<Vec<Cell>> {
    check_design(trajectories, reads)?;
    Ok(seeded_order(questions, seed)
        .into_values()
        .flat_map(|qs| {
            let n = per_dataset.unwrap_or(qs.len()).min(qs.len());
            qs.into_iter().take(n).map(|q| Cell {
                question: q.clone(),
                trajectories,
                reads,
            })
        })
        .collect())
}

fn check_design(t: u32, r: u32) -> Result<()> {
    if t == 0 || r == 0 {
        return Err(Error::Usage(
            "trajectories and reads must be at least 1".into(),
        ));
    }
    if t > MAX_TRAJECTORIES || r > MAX_READS {
        return Err(Error::Usage(format!(
            "at most {MAX_TRAJECTORIES} trajectories and {MAX_READS} reads per question"
        )));
    }
    Ok(())
}

/// The cells of a manifest: a CSV with columns `id`, `trajectories`, `reads` (one row per
/// question id of the question file), in the seeded order of the question file (so two
/// manifests naming the same question run the same cells, whatever their row order).
///
/// # Errors
/// [`Error::Input`] naming the manifest line of an unknown or repeated id or a bad count.
pub fn manifest_cells(path: &Path, questions: &[Question], seed: Option<u64>) -> Result<Vec<Cell>> {
    let mut r = CsvReader::open(path)?;
    let (ci, ct, cr) = (
        r.require("id", "manifest ")?,
        r.require("trajectories", "manifest ")?,
        r.require("reads", "manifest ")?,
    );
    let known: HashMap<&str, &Question> = questions.iter().map(|q| (q.id.as_str(), q)).collect();
    let mut want: HashMap<String, (u32, u32)> = HashMap::new();
    while let Some((line, rec)) = r.next_record()? {
        let bad = |m: String| Error::input(path, Some(line), m);
        let id = rec.get(ci).unwrap_or("").to_string();
        if !known.contains_key(id.as_str()) {
            return Err(bad(format!(
                "question id '{}' is not in the question file",
                ragstats_core::io::clip(&id)
            )));
        }
        let num = |c: usize, what: &str| -> Result<u32> {
            let s = rec.get(c).unwrap_or("");
            s.trim().parse::<u32>().map_err(|_| {
                bad(format!(
                    "{what} '{}' is not a whole number",
                    ragstats_core::io::clip(s)
                ))
            })
        };
        let (t, rd) = (num(ct, "trajectories")?, num(cr, "reads")?);
        check_design(t, rd).map_err(|e| bad(e.to_string()))?;
        if want.insert(id.clone(), (t, rd)).is_some() {
            return Err(bad(format!(
                "question id '{}' is listed twice",
                ragstats_core::io::clip(&id)
            )));
        }
    }
    Ok(seeded_order(questions, seed)
        .into_values()
        .flatten()
        .filter_map(|q| {
            want.get(&q.id).map(|&(t, r)| Cell {
                question: q.clone(),
                trajectories: t,
                reads: r,
            })
        })
        .collect())
}

/// Calls a run will make at most, and a bound on its tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DryRun {
    pub questions: u64,
    pub trajectories: u64,
    /// Planner calls: one shared first call per (question, trajectory), then
    /// (steps − 1) per arm.
    pub planner_calls: u64,
    /// Search requests (at most one per planner call; repeated queries are cache hits).
    pub search_calls: u64,
    /// Reader calls (at most arms × selectors × reads per trajectory; identical packets
    /// share calls, so usually fewer).
    pub reader_calls: u64,
    /// Upper bound on input tokens (one token per UTF-8 byte of every message, documents at
    /// their 5,000-character cap with up to 4 bytes a character).
    pub input_tokens_max: u64,
    /// Upper bound on output tokens (`max_tokens` per call).
    pub output_tokens_max: u64,
    /// Estimate of the input tokens from the corpus's document lengths
    /// ([`input_tokens_estimate`]); `None` when the backend's corpus cannot be read (an
    /// `http:`/`drg:` search).
    pub input_tokens_estimate: Option<u64>,
    /// What the estimate is based on, or why there is none.
    pub estimate_basis: Option<String>,
}

/// The dry-run bound of a run of `cells` with `arms` planners, `selectors` selectors and
/// `steps` planning steps; `template_bytes` is the bytes of the planner and reader templates
/// and `max_tokens` the output cap.
pub fn dry_run(
    cells: &[Cell],
    arms: u64,
    selectors: u64,
    steps: u64,
    planner_template_bytes: u64,
    reader_template_bytes: u64,
    max_tokens: u64,
) -> DryRun {
    // A shown document: its text plus a header (rank, id, URL, title, count), bounded here by
    // 2,000 bytes; per-message chat-format overhead 16 tokens.
    const DOC: u64 = 5_000 * 4 + 2_000;
    const MSG: u64 = 2 * 16;
    let mut d = DryRun::default();
    for c in cells {
        let (t, r) = (u64::from(c.trajectories), u64::from(c.reads));
        let q = c.question.question.len() as u64;
        d.questions += 1;
        d.trajectories += t;
        let planner = t * (1 + (steps.saturating_sub(1)) * arms);
        d.planner_calls += planner;
        d.search_calls += planner;
        let reader = t * arms * selectors * r;
        d.reader_calls += reader;
        // Planner step s shows s queries (each ≤ 1,000 bytes) and, for Adaptive, s observations
        // of ≤ 5 documents; the bound takes every step at the adaptive maximum.
        let mut per_traj = 0u64;
        for s in 0..steps {
            let calls = if s == 0 { 1 } else { arms };
            per_traj += calls * (planner_template_bytes + q + MSG + s * (1_000 + 5 * DOC));
        }
        d.input_tokens_max += t * per_traj + reader * (reader_template_bytes + q + MSG + 5 * DOC);
        d.output_tokens_max += (planner + reader) * max_tokens;
    }
    d
}

/// What the input-token estimate needs to know about a run, besides its cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimateShape {
    /// Planners, and how many of them are Adaptive (they see observations).
    pub arms: u64,
    pub adaptive_arms: u64,
    pub selectors: u64,
    pub steps: u64,
    /// Results per search.
    pub k: u64,
    /// Characters of the planner's templates (system and user) and of the reader's.
    pub planner_template_chars: u64,
    pub reader_template_chars: u64,
    /// Mean characters a document adds to a prompt: its block as the prompts show it
    /// ([`crate::run::prompt::format_documents`], text cut to 5,000 characters) and the
    /// blank line between blocks.
    pub doc_chars: f64,
}

/// Characters per token of the estimate: the usual figure for English text under BPE
/// tokenisers (the bound instead takes one token per byte).
pub const CHARS_PER_TOKEN: f64 = 4.0;
/// Tokens of chat formatting per message (two messages a call), as in the bound.
const MSG_TOKENS: f64 = 16.0;

/// An estimate (not a bound) of a run's input tokens: the characters of every prompt over
/// [`CHARS_PER_TOKEN`], plus 16 tokens per message, assuming every search returns `k`
/// documents of the corpus's mean length, every query is as long as its question, and
/// every packet is full. Per trajectory of a question of `L` characters:
///
/// * step 0 (one call): planner templates + L + 12 (`(none)` twice);
/// * step s ≥ 1, per arm: planner templates + L + s·(L + 4) (the history) + 6
///   (`(none)`) for Open, or + s·(L + 12 + min(k, 5)·D) (s observed lists) for Adaptive;
/// * each read (arms × selectors × R): reader templates + L + min(5, k·steps)·D.
pub fn input_tokens_estimate(cells: &[Cell], e: &EstimateShape) -> u64 {
    let shown = e.k.min(5) as f64;
    let packet = (e.k * e.steps).min(5) as f64;
    let (pt, rt) = (
        e.planner_template_chars as f64,
        e.reader_template_chars as f64,
    );
    let open = e.arms - e.adaptive_arms.min(e.arms);
    let mut chars = 0.0;
    let mut calls = 0.0;
    for c in cells {
        let (t, r) = (f64::from(c.trajectories), f64::from(c.reads));
        let l = c.question.question.chars().count() as f64;
        let mut per_traj = pt + l + 12.0;
        let mut calls_traj = 1.0;
        for s in 1..e.steps {
            let s = s as f64;
            let base = pt + l + s * (l + 4.0);
            per_traj += open as f64 * (base + 6.0)
                + e.adaptive_arms as f64 * (base + s * (l + 12.0 + shown * e.doc_chars));
            calls_traj += e.arms as f64;
        }
        let reads = (e.arms * e.selectors) as f64 * r;
        per_traj += reads * (rt + l + packet * e.doc_chars);
        calls_traj += reads;
        chars += t * per_traj;
        calls += t * calls_traj;
    }
    (chars / CHARS_PER_TOKEN + 2.0 * MSG_TOKENS * calls).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, d: Dataset) -> Question {
        Question {
            id: id.into(),
            dataset: d,
            question: "Why?".into(),
            answers: vec!["x".into()],
            supporting: vec![],
            cluster: None,
        }
    }

    #[test]
    fn seeded_order_is_a_permutation_per_dataset_and_prefix_stable() {
        let qs: Vec<Question> = (0..20)
            .map(|i| {
                q(
                    &format!("q{i}"),
                    if i % 2 == 0 {
                        Dataset::Hotpotqa
                    } else {
                        Dataset::Musique
                    },
                )
            })
            .collect();
        let all = uniform_cells(&qs, None, 2, 1, Some(7)).unwrap();
        let few = uniform_cells(&qs, Some(3), 2, 1, Some(7)).unwrap();
        assert_eq!(all.len(), 20);
        assert_eq!(few.len(), 6);
        let ids = |c: &[Cell]| c.iter().map(|c| c.question.id.clone()).collect::<Vec<_>>();
        let (a, f) = (ids(&all), ids(&few));
        assert_eq!(&f[..3], &a[..3]);
        assert_eq!(&f[3..], &a[10..13]);
        assert!(all[..10]
            .iter()
            .all(|c| c.question.dataset == Dataset::Hotpotqa));
        let mut sorted = a.clone();
        sorted.sort();
        let mut expect: Vec<String> = (0..20).map(|i| format!("q{i}")).collect();
        expect.sort();
        assert_eq!(sorted, expect);
        assert_ne!(a, ids(&uniform_cells(&qs, None, 2, 1, None).unwrap()));
        assert_eq!(
            ids(&uniform_cells(&qs, None, 2, 1, None).unwrap())[..3],
            ["q0", "q2", "q4"]
        );
    }

    #[test]
    fn manifest_fixes_designs_in_the_seeded_order() {
        let qs: Vec<Question> = (0..6)
            .map(|i| q(&format!("q{i}"), Dataset::Hotpotqa))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("m.csv");
        std::fs::write(&m, "id,trajectories,reads\nq4,3,1\nq1,2,5\n").unwrap();
        let cells = manifest_cells(&m, &qs, None).unwrap();
        let got: Vec<(&str, u32, u32)> = cells
            .iter()
            .map(|c| (c.question.id.as_str(), c.trajectories, c.reads))
            .collect();
        // File order of the questions (no seed), whatever the manifest's row order.
        assert_eq!(got, [("q1", 2, 5), ("q4", 3, 1)]);
        // With a seed, the same order as a run without a manifest.
        let seeded = manifest_cells(&m, &qs, Some(3)).unwrap();
        let order: Vec<String> = uniform_cells(&qs, None, 1, 1, Some(3))
            .unwrap()
            .into_iter()
            .map(|c| c.question.id)
            .filter(|id| id == "q1" || id == "q4")
            .collect();
        assert_eq!(
            seeded
                .iter()
                .map(|c| c.question.id.clone())
                .collect::<Vec<_>>(),
            order
        );
        std::fs::write(&m, "id,trajectories,reads\nq9,1,1\n").unwrap();
        let e = manifest_cells(&m, &qs, None).unwrap_err().to_string();
        assert!(
            e.ends_with("m.csv:2: question id 'q9' is not in the question file"),
            "{e}"
        );
        std::fs::write(&m, "id,trajectories,reads\nq1,0,1\n").unwrap();
        let e = manifest_cells(&m, &qs, None).unwrap_err().to_string();
        assert!(
            e.contains("m.csv:2: trajectories and reads must be at least 1"),
            "{e}"
        );
        std::fs::write(&m, "id,trajectories,reads\nq1,1,1\nq1,2,2\n").unwrap();
        let e = manifest_cells(&m, &qs, None).unwrap_err().to_string();
        assert!(
            e.contains("m.csv:3: question id 'q1' is listed twice"),
            "{e}"
        );
    }

    #[test]
    fn dry_run_counts_calls() {
        let cells = vec![Cell {
            question: q("a", Dataset::Hotpotqa),
            trajectories: 2,
            reads: 3,
        }];
        let d = dry_run(&cells, 2, 2, 4, 0, 0, 256);
        // Per trajectory: 1 shared + 3 steps × 2 arms = 7 planner calls; 2 × 2 × 3 = 12 reads.
        assert_eq!(
            (d.planner_calls, d.search_calls, d.reader_calls),
            (14, 14, 24)
        );
        assert_eq!(d.output_tokens_max, (14 + 24) * 256);
    }

    #[test]
    fn input_token_estimate_by_hand() {
        // One question "Why?" (L = 4), T = 1, R = 1; Open and Adaptive, one selector, two
        // steps, k = 3; templates of 100 (planner) and 50 (reader) characters; D = 200.
        let cells = vec![Cell {
            question: q("a", Dataset::Hotpotqa),
            trajectories: 1,
            reads: 1,
        }];
        let e = EstimateShape {
            arms: 2,
            adaptive_arms: 1,
            selectors: 1,
            steps: 2,
            k: 3,
            planner_template_chars: 100,
            reader_template_chars: 50,
            doc_chars: 200.0,
        };
        // step 0: 100 + 4 + 12 = 116
        // step 1, Open: 100 + 4 + (4 + 4) + 6 = 118
        // step 1, Adaptive: 100 + 4 + 8 + (4 + 12 + 3 × 200) = 728
        // reads: 2 arms × (50 + 4 + min(5, 6) × 200) = 2108
        // (116 + 118 + 728 + 2108) / 4 = 767.5, plus 32 × 5 calls = 927.5 -> 928
        assert_eq!(input_tokens_estimate(&cells, &e), 928);
        // Twice the trajectories, twice the estimate (before rounding): 1855.
        let cells2 = vec![Cell {
            trajectories: 2,
            ..cells[0].clone()
        }];
        assert_eq!(input_tokens_estimate(&cells2, &e), 1855);
    }
}
