//! Loading a panel file (or an in-memory table registered under its name) into a validated
//! [`Panel`]: read the rows ([`super::read`], [`super::arrow`]), then assemble them
//! ([`super::assemble`]).

use std::path::Path;

use super::assemble::assemble;
pub use super::options::LoadOptions;
use super::read::read_rows;
use super::Panel;
use crate::io::csv::PAR_CHUNK_BYTES;
use crate::Result;

/// Loads a panel from CSV (`.csv`, or anything not `.jsonl`/`.json`) or JSONL, or the
/// in-memory table registered under that name on this thread ([`super::memory`]).
///
/// A CSV file is parsed in pieces on all rayon threads; the panel, and the error for a bad
/// file, are the same on any number of threads.
///
/// # Errors
/// [`Error::Input`](crate::Error::Input) naming the file, line and problem for: a missing column, a non-numeric
/// or non-finite score, a duplicate cell, an unpaired arm cell, an unknown arm or selector,
/// a cell lacking one of the selectors to be averaged, an unbalanced question (unless `drop_incomplete` or `allow_unbalanced`); [`Error::Io`](crate::Error::Io) when the file cannot be read.
pub fn load_panel(path: &Path, opts: &LoadOptions) -> Result<Panel> {
    load_panel_in_chunks(path, opts, PAR_CHUNK_BYTES)
}

/// A panel's rows read once (from a file or a table in memory), from which the panels of
/// several outcomes (arms, contrasts) are assembled without reading the file again.
pub struct PanelRows {
    path: std::path::PathBuf,
    raw: super::raw::RawPanel,
    metric: String,
}

impl PanelRows {
    /// Reads the rows of the panel file at `path` (CSV or JSONL).
    ///
    /// # Errors
    /// Those of reading in [`load_panel`] (missing column, bad score, unreadable file).
    pub fn from_file(path: &Path, opts: &LoadOptions) -> Result<Self> {
        let (raw, metric) = read_rows(path, opts, PAR_CHUNK_BYTES)?;
        Self::settled(path, raw, metric, opts)
    }

    /// Reads the rows of the table `table` in memory, called `name` in messages.
    ///
    /// # Errors
    /// Those of reading the table's rows (missing column, bad score).
    pub fn from_table(
        name: &str,
        table: &super::memory::MemoryTable,
        opts: &LoadOptions,
    ) -> Result<Self> {
        let (raw, metric) = super::arrow::read_arrow_rows(
            name,
            &table.schema,
            table.batches.iter().cloned().map(Ok),
            opts,
            super::arrow::CHUNK_ROWS,
        )?;
        Self::settled(Path::new(name), raw, metric, opts)
    }

    /// Rows read from `path`, settled as the loader settles them.
    fn settled(
        path: &Path,
        mut raw: super::raw::RawPanel,
        metric: String,
        opts: &LoadOptions,
    ) -> Result<Self> {
        super::settle::settle(path, &mut raw, opts)?;
        Ok(PanelRows {
            path: path.to_path_buf(),
            raw,
            metric,
        })
    }

    /// What messages call the panel: its file, or its table's name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The arm names (values of the arm column) in order of first appearance.
    pub fn arms(&self) -> Vec<String> {
        self.raw.arms.to_vec()
    }

    /// The score column read.
    pub fn metric(&self) -> &str {
        &self.metric
    }

    /// Each question of the rows, (stratum, question, the line of its first row, the
    /// smallest value of the score column read in its rows), in order of first appearance:
    /// the arrival order a sequential analysis takes as the file's order (or, read with
    /// another numeric column as the metric, the order by that column's value).
    pub fn question_arrival(&self) -> Vec<(String, String, u32, f64)> {
        let mut index: std::collections::HashMap<(u32, u32), usize> =
            std::collections::HashMap::new();
        let mut out: Vec<(String, String, u32, f64)> = Vec::new();
        for r in &self.raw.rows {
            match index.get(&(r.dataset, r.question)) {
                Some(&i) => {
                    let e = &mut out[i];
                    e.2 = e.2.min(r.line);
                    e.3 = e.3.min(r.value);
                }
                None => {
                    index.insert((r.dataset, r.question), out.len());
                    out.push((
                        self.raw.datasets.name(r.dataset).to_string(),
                        self.raw.questions.name(r.question).to_string(),
                        r.line,
                        r.value,
                    ));
                }
            }
        }
        out.sort_by_key(|e| e.2);
        out
    }

