//! Reading named fields of every row of a CSV or JSONL file as text, for analyses that need
//! more than scores (answers, grouping columns).

use std::path::Path;

use super::read::required_column;
use crate::io::jsonl::scalar_text;
use crate::io::{clip, is_jsonl, CsvReader, JsonlReader};
use crate::{Error, Result};

/// One row: its 1-based line and the requested fields (`None` where absent or empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub line: u64,
    pub fields: Vec<Option<String>>,
}

/// Reads `columns` from every row of a CSV (by header) or JSONL (by key) file. Columns in
/// `required` must exist (CSV header) or be present on every row (JSONL). CSV fields are
/// trimmed; JSON strings are taken as they are, numbers and booleans printed.
///
/// # Errors
/// [`Error::Input`] naming the file and line for malformed rows and missing columns.
pub fn read_records(path: &Path, columns: &[&str], required: &[&str]) -> Result<Vec<Record>> {
    if is_jsonl(path) {
        read_jsonl(path, columns, required)
    } else {
        read_csv(path, columns, required)
    }
}

/// [`read_records`] of the rows `source` holds: one file as [`read_records`] reads it; a
/// table in memory or records as the JSON lines of their rows (row n is line n).
///
/// # Errors
/// As [`read_records`]; [`Error::Input`] for several files.
pub fn read_records_from(
    source: &super::Source,
    columns: &[&str],
    required: &[&str],
) -> Result<Vec<Record>> {
    match source {
        super::Source::Files(paths) if paths.len() == 1 => {
            read_records(&paths[0], columns, required)
        }
        super::Source::Files(_) => Err(Error::input(
            source.name(),
            None,
            "one table expected, not several files",
        )),
        _ => read_jsonl_rows(
            super::memory::jsonl_of(source)?,
            source.name(),
            columns,
            required,
        ),
    }
}

fn read_jsonl(path: &Path, columns: &[&str], required: &[&str]) -> Result<Vec<Record>> {
    read_jsonl_rows(JsonlReader::open(path)?, path, columns, required)
}

/// The records of the JSON lines `rdr` reads (`path` naming them in errors).
fn read_jsonl_rows(
    mut rdr: JsonlReader,
    path: &Path,
    columns: &[&str],
    required: &[&str],
) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    while let Some((line, obj)) = rdr.next_object()? {
        let fields: Vec<Option<String>> = columns
            .iter()
            .map(|c| obj.get(*c).and_then(scalar_text))
            .collect();
        if let Some((c, _)) = columns
            .iter()
            .zip(&fields)
            .find(|(c, f)| f.is_none() && required.contains(c))
        {
            return Err(Error::input(
                path,
                Some(line),
                format!("missing field '{}'", clip(c)),
            ));
        }
        out.push(Record { line, fields });
    }
    Ok(out)
}

fn read_csv(path: &Path, columns: &[&str], required: &[&str]) -> Result<Vec<Record>> {
    let mut rdr = CsvReader::open(path)?;
    for c in required {
        required_column(&rdr, c)?;
    }
    let idx: Vec<Option<usize>> = columns.iter().map(|c| rdr.column(c)).collect();
    let mut out = Vec::new();
    while let Some((line, rec)) = rdr.next_record()? {
        let fields = idx
            .iter()
            .map(|i| {
                i.and_then(|i| rec.get(i))
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            })
            .collect();
        out.push(Record { line, fields });
    }
    Ok(out)
}
