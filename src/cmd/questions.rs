//! `stats questions convert`: read HotpotQA / MuSiQue files as published (or our JSONL) and
//! write our questions JSONL and the corpus JSONL of their paragraphs.

use std::path::PathBuf;

use clap::Subcommand;
use ragstats_core::questions::{corpus, read_questions, write_questions, Dataset};

/// Flags of `stats questions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Sub,
}

/// `stats questions` subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Convert question files (format detected per file) to questions JSONL + corpus JSONL.
    #[command(
        after_help = "Example:\n  stats questions convert data/qa/hotpotqa.json data/qa/musique.json --out data/qa/questions.jsonl --corpus-out data/qa/corpus.jsonl\n\nFormats: HotpotQA JSON (`_id`, `context`), MuSiQue JSON/JSONL (`paragraphs`), our JSONL\n(`dataset`, `answers`). Corpus ids: the Wikipedia title, or TITLE#HASH when one title has\nseveral texts among the files given (docs/search.md)."
    )]
    Convert(ConvertArgs),
}

/// Flags of `stats questions convert`.
#[derive(Debug, clap::Args)]
pub struct ConvertArgs {
    /// Question files, read together (paragraph ids are assigned over all of them).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Questions JSONL to write (`id`, `dataset`, `question`, `answers`, `supporting`,
    /// `cluster`: the first supporting title).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Corpus JSONL to write (`id`, `url`, `title`, `text`): every distinct paragraph.
    #[arg(long, value_name = "FILE")]
    pub corpus_out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Convert(a) => convert(a),
    }
}

fn convert(a: ConvertArgs) -> anyhow::Result<u8> {
    let mut outputs = vec![("--out", a.out.as_path())];
    if let Some(c) = &a.corpus_out {
        outputs.push(("--corpus-out", c.as_path()));
    }
    let inputs: Vec<(&str, &std::path::Path)> =
        a.files.iter().map(|p| ("input", p.as_path())).collect();
    ragstats_core::io::refuse_overwriting_inputs(&outputs, &inputs)?;
    let loaded = read_questions(&a.files)?;
    write_questions(&a.out, &loaded.questions)?;
    let count = |d: Dataset| loaded.questions.iter().filter(|q| q.dataset == d).count();
    outln!(
        "{} questions ({} HotpotQA, {} MuSiQue) -> {}",
        loaded.questions.len(),
        count(Dataset::Hotpotqa),
        count(Dataset::Musique),
        a.out.display()
    );
    if let Some(c) = &a.corpus_out {
        corpus::write_corpus(c, &loaded.documents)?;
        outln!("{} documents -> {}", loaded.documents.len(), c.display());
    }
    Ok(0)
}
