//! The declared row sets' rules: what a spec may say, how metric rows become rows, how
//! trajectories are kept, grouped and summed, and the metric filters.

use c2s_records::{Domain, Metric};
use c2s_stats::MetricRow;
use minijinja::value::Value;

use super::{PanelRecords, SourceSpec};
use crate::exhibits::filters::environment;
use crate::exhibits::testing::{paired_rows, trajectory};

const LEXICAL: Option<Domain> = Some(Domain::Lexical);

fn spec(toml_text: &str) -> SourceSpec {
    toml::from_str(toml_text).expect("a source spec")
}

fn panels() -> Vec<String> {
    vec!["p".into(), "q".into()]
}

fn rows(source: &SourceSpec, panels: &[PanelRecords]) -> Vec<Value> {
    source.rows_of(panels, &environment()).expect("rows")
}

fn field(row: &Value, name: &str) -> Value {
    row.get_attr(name).expect("a field")
}

#[test]
fn a_spec_says_only_what_its_records_have() {
    let metrics_without_groups = spec("rows = 'ours'\nfrom = 'metrics'");
    let err = metrics_without_groups.validate(&panels()).unwrap_err();
    assert!(format!("{err}").contains("`groups`"), "{err}");
    // A misspelt metric or arm is an error, not a column of `–` or an empty table.
    let misspelt =
        spec("rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\nmetrics = ['scr', 'sccr']");
    let err = format!("{:#}", misspelt.validate(&panels()).unwrap_err());
    assert!(err.contains("`metrics`") && err.contains("sccr"), "{err}");
    let unknown_arm = spec(
        "rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\n\
         comparisons = ['Native/code vs Serial/Ful/code']",
    );
    let err = format!("{:#}", unknown_arm.validate(&panels()).unwrap_err());
    assert!(
        err.contains("`comparisons`") && err.contains("Ful"),
        "{err}"
    );
    let known = spec(
        "rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\nmetrics = ['position_accuracy_3']\n\
         comparisons = ['Native/code vs Serial/UnionFill/code', 'Serial/Full/code']",
    );
    known.validate(&panels()).unwrap();
    let trajectories_with_metrics = spec("rows = 'ours'\nfrom = 'trajectories'\nmetrics = ['scr']");
    let err = trajectories_with_metrics.validate(&panels()).unwrap_err();
    assert!(
        format!("{err}").contains("`metrics` is for metrics rows, not trajectories"),
        "{err}"
    );
    let metrics_with_sums =
        spec("rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\nsums = [['n', '1']]");
    assert!(metrics_with_sums.validate(&panels()).is_err());
    let foreign_panel = spec("rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\npanels = ['r']");
    let err = foreign_panel.validate(&panels()).unwrap_err();
    assert!(format!("{err}").contains("`r` is not among"), "{err}");
    let unknown_key = toml::from_str::<SourceSpec>("rows = 'ours'\nfrom = 'metrics'\ngroup = 'x'");
    assert!(unknown_key.is_err());
    assert!(toml::from_str::<SourceSpec>("rows = 'ours'\nfrom = 'requests'").is_err());
}

#[test]
fn a_metrics_row_is_a_group_with_its_metrics_and_its_panels_fields() {
    let mut metric_rows = paired_rows("m", "arithmetic", [2, 3, 0, 3], (0.1, 0.7));
    metric_rows.extend(paired_rows("a", "lexical", [1, 1, 1, 1], (0.2, 0.9)));
    let source = spec(
        "rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\nmetrics = ['both', 'scr', 'gain_rate']\n\
         fields = { p = { interface = 'code' } }\nsort = ['domain != \"math\"']",
    );
    let panel = PanelRecords {
        panel: "p".into(),
        metric_rows,
        trajectories: Vec::new(),
    };
    let got = rows(&source, &[panel]);
    assert_eq!(got.len(), 2);
    // Sorted math first, then the lexical group; without `sort` the model order (a, m).
    assert_eq!(field(&got[0], "model").as_str(), Some("m"));
    assert_eq!(field(&got[0], "domain").as_str(), Some("math"));
    assert_eq!(field(&got[0], "bank_domain").as_str(), Some("arithmetic"));
    assert_eq!(field(&got[0], "panel").as_str(), Some("p"));
    assert_eq!(field(&got[0], "interface").as_str(), Some("code"));
    let both = field(&got[0], "both");
    assert_eq!(field(&both, "numerator").as_i64(), Some(2));
    assert!(
        field(&got[0], "gain_rate").is_none(),
        "a metric the run lacks is none"
    );
    assert!(
        got[0].get_attr("length").unwrap().is_undefined(),
        "all lengths"
    );
}

