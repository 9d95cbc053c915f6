//! Reading a panel file into a validated [`Panel`].
//!
//! Rows are reduced on the fly to small fixed-size records (interned keys, the score and
//! the line number, 32 bytes), so a 10-million-row panel needs a few hundred MB, not the
//! text it came from.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::{Panel, Stratum};
use crate::{Error, Result};

/// How to read a panel.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Score column; default `f1` if present, else the only non-key column.
    pub metric: Option<String>,
    /// `B-A`: the outcome is score(B) − score(A), paired on (dataset, question, trajectory, read).
    pub contrast: Option<String>,
    /// Keep only this arm (when the panel has several and no contrast is asked for).
    pub arm: Option<String>,
    /// Drop questions with missing or unpaired cells instead of failing.
    pub drop_incomplete: bool,
    /// Keep only rows whose column (first) has this value (second), e.g. one temperature.
    pub filter: Option<(String, String)>,
}

const KEY_COLUMNS: [&str; 5] = ["dataset", "question", "trajectory", "read", "arm"];
const NO_ARM: u32 = u32::MAX;

/// One row reduced to interned keys: 32 bytes whatever the text looked like.
#[derive(Debug, Clone, Copy)]
struct RawRow {
    dataset: u32,
    question: u32,
    trajectory: u32,
    read: u32,
    arm: u32,
    line: u32,
    value: f64,
}

impl RawRow {
    fn cell(&self) -> (u32, u32, u32, u32) {
        (self.dataset, self.question, self.trajectory, self.read)
    }
}

/// Maps strings to dense ids in order of first appearance.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(s.to_owned(), id);
        self.names.push(s.to_owned());
        id
    }
    fn get(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }
}

/// Interned keys plus rows, as read from the file.
#[derive(Default)]
struct RawPanel {
    datasets: Interner,
    questions: Interner,
    trajectories: Interner,
    reads: Interner,
    arms: Interner,
    rows: Vec<RawRow>,
    has_dataset: bool,
}

/// Where each field of a row sits.
struct Columns {
    dataset: Option<usize>,
    question: usize,
    trajectory: Option<usize>,
    read: Option<usize>,
    arm: Option<usize>,
    metric: usize,
}

/// Loads a panel from CSV (`.csv`, or anything not `.jsonl`/`.json`) or JSONL.
///
/// # Errors
/// [`Error::Input`] naming the file, line and problem for: a missing column, a non-numeric
/// or non-finite score, a duplicate cell, an unpaired arm cell, an unknown arm, an
/// unbalanced question (unless `drop_incomplete`); [`Error::Io`] when the file cannot be read.
pub fn load_panel(path: &Path, opts: &LoadOptions) -> Result<Panel> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (raw, metric) = if ext.eq_ignore_ascii_case("jsonl") || ext.eq_ignore_ascii_case("json") {
        read_jsonl(path, BufReader::new(file), opts)?
    } else {
        read_csv(path, file, opts)?
    };
    assemble(path, raw, metric, opts)
}

fn choose_metric(path: &Path, header: &[String], opts: &LoadOptions) -> Result<String> {
    let extra: Vec<&String> = header
        .iter()
        .filter(|h| !KEY_COLUMNS.contains(&h.as_str()))
        .collect();
    match &opts.metric {
        Some(m) if header.iter().any(|h| h == m) => Ok(m.clone()),
        Some(m) => Err(Error::input(
            path,
            Some(1),
            format!(
                "missing score column '{m}' (columns: {})",
                header.join(", ")
            ),
        )),
        None if header.iter().any(|h| h == "f1") => Ok("f1".into()),
        None if extra.len() == 1 => Ok(extra[0].clone()),
        None => Err(Error::input(
            path,
            Some(1),
            format!(
                "cannot tell which column is the score; choose one with --metric (candidates: {})",
                if extra.is_empty() {
                    "none".to_string()
                } else {
                    extra
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        )),
    }
}

fn columns(path: &Path, header: &[String], metric: &str) -> Result<Columns> {
    let find = |name: &str| header.iter().position(|h| h == name);
    let question = find("question").ok_or_else(|| {
        Error::input(
            path,
            Some(1),
            format!("missing column 'question' (columns: {})", header.join(", ")),
        )
    })?;
    Ok(Columns {
        dataset: find("dataset"),
        question,
        trajectory: find("trajectory"),
        read: find("read"),
        arm: find("arm"),
        metric: find(metric).expect("metric chosen from header"),
    })
}

fn parse_score(path: &Path, line: u64, metric: &str, text: &str) -> Result<f64> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::input(
            path,
            Some(line),
            format!("missing score in column '{metric}'"),
        ));
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(v) => Err(Error::input(
            path,
            Some(line),
            format!("score '{metric}' is {v}; expected a finite number"),
        )),
        Err(_) => Err(Error::input(
            path,
            Some(line),
            format!("score '{metric}' is '{t}'; expected a number"),
        )),
    }
}

