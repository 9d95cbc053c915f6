//! `stats index build|search`: build a local BM25 index from a corpus JSONL, and search any
//! backend from the command line (to check an index or a hosted API).

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use ragstats_agent::search::{http, local, mask, Search, SearchOptions};

use super::batch::block_on;
use super::common::{print_json, Format, Table};

/// Flags of `stats index`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Sub,
}

/// `stats index` subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Build a BM25 index (tantivy) of a corpus JSONL (`id`, `url`, `title`, `text`).
    #[command(
        after_help = "Example:\n  stats index build data/qa/corpus.jsonl --out idx/\n\nThe index is built in a temporary directory beside --out and renamed into place; an\nexisting --out is replaced only if it is an index (or empty)."
    )]
    Build(BuildArgs),
    /// Search a backend (local:DIR, http:URL or drg:URL) and print the ranked records.
    #[command(
        after_help = "Examples:\n  stats index search local:idx/ \"Scott Derrickson nationality\" --k 5\n  STATS_SEARCH_KEY=... stats index search http:https://search.example/v1/search \"query\" --cache .search-cache --mask data/search/mask.txt"
    )]
    Search(SearchArgs),
}

/// Flags of `stats index build`.
#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// Corpus JSONL: one object per line with `id`, `url`, `title`, `text`.
    pub corpus: PathBuf,
    /// Index directory to create.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Flags of `stats index search`.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Backend: local:DIR, http:URL (POST protocol of docs/search.md) or drg:URL (DeepResearchGym GET).
    pub backend: String,
    /// Query text (no syntax: quotes, colons and parentheses are plain text).
    pub query: String,
    /// Number of results.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Response cache directory.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Mask list file(s) (e.g. data/search/mask.txt); matching records keep their slot, masked.
    #[arg(long, value_name = "FILE")]
    pub mask: Vec<PathBuf>,
    /// Characters of text to print per record (table format).
    #[arg(long, default_value_t = 120)]
    pub chars: usize,
    /// Requests per minute (http/drg backends).
    #[arg(long)]
    pub rpm: Option<u64>,
    /// Per-request timeout in seconds (http/drg backends).
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    pub timeout: f64,
    /// Output format.
    #[arg(long, default_value = "table", value_parser = Format::parser(&[Format::Table, Format::Json]))]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Build(a) => build(a),
        Sub::Search(a) => block_on(search(a)),
    }
}

fn build(a: BuildArgs) -> anyhow::Result<u8> {
    ragstats_core::io::refuse_overwriting_inputs(&[("--out", &a.out)], &[("corpus", &a.corpus)])?;
    let info = local::build(&a.corpus, &a.out)?;
    outln!(
        "indexed {} documents of {} into {} (corpus sha256 {})",
        info.documents,
        a.corpus.display(),
        a.out.display(),
        &info.corpus_sha256[..16]
    );
    Ok(0)
}

async fn search(a: SearchArgs) -> anyhow::Result<u8> {
    if !a.timeout.is_finite() || a.timeout <= 0.0 {
        return Err(
            super::UsageError("--timeout must be a positive number of seconds".into()).into(),
        );
    }
    let mut patterns = Vec::new();
    for f in &a.mask {
        patterns.extend(mask::read_patterns(f)?);
    }
    let opts = SearchOptions {
        cache_dir: a.cache.clone(),
        mask: patterns,
        http: http::HttpConfig {
            rpm: a.rpm,
            timeout: Duration::from_secs_f64(a.timeout),
            ..http::HttpConfig::default()
        },
    };
    let s = Search::open(&a.backend, opts)?;
    let resp = s.search(&a.query, a.k).await?;
    match a.format {
        Format::Csv => return Err(no_csv()),
        Format::Json => print_json(&serde_json::json!({
            "backend": s.name(),
            "query": a.query,
            "k": a.k,
            "cached": resp.cached,
            "masked": resp.masked,
            "records": resp.records,
        }))?,
        Format::Table => {
            let mut t = Table::new(&["rank", "score", "id", "text"]);
            for (i, r) in resp.records.iter().enumerate() {
                let text: String = if r.masked {
                    "(masked)".into()
                } else {
                    r.text.chars().take(a.chars).collect()
                };
                t.row(vec![
                    (i + 1).to_string(),
                    r.score
                        .map(|s| format!("{s:.4}"))
                        .unwrap_or_else(|| "-".into()),
                    r.id.clone(),
                    text.replace('\n', " "),
                ]);
            }
            out!("{}", t.to_text());
            outln!(
                "{} results from {}{}; {} masked",
                resp.records.len(),
                s.name(),
                if resp.cached { " (cached)" } else { "" },
                resp.masked
            );
        }
    }
    Ok(0)
}

/// `--format csv`, which the flag parser already refuses: `stats index search` has no CSV form.
fn no_csv() -> anyhow::Error {
    super::UsageError("stats index search writes a table or JSON, not CSV".into()).into()
}