#[test]
fn by_length_rows_and_comparisons() {
    let mut metric_rows = Vec::new();
    for length in [Some(3), Some(5), None] {
        let mut row = MetricRow::empty(0, "m", LEXICAL, length, "A vs B", Metric::Both);
        row.numerator = Some(1);
        metric_rows.push(row);
    }
    metric_rows.push(MetricRow::empty(
        0,
        "m",
        LEXICAL,
        None,
        "A vs C",
        Metric::Both,
    ));
    let panel = PanelRecords {
        panel: "q".into(),
        metric_rows,
        trajectories: Vec::new(),
    };
    let source = spec(
        "rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\nby_length = true\n\
         comparisons = ['A vs B']\nmetrics = ['both']",
    );
    let got = rows(&source, std::slice::from_ref(&panel));
    let lengths: Vec<i64> = (got.iter())
        .map(|r| field(r, "length").as_i64().unwrap())
        .collect();
    assert_eq!(lengths, [3, 5]);
    let kept = spec(
        "rows = 'ours'\nfrom = 'metrics'\ngroups = 'paired'\nwhere = \"comparison == 'A vs C'\"",
    );
    assert_eq!(rows(&kept, &[panel]).len(), 1);
}

#[test]
fn trajectories_are_kept_grouped_and_summed() {
    let mut ts = Vec::new();
    for (item, arm, correct, calls) in [
        ("i1", "Serial/Full/code", true, 3),
        ("i2", "Serial/Full/code", false, 4),
        ("i1", "Serial/UnionFill/code", true, 1),
        ("i1", "Native/code", true, 1),
    ] {
        let mut t = trajectory(item, "arithmetic", 3, arm, correct);
        t.calls = calls;
        ts.push(t);
    }
    let source = spec(
        "rows = 'ours'\nfrom = 'trajectories'\nwhere = \"arm != 'Native/code'\"\n\
         group_by = [['arm', 'arm'], ['domain', 'domain | domain']]\n\
         sums = [['correct', 'correct'], ['calls', 'calls'], ['half', 'calls / 2']]",
    );
    let panel = PanelRecords {
        panel: "p".into(),
        metric_rows: Vec::new(),
        trajectories: ts,
    };
    let got = rows(&source, &[panel]);
    assert_eq!(got.len(), 2, "Native left out, one group per arm");
    let full = &got[0];
    assert_eq!(field(full, "arm").as_str(), Some("Serial/Full/code"));
    assert_eq!(field(full, "domain").as_str(), Some("math"));
    assert_eq!(field(full, "n").as_i64(), Some(2));
    assert_eq!(
        field(full, "correct").as_i64(),
        Some(1),
        "a Boolean counts 1"
    );
    assert_eq!(field(full, "calls").as_i64(), Some(7));
    assert_eq!(f64::try_from(field(full, "half")).unwrap(), 3.5);
    let bad = spec("rows = 'ours'\nfrom = 'trajectories'\nsums = [['x', 'output']]");
    let panel = PanelRecords {
        panel: "p".into(),
        metric_rows: Vec::new(),
        trajectories: vec![trajectory("i9", "lexical", 2, "Native/code", true)],
    };
    let err = bad.rows_of(&[panel], &environment()).unwrap_err();
    assert!(format!("{err:#}").contains("item i9"), "{err:#}");
}

#[test]
fn the_metric_filters_print_as_the_reports_do() {
    let env = environment();
    let mut scr = MetricRow::empty(0, "m", LEXICAL, None, "A vs B", Metric::Scr);
    (scr.value, scr.numerator, scr.denominator) = (Some(0.4), Some(2), Some(5));
    (scr.ci_low, scr.ci_high) = (Some(0.1), Some(0.7));
    let mut dropped =
        MetricRow::empty(0, "m", LEXICAL, None, "A vs B", Metric::ScrBootstrapDropped);
    dropped.value = Some(3.0);
    let context = minijinja::context! { scr => Value::from_serialize(&scr), dropped => Value::from_serialize(&dropped), missing => () };
    let render = |t: &str| env.render_str(t, &context).unwrap();
    assert_eq!(render("{{ scr | estimate }}"), "40.0 [10.0, 70.0]");
    assert_eq!(
        render("{{ scr | estimate(dropped) }}"),
        "40.0 [10.0, 70.0]‡"
    );
    assert_eq!(
        render("{{ scr | ratio }}/{{ scr | numerator }}/{{ scr | denominator }}"),
        "2/5/2/5"
    );
    assert_eq!(render("{{ scr | value | pct }}"), "40.0");
    assert_eq!(
        render("{{ missing | estimate }} {{ missing | ratio }} {{ missing | numerator }}"),
        "– – –"
    );
}