impl RawPanel {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        path: &Path,
        line: u64,
        dataset: Option<&str>,
        question: &str,
        trajectory: Option<&str>,
        read: Option<&str>,
        arm: Option<&str>,
        value: f64,
    ) -> Result<()> {
        if question.is_empty() {
            return Err(Error::input(path, Some(line), "empty question id"));
        }
        let line32 = u32::try_from(line)
            .map_err(|_| Error::input(path, Some(line), "panels are limited to 4 billion lines"))?;
        let row = RawRow {
            dataset: self.datasets.id(dataset.unwrap_or("all")),
            question: self.questions.id(question),
            trajectory: self.trajectories.id(trajectory.unwrap_or("0")),
            read: self.reads.id(read.unwrap_or("0")),
            arm: arm.map(|a| self.arms.id(a)).unwrap_or(NO_ARM),
            line: line32,
            value,
        };
        self.rows.push(row);
        Ok(())
    }
}

fn read_csv(path: &Path, file: File, opts: &LoadOptions) -> Result<(RawPanel, String)> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(BufReader::with_capacity(1 << 20, file));
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| csv_error(path, e))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let metric = choose_metric(path, &header, opts)?;
    let cols = columns(path, &header, &metric)?;
    let filter = match &opts.filter {
        Some((col, value)) => Some((
            header.iter().position(|h| h == col).ok_or_else(|| {
                Error::input(path, Some(1), format!("missing column '{col}' (columns: {})", header.join(", ")))
            })?,
            value.as_str(),
        )),
        None => None,
    };
    let mut raw = RawPanel {
        has_dataset: cols.dataset.is_some(),
        ..Default::default()
    };
    let mut rec = csv::StringRecord::new();
    loop {
        match rdr.read_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_error(path, e)),
        }
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        if let Some((i, value)) = filter {
            if rec.get(i).map(str::trim) != Some(value) {
                continue;
            }
        }
        let get = |i: Option<usize>| i.map(|i| rec.get(i).unwrap_or("").trim());
        let value = parse_score(path, line, &metric, &rec[cols.metric])?;
        raw.push(
            path,
            line,
            get(cols.dataset),
            rec[cols.question].trim(),
            get(cols.trajectory),
            get(cols.read),
            get(cols.arm),
            value,
        )?;
    }
    Ok((raw, metric))
}

fn csv_error(path: &Path, e: csv::Error) -> Error {
    let line = e.position().map(|p| p.line());
    let msg = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("row has {len} fields; the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => "invalid UTF-8".to_string(),
        _ => e.to_string(),
    };
    Error::input(path, line, msg)
}

