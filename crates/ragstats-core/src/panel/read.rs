//! Reading a panel file's rows (CSV or JSONL, through [`crate::io`]) into a [`RawPanel`].

use std::path::Path;

use serde_json::Value;

use super::options::LoadOptions;
use super::raw::{RawPanel, RowKeys};
use crate::io::jsonl::{echo, scalar_text};
use crate::io::{clip, clip_list, is_jsonl, CsvReader, JsonlReader};
use crate::{Error, Result};

pub(super) const KEY_COLUMNS: [&str; 6] = [
    "dataset",
    "question",
    "trajectory",
    "read",
    "arm",
    "selector",
];

/// The keys that pair cells: never a column of systems.
const PAIRING_KEYS: [&str; 4] = ["dataset", "question", "trajectory", "read"];

/// Where a row's arm comes from ([`LoadOptions::arm_column`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ArmColumns<'a> {
    /// The column read as the arm (`arm` by default).
    pub arm: &'a str,
    /// Whether the `selector` column is read as the selector (not when it is the arm).
    pub selector: bool,
    /// Whether the panel's own `arm` column is read as the outer arm (another column is the
    /// arm and the panel has one).
    pub outer: bool,
    /// Keep only the rows of this outer arm.
    pub within: Option<&'a str>,
}

impl ArmColumns<'_> {
    /// The name [`RawPanel::arm_column`] records: the arms' column when it is not `arm`.
    pub fn renamed(&self) -> Option<String> {
        (self.arm != "arm").then(|| self.arm.to_string())
    }
}

/// The arm columns `opts` asks for, checked against the file's columns `header` (errors
/// name `line`, the header's; `what` says "column" or "field").
///
/// # Errors
/// [`Error::Usage`] for a pairing key or the score column as the arms, or `within_arm`
/// without another arm column; [`Error::Input`] for an arm column the file lacks, or
/// `within_arm` in a panel without an `arm` column.
pub(super) fn arm_columns<'a>(
    path: &Path,
    line: Option<u64>,
    header: &[String],
    metric: &str,
    opts: &'a LoadOptions,
    what: &str,
) -> Result<ArmColumns<'a>> {
    let has = |c: &str| header.iter().any(|h| h == c);
    let column = opts.arm_column.as_deref().filter(|c| *c != "arm");
    let Some(c) = column else {
        if let Some(a) = &opts.within_arm {
            return Err(Error::setting(
                "arm",
                format!(
                    "the arm '{}' is where the systems of another column are compared; \
                     choose that column of systems too",
                    clip(a)
                ),
            ));
        }
        return Ok(ArmColumns {
            arm: "arm",
            selector: true,
            outer: false,
            within: None,
        });
    };
    if PAIRING_KEYS.contains(&c) {
        return Err(Error::setting(
            "by",
            format!(
                "'{c}' is a key the cells are paired on (dataset, question, trajectory, \
                 read), not a column of systems; choose e.g. model or selector"
            ),
        ));
    }
    if c == metric {
        return Err(Error::setting(
            "by",
            format!(
                "'{}' is the score column; choose the column that names the systems",
                clip(c)
            ),
        ));
    }
    if !has(c) {
        return Err(Error::input(
            path,
            line,
            format!(
                "missing {what} '{}' (the column of the systems compared); the panel's {what}s are: {}",
                clip(c),
                clip_list(header)
            ),
        ));
    }
    if let Some(a) = &opts.within_arm {
        if !has("arm") {
            return Err(Error::input(
                path,
                line,
                format!(
                    "the arm {} is chosen, but the panel has no 'arm' {what}",
                    clip(a)
                ),
            ));
        }
    }
    Ok(ArmColumns {
        arm: c,
        selector: c != "selector",
        outer: has("arm"),
        within: opts.within_arm.as_deref(),
    })
}

/// Whether a row whose outer arm is `outer` is kept (and its name noted in `raw`).
pub(super) fn keep_outer(raw: &mut RawPanel, cols: &ArmColumns, outer: Option<&str>) -> bool {
    match outer.filter(|a| !a.is_empty()) {
        Some(a) => {
            raw.outer_arms.id(a);
            cols.within.is_none_or(|w| w == a)
        }
        None => cols.within.is_none(),
    }
}