#[test]
fn contrast_and_cell_rows_carry_their_fields_their_panel_and_its_fields() {
    use super::PanelTables;
    use c2s_stats::{CellRow, ContrastEstimate, ContrastRow};
    let contrast = |model: &str, name: &str, difference: f64| ContrastRow {
        model: model.into(),
        contrast: name.into(),
        family: Some("f".into()),
        estimate: ContrastEstimate {
            units: 12,
            incomplete_units: 0,
            compared_mean: None,
            reference_mean: None,
            difference: Some(difference),
            ci_low: None,
            ci_high: None,
            sign_p: None,
        },
        sign_p_holm: Some(0.01),
    };
    let panel = PanelTables {
        panel: "p".into(),
        contrasts: vec![
            contrast("m", "x", 0.5),
            contrast("a", "x", -0.25),
            contrast("a", "y", 0.0),
        ],
        cells: vec![CellRow {
            model: "m".into(),
            cell: "c".into(),
            arm: "Native".into(),
            n: 4,
            correct: 3,
            native_correct: None,
            both: None,
            scr: None,
            scr_upper_zero: None,
        }],
    };
    let source = spec(
        "rows = 'ours'\nfrom = 'contrasts'\nwhere = \"contrast == 'x'\"\nsort = ['model']\n\
         derive = [['gain', 'difference * 2']]\nfields = { p = { side = 'left' } }",
    );
    source
        .validate(&panels())
        .expect("a valid contrasts source");
    let got = source
        .rows_of_tables(std::slice::from_ref(&panel), &environment())
        .expect("rows");
    assert_eq!(got.len(), 2);
    assert_eq!(field(&got[0], "model").as_str(), Some("a"));
    assert_eq!(field(&got[0], "family").as_str(), Some("f"));
    assert_eq!(field(&got[0], "units").as_i64(), Some(12));
    assert_eq!(f64::try_from(field(&got[0], "gain")).ok(), Some(-0.5));
    assert_eq!(
        f64::try_from(field(&got[1], "sign_p_holm")).ok(),
        Some(0.01)
    );
    assert_eq!(field(&got[1], "panel").as_str(), Some("p"));
    assert_eq!(field(&got[1], "side").as_str(), Some("left"));
    let cells = spec("rows = 'cells'\nfrom = 'cells'");
    let got = cells
        .rows_of_tables(&[panel], &environment())
        .expect("rows");
    assert_eq!(got.len(), 1);
    assert_eq!(field(&got[0], "correct").as_i64(), Some(3));
    assert!(field(&got[0], "scr").is_none());
    let with_sums = spec("rows = 'ours'\nfrom = 'contrasts'\nsums = [['n', '1']]");
    assert!(with_sums.validate(&panels()).is_err());
    assert!(cells.rows_of(&[], &environment()).is_err());
}

#[test]
fn index_by_offers_the_set_as_a_map_from_each_rows_key() {
    use crate::exhibits::engine::Frame;
    let env = environment();
    let row = |model: &str, contrast: &str| {
        Value::from_iter([
            ("model", Value::from(model)),
            ("contrast", Value::from(contrast)),
        ])
    };
    let source =
        spec("rows = 'differences'\nfrom = 'contrasts'\nindex_by = \"model ~ ' ' ~ contrast\"");
    source
        .validate(&panels())
        .expect("index_by is for every kind");
    let rows = vec![row("m", "x"), row("a", "x")];
    let frame = (source.add_to(Frame::new(), rows.clone(), &env)).expect("an index");
    let doc = toml::from_str(
        "title = 'T'\n[[sections]]\nrows = 'differences'\n\
         columns = [['Model', \"{{ model }}\"], ['Found', \"{{ differences[model ~ ' x'].model }}\"]]",
    )
    .unwrap();
    let md = crate::exhibits::engine::layout("none", &doc, frame, "Q")
        .unwrap()
        .markdown();
    assert!(md.contains("| m | m |") && md.contains("| a | a |"), "{md}");
    let twice = vec![row("m", "x"), row("m", "x")];
    let err = source.add_to(Frame::new(), twice, &env).unwrap_err();
    assert!(format!("{err:#}").contains("\"m x\""), "{err:#}");
    let keyless = spec("rows = 'differences'\nfrom = 'contrasts'\nindex_by = 'missing'");
    let err = keyless
        .add_to(Frame::new(), vec![row("m", "x")], &env)
        .unwrap_err();
    assert!(format!("{err:#}").contains("has no key"), "{err:#}");
    let unindexed = spec("rows = 'differences'\nfrom = 'contrasts'");
    let frame = unindexed.add_to(Frame::new(), rows, &env).unwrap();
    let doc = toml::from_str("title = '{{ differences }}'").unwrap();
    assert!(crate::exhibits::engine::layout("none", &doc, frame, "Q").is_err());
}

