//! Settings read from their text form by serde: a value a user writes as text (`average`,
//! `question=question_id`, `metadata:KEY`) is deserialized through the type's `FromStr`, so
//! a settings type read from JSON (the Python bindings' keywords) takes exactly the words
//! the command line takes, and refuses the same ones with the same message.

use std::fmt::Display;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

/// `T` from its text form (`#[serde(deserialize_with = "parsed")]`).
///
/// # Errors
/// `T`'s own message for text it refuses; serde's for a value that is not text.
pub fn parsed<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// An optional `T` from its text form; `null` (Python's `None`) is `None`.
///
/// # Errors
/// As [`parsed`].
pub fn parsed_opt<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    match Option::<String>::deserialize(d)? {
        Some(text) => text.parse().map(Some).map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}

/// An optional number given as a number or as text (`"inf"`, `"-1e3"`): JSON has no
/// infinity or NaN, so a front end sends those as text, and the setting's own check refuses
/// them in its words, as for the command line's `--failure-score inf`.
///
/// # Errors
/// serde's message for a value that is neither, or text that is not a number.
pub fn number_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Number(f64),
        Text(String),
    }
    match Option::<Form>::deserialize(d)? {
        None => Ok(None),
        Some(Form::Number(x)) => Ok(Some(x)),
        Some(Form::Text(t)) => t
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("'{t}' is not a number"))),
    }
}

/// A list of values, or one value as text (`design: "446:2:1"` is `["446:2:1"]`): a
/// repeatable setting a user often gives once.
///
/// # Errors
/// serde's for anything but text or a list of text.
pub fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Form::deserialize(d)? {
        Form::One(t) => vec![t],
        Form::Many(l) => l,
    })
}

/// The schema of a setting given as text or as a map (a column map, strata weights).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema's shape, never built
pub enum TextOrMap<V> {
    Text(String),
    Map(std::collections::BTreeMap<String, V>),
}

/// The schema of a setting given as a list of names or as text `a,b,c`.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema's shape, never built
pub enum TextOrList {
    Text(String),
    List(Vec<String>),
}

/// The schema of the `duplicates` setting: its three words.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)] // a schema's shape, never built
pub enum DuplicatesWord {
    Error,
    Mean,
    First,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct S {
        #[serde(deserialize_with = "parsed")]
        n: std::num::NonZeroU8,
        #[serde(default, deserialize_with = "parsed_opt")]
        m: Option<u16>,
    }

    #[test]
    fn text_goes_through_from_str() {
        let s: S = serde_json::from_str(r#"{"n": "7", "m": "300"}"#).unwrap();
        assert_eq!((s.n.get(), s.m), (7, Some(300)));
        let s: S = serde_json::from_str(r#"{"n": "7", "m": null}"#).unwrap();
        assert_eq!(s.m, None);
        let s: S = serde_json::from_str(r#"{"n": "7"}"#).unwrap();
        assert_eq!(s.m, None);
        let e = serde_json::from_str::<S>(r#"{"n": "0"}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("number would be zero for non-zero type"),
            "{e}"
        );
        let e = serde_json::from_str::<S>(r#"{"n": 7}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid type: integer `7`, expected a string"),
            "{e}"
        );
    }
}
