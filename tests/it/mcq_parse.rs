//! The answer parser against a table of responses shaped like what models really write,
//! and against responses that copy the prompt or were cut off by the token limit.

use ragstats_core::mcq::parse::{parse_answer, parse_response, Context, Failure};
use ragstats_core::mcq::prompt::{render, PromptKind, Templates};
use ragstats_core::mcq::Task;

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
    // 53-59: "or" makes any list ambiguous, however it is spelled (issue #14, item 2)
    ("Answer: A, C, or D", 4, false, None),
    ("Answer: A, or B", 4, false, None),
    ("Answer: A, C, E, or F", 6, false, None),
    ("答案：A或B", 4, false, None),
    ("Answer: A, C, and D", 4, false, Some("ACD")),
    ("Answer: B. The other options are wrong or redundant.", 4, false, Some("B")),
    ("Answer: <letter>, <letter>", 4, false, None),
    // 60-64: no marker: option text only when it is the whole response (item 3)
    ("I should check where it moved.\nShould we search for Nordvik Energy revenue after Canberra?", 4, false, None),
    ("Search for Nordvik Energy revenue", 4, false, Some("B")),
    ("None", 4, true, Some("")),
    ("None of these pages gives the date, so more searching is needed.", 4, true, None),
    ("Chosen (worked example only): B, D", 4, false, None),
    // 65-70: answer-marker variants (item 5)
    ("Answer (A) is correct.", 4, false, Some("A")),
    ("The options B, D look tempting.\nAnswer (A) is correct.", 4, false, Some("A")),
    ("**Answer:** B", 4, false, Some("B")),
    ("The answer is: (B) and (D)", 4, false, Some("BD")),
    ("答案：B、D", 4, false, Some("BD")),
    ("Final answer - C", 4, false, Some("C")),
    // 71-72: asides after "answer" do not hide an earlier marker
    ("Answer: B\nI am sure of this answer (it is well supported).", 4, false, Some("B")),
    ("Answer: D\nThe answer - as the filing shows - is clear.", 4, false, Some("D")),
];

