//! The plan audit of a candidate-coverage run: "An independent plan audit verifies the 889
//! cases, 23,932 requests, 10,188 pairs, matched descriptions and ordering across name
//! variants, and exclusion of pilot and cross-split duplicate texts."
//!
//! [`plan_audit`] renders every request of every case under a decision plan, independently of
//! the run's dataflow, and counts what the document counts (cases, requests, present/absent
//! pairs, test requests) next to the document's own totals, and checks what it checks:
//!
//! - **name variants**: the natural and the neutral request of a set offer the same labels in
//!   the same order with the same descriptions, the same text and the same instruction;
//! - **pairs**: a present set and its absent twin differ in one slot, the reference's, and
//!   each names the other's differing option as its closing context (the pair is closed
//!   together);
//! - **none last**: the none option, where offered, is the last option and only there;
//! - **catalogue metadata**: a request holds the question, the options (`name` and
//!   `description` only, as the catalogue gives them), the response format and the text, and
//!   nothing else of the catalogue (its `text_kind`, `source`, or label ids under neutral
//!   names);
//! - **duplicates**: case ids, and normalized texts within a task, seen twice; a normalized
//!   text in both splits is a cross-split duplicate. There is no pilot set here, so the pilot
//!   exclusion has nothing to check.
//!
//! The planned decisions of every case are kept (grouped by task, split and spec list), so
//! that `choice2seq coverage` can tell an incomplete collection from a complete one.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use c2s_records::{
    CoverageCase, CoverageCatalogue, CoverageSize, CoverageSplit, DecisionSpec, NameVariant,
    Request, SetKind, NONE_LABEL,
};

use crate::coverage::{decision_specs, render_coverage_request, QUESTION, RESPONSE_FORMAT};

/// The file name of the plan audit in a coverage run directory.
pub const PLAN_AUDIT_FILE: &str = "coverage_plan_audit.json";

/// The document's own totals, each with the sentence that states it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentTotal {
    /// What is counted, named as the audit's own field (`cases`, `requests`, `pairs`,
    /// `test_requests`).
    pub what: String,
    /// The document's number.
    pub value: u64,
    /// The document's sentence that states it, verbatim.
    pub quote: String,
}

/// The document's totals (over its four tasks and both models' shared requests).
pub fn document_totals() -> Vec<DocumentTotal> {
    let audit = "An independent plan audit verifies the 889 cases, 23,932 requests, 10,188 pairs";
    [
        ("cases", 889, audit),
        ("requests", 23_932, audit),
        ("pairs", 10_188, audit),
        (
            "test_requests",
            15_852,
            "Exact Laya tokenizer/sequence replay for all 15,852 test requests",
        ),
    ]
    .into_iter()
    .map(|(what, value, quote)| DocumentTotal {
        what: what.to_string(),
        value,
        quote: quote.to_string(),
    })
    .collect()
}

/// Counts of one task's plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskPlan {
    /// The task's name.
    pub task: String,
    /// Runnable calibration-split cases.
    pub calibration_cases: u64,
    /// Runnable test-split cases.
    pub test_cases: u64,
    /// Requests rendered, every split and spec.
    pub requests: u64,
    /// Requests rendered for test-split cases.
    pub test_requests: u64,
    /// Present/absent request pairs (a case, size, name variant and none choice).
    pub pairs: u64,
    /// Requests over the full label set (test cases, when the plan asks for it).
    pub full_set_requests: u64,
    /// Ordinary sizes planned (all_but_reference resolved).
    pub ks: Vec<usize>,
}

/// Violations found by the checks, each a count; `examples` names the first few.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanChecks {
    /// Natural/neutral request pairs that differ in more than the option names.
    pub name_variant_mismatches: u64,
    /// Present/absent pairs that do not differ in the reference's slot alone, or do not
    /// name each other's differing option as closing context.
    pub pair_mismatches: u64,
    /// Requests whose none option is missing, repeated, not last, or offered unasked.
    pub none_not_last: u64,
    /// Requests that show more or other than the question, options, response format and
    /// text ([`metadata_problem`]).
    pub metadata_leaks: u64,
    /// Case ids seen again (the repeat is skipped).
    pub duplicate_case_ids: u64,
    /// Normalized texts of one task held by more than one case.
    pub duplicate_texts: u64,
    /// Of those, texts held by cases of both splits.
    pub cross_split_duplicate_texts: u64,
    /// The first violations found, described (at most ten).
    pub examples: Vec<String>,
}