/// After every row is read: a panel with several outer arms needs `within_arm`, which must
/// be one of them.
///
/// # Errors
/// [`Error::Input`] for several outer arms and no choice, or an unknown choice.
pub(super) fn check_outer_arms(path: &Path, raw: &RawPanel, cols: &ArmColumns) -> Result<()> {
    let arms = &raw.outer_arms;
    match cols.within {
        Some(w) if cols.outer && arms.get(w).is_none() => Err(Error::input(
            path,
            None,
            format!(
                "unknown arm '{}'; the panel's arms are: {}",
                clip(w),
                clip_list(arms.names())
            ),
        )),
        None if arms.len() > 1 => Err(Error::input(
            path,
            None,
            format!(
                "the panel has several arms ({}); the systems in '{}' are compared within one \
                 arm: choose the arm",
                clip_list(arms.names()),
                clip(cols.arm)
            ),
        )),
        _ => Ok(()),
    }
}

/// Reads every row of `path` (JSONL when [`is_jsonl`], else CSV) that passes the filter,
/// and the name of the score column.
///
/// # Errors
/// [`Error::Input`] naming the file and line for a missing column, a missing, non-numeric or
/// non-finite score, a malformed row, or an empty question id; [`Error::Io`] when the file
/// cannot be read.
///
/// A CSV file is parsed in pieces on all rayon threads, `chunk_bytes` at a time (see
/// [`CsvReader::par_fold`]; production: [`crate::io::csv::PAR_CHUNK_BYTES`]); the result is
/// the same whatever the pieces.
pub(super) fn read_rows(
    path: &Path,
    opts: &LoadOptions,
    chunk_bytes: usize,
) -> Result<(RawPanel, String)> {
    if is_jsonl(path) {
        read_jsonl(path, opts)
    } else {
        read_csv(path, opts, chunk_bytes)
    }
}

/// The names a score column is recognised by when `--metric` is not given and there is no
/// `f1` column.
pub const SCORE_NAMES: [&str; 6] = ["score", "f1", "em", "correct", "acc", "exact_match"];

/// The columns that are never the score: the keys, `cluster`, the cluster column asked
/// for and the arms' column.
fn is_key(h: &str, opts: &LoadOptions) -> bool {
    KEY_COLUMNS.contains(&h)
        || h == "cluster"
        || opts.cluster.as_deref() == Some(h)
        || opts.arm_column.as_deref() == Some(h)
}

/// Where docs/COVERAGE.md ("Clustered designs") measured the printed interval of panels
/// with clusters analysed as if their questions were independent: the range of its
/// coverage over the designs measured (G from 6 to 48 clusters of 4 binary questions).
pub const IGNORED_CLUSTERS_COVERAGE: (f64, f64) = (0.842, 0.899);

/// The note for a panel with a `cluster` column read without asking for clusters
/// ([`LoadOptions::cluster`]): its questions are analysed as independent, which
/// docs/COVERAGE.md measured short.
pub(super) fn unused_cluster_note(header: &[String], opts: &LoadOptions) -> Option<String> {
    (opts.cluster.is_none() && header.iter().any(|h| h == "cluster")).then(|| {
        format!(
            "the panel has a 'cluster' column, which is not used: questions are analysed as \
             independent; name 'cluster' as the cluster column to nest them in their \
             clusters. On clustered panels an interval ignoring the clusters covered only \
             {:.3}–{:.3} of the time at 95% (docs/COVERAGE.md, Clustered designs)",
            IGNORED_CLUSTERS_COVERAGE.0, IGNORED_CLUSTERS_COVERAGE.1
        )
    })
}