/// A JSON key field as text: strings as they are, integers and other numbers printed.
fn json_key(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.trim().to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn read_jsonl(path: &Path, reader: impl BufRead, opts: &LoadOptions) -> Result<(RawPanel, String)> {
    let mut raw = RawPanel::default();
    let mut metric: Option<String> = None;
    for (i, line) in reader.lines().enumerate() {
        let lineno = i as u64 + 1;
        let line =
            line.map_err(|e| Error::input(path, Some(lineno), format!("cannot read line: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let obj: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&line).map_err(|e| {
                Error::input(path, Some(lineno), format!("expected a JSON object: {e}"))
            })?;
        let metric = match &metric {
            Some(m) => m.clone(),
            None => {
                let header: Vec<String> = obj.keys().cloned().collect();
                let m = choose_metric(path, &header, opts)
                    .map_err(|_| {
                        Error::input(
                            path,
                            Some(lineno),
                            match &opts.metric {
                                Some(m) => format!("missing score field '{m}' (fields: {})", header.join(", ")),
                                None => format!("cannot tell which field is the score; choose one with --metric (fields: {})", header.join(", ")),
                            },
                        )
                    })?;
                raw.has_dataset = obj.contains_key("dataset");
                metric = Some(m.clone());
                m
            }
        };
        let key = |name: &str| -> Result<Option<String>> {
            match obj.get(name) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => json_key(v).map(Some).ok_or_else(|| {
                    Error::input(
                        path,
                        Some(lineno),
                        format!("field '{name}' must be a string or number"),
                    )
                }),
            }
        };
        if let Some((col, value)) = &opts.filter {
            if key(col)?.as_deref() != Some(value.as_str()) {
                continue;
            }
        }
        let question = key("question")?
            .ok_or_else(|| Error::input(path, Some(lineno), "missing field 'question'"))?;
        let value = match obj.get(&metric) {
            Some(serde_json::Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            Some(serde_json::Value::String(s)) => parse_score(path, lineno, &metric, s)?,
            None | Some(serde_json::Value::Null) => {
                return Err(Error::input(
                    path,
                    Some(lineno),
                    format!("missing score field '{metric}'"),
                ))
            }
            Some(other) => {
                return Err(Error::input(
                    path,
                    Some(lineno),
                    format!("score '{metric}' is {other}; expected a number"),
                ))
            }
        };
        if !value.is_finite() {
            return Err(Error::input(
                path,
                Some(lineno),
                format!("score '{metric}' is not a finite number"),
            ));
        }
        let (d, t, r, a) = (
            key("dataset")?,
            key("trajectory")?,
            key("read")?,
            key("arm")?,
        );
        raw.push(
            path,
            lineno,
            d.as_deref(),
            &question,
            t.as_deref(),
            r.as_deref(),
            a.as_deref(),
            value,
        )?;
    }
    let metric = metric.ok_or_else(|| Error::input(path, None, "the panel has no rows"))?;
    Ok((raw, metric))
}

/// Splits `B-A` into arm ids, trying every `-` so arm names may themselves contain dashes.
fn parse_contrast(path: &Path, spec: &str, arms: &Interner) -> Result<(u32, u32)> {
    let known = || arms.names.join(", ");
    if arms.names.is_empty() {
        return Err(Error::input(
            path,
            None,
            format!("--contrast {spec} needs an 'arm' column, and the panel has none"),
        ));
    }
    for (i, _) in spec.match_indices('-') {
        let (b, a) = (&spec[..i], &spec[i + 1..]);
        if let (Some(bi), Some(ai)) = (arms.get(b), arms.get(a)) {
            if bi == ai {
                return Err(Error::Usage(format!(
                    "--contrast {spec}: the two arms must differ"
                )));
            }
            return Ok((bi, ai));
        }
    }
    let named: Vec<&str> = spec.split('-').filter(|s| !s.is_empty()).collect();
    let unknown: Vec<&str> = named
        .iter()
        .copied()
        .filter(|n| arms.get(n).is_none())
        .collect();
    Err(Error::input(
        path,
        None,
        if spec.contains('-') && !unknown.is_empty() {
            format!(
                "unknown arm '{}' in --contrast {spec}; the panel's arms are: {}",
                unknown.join("', '"),
                known()
            )
        } else {
            format!(
                "--contrast must be B-A with two of the panel's arms ({}); got '{spec}'",
                known()
            )
        },
    ))
}

/// Sort key for labels: numeric when every label of the set is an integer.
fn sorted_labels(ids: &mut [u32], names: &[String]) {
    let numeric: Option<Vec<i64>> = ids
        .iter()
        .map(|&i| names[i as usize].parse::<i64>().ok())
        .collect();
    match numeric {
        Some(_) => ids.sort_by_key(|&i| names[i as usize].parse::<i64>().unwrap_or(0)),
        None => ids.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize])),
    }
}

