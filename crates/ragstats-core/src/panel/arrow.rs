//! Panels from Arrow record batches: data frames handed over by the Python bindings (pandas,
//! polars, pyarrow, anything with the Arrow C stream interface) and, later, Parquet files.
//!
//! The rows become the same records a CSV file makes, with the same rules: key columns are
//! read as text (strings, dictionary-encoded strings, or integers written in decimal, as they
//! would be in a CSV file), trimmed; a missing key cell is empty; the score must be a finite
//! number (a numeric column, or text that parses as one). A table is named in errors by the
//! name it is given, and a row by its 1-based position (in place of a file's line).

use std::fmt::Write as _;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{ArrowError, DataType, Schema};

use rayon::prelude::*;

use super::assemble::assemble;
use super::options::LoadOptions;
use super::raw::{RawPanel, RowKeys};
use super::read::{arm_columns, check_outer_arms, choose_metric, keep_outer, parse_score};
use super::Panel;
use crate::io::{clip, clip_list};
use crate::{Error, Result};

/// Loads a panel from the record batches of one table named `name` (how errors and the
/// panel's `source` call it: a frame's description, or a file), whose columns are `schema`'s.
///
/// # Errors
/// [`Error::Input`] naming the table and the 1-based row for what the CSV loader refuses
/// (a missing column, a missing or non-finite score, an empty question id, a duplicate or
/// unpaired cell …), for a column of a type that cannot be a key or a score, and for a batch
/// the producer failed to deliver.
pub fn load_panel_arrow(
    name: &str,
    schema: &Schema,
    batches: impl IntoIterator<Item = std::result::Result<RecordBatch, ArrowError>>,
    opts: &LoadOptions,
) -> Result<Panel> {
    load_in_pieces(name, schema, batches, opts, CHUNK_ROWS)
}

/// [`load_panel_arrow`], each batch read `chunk_rows` rows at a time (tests force small
/// pieces).
fn load_in_pieces(
    name: &str,
    schema: &Schema,
    batches: impl IntoIterator<Item = std::result::Result<RecordBatch, ArrowError>>,
    opts: &LoadOptions,
    chunk_rows: usize,
) -> Result<Panel> {
    let (mut raw, metric) = read_arrow_rows(name, schema, batches, opts, chunk_rows)?;
    super::settle::settle(Path::new(name), &mut raw, opts)?;
    assemble(Path::new(name), raw, metric, opts)
}