impl PlanChecks {
    /// Every check passed.
    pub fn clean(&self) -> bool {
        self.name_variant_mismatches == 0
            && self.pair_mismatches == 0
            && self.none_not_last == 0
            && self.metadata_leaks == 0
            && self.duplicate_case_ids == 0
            && self.duplicate_texts == 0
            && self.cross_split_duplicate_texts == 0
    }

    fn note(&mut self, example: String) {
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(example);
        }
    }
}

const MAX_EXAMPLES: usize = 10;

/// Cases of one task and split that plan the same decisions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedGroup {
    /// The cases' task.
    pub task: String,
    /// The cases' split.
    pub split: CoverageSplit,
    /// Decision spec labels (`present/k4/natural/none`).
    pub specs: Vec<String>,
    /// The case ids, in input order.
    pub cases: Vec<String>,
}

/// The plan audit (what `coverage_plan_audit.json` holds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanAudit {
    /// Runnable cases, over every task.
    pub cases: u64,
    /// Requests rendered, over every task.
    pub requests: u64,
    /// Requests of test-split cases, over every task.
    pub test_requests: u64,
    /// Present/absent request pairs, over every task.
    pub pairs: u64,
    /// Each task's counts, by task name.
    pub tasks: Vec<TaskPlan>,
    /// The document's totals to read beside ours (its tasks and sample are not ours).
    pub document: Vec<DocumentTotal>,
    /// What the checks found.
    pub checks: PlanChecks,
    /// Cases that cannot run (invalid, or no catalogue): (case id, why). They go to
    /// `rejects/` in a run.
    pub unrunnable: Vec<(String, String)>,
    /// The planned decisions, cases grouped by task, split and spec list.
    pub planned: Vec<PlannedGroup>,
}

impl PlanAudit {
    /// Every planned (case id, spec label).
    pub fn planned_decisions(&self) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for g in &self.planned {
            for c in &g.cases {
                out.entry(c.as_str())
                    .or_default()
                    .extend(g.specs.iter().map(String::as_str));
            }
        }
        out
    }
}

/// The duplicate key of a text (as the bank builder's): lowercased, whitespace runs collapsed
/// to one space, trimmed.
pub fn normalize_text(text: &str) -> String {
    text.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the decision plan of a run is (the `[coverage]` settings).
#[derive(Debug, Clone)]
pub struct PlanSettings<'a> {
    /// The ordinary candidate-set sizes (resolved per task).
    pub ks: &'a [CoverageSize],
    /// The name variants every set is asked under.
    pub names: &'a [NameVariant],
    /// The none choices every set is asked under (with and/or without the none option).
    pub none: &'a [bool],
    /// Whether test cases are also asked over the full label set.
    pub full_set: bool,
}

