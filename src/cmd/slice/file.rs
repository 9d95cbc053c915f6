//! The panel file's side of a slice: the labels of its rows, and the kept rows copied to
//! the sub-panel file as they are.

use std::io::Write;
use std::path::Path;

use ragstats_core::allocation::slice::{FileLabels, Slice};
use ragstats_core::io::jsonl::{parse_value, scalar_text};
use ragstats_core::io::{is_jsonl, CsvReader, JsonlReader};

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

/// Calls `f` with the values of `columns` in every row of `input`, in file order (CSV or
/// JSONL; a column or field the row lacks is `None`; blank JSONL lines are no rows).
fn each_row<const N: usize>(
    input: &Path,
    columns: [&str; N],
    mut f: impl FnMut([Option<String>; N]),
) -> anyhow::Result<()> {
    if is_jsonl(input) {
        let mut rdr = JsonlReader::open(input)?;
        while let Some((_, line)) = rdr.next_line()? {
            if line.trim().is_empty() {
                continue;
            }
            let v = parse_value(line).map_err(|e| anyhow::anyhow!("{}: {e}", input.display()))?;
            f(columns.map(|k| v.get(k).and_then(scalar_text)));
        }
    } else {
        let mut rdr = CsvReader::open(input)?;
        let cols = columns.map(|c| rdr.column(c));
        while let Some((_, rec)) = rdr.next_record()? {
            f(cols.map(|c| c.and_then(|i| rec.get(i)).map(str::to_string)));
        }
    }
    Ok(())
}

/// The labels of every row of `input`.
pub(super) fn labels(input: &Path) -> anyhow::Result<FileLabels> {
    let mut labels = FileLabels::default();
    each_row(input, ["dataset", "question", "trajectory", "read"], |f| {
        let [d, q, t, r] = row_labels(f);
        labels.add(&d, &q, &t, &r);
    })?;
    Ok(labels)
}

/// The values of the `arm` column of `input` in order of first appearance (empty when it
/// has none): the arms a slice keeps the same cells for.
pub(super) fn arms(input: &Path) -> anyhow::Result<Vec<String>> {
    let mut arms: Vec<String> = Vec::new();
    each_row(input, ["arm"], |[a]| {
        if let Some(a) = a.filter(|a| !a.is_empty()) {
            if !arms.contains(&a) {
                arms.push(a);
            }
        }
    })?;
    Ok(arms)
}

/// `out` created for writing; a directory there is the library's input error (exit 2).
fn create(out: &Path) -> ragstats_core::Result<std::fs::File> {
    std::fs::File::create(out).map_err(|e| ragstats_core::Error::io(out, e))
}

/// Copies the kept rows of `input` to `out` (CSV rows re-written with the same header; JSONL
/// lines copied as they are) and returns how many.
pub(super) fn write_rows(input: &Path, slice: &Slice, out: &Path) -> anyhow::Result<usize> {
    let keep = |f: [Option<String>; 4]| {
        let [d, q, t, r] = row_labels(f);
        slice.contains(&d, &q, &t, &r)
    };
    let mut n = 0;
    if is_jsonl(input) {
        let mut w = std::io::BufWriter::new(create(out)?);
        let mut rdr = JsonlReader::open(input)?;
        while let Some((_, line)) = rdr.next_line()? {
            if line.trim().is_empty() {
                continue;
            }
            // The panel loaded, so every line is an object.
            let v = parse_value(line).map_err(|e| anyhow::anyhow!("{}: {e}", input.display()))?;
            let field = |k: &str| v.get(k).and_then(scalar_text);
            if keep(["dataset", "question", "trajectory", "read"].map(field)) {
                writeln!(w, "{line}")?;
                n += 1;
            }
        }
        w.flush()?;
    } else {
        let mut rdr = CsvReader::open(input)?;
        let cols = ["dataset", "question", "trajectory", "read"].map(|c| rdr.column(c));
        let mut w = csv::Writer::from_writer(create(out)?);
        w.write_record(rdr.headers())?;
        while let Some((_, rec)) = rdr.next_record()? {
            if keep(cols.map(|c| c.and_then(|i| rec.get(i)).map(str::to_string))) {
                w.write_record(rec.iter())?;
                n += 1;
            }
        }
        w.flush()?;
    }
    Ok(n)
}
