//! Set metrics over option labels.

use std::collections::HashSet;

/// Exact match: 1 when the two label sets are equal (order and duplicates ignored), else 0.
pub fn exact_match(pred: &[String], gold: &[String]) -> f64 {
    let p: HashSet<&String> = pred.iter().collect();
    let g: HashSet<&String> = gold.iter().collect();
    if p == g {
        1.0
    } else {
        0.0
    }
}

/// Instance F1 over labels: precision = |P∩G|/|P|, recall = |P∩G|/|G|,
/// F1 = 2PR/(P+R) = 2|P∩G|/(|P|+|G|); 1 when both sets are empty, 0 when exactly one is.
pub fn f1(pred: &[String], gold: &[String]) -> f64 {
    let p: HashSet<&String> = pred.iter().collect();
    let g: HashSet<&String> = gold.iter().collect();
    if p.is_empty() && g.is_empty() {
        return 1.0;
    }
    let inter = p.intersection(&g).count() as f64;
    2.0 * inter / (p.len() + g.len()) as f64
}

/// Jaccard similarity |S∩T| / |S∪T|; 1 when both sets are empty.
pub fn jaccard(a: &[String], b: &[String]) -> f64 {
    let s: HashSet<&String> = a.iter().collect();
    let t: HashSet<&String> = b.iter().collect();
    let union = s.union(&t).count();
    if union == 0 {
        return 1.0;
    }
    s.intersection(&t).count() as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.chars().map(|c| c.to_string()).collect()
    }

    #[test]
    fn hand_values() {
        assert_eq!(exact_match(&v("CA"), &v("AC")), 1.0);
        assert_eq!(exact_match(&v("A"), &v("AC")), 0.0);
        // P = {A}, G = {A, C}: precision 1, recall 1/2, F1 = 2/3.
        assert!((f1(&v("A"), &v("AC")) - 2.0 / 3.0).abs() < 1e-15);
        // P = {A, B, D}, G = {A, C}: 2·1/(3+2) = 0.4.
        assert!((f1(&v("ABD"), &v("AC")) - 0.4).abs() < 1e-15);
        assert_eq!(f1(&v(""), &v("")), 1.0);
        assert_eq!(f1(&v(""), &v("A")), 0.0);
        assert_eq!(f1(&v("B"), &v("")), 0.0);
        assert!((jaccard(&v("AB"), &v("BC")) - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(jaccard(&v(""), &v("")), 1.0);
    }
}