#[test]
fn parse_table() {
    assert_eq!(TABLE.len(), 72);
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

fn ctx_parse(text: &str, prompt: Option<&str>, finish: Option<&str>) -> Result<String, Failure> {
    let l = labels(4);
    let t: Vec<String> = TEXTS.iter().take(4).map(|s| s.to_string()).collect();
    let ctx = Context {
        prompt,
        finish_reason: finish,
    };
    parse_response(text, &l, &t, false, &ctx).map(|p| p.labels.concat())
}

/// Issue #14, item 4, and issue #30: a cut-off response is never read; the prompts ask
/// for the answer on the final line, and a cut reply has none.
#[test]
fn truncated_responses_are_never_read() {
    let len = Some("length");
    let truncated = |r: Result<String, Failure>| matches!(r, Err(Failure::Truncated(_)));
    // Echoed option labels at the cut (real responses of a 270M model).
    assert!(truncated(ctx_parse(
        "Let me go through the options.\nA.",
        None,
        len
    )));
    assert!(truncated(ctx_parse(
        "Looking at each page:\nC. [",
        None,
        len
    )));
    // The same text, finished normally, is a bare answer.
    assert_eq!(
        ctx_parse("Let me go through the options.\nA.", None, Some("stop")).unwrap(),
        "A"
    );
    // A marker whose line was cut may have lost letters.
    assert!(truncated(ctx_parse("Reasoning.\nAnswer: A, C", None, len)));
    // Nor does an answer line that ended before the cut count (issue #30: a weak model's
    // cut replies put `Answer:` lines inside echoed prompts and invented Q&A).
    for text in [
        "Answer: B\nBecause the regulator",
        "\\boxed{B} since the",
        "Answer:\nB, D\nThe rest",
    ] {
        assert!(truncated(ctx_parse(text, None, len)), "{text}");
        assert!(ctx_parse(text, None, Some("stop")).is_ok(), "{text}");
    }
    // Unknown finish reason: read as usual.
    assert_eq!(
        ctx_parse("Reasoning.\nAnswer: A, C", None, None).unwrap(),
        "AC"
    );
}

/// Issue #14, item 1: the prompt's own text, fed back, is never an answer.
#[test]
fn every_template_fed_back_is_a_parse_failure() {
    let t = Templates::builtin();
    let opts: Vec<(String, String)> = TEXTS
        .iter()
        .take(4)
        .enumerate()
        .map(|(i, s)| (((b'A' + i as u8) as char).to_string(), s.to_string()))
        .collect();
    let l = labels(4);
    let texts: Vec<String> = TEXTS.iter().take(4).map(|s| s.to_string()).collect();
    for kind in [PromptKind::Bare, PromptKind::Informative] {
        for task in Task::ALL {
            let (tpl, src) = t.get(kind, task);
            for allow_empty in [false, true] {
                let prompt = render(
                    tpl,
                    "Which step?",
                    "Step 1: searched.",
                    "Choose.",
                    &opts,
                    allow_empty,
                );
                for text in [tpl, prompt.as_str()] {
                    let got = parse_answer(text, &l, &texts, allow_empty);
                    assert!(got.is_err(), "{src} fed back parsed as {got:?}");
                    let ctx = Context {
                        prompt: Some(&prompt),
                        finish_reason: Some("stop"),
                    };
                    let got = parse_response(text, &l, &texts, allow_empty, &ctx);
                    assert!(got.is_err(), "{src} fed back parsed as {got:?}");
                }
                // The format lines alone, echoed as the reply.
                for line in prompt.lines().filter(|x| x.contains("Answer:")) {
                    let got = parse_response(
                        line,
                        &l,
                        &texts,
                        allow_empty,
                        &Context {
                            prompt: Some(&prompt),
                            finish_reason: None,
                        },
                    );
                    if line.trim() != "Answer: none" {
                        assert!(got.is_err(), "{src}: {line:?} parsed as {got:?}");
                    }
                }
            }
        }
    }
}

/// A template with concrete example letters (as the built-in ones had): the copied example
/// is refused when the prompt is known, and read when it is not.
#[test]
fn an_answer_copied_from_the_prompt_is_refused() {
    let prompt = "Options...\nEnd with a final line, for example `Answer: A, C`.";
    let e = ctx_parse("I think so.\nAnswer: A, C", Some(prompt), None).unwrap_err();
    assert!(
        matches!(&e, Failure::Unreadable(m) if m.contains("copies the prompt")),
        "{e:?}"
    );
    assert_eq!(
        ctx_parse("I think so.\nAnswer: A, C", None, None).unwrap(),
        "AC"
    );
    // Another answer is the model's own.
    assert_eq!(ctx_parse("Answer: A, D", Some(prompt), None).unwrap(), "AD");
    // A whole marker line of the prompt, copied.
    let prompt = "Answer: B\nis how a reply ends.";
    assert!(ctx_parse("Answer: B", Some(prompt), None).is_err());
    // "Answer: none" in the empty rule is a format, not an example: it stays an answer.
    let l = labels(4);
    let texts: Vec<String> = TEXTS.iter().take(4).map(|s| s.to_string()).collect();
    let prompt = "If no option qualifies, the final line must be `Answer: none`.";
    let ctx = Context {
        prompt: Some(prompt),
        finish_reason: None,
    };
    assert_eq!(
        parse_response("Answer: none", &l, &texts, true, &ctx)
            .unwrap()
            .labels,
        Vec::<String>::new()
    );
}

#[test]
fn or_is_named_as_the_reason() {
    let l = labels(6);
    let e = parse_answer("Answer: A, C, E, or F", &l, &l, false).unwrap_err();
    assert!(e.contains("\"or\""), "{e}");
}
