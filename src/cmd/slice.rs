//! `stats slice`: the sub-panel of a design Q:T:R written as a panel file (every arm,
//! selector and column of the kept rows), so a measured allocation is analysed like any panel.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use ragstats_core::allocation::slice::{select, FileLabels, Slice};
use ragstats_core::components::forecast::{split_questions, DesignSpec};
use ragstats_core::io::jsonl::{parse_value, scalar_text};
use ragstats_core::io::{is_jsonl, CsvReader, JsonlReader};
use ragstats_core::panel::Panel;

use super::common::PanelOptions;
use super::UsageError;

/// Flags of `stats slice`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Design Q:T:R (Q split over strata in the panel's question shares, by largest
    /// remainder) or per-stratum counts, e.g. hotpotqa=150,musique=24:2:1.
    #[arg(long, value_name = "Q:T:R")]
    pub design: String,
    /// Q of a Q:T:R design is the count in every stratum, not the total.
    #[arg(long)]
    pub per_stratum: bool,
    /// Seeded choice: questions in the seeded order of `allocate --order-seed S`, and for
    /// each question a seeded choice of T of its trajectories and of R reads of each.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Keep the first T trajectories and R reads (label order) of each question (the default
    /// without --seed, where the questions are the first in file order too; with --seed the
    /// sub-panel `allocate --order-seed S` measures).
    #[arg(long)]
    pub first: bool,
    /// Where to write the sub-panel, in the input's format (CSV, or JSONL for a .jsonl/.json
    /// input; the name must say the same).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Questions per stratum of `design` for `panel`.
fn counts(panel: &Panel, spec: &DesignSpec, per_stratum: bool) -> anyhow::Result<Vec<usize>> {
    Ok(match spec {
        DesignSpec::Total { questions, .. } if per_stratum => vec![*questions; panel.strata.len()],
        DesignSpec::Total { questions, .. } => split_questions(
            *questions,
            &panel.strata.iter().map(|s| s.q()).collect::<Vec<_>>(),
        ),
        DesignSpec::PerStratum { .. } if per_stratum => {
            return Err(UsageError(
                "--per-stratum goes with a Q:T:R design, not per-stratum counts".into(),
            )
            .into())
        }
        DesignSpec::PerStratum { questions, .. } => {
            if let Some((n, _)) = questions
                .iter()
                .find(|(n, _)| !panel.strata.iter().any(|s| &s.name == n))
            {
                return Err(UsageError(format!(
                    "the design names stratum '{n}', which the panel does not have"
                ))
                .into());
            }
            panel
                .strata
                .iter()
                .map(|s| {
                    questions
                        .iter()
                        .find(|(n, _)| n == &s.name)
                        .map(|(_, q)| *q)
                        .ok_or_else(|| {
                            UsageError(format!(
                                "the design gives no count for stratum '{}'",
                                s.name
                            ))
                        })
                })
                .collect::<Result<_, _>>()?
        }
    })
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if is_jsonl(&args.panel) != is_jsonl(&args.out) {
        return Err(UsageError(format!(
            "--out {}: the sub-panel is written in the input's format ({}); give a name ending in {}",
            args.out.display(),
            if is_jsonl(&args.panel) { "JSONL" } else { "CSV" },
            if is_jsonl(&args.panel) { ".jsonl" } else { ".csv" }
        ))
        .into());
    }
    let spec: DesignSpec = args.design.parse()?;
    let (t, r) = match &spec {
        DesignSpec::Total { t, r, .. } | DesignSpec::PerStratum { t, r, .. } => (*t, *r),
    };
    let panel = args.opts.load_noting_drops(&args.panel)?;
    let q = counts(&panel, &spec, args.per_stratum)?;
    let mut slice = select(&panel.strata, &q, t, r, args.seed, args.first)?;
    // Trajectories are nested in questions: the chosen positions are named by each
    // question's own labels in the file.
    slice.bind(&file_labels(&args.panel)?)?;
    let rows = write_rows(&args.panel, &slice, &args.out)
        .with_context(|| format!("writing {}", args.out.display()))?;
    let parts: Vec<String> = slice
        .strata
        .iter()
        .map(|s| format!("{}={}", s.name, s.questions.len()))
        .collect();
    eprintln!(
        "wrote {rows} rows of design {}:{t}:{r} ({}) to {}",
        parts.join(","),
        match (args.seed, args.first) {
            (Some(_), false) => "seeded questions, trajectories and reads",
            (Some(_), true) => "seeded questions, first trajectories and reads",
            (None, _) => "first questions, trajectories and reads",
        },
        args.out.display()
    );
    Ok(0)
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

/// The labels of every row of `input`.
fn file_labels(input: &Path) -> anyhow::Result<FileLabels> {
    let mut labels = FileLabels::default();
    let mut add = |f: [Option<String>; 4]| {
        let [d, q, t, r] = row_labels(f);
        labels.add(&d, &q, &t, &r);
    };
    if is_jsonl(input) {
        let mut rdr = JsonlReader::open(input)?;
        while let Some((_, line)) = rdr.next_line()? {
            if line.trim().is_empty() {
                continue;
            }
            let v = parse_value(line).map_err(|e| anyhow::anyhow!("{}: {e}", input.display()))?;
            add(["dataset", "question", "trajectory", "read"]
                .map(|k| v.get(k).and_then(scalar_text)));
        }
    } else {
        let mut rdr = CsvReader::open(input)?;
        let cols = ["dataset", "question", "trajectory", "read"].map(|c| rdr.column(c));
        while let Some((_, rec)) = rdr.next_record()? {
            add(cols.map(|c| c.and_then(|i| rec.get(i)).map(str::to_string)));
        }
    }
    Ok(labels)
}

/// `out` created for writing; a directory there is the library's input error (exit 2).
fn create(out: &Path) -> ragstats_core::Result<std::fs::File> {
    std::fs::File::create(out).map_err(|e| ragstats_core::Error::io(out, e))
}

/// Copies the kept rows of `input` to `out` (CSV rows re-written with the same header; JSONL
/// lines copied as they are) and returns how many.
fn write_rows(input: &Path, slice: &Slice, out: &Path) -> anyhow::Result<usize> {
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
