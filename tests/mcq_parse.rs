//! The answer parser against a table of responses shaped like what models really write.

use ragstats::mcq::parse::parse_answer;

fn labels(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| ((b'A' + i as u8) as char).to_string())
        .collect()
}

const TEXTS: [&str; 5] = [
    "Search for the 2023 annual report of Nordvik Energy",
    "Search for Nordvik Energy revenue",
    "Conclude that revenue fell",
    "Check the regulator's filing database",
    "Ask the user which year they mean",
];

/// (response, options, allow_empty, expected): `Some("AC")` = labels A and C, `Some("")` =
/// empty answer, `None` = parse failure.
const TABLE: &[(&str, usize, bool, Option<&str>)] = &[
    // 1-10: plain final lines
    ("Answer: A, C", 4, false, Some("AC")),
    ("Answer: A,C", 4, false, Some("AC")),
    ("Answer: A, B and C", 4, false, Some("ABC")),
    ("The plan ignores the year.\n\nAnswer: B", 4, false, Some("B")),
    ("Answer: (A)", 4, false, Some("A")),
    ("Answer: **A**", 4, false, Some("A")),
    ("**Answer:** B, D", 4, false, Some("BD")),
    ("Answer: $A$", 4, false, Some("A")),
    ("The answer is \\boxed{B}", 4, false, Some("B")),
    ("Final: \\boxed{A, C}", 4, false, Some("AC")),
    // 11-20: markers and last-wins
    ("答案：B", 4, false, Some("B")),
    ("分析如下……\n答案：A、C", 4, false, Some("AC")),
    ("因此答案为D。", 4, false, Some("D")),
    ("答案：选项B和D", 4, false, Some("BD")),
    ("Answer: A\nWait, option C is also supported.\nAnswer: A, C", 4, false, Some("AC")),
    ("I first thought Answer: B. On reflection,\nAnswer: D", 4, false, Some("D")),
    ("Final Answer\n\nB, C", 4, false, Some("BC")),
    ("The correct answers are A and D.", 4, false, Some("AD")),
    ("answer: a, c", 4, false, Some("AC")),
    ("Answer: ACD", 4, false, Some("ACD")),
    // 21-30: think blocks, explanations after the letters
    ("<think>Answer: A looks tempting but</think>\nAnswer: B", 4, false, Some("B")),
    ("Let me check each page.</think>\n\nAnswer: C", 4, false, Some("C")),
    ("<think>long reasoning that never ends", 4, false, None),
    ("Answer: B. The regulator's database is the primary source.", 4, false, Some("B")),
    ("Answer: B, D (both are official sources)", 4, false, Some("BD")),
    ("Answer: A and C are incorrect.", 4, false, Some("AC")),
    ("Answer: C — the others repeat earlier searches", 4, false, Some("C")),
    ("Answer: Options A and C", 4, false, Some("AC")),
    ("Answer: [A, D]", 4, false, Some("AD")),
    ("ANSWER: b", 4, false, Some("B")),
    // 31-40: letters alone, option texts, none
    ("B", 4, false, Some("B")),
    ("A, C", 4, false, Some("AC")),
    ("(D)", 4, false, Some("D")),
    ("Answer: \"Check the regulator's filing database\"", 4, false, Some("D")),
    ("Answer: Search for the 2023 annual report of Nordvik Energy; Check the regulator's filing database", 4, false, Some("AD")),
    ("Answer: none", 4, true, Some("")),
    ("Answer: None of the options.", 4, true, Some("")),
    ("答案：无", 4, true, Some("")),
    ("Answer: none", 4, false, None),
    ("Answer: []", 4, true, Some("")),
    // 41-52: failures and labels that do not exist
    ("Answer: E", 4, false, None),
    ("Answer: A, E", 4, false, Some("A")),
    ("Answer: A or B", 4, false, None),
    ("Answer: <letters>", 4, false, None),
    ("I am not sure which of these is right.", 4, false, None),
    ("", 4, false, None),
    ("Answer: A lot of the searches are redundant", 4, false, None),
    ("The best next step is to check the regulator.", 4, false, None),
    ("Answer: Ｂ，Ｃ", 4, false, Some("BC")),
    ("**Final Answer:** $\\boxed{\\text{A, C}}$", 4, false, Some("AC")),
    ("Answer: E", 5, false, Some("E")),
    ("Reasoning...\n\nAnswer:\nC, A", 4, false, Some("AC")),
];

#[test]
fn parse_table() {
    assert!(TABLE.len() >= 40);
    let mut bad = Vec::new();
    for (i, (text, n, allow_empty, want)) in TABLE.iter().enumerate() {
        let l = labels(*n);
        let t: Vec<String> = TEXTS.iter().take(*n).map(|s| s.to_string()).collect();
        let got = parse_answer(text, &l, &t, *allow_empty);
        let got_s = got.as_ref().ok().map(|p| p.labels.concat());
        if got_s.as_deref() != *want {
            bad.push(format!("#{} {text:?}: want {want:?}, got {got:?}", i + 1));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn failures_say_why() {
    let l = labels(4);
    let t: Vec<String> = TEXTS.iter().take(4).map(|s| s.to_string()).collect();
    let e = parse_answer("Answer: E", &l, &t, false).unwrap_err();
    assert!(e.contains("E") && e.contains("no option"), "{e}");
    let e = parse_answer("Answer: none", &l, &t, false).unwrap_err();
    assert!(e.contains("never empty"), "{e}");
    let e = parse_answer("I think so.", &l, &t, false).unwrap_err();
    assert!(e.contains("no answer marker"), "{e}");
    let p = parse_answer("Answer: A, E", &l, &t, false).unwrap();
    assert_eq!(p.dropped, vec!["E".to_string()]);
    let p = parse_answer(
        "Answer: \"Check the regulator's filing database\"",
        &l,
        &t,
        false,
    )
    .unwrap();
    assert_eq!(p.how, "option_text");
}