fn assemble(path: &Path, mut raw: RawPanel, metric: String, opts: &LoadOptions) -> Result<Panel> {
    if raw.rows.is_empty() {
        return Err(Error::input(path, None, "the panel has no rows"));
    }
    let has_arms = raw.rows.iter().any(|r| r.arm != NO_ARM);
    if has_arms && raw.rows.iter().any(|r| r.arm == NO_ARM) {
        let line = raw
            .rows
            .iter()
            .find(|r| r.arm == NO_ARM)
            .map(|r| r.line as u64);
        return Err(Error::input(path, line, "empty 'arm' value"));
    }
    // Which rows form the outcome, and how.
    let (outcome, pair) = match (&opts.contrast, &opts.arm) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "use either --contrast or --arm, not both".into(),
            ))
        }
        (Some(spec), None) => {
            let (b, a) = parse_contrast(path, spec, &raw.arms)?;
            raw.rows.retain(|r| r.arm == a || r.arm == b);
            (format!("{metric}: {spec}"), Some((b, a)))
        }
        (None, Some(arm)) => {
            let id = raw.arms.get(arm).ok_or_else(|| {
                Error::input(
                    path,
                    None,
                    format!(
                        "unknown arm '{arm}'; the panel's arms are: {}",
                        raw.arms.names.join(", ")
                    ),
                )
            })?;
            raw.rows.retain(|r| r.arm == id);
            (format!("{metric} ({arm})"), None)
        }
        (None, None) => {
            if raw.arms.names.len() > 1 {
                return Err(Error::input(
                    path,
                    None,
                    format!(
                        "the panel has several arms ({}); choose --contrast B-A or --arm NAME",
                        raw.arms.names.join(", ")
                    ),
                ));
            }
            (metric.clone(), None)
        }
    };

    // Sort so that each cell's rows (one per arm) are adjacent.
    raw.rows.sort_unstable_by_key(|r| (r.cell(), r.arm, r.line));
    let names = |raw: &RawPanel, r: &RawRow| {
        let mut s = String::new();
        if raw.has_dataset {
            s.push_str(&format!(
                "dataset={}, ",
                raw.datasets.names[r.dataset as usize]
            ));
        }
        s.push_str(&format!(
            "question={}, trajectory={}, read={}",
            raw.questions.names[r.question as usize],
            raw.trajectories.names[r.trajectory as usize],
            raw.reads.names[r.read as usize]
        ));
        if r.arm != NO_ARM {
            s.push_str(&format!(", arm={}", raw.arms.names[r.arm as usize]));
        }
        s
    };
    for w in raw.rows.windows(2) {
        if w[0].cell() == w[1].cell() && w[0].arm == w[1].arm {
            return Err(Error::input(
                path,
                Some(w[1].line as u64),
                format!(
                    "duplicate cell ({}); first seen on line {}",
                    names(&raw, &w[1]),
                    w[0].line
                ),
            ));
        }
    }

    // Reduce to one outcome per cell; an unpaired cell marks its question incomplete.
    struct Cell {
        key: (u32, u32, u32, u32),
        line: u32,
        value: f64,
    }
    let mut cells: Vec<Cell> = Vec::with_capacity(if pair.is_some() {
        raw.rows.len() / 2
    } else {
        raw.rows.len()
    });
    let mut unpaired: HashMap<(u32, u32), String> = HashMap::new();
    let mut i = 0;
    while i < raw.rows.len() {
        let row = raw.rows[i];
        match pair {
            None => {
                cells.push(Cell {
                    key: row.cell(),
                    line: row.line,
                    value: row.value,
                });
                i += 1;
            }
            Some((b, a)) => {
                let next = raw.rows.get(i + 1).filter(|n| n.cell() == row.cell());
                if let Some(next) = next {
                    // Sorted by arm id within a cell, so look each arm up explicitly.
                    let (vb, va) = if row.arm == b {
                        (row.value, next.value)
                    } else {
                        (next.value, row.value)
                    };
                    debug_assert!(row.arm == a || row.arm == b);
                    cells.push(Cell {
                        key: row.cell(),
                        line: row.line.min(next.line),
                        value: vb - va,
                    });
                    i += 2;
                } else {
                    let missing = if row.arm == b { a } else { b };
                    let msg = format!(
                        "unpaired cell ({}): no row for arm '{}'",
                        names(&raw, &row),
                        raw.arms.names[missing as usize]
                    );
                    if !opts.drop_incomplete {
                        return Err(Error::input(path, Some(row.line as u64), msg));
                    }
                    unpaired.entry((row.dataset, row.question)).or_insert(msg);
                    i += 1;
                }
            }
        }
    }
    drop(raw.rows);

    // Group cells into questions (contiguous after the sort), then questions into strata.
    struct Group {
        qid: u32,
        cells: std::ops::Range<usize>,
        first_line: u32,
    }
    let mut by_dataset: HashMap<u32, Vec<Group>> = HashMap::new();
    let mut start = 0;
    while start < cells.len() {
        let (d, q) = (cells[start].key.0, cells[start].key.1);
        let mut end = start;
        let mut first_line = u32::MAX;
        while end < cells.len() && cells[end].key.0 == d && cells[end].key.1 == q {
            first_line = first_line.min(cells[end].line);
            end += 1;
        }
        by_dataset.entry(d).or_default().push(Group {
            qid: q,
            cells: start..end,
            first_line,
        });
        start = end;
    }
    // Strata and their questions in order of first appearance in the file.
    let mut strata_order: Vec<(u32, u32)> = by_dataset
        .iter_mut()
        .map(|(&d, groups)| {
            groups.sort_unstable_by_key(|g| g.first_line);
            (groups[0].first_line, d)
        })
        .collect();
    strata_order.sort_unstable();

    let mut strata = Vec::with_capacity(strata_order.len());
    for &(_, d) in &strata_order {
        let groups = &by_dataset[&d];
        // The stratum's trajectory and read labels: the union over its questions.
        let mut traj: Vec<u32> = Vec::new();
        let mut reads: Vec<u32> = Vec::new();
        for c in groups.iter().flat_map(|g| &cells[g.cells.clone()]) {
            traj.push(c.key.2);
            reads.push(c.key.3);
        }
        traj.sort_unstable();
        traj.dedup();
        reads.sort_unstable();
        reads.dedup();
        sorted_labels(&mut traj, &raw.trajectories.names);
        sorted_labels(&mut reads, &raw.reads.names);
        let (tn, rn) = (traj.len(), reads.len());
        let t_pos: HashMap<u32, usize> = traj.iter().enumerate().map(|(i, &t)| (t, i)).collect();
        let r_pos: HashMap<u32, usize> = reads.iter().enumerate().map(|(i, &r)| (r, i)).collect();

        let mut questions = Vec::with_capacity(groups.len());
        let mut y = Vec::with_capacity(groups.len() * tn * rn);
        let mut dropped = 0;
        let mut block = vec![f64::NAN; tn * rn];
        for g in groups {
            let (qid, first_line) = (g.qid, g.first_line);
            block.iter_mut().for_each(|v| *v = f64::NAN);
            for c in &cells[g.cells.clone()] {
                block[t_pos[&c.key.2] * rn + r_pos[&c.key.3]] = c.value;
            }
            let missing: Vec<usize> = (0..tn * rn).filter(|&i| block[i].is_nan()).collect();
            let unpaired_msg = unpaired.get(&(d, qid));
            if missing.is_empty() && unpaired_msg.is_none() {
                questions.push(raw.questions.names[qid as usize].clone());
                y.extend_from_slice(&block);
                continue;
            }
            if opts.drop_incomplete {
                dropped += 1;
                continue;
            }
            let shown: Vec<String> = missing
                .iter()
                .take(5)
                .map(|&i| {
                    format!(
                        "(trajectory {}, read {})",
                        raw.trajectories.names[traj[i / rn] as usize],
                        raw.reads.names[reads[i % rn] as usize]
                    )
                })
                .collect();
            let more = if missing.len() > 5 {
                format!(" and {} more", missing.len() - 5)
            } else {
                String::new()
            };
            return Err(Error::input(
                path,
                Some(first_line as u64),
                format!(
                    "unbalanced design: question '{}' in stratum '{}' is missing {} of {} cells: {}{}; \
                     every question needs all {} trajectories x {} reads (use --drop-incomplete to drop such questions)",
                    raw.questions.names[qid as usize],
                    raw.datasets.names[d as usize],
                    missing.len(),
                    tn * rn,
                    shown.join(", "),
                    more,
                    tn,
                    rn
                ),
            ));
        }
        let name = raw.datasets.names[d as usize].clone();
        if questions.is_empty() {
            return Err(Error::input(
                path,
                None,
                format!("stratum '{name}' has no complete question left ({dropped} dropped as incomplete)"),
            ));
        }
        strata.push(Stratum {
            name,
            questions,
            trajectories: traj
                .iter()
                .map(|&t| raw.trajectories.names[t as usize].clone())
                .collect(),
            reads: reads
                .iter()
                .map(|&r| raw.reads.names[r as usize].clone())
                .collect(),
            y,
            dropped,
        });
    }
    Ok(Panel {
        source: PathBuf::from(path),
        metric,
        outcome,
        strata,
    })
}