/// Render every request of `cases` under `plan` and audit them (see the module docs).
pub fn plan_audit(
    cases: &[CoverageCase],
    catalogues: &[CoverageCatalogue],
    plan: &PlanSettings<'_>,
) -> PlanAudit {
    let mut checks = PlanChecks::default();
    let mut tasks: BTreeMap<String, TaskPlan> = BTreeMap::new();
    let mut unrunnable = Vec::new();
    let mut groups: BTreeMap<(String, CoverageSplit, Vec<String>), Vec<String>> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    let mut texts: BTreeMap<(String, String), Vec<(CoverageSplit, String)>> = BTreeMap::new();
    for case in cases {
        if !ids.insert(case.case_id.as_str()) {
            checks.duplicate_case_ids += 1;
            checks.note(format!("case id `{}` appears twice", case.case_id));
            continue;
        }
        let Some(cat) = catalogues.iter().find(|c| c.task == case.task) else {
            unrunnable.push((
                case.case_id.clone(),
                format!("no catalogue for task `{}`", case.task),
            ));
            continue;
        };
        if let Err(e) = case.validate(cat) {
            unrunnable.push((case.case_id.clone(), e.to_string()));
            continue;
        }
        texts
            .entry((case.task.clone(), normalize_text(&case.text)))
            .or_default()
            .push((case.split, case.case_id.clone()));
        let specs = decision_specs(case, cat, plan.ks, plan.names, plan.none, plan.full_set);
        let mut requests: BTreeMap<DecisionSpec, Request> = BTreeMap::new();
        for spec in &specs {
            match render_coverage_request(case, cat, spec) {
                Ok(r) => {
                    requests.insert(*spec, r);
                }
                Err(e) => unrunnable.push((case.case_id.clone(), e.to_string())),
            }
        }
        let t = tasks.entry(case.task.clone()).or_insert_with(|| TaskPlan {
            task: case.task.clone(),
            ks: plan
                .ks
                .iter()
                .map(|k| k.resolve(cat.labels.len()))
                .collect(),
            ..TaskPlan::default()
        });
        match case.split {
            CoverageSplit::Calibration => t.calibration_cases += 1,
            CoverageSplit::Test => t.test_cases += 1,
        }
        let n = requests.len() as u64;
        t.requests += n;
        if case.split == CoverageSplit::Test {
            t.test_requests += n;
        }
        for (spec, r) in &requests {
            if spec.set == SetKind::Full {
                t.full_set_requests += 1;
            }
            check_request(case, cat, spec, r, &mut checks);
            if spec.set == SetKind::Present {
                let twin = DecisionSpec {
                    set: SetKind::Absent,
                    ..*spec
                };
                if let Some(a) = requests.get(&twin) {
                    t.pairs += 1;
                    check_pair(case, cat, spec, r, a, &mut checks);
                }
            }
            if spec.names == NameVariant::Natural {
                let other = DecisionSpec {
                    names: NameVariant::Neutral,
                    ..*spec
                };
                if let Some(n) = requests.get(&other) {
                    check_name_variants(case, spec, r, n, &mut checks);
                }
            }
        }
        groups
            .entry((
                case.task.clone(),
                case.split,
                requests.keys().map(DecisionSpec::label).collect(),
            ))
            .or_default()
            .push(case.case_id.clone());
    }
    for ((task, _), seen) in &texts {
        if seen.len() > 1 {
            checks.duplicate_texts += 1;
            let splits: BTreeSet<CoverageSplit> = seen.iter().map(|s| s.0).collect();
            if splits.len() > 1 {
                checks.cross_split_duplicate_texts += 1;
            }
            let ids: Vec<&str> = seen.iter().map(|s| s.1.as_str()).collect();
            checks.note(format!(
                "{task}: one normalized text in cases {}",
                ids.join(", ")
            ));
        }
    }
    let tasks: Vec<TaskPlan> = tasks.into_values().collect();
    PlanAudit {
        cases: tasks
            .iter()
            .map(|t| t.calibration_cases + t.test_cases)
            .sum(),
        requests: tasks.iter().map(|t| t.requests).sum(),
        test_requests: tasks.iter().map(|t| t.test_requests).sum(),
        pairs: tasks.iter().map(|t| t.pairs).sum(),
        tasks,
        document: document_totals(),
        checks,
        unrunnable,
        planned: groups
            .into_iter()
            .map(|((task, split, specs), cases)| PlannedGroup {
                task,
                split,
                specs,
                cases,
            })
            .collect(),
    }
}

fn user_json(r: &Request) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_str::<Value>(&r.user) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// One request shows the question, the options as the catalogue names and describes them,
/// the response format and the text, and nothing else of the catalogue; none is last.
fn check_request(
    case: &CoverageCase,
    cat: &CoverageCatalogue,
    spec: &DecisionSpec,
    r: &Request,
    checks: &mut PlanChecks,
) {
    let at = format!("{} {}", case.case_id, spec.label());
    let nones = r.options.iter().filter(|o| o.value == NONE_LABEL).count();
    let none_ok = if spec.with_none {
        nones == 1 && r.options.last().is_some_and(|o| o.value == NONE_LABEL)
    } else {
        nones == 0
    };
    if !none_ok {
        checks.none_not_last += 1;
        checks.note(format!("{at}: the none option is not last (once)"));
    }
    if let Some(why) = metadata_problem(case, cat, spec, r) {
        checks.metadata_leaks += 1;
        checks.note(format!("{at}: {why}"));
    }
}

