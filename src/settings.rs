//! The library names a setting of an analysis (`contrast`, `failure_score`: the Python
//! keyword); the command line names its flag (`--contrast`, `--failure-score`). An error
//! about one setting ([`ragstats_core::Error::Setting`]) is printed with the flag in place of
//! the setting's name, here and only here (docs/library.md, "Errors").

use std::error::Error as StdError;

/// Settings whose flag is not `--` and the name with `_` written `-`: (setting, flag).
/// Empty while every setting is named after its flag; a setting named otherwise is added
/// here (the Python bindings name it by the keyword made from this flag, so the two agree).
const NAMED_OTHERWISE: &[(&str, &str)] = &[];

/// The long flag of `setting`: `failure_score` → `--failure-score`.
pub fn flag(setting: &str) -> String {
    NAMED_OTHERWISE
        .iter()
        .find(|(s, _)| *s == setting)
        .map(|(_, f)| f.to_string())
        .unwrap_or_else(|| format!("--{}", setting.replace('_', "-")))
}

/// How the command line shows one error of a chain: an error about a setting as
/// `--flag: message`, any other as it displays itself.
pub fn describe(e: &(dyn StdError + 'static)) -> String {
    match e
        .downcast_ref::<ragstats_core::Error>()
        .map(ragstats_core::Error::without_notes)
    {
        Some(ragstats_core::Error::Setting { setting, msg }) => {
            format!("{}: {msg}", flag(setting))
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_error_is_shown_with_its_flag() {
        assert_eq!(flag("contrast"), "--contrast");
        assert_eq!(flag("failure_score"), "--failure-score");
        let e = ragstats_core::Error::setting(
            "min_trajectories",
            "expected 1 to T = 3 (the depth panel's trajectories), not 4",
        );
        // The library's own words name the setting; the command line names the flag.
        assert_eq!(
            e.to_string(),
            "min_trajectories: expected 1 to T = 3 (the depth panel's trajectories), not 4"
        );
        assert_eq!(
            describe(&e),
            "--min-trajectories: expected 1 to T = 3 (the depth panel's trajectories), not 4"
        );
        // Any other error is shown as it is.
        let other = ragstats_core::Error::Usage("give at least one x column".into());
        assert_eq!(describe(&other), "give at least one x column");
    }
}