/// The rows of the record batches of the table `name`, and its score column, as
/// [`load_panel_arrow`] reads them before assembling the panel.
pub(super) fn read_arrow_rows(
    name: &str,
    schema: &Schema,
    batches: impl IntoIterator<Item = std::result::Result<RecordBatch, ArrowError>>,
    opts: &LoadOptions,
    chunk_rows: usize,
) -> Result<(RawPanel, String)> {
    let path = Path::new(name);
    let header: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| f.name().trim().to_string())
        .collect();
    let header = opts.columns.rename(path, None, &header, "column")?;
    // Only a column of numbers is taken as the score unasked (a text column named `correct`
    // may hold answers).
    let numeric = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .is_some_and(|i| Numeric::of(schema.field(i).data_type()).is_some())
    };
    let (metric, note) = choose_metric(path, None, &header, opts, &numeric)?;
    let index = |col: &str| header.iter().position(|h| h == col);
    let required = |col: &str| {
        index(col).ok_or_else(|| {
            Error::input(
                path,
                None,
                format!(
                    "missing column '{}' (columns: {})",
                    clip(col),
                    clip_list(&header)
                ),
            )
        })
    };
    let arms = arm_columns(path, None, &header, &metric, opts, "column")?;
    let cols = [
        index("dataset"),
        Some(required("question")?),
        index("trajectory"),
        index("read"),
        index(arms.arm),
        index("selector").filter(|_| arms.selector),
        index("arm").filter(|_| arms.outer),
        match super::read::cluster_column(opts, &metric)? {
            Some(c) => Some(required(c)?),
            None => None,
        },
    ];
    let arm_column = arms.renamed();
    let score_at = index(&metric).expect("metric chosen from the header");
    let filter = match &opts.filter {
        Some((col, value)) => Some((required(col)?, value.as_str())),
        None => None,
    };
    let has_dataset = cols[0].is_some();
    let mut pieces = Vec::new();
    let mut first_row: u64 = 1;
    for batch in batches {
        let batch = batch.map_err(|e| {
            Error::input(
                path,
                Some(first_row),
                format!("reading the table failed: {e}"),
            )
        })?;
        let text = |i: Option<usize>| -> Result<Option<Text<'_>>> {
            i.map(|i| Text::of(path, &header[i], batch.column(i).as_ref()))
                .transpose()
        };
        let keys: Vec<Option<Text>> = cols.iter().map(|&c| text(c)).collect::<Result<_>>()?;
        let score = Score::of(path, &metric, batch.column(score_at).as_ref())?;
        let filter_col = match filter {
            Some((i, v)) => Some((Text::of(path, &header[i], batch.column(i).as_ref())?, v)),
            None => None,
        };
        // Pieces of rows on all rayon threads, concatenated in row order (as the CSV loader
        // does), so the ids and the first error are those of one pass.
        let n = batch.num_rows();
        let ranges: Vec<_> = (0..n)
            .step_by(chunk_rows)
            .map(|s| s..(s + chunk_rows).min(n))
            .collect();
        let read: Vec<Result<RawPanel>> = ranges
            .into_par_iter()
            .map(|range| {
                let mut raw = RawPanel {
                    has_dataset,
                    arm_column: arm_column.clone(),
                    ..Default::default()
                };
                let mut bufs: [String; 9] = Default::default();
                for r in range {
                    let row = first_row + r as u64;
                    let [b0, b1, b2, b3, b4, b5, b6, b7, b8] = &mut bufs;
                    if let Some((col, want)) = &filter_col {
                        if col.get(r, b6) != *want {
                            continue;
                        }
                    }
                    if keys[6].is_some() && !keep_outer(&mut raw, &arms, key(&keys[6], r, b7)) {
                        continue;
                    }
                    let keys = RowKeys {
                        dataset: key(&keys[0], r, b0),
                        question: key(&keys[1], r, b1).unwrap_or_default(),
                        trajectory: key(&keys[2], r, b2),
                        read: key(&keys[3], r, b3),
                        arm: key(&keys[4], r, b4),
                        selector: key(&keys[5], r, b5),
                        // A null cluster is empty, which `push` refuses.
                        cluster: keys[7].as_ref().map(|t| t.get(r, b8)),
                    };
                    let value = score.get(path, row, &metric, r)?;
                    raw.push(path, row, keys, value)?;
                }
                Ok(raw)
            })
            .collect();
        for piece in read {
            pieces.push(piece?);
        }
        first_row += n as u64;
    }
    let mut raw = RawPanel::concat(pieces).unwrap_or_else(|| RawPanel {
        has_dataset,
        arm_column,
        ..Default::default()
    });
    check_outer_arms(path, &raw, &arms)?;
    raw.notes.extend(note);
    raw.notes
        .extend(super::read::unused_cluster_note(&header, opts));
    Ok((raw, metric))
}

/// Rows per piece read on one thread (a piece's interner and rows are merged afterwards).
pub(super) const CHUNK_ROWS: usize = 1 << 18;

/// Row `r` of the key column `col` (when the table has it) as text; numbers are written
/// into `buf`.
fn key<'s>(col: &'s Option<Text<'s>>, r: usize, buf: &'s mut String) -> Option<&'s str> {
    col.as_ref().map(move |t| t.get(r, buf))
}

/// Cell `i` of a column of an Arrow integer type, as `i128` (which holds every one); `None`
/// for a column of another type.
pub(super) fn integer_reader(t: &DataType) -> Option<fn(&dyn Array, usize) -> i128> {
    macro_rules! int {
        ($t:ty) => {
            Some(|a: &dyn Array, i: usize| i128::from(a.as_primitive::<$t>().value(i)))
        };
    }
    match t {
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => int!(UInt64Type),
        _ => None,
    }
}

/// How the cells of a numeric column are read: floats as they are, integers exactly.
#[derive(Clone, Copy)]
pub(super) enum Numeric {
    Float(fn(&dyn Array, usize) -> f64),
    Int(fn(&dyn Array, usize) -> i128),
}

impl Numeric {
    /// The reader of a column of type `t`; `None` when it is not numeric.
    pub(super) fn of(t: &DataType) -> Option<Numeric> {
        match t {
            DataType::Float64 => Some(Numeric::Float(|a, i| {
                a.as_primitive::<Float64Type>().value(i)
            })),
            DataType::Float32 => Some(Numeric::Float(|a, i| {
                f64::from(a.as_primitive::<Float32Type>().value(i))
            })),
            _ => integer_reader(t).map(Numeric::Int),
        }
    }

