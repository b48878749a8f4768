//! Tables E1–E3: the contracts of Appendix E, reproduced from the code that renders and
//! scores every request (`c2s_protocol::prompts`, `c2s_protocol::scoring`), beside the paper's
//! text. They need no model call: each table renders requests for the paper's own examples and
//! compares ours with the paper's, field by field.
//!
//! - Table E1: "Serial and TeacherForced share instructions and canonical JSON state; only
//!   prefix sources differ." Both arms' states for one item and position, key by key, and
//!   their instructions.
//! - Table E2: "T0–T2 preserve the target, criterion bindings and user question. Verbatim
//!   code/character instructions differ in response representation." The six system messages,
//!   ours against the paper's text.
//! - Table E3: "Correct criterion identification does not guarantee output compliance. The
//!   left response emits the required character; the right emits its bound code, which fails
//!   the same character contract." The two E.6 requests (state and ordered choices as printed)
//!   and how our scorer classifies their printed responses.

use c2s_protocol::parse_answer;
use c2s_protocol::prompts::{
    instruction, render_request, state_value, system_message, text, StepState,
};
use c2s_records::{
    Answer, Arm, ArmSpec, Contract, Evidence, FinishReason, Item, Request, RequestOption,
    ResponseClass, Template,
};
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use crate::report::doc::{Doc, Table};

/// Table E1's example item (the prompts' unit-test item) and position: 39 × 15 = 585, the
/// second position, after a generated prefix that differs from the gold one.
const E1_ITEM: &str = r#"{"item_id":"e1","domain":"arithmetic","problem":"What is 39 * 15?","target":"585","candidates":["585","589","385","389","485","489","685","689"]}"#;
const E1_POSITION: u32 = 2;
const E1_GENERATED_PREFIX: &str = "4";
const E1_GOLD_PREFIX: &str = "5";

/// Table E1 as printed: each state field and its source under Serial (generated prefix) and
/// TeacherForced (gold prefix).
pub static PAPER_E1: PaperTable<(String, String, String)> = PaperTable::new("tableE1");

/// Table E2 as printed (E.5): template, response representation, verbatim system message.
pub static PAPER_E2: PaperTable<(Template, String, String)> = PaperTable::new("tableE2");

/// One of E.6's complete requests as printed: its template, copy target, queried position,
/// ordered choices (code, criterion; the option names are the paper's hashes), the printed
/// response, the required character and the paper's reading of it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperExample {
    /// The example's caption in our table (evidence, readout and template).
    pub label: String,
    /// The readout template (T0–T2) of the request's system message.
    pub template: Template,
    /// The supplied plan the request copies from (a digit string).
    pub copy_target: String,
    /// The queried position in the copy target, 1-based.
    pub query_position: u32,
    /// The ten ordered choices as (code, criterion character), codes `A`–`J`.
    pub choices: [(String, String); 10],
    /// The model response the paper prints.
    pub response: String,
    /// The character the contract requires at the queried position.
    pub required: String,
    /// What the paper says of the response: it complies (the first) or fails as a bound code
    /// (the second).
    pub paper_reading: ResponseClass,
}

/// E.6's two requests (Table E3). The extracted table runs each choice's code, option name
/// and criterion together (`Ao_266a58860677`): the criterion is the last character, and the
/// ten criteria are then the ten digits, as a character contract over digits requires.
pub static PAPER_E3: PaperTable<PaperExample> = PaperTable::new("tableE3");

fn example_item() -> anyhow::Result<Item> {
    Ok(c2s_records::parse_item(E1_ITEM, &Default::default())?)
}