/// Why a request shows more (or other) than the text and the options' names and
/// descriptions, if it does.
pub fn metadata_problem(
    case: &CoverageCase,
    cat: &CoverageCatalogue,
    spec: &DecisionSpec,
    r: &Request,
) -> Option<String> {
    let Some(user) = user_json(r) else {
        return Some("the user message is not a JSON object".into());
    };
    let keys: Vec<&str> = user.keys().map(String::as_str).collect();
    if keys != ["question", "options", "response_format", "text"] {
        return Some(format!("user message keys {keys:?}"));
    }
    if user["question"] != QUESTION || r.instruction != QUESTION {
        return Some(format!("question `{}`", user["question"]));
    }
    if user["response_format"] != RESPONSE_FORMAT {
        return Some(format!("response format `{}`", user["response_format"]));
    }
    if user["text"] != case.text.as_str() {
        return Some("the text is not the case's".into());
    }
    let index = cat.index();
    let Some(options) = user["options"].as_array() else {
        return Some("options is not a list".into());
    };
    if options.len() != r.options.len() {
        return Some(format!(
            "{} options shown, {} scored",
            options.len(),
            r.options.len()
        ));
    }
    for (shown, o) in options.iter().zip(&r.options) {
        let Some(entry) = index.get(o.value.as_str()) else {
            return Some(format!("`{}` is not in the catalogue", o.value));
        };
        let expected = serde_json::json!({
            "name": spec.names.name_of(entry),
            "description": entry.description,
        });
        let keys: Vec<&str> = shown
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if keys != ["name", "description"] || *shown != expected || o.code != expected["name"] {
            return Some(format!("option `{}` shows {shown}", o.value));
        }
    }
    for (what, value) in [("text_kind", &cat.text_kind), ("source", &cat.source)] {
        if !value.trim().is_empty() && r.user.contains(value.as_str()) {
            return Some(format!("the catalogue's {what} is in the request"));
        }
    }
    // With the structure fixed above, a label id under neutral names could only come in
    // through the case's own text.
    None
}

/// "Present/absent candidate sets have the same ordinary count" and differ only by the
/// reference; each names the other's differing option as its closing context.
fn check_pair(
    case: &CoverageCase,
    cat: &CoverageCatalogue,
    spec: &DecisionSpec,
    present: &Request,
    absent: &Request,
    checks: &mut PlanChecks,
) {
    let at = format!("{} {}", case.case_id, spec.label());
    let differing: Vec<usize> = (0..present.options.len().max(absent.options.len()))
        .filter(|&i| present.options.get(i) != absent.options.get(i))
        .collect();
    let ok = present.options.len() == absent.options.len()
        && differing.len() == 1
        && present.options[differing[0]].value == case.reference
        && !absent.values().contains(&case.reference.as_str());
    let index = cat.index();
    let name = |label: &str| {
        index
            .get(label)
            .map(|e| spec.names.name_of(e).to_string())
            .unwrap_or_default()
    };
    let closing_ok = ok
        && present.closing_context == [name(&absent.options[differing[0]].value)]
        && absent.closing_context == [name(&case.reference)];
    if !ok {
        checks.pair_mismatches += 1;
        checks.note(format!(
            "{at}: present and absent differ in slots {differing:?}, not only the reference's"
        ));
    } else if !closing_ok {
        checks.pair_mismatches += 1;
        checks.note(format!(
            "{at}: the pair does not name each other's differing option for the closing rule"
        ));
    }
}