/// The cluster column `opts` asks for ([`LoadOptions::cluster`]), checked against the
/// chosen score column `metric`.
///
/// # Errors
/// [`Error::Setting`] (`cluster`) when it is the score column or a key below the question
/// (trajectory, read), whose values are not clusters of questions.
pub(super) fn cluster_column<'a>(opts: &'a LoadOptions, metric: &str) -> Result<Option<&'a str>> {
    match opts.cluster.as_deref() {
        Some(c) if c == metric => Err(Error::setting(
            "cluster",
            format!(
                "'{}' is the score column; choose the column naming each question's cluster",
                clip(c)
            ),
        )),
        Some(c @ ("trajectory" | "read")) => Err(Error::setting(
            "cluster",
            format!(
                "'{c}' labels cells within a question, not clusters of questions; choose the \
                 column naming each question's cluster (e.g. its source article)"
            ),
        )),
        other => Ok(other),
    }
}

/// The score column and, when it was chosen rather than named, a note saying so:
/// `--metric`; else `f1` if present (the long-standing default); else the only non-key
/// column; else the one numeric column named like a score ([`SCORE_NAMES`]). `numeric`
/// says whether a column can hold scores (a Parquet column's type; always true for text
/// files, whose scores are checked row by row). Errors name `line`, the header's.
///
/// # Errors
/// [`Error::Input`] for a `--metric` the header lacks, several score-named columns (listed),
/// or no way to tell.
pub(super) fn choose_metric(
    path: &Path,
    line: Option<u64>,
    header: &[String],
    opts: &LoadOptions,
    numeric: &dyn Fn(&str) -> bool,
) -> Result<(String, Option<String>)> {
    let extra: Vec<&String> = header.iter().filter(|h| !is_key(h, opts)).collect();
    let named: Vec<&String> = extra
        .iter()
        .copied()
        .filter(|h| SCORE_NAMES.contains(&h.as_str()) && numeric(h))
        .collect();
    match &opts.metric {
        Some(m) if header.iter().any(|h| h == m) => Ok((m.clone(), None)),
        Some(m) => Err(Error::input(
            path,
            line,
            format!(
                "missing score column '{}' (columns: {})",
                clip(m),
                clip_list(header)
            ),
        )),
        None if header.iter().any(|h| h == "f1") => Ok(("f1".into(), None)),
        // The only column that is not a key needs no note (the long-standing rule).
        None if extra.len() == 1 => Ok((extra[0].clone(), None)),
        None if named.len() == 1 => Ok((
            named[0].clone(),
            Some(format!(
                "using '{}' as the score column (the one column named like a score; \
                 choose another as the metric)",
                clip(named[0])
            )),
        )),
        None if named.len() > 1 => Err(Error::input(
            path,
            line,
            format!(
                "several columns could be the score ({}); choose one as the metric",
                clip_list(named)
            ),
        )),
        None => Err(Error::input(
            path,
            line,
            format!(
                "cannot tell which column is the score; choose one as the metric (candidates: {})",
                if extra.is_empty() {
                    "none".to_string()
                } else {
                    clip_list(extra)
                }
            ),
        )),
    }
}

/// Where each field of a CSV row sits.
struct Columns {
    dataset: Option<usize>,
    question: usize,
    trajectory: Option<usize>,
    read: Option<usize>,
    arm: Option<usize>,
    selector: Option<usize>,
    /// The panel's own `arm` column, when another column is the arms.
    outer_arm: Option<usize>,
    /// The cluster column ([`LoadOptions::cluster`]).
    cluster: Option<usize>,
    metric: usize,
}

/// Index of column `name` of `rdr`, or an error listing the columns there are.
pub(super) fn required_column(rdr: &CsvReader, name: &str) -> Result<usize> {
    rdr.column(name).ok_or_else(|| {
        Error::input(
            rdr.path(),
            Some(rdr.header_line()),
            format!(
                "missing column '{}' (columns: {})",
                clip(name),
                clip_list(rdr.headers())
            ),
        )
    })
}

/// A score cell as a finite number.
pub(super) fn parse_score(path: &Path, line: u64, metric: &str, text: &str) -> Result<f64> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::input(
            path,
            Some(line),
            format!("missing score in column '{}'", clip(metric)),
        ));
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => {
            match crate::io::magnitude_error(|| format!("score '{}'", clip(metric)), v) {
                Some(m) => Err(Error::input(path, Some(line), m)),
                None => Ok(v),
            }
        }
        Ok(v) => Err(Error::input(
            path,
            Some(line),
            format!("score '{}' is {v}; expected a finite number", clip(metric)),
        )),
        Err(_) => Err(Error::input(
            path,
            Some(line),
            format!(
                "score '{}' is '{}'; expected a number",
                clip(metric),
                clip(t)
            ),
        )),
    }
}