/// A printed table read as rows: a row one row per element of a derived list (`explode`), a
/// column whose name is not a name read through `row`, another table through `table()`.
#[test]
fn paper_rows_explode_into_one_row_per_element() {
    let source = spec(
        r#"rows = "printed"
from = "paper"
table = "figure17"
derive = [
    ["cells", "[{'template': 0, 'o0': row['T0/O0'], 'star': row['T0/O0*']}, {'template': 2, 'o0': row['T2/O0']}]"],
    ["marks", "table('figure18') | selectattr('model', 'eq', model) | list | length"],
]
explode = "cells"
where = "letter == 'a'"
"#,
    );
    source.validate(&panels()).unwrap();
    let rows = source.rows(&[], &environment()).expect("rows");
    assert_eq!(rows.len(), 2, "panel (a), two templates: {rows:?}");
    let (t0, t2) = (&rows[0], &rows[1]);
    assert_eq!(field(t0, "model").as_str(), Some("Qwen3-8B"));
    assert_eq!(field(t0, "template"), Value::from(0));
    assert_eq!(f64::try_from(field(t0, "o0")).unwrap(), 72.9);
    assert!(field(t0, "star").is_true());
    assert_eq!(field(t0, "marks"), Value::from(8));
    assert!(
        t0.get_attr("cells").unwrap().is_undefined(),
        "the exploded list is left out"
    );
    assert_eq!(field(t2, "template"), Value::from(2));
    assert_eq!(f64::try_from(field(t2, "o0")).unwrap(), -33.3);
    assert!(
        t2.get_attr("star").unwrap().is_undefined(),
        "an element's own fields only"
    );
}

/// A paper set names its table, and only a paper set does; what is not a list cannot explode.
#[test]
fn paper_rows_need_their_table_and_explode_needs_a_list() {
    let untabled = spec("rows = 'p'\nfrom = 'paper'");
    let err = untabled.validate(&panels()).unwrap_err();
    assert!(format!("{err}").contains("need their `table`"), "{err}");
    let with_panels = spec("rows = 'p'\nfrom = 'paper'\ntable = 'figure17'\npanels = ['p']");
    let err = with_panels.validate(&panels()).unwrap_err();
    let want = "`panels` is for metrics or trajectories or contrasts or cells rows, not paper";
    assert!(format!("{err}").contains(want), "{err}");
    let missing = spec("rows = 'p'\nfrom = 'paper'\ntable = 'figure99'");
    let err = missing.validate(&panels()).unwrap_err();
    assert!(format!("{err}").contains("exhibits/figure99.tsv"), "{err}");
    let metrics_with_table =
        spec("rows = 'p'\nfrom = 'metrics'\ngroups = 'paired'\ntable = 'figure17'");
    let err = metrics_with_table.validate(&panels()).unwrap_err();
    assert!(
        format!("{err}").contains("`table` is for paper rows, not metrics"),
        "{err}"
    );
    // A number, a string (not its characters), none or a misspelt field: an error, not rows.
    for (field, derive) in [
        ("template", ""),
        ("model", ""),
        ("nothing", "\nderive = [['nothing', 'none']]"),
        ("templat", ""),
    ] {
        let text =
            format!("rows = 'p'\nfrom = 'paper'\ntable = 'figure18'\nexplode = '{field}'{derive}");
        let source = spec(&text);
        source.validate(&panels()).unwrap();
        let err = source.rows(&[], &environment()).unwrap_err();
        let want = format!("`explode` \"{field}\" is not a list");
        assert!(format!("{err:#}").contains(&want), "{err:#}");
    }
    // An element that is not a map stands as the field.
    let numbers = spec(
        "rows = 'p'\nfrom = 'paper'\ntable = 'figure18'\nderive = [['k', '[1, 2]']]\nexplode = 'k'",
    );
    let rows = numbers.rows(&[], &environment()).expect("rows");
    assert_eq!(rows.len(), 32, "two rows per printed mark");
    assert_eq!(
        (field(&rows[0], "k"), field(&rows[1], "k")),
        (Value::from(1), Value::from(2))
    );
}
