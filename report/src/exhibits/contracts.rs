//! Tables E1–E3: Appendix E's contracts as our request code (`c2s_protocol::prompts`) renders
//! and our scorer (`c2s_protocol::scoring`) classifies them, no model call: E1 Serial's and
//! TeacherForced's states for one item and position; E2 the six T0–T2 system messages; E3
//! E.6's two requests and the class of each printed response.

use c2s_protocol::parse_answer;
use c2s_protocol::prompts::{
    instruction, render_request, state_value, system_message, text, StepState,
};
use c2s_records::{
    Answer, Arm, ArmSpec, Contract, Evidence, FinishReason, Item, Request, RequestOption,
    ResponseClass, Template,
};
use serde::{Deserialize, Serialize};

use super::engine::Frame;
use super::paper::PaperTable;

/// Table E1's example item (the prompts' unit-test item) and position: 39 × 15 = 585, the
/// second position, after a generated prefix that differs from the gold one.
const E1_ITEM: &str = r#"{"item_id":"e1","domain":"arithmetic","problem":"What is 39 * 15?","target":"585","candidates":["585","589","385","389","485","489","685","689"]}"#;
const E1_POSITION: u32 = 2;
const E1_GENERATED_PREFIX: &str = "4";
const E1_GOLD_PREFIX: &str = "5";

/// Table E1 as printed: each state field and its Serial and TeacherForced source.
pub static PAPER_E1: PaperTable<(String, String, String)> = PaperTable::new("tableE1");

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
    /// The paper's reading: it complies (the first) or fails as a bound code (the second).
    pub paper_reading: ResponseClass,
}

/// E.6's two requests (Table E3). The extracted table runs each choice's code, option name
/// and criterion together (`Ao_266a58860677`): the criterion is the last character, and the
/// ten criteria are then the ten digits, as a character contract over digits requires.
pub static PAPER_E3: PaperTable<PaperExample> = PaperTable::new("tableE3");

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

/// A state field of Table E1: its value (JSON, `absent` where none) in each arm's state.
#[derive(Serialize)]
struct E1Row {
    field: String,
    serial: String,
    forced: String,
}

/// Table E1: both arms' states for the example item, field by field, and their instructions.
pub fn table_e1() -> anyhow::Result<Frame> {
    let item = c2s_records::parse_item(E1_ITEM, &Default::default())?;
    let serial = e1_state(&item, Arm::Serial, E1_GENERATED_PREFIX);
    let forced = e1_state(&item, Arm::TeacherForced, E1_GOLD_PREFIX);
    let printed = PAPER_E1.rows()?;
    let keys: std::collections::BTreeSet<&String> = serial.keys().chain(forced.keys()).collect();
    let cell = |m: &serde_json::Map<String, serde_json::Value>, k: &str| {
        m.get(k).map_or("absent".to_string(), |v| v.to_string())
    };
    let rows: Vec<E1Row> = (keys.iter())
        .map(|k| E1Row {
            field: k.to_string(),
            serial: cell(&serial, k),
            forced: cell(&forced, k),
        })
        .collect();
    let same_keys =
        keys.len() == printed.len() && printed.iter().all(|(k, _, _)| keys.contains(&k));
    let question = instruction(&ArmSpec::new(Arm::Serial));
    let same_question = question == instruction(&ArmSpec::new(Arm::TeacherForced));
    Ok(Frame::new()
        .rows("ours", &rows)
        .var("problem", &item.problem)
        .var("position", E1_POSITION)
        .var("generated_prefix", E1_GENERATED_PREFIX)
        .var("gold_prefix", E1_GOLD_PREFIX)
        .var("same_keys", same_keys)
        .var("question", question)
        .var("same_question", same_question))
}

/// A system message of Table E2: its template, response representation and our text.
#[derive(Serialize)]
struct E2Row {
    template: Template,
    representation: &'static str,
    ours: &'static str,
}

/// Table E2: our six T0–T2 code/character system messages (the spec compares each with the
/// paper's verbatim text).
pub fn table_e2() -> anyhow::Result<Frame> {
    let mut rows = Vec::new();
    for template in [Template::T0, Template::T1, Template::T2] {
        for (representation, contract) in [
            ("Code", Contract::GeneratedCode),
            ("Character", Contract::GeneratedCharacter),
        ] {
            let mut spec = ArmSpec::new(Arm::GoldCopy).with_contract(contract);
            spec.template = Some(template);
            rows.push(E2Row {
                template,
                representation,
                ours: system_message(&spec).unwrap_or_default(),
            });
        }
    }
    Ok(Frame::new()
        .rows("ours", &rows)
        .var("question", text::READOUT_QUESTION))
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

/// One of E.6's requests as our code renders it, with our class of its printed response.
#[derive(Serialize)]
struct E3Row {
    label: String,
    system: String,
    state: String,
    class: String,
}

/// Table E3: E.6's two requests and our strict scorer's class of each printed response (the
/// spec sets each beside the paper's reading).
pub fn table_e3() -> anyhow::Result<Frame> {
    let mut rows = Vec::new();
    for example in PAPER_E3.rows()? {
        let request = e3_request(example)?;
        let answer = Answer::Generated {
            text: example.response.to_string(),
            finish_reason: FinishReason::Stop,
            truncated: false,
        };
        let parsed = parse_answer(&request, &answer, &example.required, true, false)?;
        rows.push(E3Row {
            label: example.label.to_string(),
            system: request.system.clone().unwrap_or_default(),
            state: request.state.clone(),
            class: format!("{:?}", parsed.class),
        });
    }
    Ok(Frame::new().rows("ours", &rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

    /// E1's caption: "only prefix sources differ"; E2's rows are the paper's verbatim text;
    /// E3's responses are classified as the paper describes them.
    #[test]
    fn ours_are_the_papers_contracts() {
        let e1 = laid_out("tableE1", table_e1().unwrap(), "Jev");
        for want in [
            "| current_prefix | \"4\" | \"5\" | generated_prefix / gold_prefix | no |",
            "| candidates |",
            "Our state fields are the paper's five: yes.",
            "Shared instruction: yes",
        ] {
            assert!(e1.contains(want), "missing {want:?} in\n{e1}");
        }
        assert_eq!(e1.matches("| no |").count(), 1, "{e1}");

        let e2 = laid_out("tableE2", table_e2().unwrap(), "Jev");
        assert_eq!(e2.matches("| yes |").count(), 6, "{e2}");

        let e3 = laid_out("tableE3", table_e3().unwrap(), "Jev");
        for want in [
            "| \"7\" (required 7) | StrictCorrect | StrictCorrect | yes |",
            "| \"F\" (required 9) | CorrectBoundCode | CorrectBoundCode | yes |",
            r#""copy_target":"7470""#,
        ] {
            assert!(e3.contains(want), "missing {want:?} in\n{e3}");
        }
    }
}
