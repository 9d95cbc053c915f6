//! The rows read, settled before any outcome is assembled from them, in one pass over all of
//! them: duplicate rows merged or listed ([`LoadOptions::duplicates`]), the questions every
//! arm has kept ([`LoadOptions::common_questions`]), and every problem that would refuse the
//! panel reported at once, by class, with counts and examples, rather than the first one
//! found after the rest of the work (a 93-model LiveBench file used to be refused for one
//! duplicate row, then, once that was fixed, for one missing question, and so on).

use std::fmt::Write as _;
use std::path::Path;

use super::options::{Duplicates, LoadOptions};
use super::raw::{RawPanel, RawRow};
use crate::io::clip;
use crate::{Error, Result};

/// Examples shown per problem (and per arm).
const EXAMPLES: usize = 3;

/// Settles `raw`'s rows as `opts` asks (see the module's comment); `raw.notes` says what was
/// merged or dropped.
///
/// # Errors
/// [`Error::Input`] for questions not nested in clusters or clusters not nested in strata
/// ([`super::clusters::check_nesting`]); one [`Error::Input`] naming every class of problem found, when there are duplicate rows
/// (with [`Duplicates::Error`]) or, with [`LoadOptions::same_questions`], arms lacking
/// questions other arms have; [`Error::Input`] when no question is common to every arm.
pub(super) fn settle(path: &Path, raw: &mut RawPanel, opts: &LoadOptions) -> Result<()> {
    super::clusters::check_nesting(path, raw)?;
    if !opts.keep_arms.is_empty() {
        keep_arms(path, raw, &opts.keep_arms)?;
    }
    let mut problems: Vec<String> = Vec::new();
    let arms = compared_arms(raw, opts);
    // `--arm X` analyses X alone: another arm's duplicates are not its problem.
    let analysed: Vec<u32> = match opts.arm.as_deref().and_then(|a| raw.arms.get(a)) {
        Some(a) if opts.contrast.is_none() => vec![a],
        _ => arms.clone(),
    };
    if let Some(p) = duplicates(path, raw, opts.duplicates, &analysed) {
        problems.push(p);
    }
    if arms.len() > 1 {
        if opts.common_questions {
            keep_common(path, raw, &arms)?;
        } else if opts.same_questions {
            problems.extend(missing_questions(raw, &arms));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    if problems.len() == 1 {
        return Err(Error::input(path, None, problems.remove(0)));
    }
    let mut msg = format!("the panel has {} problems:", problems.len());
    for p in &problems {
        write!(msg, "\n  - {p}").expect("writing to a String");
    }
    Err(Error::input(path, None, msg))
}

/// Keeps the rows of the arms named in `keep` ([`LoadOptions::keep_arms`]) and renumbers
/// the arms in the order they first appear in the file, as if the others were never there.
///
/// # Errors
/// [`Error::Setting`] (`arms`) naming every arm of `keep` the panel at `path` lacks, with
/// the panel's arms.
fn keep_arms(path: &Path, raw: &mut RawPanel, keep: &[String]) -> Result<()> {
    let unknown: Vec<&str> = keep
        .iter()
        .map(String::as_str)
        .filter(|a| raw.arms.get(a).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(Error::setting(
            "arms",
            format!(
                "no {} '{}' in {}; its {}s are: {}",
                raw.arm_name(),
                unknown.join("', '"),
                path.display(),
                raw.arm_name(),
                crate::io::clip_list(raw.arms.names())
            ),
        ));
    }
    let mut arms = super::raw::Interner::default();
    let renumber: Vec<Option<u32>> = raw
        .arms
        .names()
        .map(|name| keep.iter().any(|k| k == name).then(|| arms.id(name)))
        .collect();
    raw.rows
        .retain_mut(|r| match renumber.get(r.arm as usize).copied().flatten() {
            Some(id) => {
                r.arm = id;
                true
            }
            None => false,
        });
    raw.arms = arms;
    Ok(())
}

/// The arms whose questions must agree: the two of `--contrast B-A` (when both are arms of
/// the panel; else the contrast's own error comes later), else every arm.
fn compared_arms(raw: &RawPanel, opts: &LoadOptions) -> Vec<u32> {
    if let Some(spec) = &opts.contrast {
        for (i, _) in spec.match_indices('-') {
            if let (Some(b), Some(a)) = (raw.arms.get(&spec[..i]), raw.arms.get(&spec[i + 1..])) {
                return vec![a.min(b), a.max(b)];
            }
        }
    }
    (0..raw.arms.len() as u32).collect()
}

/// Rows with the same cell, arm and selector: with [`Duplicates::Error`], the problem (how
/// many rows repeat a cell, the first few with their lines); else each such group becomes
/// one row (the mean of its values, or its first row), noted.
fn duplicates(
    path: &Path,
    raw: &mut RawPanel,
    mode: Duplicates,
    analysed: &[u32],
) -> Option<String> {
    let key = |r: &RawRow| (r.cell(), r.arm, r.selector);
    raw.rows.sort_unstable_by_key(|r| (key(r), r.line));
    let counted = |w: &&[RawRow]| {
        key(&w[0]) == key(&w[1])
            && (w[0].arm == super::raw::NO_ARM || analysed.binary_search(&w[0].arm).is_ok())
    };
    let repeats = raw.rows.windows(2).filter(counted).count();
    if repeats == 0 {
        return None;
    }
    if mode == Duplicates::Error {
        let mut examples: Vec<&RawRow> =
            raw.rows.windows(2).filter(counted).map(|w| &w[1]).collect();
        examples.sort_unstable_by_key(|r| r.line);
        let first: Vec<String> = examples[..examples.len().min(EXAMPLES)]
            .iter()
            .map(|r| {
                let earlier = raw
                    .rows
                    .iter()
                    .filter(|o| key(o) == key(r) && o.line < r.line)
                    .map(|o| o.line)
                    .min()
                    .expect("a repeat follows its first row");
                format!(
                    "line {} repeats line {earlier} ({})",
                    r.line,
                    raw.describe(r)
                )
            })
            .collect();
        let cells = {
            let mut n = 0;
            let mut prev = None;
            for w in raw.rows.windows(2).filter(counted) {
                if prev != Some(key(&w[0])) {
                    n += 1;
                    prev = Some(key(&w[0]));
                }
            }
            n
        };
        return Some(format!(
            "duplicates: {repeats} row{} repeat{} a cell already given ({cells} cell{}); {}{}; \
             duplicates 'mean' averages a cell's rows, 'first' keeps the first",
            plural(repeats),
            if repeats == 1 { "s" } else { "" },
            plural(cells),
            first.join("; "),
            if repeats > EXAMPLES { "; …" } else { "" }
        ));
    }
    let rows = std::mem::take(&mut raw.rows);
    let mut out: Vec<RawRow> = Vec::with_capacity(rows.len());
    for group in rows.chunk_by(|a, b| key(a) == key(b)) {
        // Sorted by line within the group: the first is the file's first.
        let mut row = group[0];
        if mode == Duplicates::Mean && group.len() > 1 {
            row.value = group.iter().map(|r| r.value).sum::<f64>() / group.len() as f64;
        }
        out.push(row);
    }
    raw.rows = out;
    raw.notes.push(format!(
        "{} {repeats} duplicate row{} ({})",
        match mode {
            Duplicates::Mean => "averaged",
            _ => "kept the first of",
        },
        plural(repeats),
        path.display()
    ));
    None
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// For each of `arms` (sorted ids), the (dataset, question) pairs it has, as a sorted list.
fn questions_of(raw: &RawPanel, arms: &[u32]) -> Vec<Vec<(u32, u32)>> {
    let mut per: Vec<Vec<(u32, u32)>> = vec![Vec::new(); arms.len()];
    for r in &raw.rows {
        if let Ok(i) = arms.binary_search(&r.arm) {
            per[i].push((r.dataset, r.question));
        }
    }
    for q in &mut per {
        q.sort_unstable();
        q.dedup();
    }
    per
}

/// The (dataset, question) pairs some of `arms` have: each with how many of them have it.
fn presence(per: &[Vec<(u32, u32)>]) -> Vec<((u32, u32), usize)> {
    let mut all: Vec<(u32, u32)> = per.iter().flatten().copied().collect();
    all.sort_unstable();
    all.chunk_by(|a, b| a == b)
        .map(|g| (g[0], g.len()))
        .collect()
}

/// Keeps the rows of the questions every one of `arms` has (rows of other arms too, of
/// those questions only), noting how many questions each arm lost.
fn keep_common(path: &Path, raw: &mut RawPanel, arms: &[u32]) -> Result<()> {
    let per = questions_of(raw, arms);
    let common: Vec<(u32, u32)> = presence(&per)
        .into_iter()
        .filter(|&(_, n)| n == arms.len())
        .map(|(q, _)| q)
        .collect();
    if common.is_empty() {
        let mut fewest: Vec<(usize, &str)> = arms
            .iter()
            .zip(&per)
            .map(|(&a, qs)| (qs.len(), raw.arms.name(a)))
            .collect();
        fewest.sort_unstable();
        let shown: Vec<String> = fewest
            .iter()
            .take(EXAMPLES)
            .map(|(n, a)| format!("{} ({n})", clip(a)))
            .collect();
        return Err(Error::input(
            path,
            None,
            format!(
                "common questions: no question is answered by all {} {}s; those with the \
                 fewest questions: {}; choose the systems to compare (e.g. a contrast B-A, or \
                 a filtered file)",
                arms.len(),
                raw.arm_name(),
                shown.join(", ")
            ),
        ));
    }
    let dropped: Vec<(u32, usize, usize)> = arms
        .iter()
        .zip(&per)
        .map(|(&a, qs)| (a, qs.len() - common.len(), qs.len()))
        .collect();
    raw.rows
        .retain(|r| common.binary_search(&(r.dataset, r.question)).is_ok());
    let losing: Vec<String> = dropped
        .iter()
        .filter(|d| d.1 > 0)
        .map(|&(a, n, of)| format!("{} {n} of {of}", raw.arms.echo(a)))
        .collect();
    let strata = {
        let mut d: Vec<u32> = common.iter().map(|q| q.0).collect();
        d.dedup();
        d.len()
    };
    raw.notes.push(if losing.is_empty() {
        format!(
            "common questions: every arm has all {} questions; none dropped",
            common.len()
        )
    } else {
        format!(
            "common questions: kept the {} questions (in {strata} strat{}) that all {} arms \
             have; questions dropped per arm: {}{}",
            common.len(),
            if strata == 1 { "um" } else { "a" },
            arms.len(),
            losing.join(", "),
            if losing.len() < arms.len() {
                format!(" (the other {} arms lost none)", arms.len() - losing.len())
            } else {
                String::new()
            }
        )
    });
    Ok(())
}

/// The arms lacking questions other arms have, per arm with counts and first examples;
/// `None` when every arm has every question.
fn missing_questions(raw: &RawPanel, arms: &[u32]) -> Option<String> {
    let per = questions_of(raw, arms);
    let all = presence(&per);
    if all.iter().all(|&(_, n)| n == arms.len()) {
        return None;
    }
    let mut parts = Vec::new();
    for (&a, qs) in arms.iter().zip(&per) {
        let lacking: Vec<(u32, u32)> = all
            .iter()
            .map(|&(q, _)| q)
            .filter(|q| qs.binary_search(q).is_err())
            .collect();
        if lacking.is_empty() {
            continue;
        }
        let shown: Vec<String> = lacking[..lacking.len().min(2)]
            .iter()
            .map(|&(d, q)| {
                if raw.has_dataset {
                    format!("{}/{}", raw.datasets.echo(d), raw.questions.echo(q))
                } else {
                    raw.questions.echo(q)
                }
            })
            .collect();
        parts.push(format!(
            "{} lacks {} (e.g. {}{})",
            clip(raw.arms.name(a)),
            lacking.len(),
            shown.join(", "),
            if lacking.len() > 2 { ", …" } else { "" }
        ));
    }
    let n = parts.len();
    let listed = 10;
    let more = n.saturating_sub(listed);
    parts.truncate(listed);
    Some(format!(
        "missing questions: {n} of {} {}s lack questions other {}s have ({} questions in all); {}{}; \
         keeping the common questions keeps those every {} has",
        arms.len(),
        raw.arm_name(),
        raw.arm_name(),
        all.len(),
        parts.join("; "),
        if more > 0 { format!("; and {more} more") } else { String::new() },
        raw.arm_name()
    ))
}