fn read_csv(path: &Path, opts: &LoadOptions, chunk_bytes: usize) -> Result<(RawPanel, String)> {
    let mut rdr = CsvReader::open(path)?;
    if !opts.columns.is_empty() {
        let renamed =
            opts.columns
                .rename(path, Some(rdr.header_line()), rdr.headers(), "column")?;
        rdr.rename_headers(renamed);
    }
    let (metric, note) =
        choose_metric(path, Some(rdr.header_line()), rdr.headers(), opts, &|_| {
            true
        })?;
    let arms = arm_columns(
        path,
        Some(rdr.header_line()),
        rdr.headers(),
        &metric,
        opts,
        "column",
    )?;
    let cols = Columns {
        question: required_column(&rdr, "question")?,
        dataset: rdr.column("dataset"),
        trajectory: rdr.column("trajectory"),
        read: rdr.column("read"),
        arm: rdr.column(arms.arm),
        selector: rdr.column("selector").filter(|_| arms.selector),
        outer_arm: rdr.column("arm").filter(|_| arms.outer),
        cluster: match cluster_column(opts, &metric)? {
            Some(c) => Some(required_column(&rdr, c)?),
            None => None,
        },
        metric: rdr.column(&metric).expect("metric chosen from header"),
    };
    let filter = match &opts.filter {
        Some((col, value)) => Some((required_column(&rdr, col)?, value.as_str())),
        None => None,
    };
    let init = || RawPanel {
        has_dataset: cols.dataset.is_some(),
        arm_column: arms.renamed(),
        ..Default::default()
    };
    let unused_cluster = unused_cluster_note(rdr.headers(), opts);
    let pieces = rdr.par_fold(chunk_bytes, init, |raw, line, rec| {
        if let Some((i, value)) = filter {
            if rec.get(i) != Some(value) {
                return Ok(());
            }
        }
        let get = |i: Option<usize>| i.map(|i| rec.get(i).unwrap_or(""));
        if cols.outer_arm.is_some() && !keep_outer(raw, &arms, get(cols.outer_arm)) {
            return Ok(());
        }
        let value = parse_score(path, line, &metric, &rec[cols.metric])?;
        let keys = RowKeys {
            dataset: get(cols.dataset),
            question: &rec[cols.question],
            trajectory: get(cols.trajectory),
            read: get(cols.read),
            arm: get(cols.arm),
            selector: get(cols.selector),
            cluster: get(cols.cluster),
        };
        raw.push(path, line, keys, value)
    })?;
    // The pieces are in file order, so concatenating them in order gives the ids a single
    // pass would have given.
    let mut raw = RawPanel::concat(pieces).unwrap_or_else(init);
    check_outer_arms(path, &raw, &arms)?;
    raw.notes.extend(note);
    raw.notes.extend(unused_cluster);
    Ok((raw, metric))
}

/// A key field of a JSONL row as text: `None` when absent or null.
fn json_key(
    path: &Path,
    line: u64,
    obj: &serde_json::Map<String, Value>,
    name: &str,
) -> Result<Option<String>> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match scalar_text(v) {
            Some(s) => Ok(Some(s.trim().to_string())),
            None => Err(Error::input(
                path,
                Some(line),
                format!("field '{}' must be a string or number", clip(name)),
            )),
        },
    }
}