/// The state object of `arm` for Table E1's item at its position after `prefix`.
fn e1_state(item: &Item, arm: Arm, prefix: &str) -> serde_json::Map<String, serde_json::Value> {
    let step = StepState {
        position: Some(E1_POSITION),
        prefix: Some(prefix),
        ..StepState::default()
    };
    match state_value(item, &ArmSpec::new(arm), &step) {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// Whether two texts agree, as a cell.
fn agree(same: bool) -> String {
    if same { "yes" } else { "no" }.to_string()
}

/// Table E1: Serial's and TeacherForced's rendered states for the example item, field by
/// field against the paper's, and whether they share the instruction.
pub fn table_e1() -> anyhow::Result<Doc> {
    let item = example_item()?;
    let serial = e1_state(&item, Arm::Serial, E1_GENERATED_PREFIX);
    let forced = e1_state(&item, Arm::TeacherForced, E1_GOLD_PREFIX);
    let mut doc =
        Doc::new("Table E1: Serial and TeacherForced share instructions and canonical JSON state");
    doc.p(format!(
        "Both states of the item \"{}\" at position {E1_POSITION}: Serial after the generated \
         prefix \"{E1_GENERATED_PREFIX}\", TeacherForced after the gold prefix \
         \"{E1_GOLD_PREFIX}\" (rendered by the request code every run uses).",
        item.problem
    ));
    let printed = PAPER_E1.rows()?;
    let mut keys: Vec<&String> = serial.keys().chain(forced.keys()).collect();
    keys.sort();
    keys.dedup();
    let rows = keys
        .iter()
        .map(|k| {
            let cell = |m: &serde_json::Map<String, serde_json::Value>| {
                m.get(*k).map_or("absent".to_string(), |v| v.to_string())
            };
            let paper = printed.iter().find(|(key, _, _)| key == *k);
            vec![
                k.to_string(),
                cell(&serial),
                cell(&forced),
                paper.map_or("not in the paper's table".to_string(), |p| {
                    format!("{} / {}", p.1, p.2)
                }),
                agree(serial.get(*k) == forced.get(*k)),
            ]
        })
        .collect();
    let same_keys =
        keys.len() == printed.len() && printed.iter().all(|(k, _, _)| keys.contains(&k));
    let serial_question = instruction(&ArmSpec::new(Arm::Serial));
    let forced_question = instruction(&ArmSpec::new(Arm::TeacherForced));
    doc.table(Table {
        text_columns: 5,
        header: [
            "State field",
            "Serial (generated prefix)",
            "TeacherForced (gold prefix)",
            "Paper: Serial / TeacherForced source",
            "Same value",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            format!(
                "Our state fields are the paper's five: {}. Keys are in canonical (sorted) order.",
                agree(same_keys)
            ),
            format!(
                "Shared instruction: {} (\"{serial_question}\").",
                agree(serial_question == forced_question)
            ),
        ],
    });
    Ok(doc)
}

/// Table E2: our six T0–T2 code/character system messages against the paper's verbatim text.
pub fn table_e2() -> anyhow::Result<Doc> {
    let mut doc = Doc::new("Table E2: T0–T2 system messages (E.5)");
    doc.p(
        "The six verbatim system messages of the readout grid, ours (the text every readout \
         request carries) against the paper's.",
    );
    let rows = PAPER_E2
        .rows()?
        .iter()
        .map(|(template, representation, paper)| {
            let template = *template;
            let contract = if representation == "Code" {
                Contract::GeneratedCode
            } else {
                Contract::GeneratedCharacter
            };
            let mut spec = ArmSpec::new(Arm::GoldCopy).with_contract(contract);
            spec.template = Some(template);
            let ours = system_message(&spec).unwrap_or_default();
            vec![
                format!("{template:?}"),
                representation.to_string(),
                ours.to_string(),
                agree(ours == paper.as_str()),
            ]
        })
        .collect();
    doc.table(Table {
        text_columns: 4,
        header: ["Template", "Response", "Ours", "Identical to the paper's"]
            .map(String::from)
            .to_vec(),
        rows,
        notes: vec![format!(
            "Shared user question (all six contracts): \"{}\".",
            text::READOUT_QUESTION
        )],
    });
    Ok(doc)
}

/// The E.6 request `example` rendered by our code: an Indexed readout with character output
/// under its template, the paper's ordered choices, and its queried position.
fn e3_request(example: &PaperExample) -> anyhow::Result<Request> {
    // An item only carries the target here: a readout state shows no candidates, but an item
    // has eight, so the others vary the target's last digit.
    let (stem, last) = example.copy_target.split_at(example.copy_target.len() - 1);
    let last: u32 = last.parse()?;
    let candidates: Vec<String> = (0..8)
        .map(|d| format!("{stem}{}", (last + d) % 10))
        .collect();
    let item = c2s_records::parse_item(
        &serde_json::json!({
            "item_id": "e3", "domain": "arithmetic", "problem": "copy",
            "target": example.copy_target, "candidates": candidates,
        })
        .to_string(),
        &Default::default(),
    )?;
    let mut spec = ArmSpec::new(Arm::GoldCopy).with_contract(Contract::GeneratedCharacter);
    spec.template = Some(example.template);
    spec.evidence = Evidence::Indexed;
    let options: Vec<RequestOption> = example
        .choices
        .iter()
        .map(|(code, value)| RequestOption {
            code: code.to_string(),
            value: value.to_string(),
        })
        .collect();
    let step = StepState {
        position: Some(example.query_position),
        prefix: None,
        copy_target: Some(&example.copy_target),
        padding: None,
    };
    Ok(render_request(
        &item,
        &spec,
        example.query_position,
        &step,
        options,
        None,
    ))
}

/// Table E3: E.6's two requests rendered by our code, and our strict scorer's class of each
/// printed response beside the paper's reading.
pub fn table_e3() -> anyhow::Result<Doc> {
    let mut doc =
        Doc::new("Table E3: Correct criterion identification does not guarantee output compliance");
    doc.p(
        "E.6's two complete requests rendered by our code (Indexed evidence, character output, \
         the paper's ordered choices), and our strict scorer's class of each printed response \
         (no case repair, whitespace trimming or code mapping).",
    );
    let mut rows = Vec::new();
    for example in PAPER_E3.rows()? {
        let paper_class = example.paper_reading;
        let request = e3_request(example)?;
        let answer = Answer::Generated {
            text: example.response.to_string(),
            finish_reason: FinishReason::Stop,
            truncated: false,
        };
        let parsed = parse_answer(&request, &answer, &example.required, true, false)?;
        rows.push(vec![
            example.label.to_string(),
            request.system.clone().unwrap_or_default(),
            request.state.clone(),
            format!("\"{}\" (required {})", example.response, example.required),
            format!("{:?}", parsed.class),
            format!("{paper_class:?}"),
            agree(parsed.class == paper_class),
        ]);
    }
    doc.table(Table {
        text_columns: 7,
        header: [
            "Request",
            "System message",
            "State",
            "Response",
            "Our class",
            "The paper",
            "Same",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "The paper: the left response \"emits the required character\"; the right \"emits \
             its bound code, which fails the same character contract\" (a correct bound code, \
             E.5's failure taxonomy)."
                .into(),
        ],
    });
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// E1's caption: "only prefix sources differ"; E2's rows are the paper's verbatim text;
    /// E3's responses are classified as the paper describes them.
    #[test]
    fn ours_are_the_papers_contracts() {
        let e1 = table_e1().unwrap().markdown();
        for want in [
            "| current_prefix | \"4\" | \"5\" | generated_prefix / gold_prefix | no |",
            "| candidates |",
            "Our state fields are the paper's five: yes.",
            "Shared instruction: yes",
        ] {
            assert!(e1.contains(want), "missing {want:?} in\n{e1}");
        }
        assert_eq!(e1.matches("| no |").count(), 1, "{e1}");

        let e2 = table_e2().unwrap().markdown();
        assert_eq!(e2.matches("| yes |").count(), 6, "{e2}");

        let e3 = table_e3().unwrap().markdown();
        for want in [
            "| \"7\" (required 7) | StrictCorrect | StrictCorrect | yes |",
            "| \"F\" (required 9) | CorrectBoundCode | CorrectBoundCode | yes |",
            r#""copy_target":"7470""#,
        ] {
            assert!(e3.contains(want), "missing {want:?} in\n{e3}");
        }
    }
}