    /// The panels of `wanted` (each `opts` with its own `arm` or `contrast`, typically), in
    /// that order, assembled on all threads. The first failing panel in the order asked for
    /// is the error, on any number of threads.
    ///
    /// # Errors
    /// Those of [`load_panel`] for each panel asked for.
    pub fn assemble(&self, wanted: &[LoadOptions]) -> Result<Vec<Panel>> {
        use rayon::prelude::*;
        // Each panel assembles its own copy of the rows (assembling keeps only its arms'
        // rows); the panels are independent, so they are assembled on all threads. A panel
        // of one arm copies only that arm's rows, in file order: what assembling keeps of a
        // full copy (at k = 20, copying every row for every arm was most of compare's
        // assembly). Only when every row has an arm: a row without one is an error that
        // assembling reports, and it must see it.
        let every_row_has_an_arm = self.raw.rows.iter().all(|r| r.arm != super::raw::NO_ARM);
        let rows_for = |o: &LoadOptions| -> super::raw::RawPanel {
            let one_arm = match (&o.arm, &o.contrast) {
                (Some(a), None) if every_row_has_an_arm => self.raw.arms.get(a),
                _ => None,
            };
            match one_arm {
                Some(id) => self.raw.with_rows(
                    self.raw
                        .rows
                        .iter()
                        .filter(|r| r.arm == id)
                        .copied()
                        .collect(),
                ),
                None => self.raw.clone(),
            }
        };
        let panels: Vec<Result<Panel>> = wanted
            .par_iter()
            .map(|o| assemble(&self.path, rows_for(o), self.metric.clone(), o))
            .collect();
        panels.into_iter().collect()
    }
}

