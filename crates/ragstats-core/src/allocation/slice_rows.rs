//! The rows a slice copies: the labels of every row of the panel's source, and the kept
//! rows written to the sub-panel as they are (a CSV panel's records under its header, a
//! JSON-lines panel's lines). A table in memory or a Parquet file is copied as the CSV of
//! its rows; records as the JSON lines they stand for.

use std::path::Path;

use super::slice::{FileLabels, Slice};
use crate::io::jsonl::{parse_value, scalar_text};
use crate::io::{is_jsonl, CsvReader, JsonlReader};
use crate::panel::Source;
use crate::{Error, Result};

/// The key columns that name a cell: dataset, question, trajectory, read.
const KEYS: [&str; 4] = ["dataset", "question", "trajectory", "read"];

/// A panel's rows, read in order.
pub enum RowReader {
    /// CSV records (a CSV file, a table's rows, a Parquet file's rows).
    Csv(Box<CsvReader>),
    /// JSON lines (a JSON-lines file, records).
    Jsonl(JsonlReader),
}

/// Where a slice's rows come from, told without reading them.
enum Origin<'a> {
    CsvFile(&'a Path),
    JsonlFile(&'a Path),
    /// A Parquet file, read whole and copied as the CSV of its rows.
    Parquet(&'a Path),
    /// A table in memory, copied as the CSV of its rows.
    Table(&'a Path, &'a crate::panel::memory::MemoryTable),
    /// Records, copied as the JSON lines they stand for.
    Records,
}

/// The [`Origin`] of `source`.
///
/// # Errors
/// [`Error::Input`] for evaluation logs or several files (they hold no panel rows to copy).
fn origin(source: &Source) -> Result<Origin<'_>> {
    Ok(match source {
        Source::Table { name, table } => Origin::Table(Path::new(name), table),
        Source::Records { .. } => Origin::Records,
        Source::Files(paths) => match paths.as_slice() {
            [one] if crate::import::is_log_input(one) => return Err(no_rows(one)),
            [one] if crate::import::detect(one) == crate::import::Format::Parquet => {
                Origin::Parquet(one)
            }
            [one] if is_jsonl(one) => Origin::JsonlFile(one),
            [one] => Origin::CsvFile(one),
            _ => return Err(no_rows(source.name())),
        },
    })
}

/// The format a slice of `source` is written in: `true` for JSON lines (told without
/// reading the rows).
///
/// # Errors
/// As [`rows_of`] for a source a slice cannot copy.
pub fn writes_jsonl(source: &Source) -> Result<bool> {
    Ok(matches!(
        origin(source)?,
        Origin::JsonlFile(_) | Origin::Records
    ))
}

/// The rows of `source`, opened from the start.
///
/// # Errors
/// [`Error::Input`] for evaluation logs or several files (they hold no panel rows to copy:
/// `stats import` writes the panel first), and those of opening the file.
pub fn rows_of(source: &Source) -> Result<RowReader> {
    let csv = |r: CsvReader| RowReader::Csv(Box::new(r));
    Ok(match origin(source)? {
        Origin::CsvFile(path) => csv(CsvReader::open(path)?),
        Origin::JsonlFile(path) => RowReader::Jsonl(JsonlReader::open(path)?),
        Origin::Parquet(path) => {
            let table = crate::import::parquet::parquet_table(path)?;
            csv(crate::panel::memory::table_csv(path, &table)?)
        }
        Origin::Table(name, table) => csv(crate::panel::memory::table_csv(name, table)?),
        Origin::Records => RowReader::Jsonl(crate::panel::memory::jsonl_of(source)?),
    })
}

/// Why evaluation logs cannot be sliced.
fn no_rows(path: &Path) -> Error {
    Error::input(
        path,
        None,
        "evaluation logs hold no panel rows for a slice to copy: write the panel with \
         `stats import` (or `ragstats.read_logs`) and slice that",
    )
}

/// A row's (dataset, question, trajectory, read) labels, absent ones as the loader reads
/// them.
fn row_labels(f: [Option<String>; 4]) -> [String; 4] {
    let [d, q, t, r] = f;
    [
        d.unwrap_or_else(|| "all".into()),
        q.unwrap_or_default(),
        t.unwrap_or_else(|| "0".into()),
        r.unwrap_or_else(|| "0".into()),
    ]
}

/// Calls `f` with the values of `columns` in every row of `source`, in order (a column or
/// field the row lacks is `None`; blank JSON lines are no rows).
fn each_row<const N: usize>(
    source: &Source,
    columns: [&str; N],
    mut f: impl FnMut([Option<String>; N]),
) -> Result<()> {
    match rows_of(source)? {
        RowReader::Jsonl(mut rdr) => {
            while let Some((at, line)) = rdr.next_line()? {
                if line.trim().is_empty() {
                    continue;
                }
                let v = parse_value(line)
                    .map_err(|e| Error::input(source.name(), Some(at), e.to_string()))?;
                f(columns.map(|k| v.get(k).and_then(scalar_text)));
            }
        }
        RowReader::Csv(mut rdr) => {
            let cols = columns.map(|c| rdr.column(c));
            while let Some((_, rec)) = rdr.next_record()? {
                f(cols.map(|c| c.and_then(|i| rec.get(i)).map(str::to_string)));
            }
        }
    }
    Ok(())
}

/// The labels of every row of `source`.
///
/// # Errors
/// Those of reading the rows.
pub fn labels(source: &Source) -> Result<FileLabels> {
    let mut labels = FileLabels::default();
    each_row(source, KEYS, |f| {
        let [d, q, t, r] = row_labels(f);
        labels.add(&d, &q, &t, &r);
    })?;
    Ok(labels)
}

/// The values of the `arm` column of `source` in order of first appearance (empty when it
/// has none): the arms a slice keeps the same cells for.
///
/// # Errors
/// Those of reading the rows.
pub fn arms(source: &Source) -> Result<Vec<String>> {
    let mut arms: Vec<String> = Vec::new();
    each_row(source, ["arm"], |[a]| {
        if let Some(a) = a.filter(|a| !a.is_empty()) {
            if !arms.contains(&a) {
                arms.push(a);
            }
        }
    })?;
    Ok(arms)
}

/// Copies the kept rows of `source` to `out`, atomically (CSV records re-written under the
/// same header; JSON lines copied as they are), and returns how many.
///
/// # Errors
/// Those of reading the rows and of writing `out`.
pub fn write_rows(source: &Source, slice: &Slice, out: &Path) -> Result<usize> {
    let keep = |f: [Option<String>; 4]| {
        let [d, q, t, r] = row_labels(f);
        slice.contains(&d, &q, &t, &r)
    };
    let mut n = 0;
    let mut failed = None;
    match rows_of(source)? {
        RowReader::Jsonl(mut rdr) => crate::io::write_atomic(out, |w| {
            loop {
                let (at, line) = match rdr.next_line() {
                    Ok(Some(l)) => l,
                    Ok(None) => break,
                    Err(e) => return Err(stop(&mut failed, e)),
                };
                if line.trim().is_empty() {
                    continue;
                }
                let v = match parse_value(line) {
                    Ok(v) => v,
                    Err(e) => {
                        let e = Error::input(source.name(), Some(at), e.to_string());
                        return Err(stop(&mut failed, e));
                    }
                };
                let field = |k: &str| v.get(k).and_then(scalar_text);
                if keep(KEYS.map(field)) {
                    writeln!(w, "{line}")?;
                    n += 1;
                }
            }
            Ok(())
        }),
        RowReader::Csv(mut rdr) => crate::io::write_atomic(out, |w| {
            let cols = KEYS.map(|c| rdr.column(c));
            let mut csv = ::csv::Writer::from_writer(w);
            csv.write_record(rdr.headers())?;
            loop {
                let rec = match rdr.next_record() {
                    Ok(Some((_, rec))) => rec,
                    Ok(None) => break,
                    Err(e) => return Err(stop(&mut failed, e)),
                };
                if keep(cols.map(|c| c.and_then(|i| rec.get(i)).map(str::to_string))) {
                    csv.write_record(rec.iter())?;
                    n += 1;
                }
            }
            csv.flush()
        }),
    }
    .map_err(|e| failed.take().unwrap_or(e))?;
    Ok(n)
}

/// Keeps a read error `e` for the caller and stops the write (which then leaves `out` as it
/// was).
fn stop(failed: &mut Option<Error>, e: Error) -> std::io::Error {
    *failed = Some(e);
    std::io::Error::other("reading the panel failed")
}
