//! A balanced design (Q, T, R) and the one way `Q:T:R` is read, for every flag that takes
//! one: `forecast --design`, `slice --design`, `allocate --allocation NAME=Q:T:R`.

use serde::Serialize;

/// Q questions, T trajectories per question, R reads per trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Design {
    pub questions: usize,
    pub trajectories: usize,
    pub reads: usize,
}

/// Why a text is not `Q:T:R`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesignError {
    /// Not three `:`-separated fields.
    Fields,
    /// A field is not a positive integer: which (`Q`, `T`, `R`) and the text.
    NotPositive { field: &'static str, text: String },
}

/// A positive integer, spaces around it allowed.
pub fn positive_count(text: &str) -> Option<usize> {
    text.trim().parse::<usize>().ok().filter(|&n| n >= 1)
}

/// The three fields of `X:T:R` with T and R read as positive integers; X (Q, or per-stratum
/// counts) is returned as text for the caller to read.
///
/// # Errors
/// [`DesignError`] naming the first field that is wrong.
pub fn split_fields(s: &str) -> Result<(&str, usize, usize), DesignError> {
    let parts: Vec<&str> = s.split(':').collect();
    let [q, t, r] = parts[..] else {
        return Err(DesignError::Fields);
    };
    let count = |text: &str, field| {
        positive_count(text).ok_or_else(|| DesignError::NotPositive {
            field,
            text: text.to_string(),
        })
    };
    Ok((q, count(t, "T")?, count(r, "R")?))
}

impl Design {
    /// The design of the fields [`split_fields`] gave: Q read from its text.
    ///
    /// # Errors
    /// [`DesignError::NotPositive`] when Q is not a positive integer.
    pub fn from_fields(q: &str, trajectories: usize, reads: usize) -> Result<Design, DesignError> {
        let questions = positive_count(q).ok_or_else(|| DesignError::NotPositive {
            field: "Q",
            text: q.to_string(),
        })?;
        Ok(Design {
            questions,
            trajectories,
            reads,
        })
    }
}

impl std::str::FromStr for Design {
    type Err = DesignError;

    /// Parses `Q:T:R`, each a positive integer.
    fn from_str(s: &str) -> Result<Design, DesignError> {
        let (q, t, r) = split_fields(s)?;
        Design::from_fields(q, t, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_t_r_is_read_one_way() {
        assert_eq!(
            " 446:2 : 1".parse::<Design>(),
            Ok(Design {
                questions: 446,
                trajectories: 2,
                reads: 1
            })
        );
        assert_eq!("446:2".parse::<Design>(), Err(DesignError::Fields));
        assert_eq!("1:2:3:4".parse::<Design>(), Err(DesignError::Fields));
        assert_eq!(
            "0:2:1".parse::<Design>(),
            Err(DesignError::NotPositive {
                field: "Q",
                text: "0".into()
            })
        );
        // T is checked before Q, so a per-stratum Q list can be read by its caller.
        assert_eq!(
            "x:2:-1".parse::<Design>(),
            Err(DesignError::NotPositive {
                field: "R",
                text: "-1".into()
            })
        );
        assert_eq!(split_fields("a=3,b=4:5:6"), Ok(("a=3,b=4", 5, 6)));
    }
}