/// [`load_panel`], a CSV file read `chunk_bytes` at a time (tests force small pieces).
pub(crate) fn load_panel_in_chunks(
    path: &Path,
    opts: &LoadOptions,
    chunk_bytes: usize,
) -> Result<Panel> {
    let (mut raw, metric) = read_rows(path, opts, chunk_bytes)?;
    super::settle::settle(path, &mut raw, opts)?;
    assemble(path, raw, metric, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panel::SelectorChoice;

    /// A panel with two strata of 40 questions (ids out of sorted order), 2 trajectories of
    /// 2 reads, arms `a` and `b` and selectors `s1` and `s2`, lines ending in `eol`, a blank
    /// line after every 13th row; rows for which `skip(dataset, question, trajectory, read)`
    /// holds are left out.
    fn panel_csv(eol: &str, skip: impl Fn(usize, usize, usize, usize) -> bool) -> String {
        let mut s = format!("dataset,question,trajectory,read,arm,selector,f1{eol}");
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut n = 0;
        for d in 0..2 {
            for q in 0..40 {
                for t in 0..2 {
                    for r in 0..2 {
                        if skip(d, q, t, r) {
                            continue;
                        }
                        for arm in ["a", "b"] {
                            for sel in ["s1", "s2"] {
                                x ^= x << 13;
                                x ^= x >> 7;
                                x ^= x << 17;
                                let v = (x % 1000) as f64 / 1000.0;
                                let question = (q * 7919) % 1000;
                                s.push_str(&format!(
                                    "set{d}, q{question} ,t{t},{r},{arm},{sel},{v}{eol}"
                                ));
                                n += 1;
                                if n % 13 == 0 {
                                    s.push_str(eol);
                                }
                            }
                        }
                    }
                }
            }
        }
        s
    }

    fn load_on(path: &Path, opts: &LoadOptions, chunk: usize, threads: usize) -> Result<Panel> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| load_panel_in_chunks(path, opts, chunk))
    }

    /// The panel (or error message, the file named `p.csv`) of `text` read on one thread,
    /// after checking that small pieces on several threads give the same, to the last bit
    /// and character.
    fn same_in_pieces(text: &str, opts: &LoadOptions) -> std::result::Result<Panel, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.csv");
        std::fs::write(&path, text).unwrap();
        let show = |p: &Result<Panel>| match p {
            Ok(p) => format!("{p:?}"),
            Err(e) => format!("error: {e}"),
        };
        let want = load_on(&path, opts, PAR_CHUNK_BYTES, 1);
        for (chunk, threads) in [(64, 3), (100, 2), (1000, 3), (PAR_CHUNK_BYTES, 2)] {
            let got = load_on(&path, opts, chunk, threads);
            assert_eq!(show(&got), show(&want), "chunk {chunk}, {threads} threads");
        }
        want.map_err(|e| e.to_string().replace(path.to_str().unwrap(), "p.csv"))
    }

    #[test]
    fn panels_read_in_pieces_equal_panels_read_in_one() {
        let contrast = LoadOptions {
            contrast: Some("b-a".into()),
            ..Default::default()
        };
        for eol in ["\n", "\r\n"] {
            let p = same_in_pieces(&panel_csv(eol, |_, _, _, _| false), &contrast).unwrap();
            assert_eq!(p.strata.len(), 2);
            assert_eq!(p.selectors, ["s1", "s2"]);
            assert_eq!(
                (p.strata[0].q(), p.strata[0].t(), p.strata[0].r()),
                (40, 2, 2)
            );
            assert_eq!(p.strata[1].questions[..3], ["q0", "q919", "q838"]);
        }
        // A question lacking a read: dropped, or kept nested with a note.
        let text = panel_csv("\n", |d, q, t, r| (d, q, t, r) == (1, 37, 1, 1));
        let dropped = LoadOptions {
            drop_incomplete: true,
            arm: Some("b".into()),
            ..Default::default()
        };
        let p = same_in_pieces(&text, &dropped).unwrap();
        assert_eq!((p.strata[1].dropped, p.strata[1].q()), (1, 39));
        let nested = LoadOptions {
            allow_unbalanced: true,
            contrast: Some("b-a".into()),
            selector: Some(SelectorChoice::One("s2".into())),
            ..Default::default()
        };
        let p = same_in_pieces(&text, &nested).unwrap();
        assert!(!p.strata[1].is_balanced() && !p.strata[1].notes.is_empty());
        let filtered = LoadOptions {
            filter: Some(("trajectory".into(), "t1".into())),
            contrast: Some("b-a".into()),
            ..Default::default()
        };
        let p = same_in_pieces(&panel_csv("\r\n", |_, _, _, _| false), &filtered).unwrap();
        assert_eq!(p.strata[0].t(), 1);
    }

    #[test]
    fn cells_keep_the_files_labels_of_their_trajectories_and_reads() {
        // Each question has its own trajectory ids; q2 lacks a read, so with
        // `allow_unbalanced` its stratum is nested and its labels still name each cell.
        let text = "dataset,question,trajectory,read,f1\n\
                    d,q1,u7,r1,0.1\nd,q1,u7,r2,0.2\nd,q1,u3,r1,0.3\nd,q1,u3,r2,0.4\n\
                    d,q2,u9,r2,0.5\nd,q2,u9,r1,0.6\nd,q2,u8,r1,0.7\n\
                    e,q1,u7,r1,0.8\ne,q1,u7,r2,0.9\n";
        let opts = LoadOptions {
            allow_unbalanced: true,
            ..Default::default()
        };
        let p = same_in_pieces(text, &opts).unwrap();
        let (d, e) = (&p.strata[0], &p.strata[1]);
        assert!(!d.is_balanced() && e.is_balanced());
        // Trajectories and reads in label order within each question.
        assert_eq!(d.cell_label(0, 0, 0), Some(("u3", "r1")));
        assert_eq!(d.cell_label(0, 1, 1), Some(("u7", "r2")));
        assert_eq!(d.cell_label(1, 0, 0), Some(("u8", "r1")));
        assert_eq!(d.cell_label(1, 0, 1), None);
        assert_eq!(d.cell_label(1, 1, 1), Some(("u9", "r2")));
        assert_eq!(d.cell_label(2, 0, 0), None);
        assert_eq!(
            (e.cell_label(0, 0, 1), e.y(0, 0, 1)),
            (Some(("u7", "r2")), 0.9)
        );
        // The strata share the panel's label texts.
        let (ld, le) = (d.labels.as_ref().unwrap(), e.labels.as_ref().unwrap());
        assert!(std::sync::Arc::ptr_eq(
            &ld.trajectory_names,
            &le.trajectory_names
        ));
        assert_eq!(ld.trajectory.len(), 4);
        assert_eq!(ld.read.len(), 7);
    }

    #[test]
    fn errors_in_pieces_are_the_errors_read_in_one() {
        let contrast = LoadOptions {
            contrast: Some("b-a".into()),
            ..Default::default()
        };
        let text = panel_csv("\n", |_, _, _, _| false);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let n = lines.len();
        let with = |at: usize, line: &str| {
            let mut t = lines.clone();
            t[at] = line;
            t.concat()
        };
        let cases = [
            (
                n - 5,
                "set1,q5,t0,0,a,s1,x\n",
                "score 'f1' is 'x'; expected a number",
            ),
            (n - 3, "set1, ,t0,0,a,s1,1\n", "empty question id"),
            (n - 2, "set1,q1,t0\n", "row has 3 fields; the header has 7"),
        ];
        for (at, line, what) in cases {
            // Line `at + 1` of the file: the header is line 1, blank lines count.
            let e = same_in_pieces(&with(at, line), &contrast).unwrap_err();
            assert_eq!(e, format!("p.csv:{}: {what}", at + 1));
        }
        // Duplicates are counted over the whole file, each example naming its two lines.
        let e = same_in_pieces(&with(9, "set0,q0,t0,0,a,s1,0.5\n"), &contrast).unwrap_err();
        assert_eq!(
            e,
            "p.csv: duplicates: 1 row repeats a cell already given (1 cell); line 10 repeats \
             line 2 (dataset=set0, question=q0, trajectory=t0, read=0, arm=a, selector=s1); \
             duplicates 'mean' averages a cell's rows, 'first' keeps the first"
        );
    }
}