/// "Natural and neutral names retain the same option descriptions and order".
fn check_name_variants(
    case: &CoverageCase,
    spec: &DecisionSpec,
    natural: &Request,
    neutral: &Request,
    checks: &mut PlanChecks,
) {
    let descriptions = |r: &Request| -> Vec<Value> {
        user_json(r)
            .and_then(|u| u.get("options").and_then(Value::as_array).cloned())
            .unwrap_or_default()
            .iter()
            .map(|o| o["description"].clone())
            .collect()
    };
    let text = |r: &Request| user_json(r).map(|u| (u["text"].clone(), u["question"].clone()));
    if natural.values() != neutral.values()
        || descriptions(natural) != descriptions(neutral)
        || text(natural) != text(neutral)
    {
        checks.name_variant_mismatches += 1;
        checks.note(format!(
            "{} {}: natural and neutral requests differ beyond the names",
            case.case_id,
            spec.label()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::{CandidateSets, CoverageLabel};

    fn catalogue() -> CoverageCatalogue {
        let label = |l: &str, n: usize| CoverageLabel {
            label: l.into(),
            natural: l.into(),
            neutral: format!("class_{n}"),
            description: format!("Texts about: {l}."),
        };
        CoverageCatalogue {
            task: "t".into(),
            text_kind: "secret kind".into(),
            labels: vec![label("a", 3), label("b", 1), label("c", 4), label("d", 2)],
            none: CoverageLabel {
                label: NONE_LABEL.into(),
                natural: "none".into(),
                neutral: "none".into(),
                description: "None of the other options fits the text.".into(),
            },
            source: "secret source".into(),
        }
    }

    fn case(id: &str, split: CoverageSplit, text: &str) -> CoverageCase {
        CoverageCase {
            case_id: id.into(),
            task: "t".into(),
            split,
            text: text.into(),
            reference: "b".into(),
            sets: vec![
                CandidateSets {
                    k: 2,
                    present: vec!["b".into(), "d".into()],
                    absent: vec!["c".into(), "d".into()],
                },
                CandidateSets {
                    k: 3,
                    present: vec!["a".into(), "b".into(), "d".into()],
                    absent: vec!["a".into(), "c".into(), "d".into()],
                },
            ],
            origin: String::new(),
        }
    }

    fn settings() -> (Vec<CoverageSize>, Vec<NameVariant>, Vec<bool>) {
        (
            vec![CoverageSize::Fixed(2), CoverageSize::AllButReference],
            vec![NameVariant::Natural, NameVariant::Neutral],
            vec![false, true],
        )
    }

    #[test]
    fn a_clean_plan_counts_cases_requests_and_pairs() {
        let (ks, names, none) = settings();
        let plan = PlanSettings {
            ks: &ks,
            names: &names,
            none: &none,
            full_set: true,
        };
        let cases = [
            case("t:calibration:0", CoverageSplit::Calibration, "what is b"),
            case("t:test:0", CoverageSplit::Test, "where is b"),
        ];
        let a = plan_audit(&cases, &[catalogue()], &plan);
        assert!(a.checks.clean(), "{:?}", a.checks);
        assert_eq!(a.cases, 2);
        // Per case: 2 sizes × 2 sets × 2 names × 2 none = 16; the test case adds 2 full sets.
        assert_eq!(a.requests, 16 + 18);
        assert_eq!(a.test_requests, 18);
        assert_eq!(a.pairs, 2 * 2 * 2 * 2);
        assert_eq!(a.tasks[0].ks, [2, 3]);
        assert_eq!(a.document[0].value, 889);
        let planned = a.planned_decisions();
        assert_eq!(planned["t:test:0"].len(), 18);
        assert!(planned["t:test:0"].contains("absent/k3/neutral/none"));
    }

    #[test]
    fn duplicates_and_bad_cases_are_counted() {
        let (ks, names, none) = settings();
        let plan = PlanSettings {
            ks: &ks,
            names: &names,
            none: &none,
            full_set: false,
        };
        let mut bad = case("t:test:9", CoverageSplit::Test, "x");
        bad.reference = "zz".into();
        let cases = [
            case("t:calibration:0", CoverageSplit::Calibration, "What  is B"),
            case("t:test:0", CoverageSplit::Test, "what is b"),
            case("t:test:0", CoverageSplit::Test, "again"),
            bad,
        ];
        let a = plan_audit(&cases, &[catalogue()], &plan);
        assert_eq!(a.checks.duplicate_case_ids, 1);
        assert_eq!(a.checks.duplicate_texts, 1);
        assert_eq!(a.checks.cross_split_duplicate_texts, 1);
        assert_eq!(a.unrunnable.len(), 1);
        assert_eq!(a.unrunnable[0].0, "t:test:9");
        assert!(!a.checks.clean());
    }

    /// The check that would have caught the provenance leak: a request quoting the
    /// catalogue's text kind is flagged.
    #[test]
    fn catalogue_bookkeeping_in_a_request_is_a_leak() {
        let cat = catalogue();
        let c = case("t:test:0", CoverageSplit::Test, "what is b");
        let spec = DecisionSpec {
            set: SetKind::Present,
            k: 2,
            names: NameVariant::Neutral,
            with_none: true,
        };
        let r = render_coverage_request(&c, &cat, &spec).unwrap();
        assert_eq!(metadata_problem(&c, &cat, &spec, &r), None);
        let mut leaked = r.clone();
        leaked.user = leaked.user.replace(
            QUESTION,
            &format!("Classify the text, one of {}. Select", cat.text_kind),
        );
        leaked.instruction = QUESTION.into();
        assert!(metadata_problem(&c, &cat, &spec, &leaked).is_some());
        let mut extra = r.clone();
        extra.user = extra.user.replacen("{", "{\"task\":\"t\",", 1);
        assert!(metadata_problem(&c, &cat, &spec, &extra)
            .unwrap()
            .contains("keys"));
        let mut label = r;
        label.user = label.user.replacen("\"class_1\"", "\"b\"", 1);
        assert!(metadata_problem(&c, &cat, &spec, &label).is_some());
    }
}
