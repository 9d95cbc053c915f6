//! Benchmark-URL masking (the paper's App. A): a result whose URL points at a benchmark's own
//! pages (where the question and its answer may be printed) keeps its rank slot but shows no
//! title or text.
//!
//! Pattern syntax (one per line in a mask file; blank lines and lines starting with `#` are
//! skipped): `HOST[/PATH-PREFIX]`, optionally with a scheme, which is ignored. A URL matches
//! when its host equals HOST or is a subdomain of it, and its path starts with PATH-PREFIX.
//! Hosts and paths are compared case-insensitively, and a leading `www.` is dropped from both
//! sides. So `hotpotqa.github.io` masks every page of that site and
//! `huggingface.co/datasets/hotpotqa` masks that dataset's pages (and
//! `…/datasets/hotpotqa_extra`: a prefix is a plain string prefix).

use std::path::Path;

use super::SearchRecord;
use ragstats_core::{Error, Result};

/// A parsed mask list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mask {
    /// (host, path prefix) pairs, lower-cased, `www.` and scheme removed.
    patterns: Vec<(String, String)>,
}

/// Splits a URL or pattern into (host, path-and-rest), lower-cased, without scheme, userinfo,
/// port or leading `www.`.
fn split(url: &str) -> (String, String) {
    let s = url.trim();
    let s = match s.find("://") {
        Some(i) => &s[i + 3..],
        None => s,
    };
    let (authority, rest) = match s.find(['/', '?', '#']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    (host, rest.to_lowercase())
}

/// The patterns of a mask file, in order: blank lines and `#` comments skipped.
///
/// # Errors
/// [`Error::Io`] when it cannot be read; [`Error::Input`] `FILE:LINE` for a pattern with no
/// host.
pub fn read_patterns(path: &Path) -> Result<Vec<String>> {
    let text = ragstats_core::io::read_text(path)?;
    let mut pats = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if split(l).0.is_empty() {
            return Err(Error::input(
                path,
                Some(i as u64 + 1),
                format!("mask pattern '{}' has no host", ragstats_core::io::clip(l)),
            ));
        }
        pats.push(l.to_string());
    }
    Ok(pats)
}

impl Mask {
    /// A mask from patterns (module docs); empty patterns are skipped.
    pub fn new<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> Mask {
        Mask {
            patterns: patterns
                .into_iter()
                .map(|p| p.as_ref().trim().to_string())
                .filter(|p| !p.is_empty())
                .map(|p| split(&p))
                .filter(|(h, _)| !h.is_empty())
                .collect(),
        }
    }

    /// Reads a mask file (module docs).
    ///
    /// # Errors
    /// As [`read_patterns`].
    pub fn read(path: &Path) -> Result<Mask> {
        Ok(Mask::new(read_patterns(path)?))
    }

    /// Number of patterns.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// True when there is no pattern.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// True when `url` matches a pattern (module docs).
    pub fn matches(&self, url: &str) -> bool {
        if self.patterns.is_empty() || url.trim().is_empty() {
            return false;
        }
        let (host, path) = split(url);
        self.patterns.iter().any(|(h, p)| {
            let host_ok = host == *h
                || (host.len() > h.len()
                    && host.ends_with(h.as_str())
                    && host.as_bytes()[host.len() - h.len() - 1] == b'.');
            host_ok && path.starts_with(p.as_str())
        })
    }

    /// Masks the matching records in place (title and text emptied, `masked` set, rank slot,
    /// id, url and score kept) and returns how many were masked.
    pub fn apply(&self, records: &mut [SearchRecord]) -> usize {
        let mut n = 0;
        for r in records.iter_mut() {
            if self.matches(&r.url) {
                r.title.clear();
                r.text.clear();
                r.masked = true;
                n += 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_subdomains_and_path_prefixes() {
        let m = Mask::new([
            "hotpotqa.github.io",
            "https://www.HuggingFace.co/datasets/hotpotqa",
            "",
        ]);
        assert_eq!(m.len(), 2);
        assert!(m.matches("https://hotpotqa.github.io/"));
        assert!(m.matches("http://www.hotpotqa.github.io/explorer.html?x=1"));
        assert!(m.matches("https://sub.hotpotqa.github.io"));
        assert!(!m.matches("https://nothotpotqa.github.io/"));
        assert!(!m.matches("https://github.io/hotpotqa"));
        assert!(m.matches("https://huggingface.co/datasets/hotpotqa/hotpot_qa/viewer"));
        assert!(m.matches("huggingface.co/Datasets/HotpotQA"));
        assert!(!m.matches("https://huggingface.co/datasets/musique"));
        assert!(!m.matches("https://huggingface.co/"));
        assert!(!m.matches(""));
    }

    #[test]
    fn apply_keeps_slots_and_counts() {
        let rec = |id: &str, url: &str| SearchRecord {
            id: id.into(),
            url: url.into(),
            title: "T".into(),
            text: "X".into(),
            score: Some(1.5),
            masked: false,
        };
        let mut rs = vec![
            rec("a", "https://en.wikipedia.org/wiki/A"),
            rec("b", "https://hotpotqa.github.io/"),
            rec("c", "https://en.wikipedia.org/wiki/C"),
        ];
        let n = Mask::new(["hotpotqa.github.io"]).apply(&mut rs);
        assert_eq!(n, 1);
        assert_eq!(rs[1].id, "b");
        assert_eq!(rs[1].url, "https://hotpotqa.github.io/");
        assert!(rs[1].masked && rs[1].title.is_empty() && rs[1].text.is_empty());
        assert_eq!(rs[1].score, Some(1.5));
        assert!(!rs[0].masked && rs[0].text == "X" && !rs[2].masked);
    }
}