fn read_jsonl(path: &Path, opts: &LoadOptions) -> Result<(RawPanel, String)> {
    let mut rdr = JsonlReader::open(path)?;
    let mut raw = RawPanel::default();
    let mut metric: Option<String> = None;
    let mut arms: Option<ArmColumns> = None;
    let mut renamed: Option<Vec<String>> = None;
    while let Some((lineno, mut obj)) = rdr.next_object()? {
        if !opts.columns.is_empty() {
            // The first row's fields are checked as a CSV header would be.
            if renamed.is_none() {
                let header: Vec<String> = obj.keys().cloned().collect();
                renamed = Some(opts.columns.rename(path, Some(lineno), &header, "field")?);
            }
            for (role, column) in opts.columns.pairs() {
                if let Some(v) = obj.remove(column) {
                    obj.insert(role.clone(), v);
                }
            }
        }
        let metric = match &metric {
            Some(m) => m.clone(),
            None => {
                // The first row decides the score field, as a CSV header would.
                let header: Vec<String> = obj.keys().cloned().collect();
                let (m, note) = choose_metric(path, Some(lineno), &header, opts, &|_| true).map_err(|e| {
                    Error::input(
                        path,
                        Some(lineno),
                        match &opts.metric {
                            Some(m) => format!(
                                "missing score field '{}' (fields: {})",
                                clip(m),
                                clip_list(&header)
                            ),
                            None => match e {
                                Error::Input { msg, .. } if msg.starts_with("several") => {
                                    msg.replace("columns", "fields")
                                }
                                _ => format!(
                                    "cannot tell which field is the score; choose one as the metric (fields: {})",
                                    clip_list(&header)
                                ),
                            },
                        },
                    )
                })?;
                raw.notes.extend(note);
                raw.notes.extend(unused_cluster_note(&header, opts));
                raw.has_dataset = obj.contains_key("dataset");
                let cols = arm_columns(path, Some(lineno), &header, &m, opts, "field")?;
                cluster_column(opts, &m)?;
                raw.arm_column = cols.renamed();
                arms = Some(cols);
                metric = Some(m.clone());
                m
            }
        };
        let key = |name: &str| json_key(path, lineno, &obj, name);
        if let Some((col, value)) = &opts.filter {
            if key(col)?.as_deref() != Some(value.as_str()) {
                continue;
            }
        }
        let cols = arms.expect("set with the metric");
        if cols.outer && !keep_outer(&mut raw, &cols, key("arm")?.as_deref()) {
            continue;
        }
        let question = key("question")?
            .ok_or_else(|| Error::input(path, Some(lineno), "missing field 'question'"))?;
        let value = match obj.get(&metric) {
            Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            Some(Value::String(s)) => parse_score(path, lineno, &metric, s)?,
            None | Some(Value::Null) => {
                return Err(Error::input(
                    path,
                    Some(lineno),
                    format!("missing score field '{}'", clip(&metric)),
                ))
            }
            Some(other) => {
                return Err(Error::input(
                    path,
                    Some(lineno),
                    format!(
                        "score '{}' is {}; expected a number",
                        clip(&metric),
                        echo(other)
                    ),
                ))
            }
        };
        if !value.is_finite() {
            return Err(Error::input(
                path,
                Some(lineno),
                format!("score '{}' is not a finite number", clip(&metric)),
            ));
        }
        if let Some(m) = crate::io::magnitude_error(|| format!("score '{}'", clip(&metric)), value)
        {
            return Err(Error::input(path, Some(lineno), m));
        }
        let (d, t, r, a) = (
            key("dataset")?,
            key("trajectory")?,
            key("read")?,
            key(cols.arm)?,
        );
        let sel = if cols.selector {
            key("selector")?
        } else {
            None
        };
        // A row without the cluster field has an empty cluster, which `push` refuses.
        let cluster = match &opts.cluster {
            Some(c) => Some(key(c)?.unwrap_or_default()),
            None => None,
        };
        let keys = RowKeys {
            dataset: d.as_deref(),
            question: &question,
            trajectory: t.as_deref(),
            read: r.as_deref(),
            arm: a.as_deref(),
            selector: sel.as_deref(),
            cluster: cluster.as_deref(),
        };
        raw.push(path, lineno, keys, value)?;
    }
    let metric = metric.ok_or_else(|| Error::input(path, None, "the panel has no rows"))?;
    check_outer_arms(path, &raw, &arms.expect("set with the metric"))?;
    Ok((raw, metric))
}