    /// Cell `i` of `a` as a float.
    pub(super) fn f64(self, a: &dyn Array, i: usize) -> f64 {
        match self {
            Numeric::Float(read) => read(a, i),
            Numeric::Int(read) => read(a, i) as f64,
        }
    }
}

/// A column read as text, row by row.
enum Text<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    /// Dictionary-encoded: each row's index into the values.
    Dict(Vec<Option<usize>>, Box<Text<'a>>),
    Int(&'a dyn Array, fn(&dyn Array, usize) -> i128),
}

impl<'a> Text<'a> {
    /// The text reader of `array`, column `name` of table `path`.
    fn of(path: &Path, name: &str, array: &'a dyn Array) -> Result<Text<'a>> {
        if let Some(read) = integer_reader(array.data_type()) {
            return Ok(Text::Int(array, read));
        }
        Ok(match array.data_type() {
            DataType::Utf8 => Text::Utf8(array.as_string::<i32>()),
            DataType::LargeUtf8 => Text::LargeUtf8(array.as_string::<i64>()),
            DataType::Utf8View => Text::View(array.as_string_view()),
            DataType::Dictionary(_, _) => {
                let dict = array.as_any_dictionary();
                let values = Text::of(path, name, dict.values().as_ref())?;
                let keys = dict.normalized_keys();
                let rows = (0..array.len())
                    .map(|i| array.is_valid(i).then(|| keys[i]))
                    .collect();
                Text::Dict(rows, Box::new(values))
            }
            other => {
                return Err(Error::input(
                    path,
                    None,
                    format!(
                        "column '{}' is {other}; a key column must hold strings or integers",
                        clip(name)
                    ),
                ))
            }
        })
    }

    /// Row `i` as text (trimmed; empty when missing), written into `buf` where it is a number.
    fn get<'s>(&'s self, i: usize, buf: &'s mut String) -> &'s str {
        let valid = |a: &dyn Array| a.is_valid(i);
        match self {
            Text::Utf8(a) => {
                if valid(*a) {
                    a.value(i).trim()
                } else {
                    ""
                }
            }
            Text::LargeUtf8(a) => {
                if valid(*a) {
                    a.value(i).trim()
                } else {
                    ""
                }
            }
            Text::View(a) => {
                if valid(*a) {
                    a.value(i).trim()
                } else {
                    ""
                }
            }
            Text::Dict(rows, values) => match rows[i] {
                Some(k) => values.get(k, buf),
                None => "",
            },
            Text::Int(a, value) => {
                if !valid(*a) {
                    return "";
                }
                buf.clear();
                let _ = write!(buf, "{}", value(*a, i));
                buf
            }
        }
    }
}

/// The score column, read as numbers.
enum Score<'a> {
    Number(&'a dyn Array, Numeric),
    Text(Text<'a>),
}

impl<'a> Score<'a> {
    fn of(path: &Path, name: &str, array: &'a dyn Array) -> Result<Score<'a>> {
        if let Some(read) = Numeric::of(array.data_type()) {
            return Ok(Score::Number(array, read));
        }
        Ok(match array.data_type() {
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Dictionary(_, _) => Score::Text(Text::of(path, name, array)?),
            other => {
                return Err(Error::input(
                    path,
                    None,
                    format!(
                        "score column '{}' is {other}; expected numbers (cast booleans to 0/1)",
                        clip(name)
                    ),
                ))
            }
        })
    }

    /// Row `i` (row number `row` of the table) as a finite score, by the CSV loader's rules.
    fn get(&self, path: &Path, row: u64, name: &str, i: usize) -> Result<f64> {
        match self {
            Score::Number(a, read) => {
                if a.is_null(i) {
                    return parse_score(path, row, name, "");
                }
                let v = read.f64(*a, i);
                if v.is_finite() {
                    // The magnitude rule of the CSV loader, through its own text path.
                    match crate::io::magnitude_error(|| format!("score '{}'", clip(name)), v) {
                        Some(m) => Err(Error::input(path, Some(row), m)),
                        None => Ok(v),
                    }
                } else {
                    Err(Error::input(
                        path,
                        Some(row),
                        format!("score '{}' is {v}; expected a finite number", clip(name)),
                    ))
                }
            }
            Score::Text(t) => parse_score(path, row, name, t.get(i, &mut String::new())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{
        ArrayRef, DictionaryArray, Float64Array, Int64Array, StringArray, StringViewArray,
    };
    use arrow_schema::Field;

    use super::*;
    use crate::components::variance::analyse_panel;
    use crate::panel::load_panel;

    const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/demo/panel.csv");

    /// The demo panel's columns as text, in file order.
    fn demo_columns() -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(DEMO).unwrap();
        let mut cols = vec![Vec::new(); 7];
        for line in text.lines().skip(1) {
            for (c, v) in cols.iter_mut().zip(line.split(',')) {
                c.push(v.to_string());
            }
        }
        cols
    }

    fn batch(fields: Vec<(&str, ArrayRef)>) -> (Schema, RecordBatch) {
        let schema = Schema::new(
            fields
                .iter()
                .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
                .collect::<Vec<_>>(),
        );
        let b = RecordBatch::try_new(
            Arc::new(schema.clone()),
            fields.into_iter().map(|f| f.1).collect(),
        )
        .unwrap();
        (schema, b)
    }

    fn strings(v: &[String]) -> ArrayRef {
        Arc::new(StringArray::from_iter_values(v))
    }

    fn contrast() -> LoadOptions {
        LoadOptions {
            contrast: Some("adaptive-open".into()),
            allow_unbalanced: true,
            ..LoadOptions::default()
        }
    }

    /// The demo panel as Arrow columns of every kind a data frame exports — dictionary
    /// (categorical) datasets, string-view questions, integer trajectories and reads, plain
    /// string arms, float scores — split into batches of 1000 rows, gives the panel the CSV
    /// loader gives, to the last bit of the variance analysis.
    #[test]
    fn a_table_of_any_column_kinds_is_the_csv_panel() {
        let c = demo_columns();
        let ints = |v: &[String]| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values(
                v.iter().map(|s| s.parse::<i64>().unwrap()),
            ))
        };
        let floats = |v: &[String]| -> ArrayRef {
            Arc::new(Float64Array::from_iter_values(
                v.iter().map(|s| s.parse::<f64>().unwrap()),
            ))
        };
        let n = c[0].len();
        let mut batches = Vec::new();
        let mut schema = None;
        for start in (0..n).step_by(1000) {
            let r = start..(start + 1000).min(n);
            let dataset: DictionaryArray<Int32Type> =
                c[0][r.clone()].iter().map(|s| s.as_str()).collect();
            let (s, b) = batch(vec![
                ("dataset", Arc::new(dataset)),
                (
                    "question",
                    Arc::new(StringViewArray::from_iter_values(&c[1][r.clone()])),
                ),
                ("trajectory", ints(&c[2][r.clone()])),
                ("read", ints(&c[3][r.clone()])),
                ("arm", strings(&c[4][r.clone()])),
                ("f1", floats(&c[5][r.clone()])),
                ("em", floats(&c[6][r.clone()])),
            ]);
            schema = Some(s);
            batches.push(b);
        }
        let schema = schema.unwrap();
        let frame = load_panel_arrow(
            "frame",
            &schema,
            batches.iter().cloned().map(Ok),
            &contrast(),
        )
        .unwrap();
        let csv = load_panel(Path::new(DEMO), &contrast()).unwrap();
        let (a, b) = (analyse_panel(&frame).unwrap(), analyse_panel(&csv).unwrap());
        assert_eq!(a.estimate.to_bits(), b.estimate.to_bits());
        assert_eq!(a.se.to_bits(), b.se.to_bits());
        assert_eq!(a.outcome, "f1: adaptive-open");
        // Python's float sums over the CSV (the core crate's doc test).
        assert!((a.estimate - 0.010275721225710013).abs() < 1e-15);
        assert_eq!(frame.metric, "f1");
        assert_eq!(frame.strata.len(), csv.strata.len());

        // As a source, the table loads through the one loader of sources, named by its name.
        use crate::panel::memory::MemoryTable;
        let source = crate::panel::Source::table(
            "<frame>".to_string(),
            MemoryTable {
                schema: Arc::new(schema),
                batches,
            },
        );
        let loaded = crate::import::load_source(&source, &contrast(), &Default::default()).unwrap();
        let c = analyse_panel(&loaded).unwrap();
        assert_eq!(c.estimate.to_bits(), b.estimate.to_bits());
        assert_eq!(loaded.source, Path::new("<frame>"));
    }

    /// One batch read in pieces of 7 rows on all threads is the panel of one pass: the same
    /// analysis to the bit, and the first bad row (of several in different pieces) reported.
    #[test]
    fn pieces_of_a_batch_are_one_pass() {
        let c = demo_columns();
        let (schema, b) = batch(vec![
            ("dataset", strings(&c[0])),
            ("question", strings(&c[1])),
            ("trajectory", strings(&c[2])),
            ("read", strings(&c[3])),
            ("arm", strings(&c[4])),
            ("f1", strings(&c[5])),
        ]);
        let whole = load_in_pieces("t", &schema, [Ok(b.clone())], &contrast(), usize::MAX).unwrap();
        let pieces = load_in_pieces("t", &schema, [Ok(b)], &contrast(), 7).unwrap();
        let (a, b) = (
            analyse_panel(&whole).unwrap(),
            analyse_panel(&pieces).unwrap(),
        );
        assert_eq!(a.estimate.to_bits(), b.estimate.to_bits());
        assert_eq!(a.se.to_bits(), b.se.to_bits());
        let mut f1 = c[5].clone();
        f1[100] = "x".into();
        f1[30] = "y".into();
        let (schema, bad) = batch(vec![("question", strings(&c[1])), ("f1", strings(&f1))]);
        let e = load_in_pieces("t", &schema, [Ok(bad)], &LoadOptions::default(), 7);
        assert_eq!(
            e.unwrap_err().to_string(),
            "t:31: score 'f1' is 'y'; expected a number"
        );
    }

    fn small(score: ArrayRef) -> (Schema, RecordBatch) {
        let q: Vec<String> = (0..score.len()).map(|i| format!("q{i}")).collect();
        batch(vec![("question", strings(&q)), ("score", score)])
    }

    fn error(schema: &Schema, b: RecordBatch) -> String {
        load_panel_arrow("my frame", schema, [Ok(b)], &LoadOptions::default())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn bad_tables_are_refused_with_the_row() {
        let (s, b) = small(Arc::new(Float64Array::from(vec![
            Some(0.5),
            None,
            Some(1.0),
        ])));
        assert_eq!(error(&s, b), "my frame:2: missing score in column 'score'");
        let (s, b) = small(Arc::new(Float64Array::from(vec![0.5, f64::NAN])));
        assert_eq!(
            error(&s, b),
            "my frame:2: score 'score' is NaN; expected a finite number"
        );
        let (s, b) = small(Arc::new(StringArray::from(vec!["0.5", "high"])));
        assert_eq!(
            error(&s, b),
            "my frame:2: score 'score' is 'high'; expected a number"
        );
        let (s, b) = small(Arc::new(arrow_array::BooleanArray::from(vec![true, false])));
        assert_eq!(
            error(&s, b),
            "my frame: score column 'score' is Boolean; expected numbers (cast booleans to 0/1)"
        );
        let (s, b) = batch(vec![
            ("id", strings(&["a".into()])),
            ("score", Arc::new(Float64Array::from(vec![1.0]))),
        ]);
        // As in a CSV file, the score column is chosen first: a numeric column named
        // `score` is the score, so what is missing is the question.
        assert_eq!(
            error(&s, b),
            "my frame: missing column 'question' (columns: id, score)"
        );
        let (s, b) = batch(vec![
            ("id", strings(&["a".into()])),
            ("f1", Arc::new(Float64Array::from(vec![1.0]))),
        ]);
        assert_eq!(
            error(&s, b),
            "my frame: missing column 'question' (columns: id, f1)"
        );
        let (s, b) = batch(vec![
            ("question", Arc::new(Float64Array::from(vec![1.5]))),
            ("score", Arc::new(Float64Array::from(vec![1.0]))),
        ]);
        assert_eq!(
            error(&s, b),
            "my frame: column 'question' is Float64; a key column must hold strings or integers"
        );
        let (s, b) = batch(vec![
            (
                "question",
                Arc::new(StringArray::from(vec![Some("q1"), None])),
            ),
            ("score", Arc::new(Float64Array::from(vec![1.0, 0.0]))),
        ]);
        assert_eq!(error(&s, b), "my frame:2: empty question id");
    }

    /// Rows are numbered across batches, and a producer's failure names the row it reached.
    #[test]
    fn rows_count_across_batches() {
        let (s, b1) = small(Arc::new(Float64Array::from(vec![0.5, 0.25])));
        let (_, b2) = small(Arc::new(Float64Array::from(vec![Some(0.5), None])));
        let e = load_panel_arrow("t", &s, [Ok(b1.clone()), Ok(b2)], &LoadOptions::default());
        assert_eq!(
            e.unwrap_err().to_string(),
            "t:4: missing score in column 'score'"
        );
        let failed = Err(ArrowError::ComputeError("stream broke".into()));
        let e = load_panel_arrow("t", &s, [Ok(b1), failed], &LoadOptions::default());
        assert_eq!(
            e.unwrap_err().to_string(),
            "t:3: reading the table failed: Compute error: stream broke"
        );
    }
}
