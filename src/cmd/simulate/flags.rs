//! The flag values of `stats simulate` that clap cannot parse alone: `--datasets`,
//! `--mean`, and the output format by file name.

use std::path::Path;

use crate::cmd::UsageError;

/// Datasets and their question counts, in the order given.
#[derive(Debug, Clone)]
pub struct Strata(pub Vec<(String, usize)>);

/// Baseline means: one for all datasets (`None` name) or one per named dataset.
#[derive(Debug, Clone)]
pub struct Means(pub Vec<(Option<String>, f64)>);

/// Parses `name=Q,name=Q` or a single count.
pub(super) fn parse_strata(s: &str) -> Result<Strata, String> {
    if let Ok(q) = s.trim().parse::<usize>() {
        return if q == 0 {
            Err("the number of questions must be at least 1".into())
        } else {
            Ok(Strata(vec![("all".into(), q)]))
        };
    }
    let mut out: Vec<(String, usize)> = Vec::new();
    for part in s.split(',') {
        let (name, q) = part
            .split_once('=')
            .ok_or_else(|| format!("expected name=QUESTIONS, got {part:?}"))?;
        let name = name.trim();
        valid_name(name)?;
        let q: usize = q.trim().parse().map_err(|_| {
            format!(
                "dataset {name}: expected a whole number of questions, got {:?}",
                q.trim()
            )
        })?;
        if q == 0 {
            return Err(format!(
                "dataset {name}: the number of questions must be at least 1"
            ));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("dataset {name} is listed twice"));
        }
        out.push((name.to_string(), q));
    }
    Ok(Strata(out))
}

fn valid_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(format!(
            "dataset name {name:?} must be non-empty ASCII letters, digits, '-', '_' or '.'"
        ));
    }
    Ok(())
}

/// Parses `0.5` or `name=0.5,name=0.4`.
pub(super) fn parse_means(s: &str) -> Result<Means, String> {
    if let Ok(m) = s.trim().parse::<f64>() {
        return if m.is_finite() {
            Ok(Means(vec![(None, m)]))
        } else {
            Err("the mean must be finite".into())
        };
    }
    s.split(',')
        .map(|part| {
            let (name, v) = part
                .split_once('=')
                .ok_or_else(|| format!("expected a number or name=VALUE, got {part:?}"))?;
            let v: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| {
                    format!(
                        "mean of {}: expected a finite number, got {:?}",
                        name.trim(),
                        v.trim()
                    )
                })?;
            Ok((Some(name.trim().to_string()), v))
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Means)
}

/// The per-stratum means in stratum order, or a usage error when names do not match.
pub(super) fn resolve_means(
    means: &Means,
    strata: &[(String, usize)],
) -> Result<Vec<f64>, UsageError> {
    if let [(None, m)] = means.0.as_slice() {
        return Ok(vec![*m]);
    }
    let names: Vec<&str> = strata.iter().map(|s| s.0.as_str()).collect();
    for (n, _) in &means.0 {
        let n = n.as_deref().unwrap_or("");
        if !names.contains(&n) {
            return Err(UsageError(format!(
                "--mean names dataset {n:?}, which is not in --datasets ({})",
                names.join(", ")
            )));
        }
    }
    strata
        .iter()
        .map(|(name, _)| {
            means
                .0
                .iter()
                .find(|(n, _)| n.as_deref() == Some(name))
                .map(|(_, m)| *m)
                .ok_or_else(|| UsageError(format!("--mean gives no value for dataset {name}")))
        })
        .collect()
}

/// Whether `path` names a JSONL panel (`.jsonl` or `.ndjson`, any case); CSV otherwise.
pub(super) fn is_jsonl(path: &Path) -> bool {
    matches!(
        path.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("jsonl" | "ndjson")
    )
}
