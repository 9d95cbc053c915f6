//! The corpus JSONL (one [`Document`] per line: `id`, `url`, `title`, `text`), and the rule
//! that gives Wikipedia paragraphs their corpus ids and URLs.
//!
//! Id rule ([`assign_ids`]): over every paragraph read together (all question files of one
//! conversion), a paragraph's id is its Wikipedia title when every paragraph with that title
//! has the same text, and `TITLE#H` otherwise, where `H` is the first 8 hex digits of the
//! SHA-256 of the paragraph's text. HotpotQA gives one paragraph (the lead) per title, so its
//! ids are titles; MuSiQue can give several paragraphs of one page, which get the hashed form.
//! The same paragraph text under the same title always gets the same id, so paragraphs shared
//! between questions or datasets are one corpus document.
//!
//! URL rule ([`wikipedia_url`]): `https://en.wikipedia.org/wiki/` + the title with spaces as
//! underscores, percent-encoded (UTF-8) except for letters, digits and `-._~!$&'()*+,;=:@`.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use super::Document;
use crate::io::JsonlReader;
use crate::{Error, Result};

/// Reads a corpus JSONL: one object per line with string fields `id`, `url`, `title`,
/// `text` (other fields are ignored). Ids must be non-empty and unique.
///
/// # Errors
/// [`Error::Input`] `FILE:LINE: …` for a line that is not such an object, an empty id, or an
/// id already given (naming the first line).
pub fn read_corpus(path: &Path) -> Result<Vec<Document>> {
    let mut r = JsonlReader::open(path)?;
    let mut docs = Vec::new();
    let mut seen: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    while let Some((line, doc)) = r.next_as::<Document>()? {
        if doc.id.is_empty() {
            return Err(Error::input(path, Some(line), "empty document id"));
        }
        if let Some(first) = seen.insert(doc.id.clone(), line) {
            return Err(Error::input(
                path,
                Some(line),
                format!(
                    "document id '{}' already given on line {first}",
                    crate::io::clip(&doc.id)
                ),
            ));
        }
        docs.push(doc);
    }
    Ok(docs)
}

/// Writes `docs` as a corpus JSONL (fields in the order id, url, title, text), atomically.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written.
pub fn write_corpus(path: &Path, docs: &[Document]) -> Result<()> {
    crate::io::write_atomic(path, |w| {
        for d in docs {
            serde_json::to_writer(&mut *w, d)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}

/// The English Wikipedia URL of the page titled `title` (module docs).
pub fn wikipedia_url(title: &str) -> String {
    const KEEP: &[u8] = b"-._~!$&'()*+,;=:@";
    let mut out = String::from("https://en.wikipedia.org/wiki/");
    for b in title.replace(' ', "_").bytes() {
        if b.is_ascii_alphanumeric() || KEEP.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The first 8 hex digits of the SHA-256 of `text`.
pub fn text_hash(text: &str) -> String {
    crate::io::sha256_hex(text)[..8].to_string()
}

/// A Wikipedia paragraph as a dataset gives it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Paragraph {
    pub title: String,
    pub text: String,
}

/// Corpus ids for paragraphs read together (module docs): `title` when the title has one
/// text among `paragraphs`, else `title#hash`. Returns the map from paragraph to id.
pub fn assign_ids<'a>(
    paragraphs: impl IntoIterator<Item = &'a Paragraph>,
) -> BTreeMap<Paragraph, String> {
    let mut texts: BTreeMap<&str, HashSet<&str>> = BTreeMap::new();
    let mut all: Vec<&Paragraph> = Vec::new();
    for p in paragraphs {
        texts.entry(&p.title).or_default().insert(&p.text);
        all.push(p);
    }
    all.into_iter()
        .map(|p| {
            let id = if texts[p.title.as_str()].len() == 1 {
                p.title.clone()
            } else {
                format!("{}#{}", p.title, text_hash(&p.text))
            };
            (p.clone(), id)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_wikipedia_style() {
        assert_eq!(
            wikipedia_url("Lilu (mythology)"),
            "https://en.wikipedia.org/wiki/Lilu_(mythology)"
        );
        // "û" is C3 BB in UTF-8; '?' and '#' and '%' must be encoded.
        assert_eq!(
            wikipedia_url("Alû"),
            "https://en.wikipedia.org/wiki/Al%C3%BB"
        );
        assert_eq!(
            wikipedia_url("What? #1 100%"),
            "https://en.wikipedia.org/wiki/What%3F_%231_100%25"
        );
    }

    #[test]
    fn ids_hash_only_titles_with_several_texts() {
        let p = |t: &str, x: &str| Paragraph {
            title: t.into(),
            text: x.into(),
        };
        let ps = vec![p("A", "one"), p("B", "two"), p("B", "three"), p("A", "one")];
        let ids = assign_ids(&ps);
        assert_eq!(ids.len(), 3);
        assert_eq!(ids[&p("A", "one")], "A");
        // printf two | sha256sum → 3fc4ccfe…; printf three | sha256sum → 8b5b9db0…
        assert_eq!(ids[&p("B", "two")], "B#3fc4ccfe");
        assert_eq!(ids[&p("B", "three")], "B#8b5b9db0");
    }
}
