//! The exhibit engine: lays out an exhibit's document from its spec's `[document]` (the
//! paper's title and caption, then sections: our rows, the paper's printed rows, ours minus
//! the paper's) and the rows its code computed from the runs.
//!
//! The code of an exhibit computes; the spec says what is printed. The code returns a
//! [`Frame`]: named row sets (any `Serialize` rows, e.g. `ours`), values (`vars`) and, for a
//! table the spec cannot shape (Table D8's column pair per model of the run), named blocks. A
//! printed table needs no code where it is printed as it is: the set `paper` is the exhibit's
//! own `exhibits/NAME.tsv`, `paper:OTHER` the table `exhibits/OTHER.tsv`, each row a map from
//! the table's column names to its values; where the paper's rows must be reshaped or derived
//! (Figure 10's settings, Figure 11's bars), the code makes that set too.

//! ```toml
//! [document]
//! title = "Table D9: Indexed copying improves fidelity over nonindexed length controls"
//! text = ["Byte matching fixes serialized-state length; …"]
//!
//! [[document.sections]]
//! heading = "This run"
//! rows = "ours"
//! text_columns = 3
//! columns = [["Model", "{{ model }}"], ["Indexed", "{{ indexed | kn }}"], …]
//! notes = ["Holm p: exact McNemar, Holm-corrected within each match's family."]
//!
//! [[document.sections]]
//! heading = "This run minus the paper ({{ compared | join(', ') }})"
//! rows = "ours"
//! join = { paper = "paper", on = ["domain", "matched"] }
//! columns = [["Paper row", "{{ paper.model }} {{ paper.domain }}"], …]
//! ```
//!
//! Every text is a [minijinja](https://docs.rs/minijinja) template (undefined names are
//! errors). A cell's context is its row's fields, or in a joined section `ours` (our row),
//! `paper` (the printed row, `none` where `unmatched = "keep"` found none) and `model` (the
//! paper model); every template also sees `against` (`--against`), `compared` (the paper
//! models the differences are taken against: [`super::compared_models`]), the code's `vars`,
//! `ci_level` (our intervals' level, `95%`: a header of ours is `[{{ ci_level }} CI]`, the
//! paper's keep its 95%) and `table("NAME")`, the rows of the printed table `exhibits/NAME.tsv`. A template prints a number only through the filters of [`super::filters::environment`], one per way
//! the paper prints a number (a few cells come from the code already printed: estimates with
//! the report's † and ‡ marks, formatted by `tables` as every report prints them). A paragraph, note or heading that renders empty is left out, so a
//! template can make one conditional; a section with `only_if` is laid out only where that
//! expression is true. A column's header is a template of the section's names (e.g. the run's
//! confidence level, a var). Notes print in four parts: `notes`, then `row_notes` (rendered once
//! per row with its names), then `set_notes` (once per row of another set), then
//! `closing_notes`. `group_by` makes one table per value of a
//! field, each under the heading rendered with `group`; with `groups = "SET"` every group SET
//! names gets its table, also one without rows.

use std::collections::BTreeMap;

use anyhow::Context;
use minijinja::value::{Value, ValueKind};
use minijinja::Environment;
use serde::{Deserialize, Serialize};

use super::{compared_models, paper};
use crate::doc::{Block, Doc, Table};

/// An exhibit's document as its spec lays it out: `[document]` of `exhibits/NAME.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentSpec {
    /// The document's title (its `#` heading).
    pub title: String,
    /// Paragraphs after the title: the paper's caption, as ours applies.
    #[serde(default)]
    pub text: Vec<String>,
    /// The document's sections, in order.
    #[serde(default)]
    pub sections: Vec<SectionSpec>,
}

/// One section: an optional heading and paragraphs, then a table of a row set, or blocks the
/// code made.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// The heading; none for a section that continues the previous one.
    pub heading: Option<String>,
    /// The heading's level (2 when not given).
    #[serde(default = "second_level")]
    pub level: u8,
    /// An expression: the section is laid out only where it is true.
    pub only_if: Option<String>,
    /// Paragraphs before the table.
    #[serde(default)]
    pub text: Vec<String>,
    /// The row set tabulated (`ours`, `paper`, `paper:OTHER`, or a set the code made).
    pub rows: Option<String>,
    /// One table per distinct value of this field of the rows (in first-seen order), each
    /// under `heading` rendered with `group` set to the value.
    pub group_by: Option<String>,
    /// With `group_by`: a row set whose rows name every group, in order, by the same field,
    /// so a group without rows still gets its heading and an empty table.
    pub groups: Option<String>,
    /// Takes the differences: each row of `rows` with each printed row it matches.
    pub join: Option<JoinSpec>,
    /// The blocks of this name the code made (figures, lists), in place of a table.
    pub blocks: Option<String>,
    /// The leading text (left-aligned) columns.
    #[serde(default)]
    pub text_columns: usize,
    /// `[header, cell template]` per column (the header a template of the section's names,
    /// the cell of the row's).
    #[serde(default)]
    pub columns: Vec<(String, String)>,
    /// Notes printed under the table.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Notes printed after `notes`, each rendered once per row with the row's names (a row
    /// whose note renders empty adds none).
    #[serde(default)]
    pub row_notes: Vec<String>,
    /// Notes rendered once per row of another set (e.g. one per test run), after the
    /// `row_notes`.
    pub set_notes: Option<SetNotes>,
    /// Notes printed last, after the `row_notes` (templates of the section's names).
    #[serde(default)]
    pub closing_notes: Vec<String>,
}

/// Notes of a section rendered once per row of a row set other than the table's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetNotes {
    /// The row set.
    pub rows: String,
    /// The notes, templates of a row's names (one rendering empty adds none).
    pub notes: Vec<String>,
}

fn second_level() -> u8 {
    2
}

/// How a differences section pairs our rows with the paper's printed rows.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinSpec {
    /// The printed rows (`paper` or `paper:OTHER`).
    #[serde(default = "paper_set")]
    pub paper: String,
    /// Fields that must be equal in our row and the printed row (`[]`: every row with every
    /// printed row, said explicitly).
    pub on: Vec<String>,
    /// Which paper models' rows are taken.
    #[serde(default)]
    pub models: JoinModels,
    /// What an our row that matches no printed row gives.
    #[serde(default)]
    pub unmatched: Unmatched,
}

fn paper_set() -> String {
    "paper".into()
}

/// The paper models a differences section takes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JoinModels {
    /// `--against` where the table prints it, else every printed model
    /// ([`super::compared_models`]).
    #[default]
    Compared,
    /// `--against` only, its first matching row.
    Against,
    /// Every printed row that matches, whatever its model.
    All,
}

/// What a differences section does with one of our rows that matches no printed row.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unmatched {
    /// Leaves it out.
    #[default]
    Skip,
    /// Pairs our row model by model: each compared model's matching rows, or one row with
    /// `paper` none for a model that prints none (`model = "all"`: one such row when no printed
    /// row matches).
    Keep,
}

/// What an exhibit's code computed: row sets, values and blocks, each by name, for its spec's
/// document.
#[derive(Debug, Default)]
pub struct Frame {
    sets: BTreeMap<String, Vec<Value>>,
    vars: BTreeMap<String, Value>,
    blocks: BTreeMap<String, Vec<Block>>,
}

impl Frame {
    /// An empty frame.
    pub fn new() -> Frame {
        Frame::default()
    }

    /// Adds the row set `name`.
    pub fn rows<T: Serialize>(mut self, name: &str, rows: &[T]) -> Frame {
        self.sets.insert(
            name.into(),
            rows.iter().map(Value::from_serialize).collect(),
        );
        self
    }

    /// Adds the row set `name`, rows already values (a declared source's).
    pub fn values(mut self, name: &str, rows: Vec<Value>) -> Frame {
        self.sets.insert(name.into(), rows);
        self
    }

    /// Adds the value `name`, seen by every template.
    pub fn var<T: Serialize>(mut self, name: &str, value: T) -> Frame {
        self.vars.insert(name.into(), Value::from_serialize(value));
        self
    }

    /// Adds the blocks `name` (a section's `blocks`).
    pub fn blocks(mut self, name: &str, blocks: Vec<Block>) -> Frame {
        self.blocks.insert(name.into(), blocks);
        self
    }
}

/// Lays out `spec` with the rows `frame` holds; `name` (the exhibit's) finds its paper table.
pub fn layout(name: &str, spec: &DocumentSpec, frame: Frame, against: &str) -> anyhow::Result<Doc> {
    let env = super::filters::environment();
    let mut layout = Layout {
        env: &env,
        name,
        frame,
        against,
    };
    let globals = layout.globals("paper")?;
    let mut doc = Doc::new(layout.render(&spec.title, &globals).context("title")?);
    for text in &spec.text {
        layout.paragraph(&mut doc, text, &globals)?;
    }
    for (i, section) in spec.sections.iter().enumerate() {
        layout
            .section(&mut doc, section, &globals)
            .with_context(|| format!("exhibits/{name}.toml: section {}", i + 1))?;
    }
    Ok(doc)
}

struct Layout<'a> {
    env: &'a Environment<'static>,
    name: &'a str,
    frame: Frame,
    against: &'a str,
}

type Names = BTreeMap<String, Value>;

impl Layout<'_> {
    /// The row set `name`: the code's, else a paper table.
    fn set(&mut self, name: &str) -> anyhow::Result<Vec<Value>> {
        if let Some(rows) = self.frame.sets.get(name) {
            return Ok(rows.clone());
        }
        let table = match name.split_once(':') {
            None if name == "paper" => self.name,
            Some(("paper", table)) => table,
            _ => anyhow::bail!("the code made no row set `{name}`"),
        };
        let rows = paper::records(table)?;
        self.frame.sets.insert(name.into(), rows.clone());
        Ok(rows)
    }

    /// What every template sees: `against`, `compared` (of the paper set `paper`, where there
    /// is one) and the code's vars.
    fn globals(&mut self, paper: &str) -> anyhow::Result<Names> {
        let mut globals = self.frame.vars.clone();
        globals.insert("against".into(), Value::from(self.against));
        // An exhibit without a printed table (Table E1's fields, the projection) compares none.
        let table = match paper.split_once(':') {
            Some(("paper", table)) => table,
            _ => self.name,
        };
        let printed = match self.frame.sets.contains_key(paper) || paper::exists(table) {
            true => self.set(paper)?.iter().filter_map(model_of).collect(),
            false => Vec::new(),
        };
        let printed: Vec<&str> = printed.iter().map(String::as_str).collect();
        let compared: Vec<String> = (compared_models(&printed, self.against).into_iter())
            .map(String::from)
            .collect();
        globals.insert("compared".into(), Value::from_serialize(compared));
        Ok(globals)
    }

    fn render(&self, template: &str, context: &Names) -> anyhow::Result<String> {
        if !template.contains('{') {
            return Ok(template.to_string());
        }
        self.env
            .render_str(template, context)
            .map_err(|e| anyhow::anyhow!("{template:?}: {e:#}"))
    }

    fn paragraph(&self, doc: &mut Doc, text: &str, context: &Names) -> anyhow::Result<()> {
        let text = self.render(text, context)?;
        if !text.is_empty() {
            doc.p(text);
        }
        Ok(())
    }

    fn section(
        &mut self,
        doc: &mut Doc,
        section: &SectionSpec,
        globals: &Names,
    ) -> anyhow::Result<()> {
        let globals = match &section.join {
            Some(join) => self.globals(&join.paper)?,
            None => globals.clone(),
        };
        if let Some(condition) = &section.only_if {
            let expression = (self.env.compile_expression(condition))
                .map_err(|e| anyhow::anyhow!("only_if {condition:?}: {e:#}"))?;
            let value = (expression.eval(&globals))
                .map_err(|e| anyhow::anyhow!("only_if {condition:?}: {e:#}"))?;
            if !value.is_true() {
                return Ok(());
            }
        }
        let rows = match &section.rows {
            Some(set) => self.set(set)?,
            None => Vec::new(),
        };
        let rows = match &section.join {
            Some(join) => self.joined(&rows, join)?,
            None => rows,
        };
        let groups: Vec<(Option<Value>, Vec<Value>)> = match (&section.group_by, &section.groups) {
            (None, None) => vec![(None, rows)],
            (Some(by), None) => group(rows, by)?,
            (Some(by), Some(set)) => {
                let mut groups: Vec<(Option<Value>, Vec<Value>)> = Vec::new();
                for named in self.set(set)? {
                    let key = field(&named, by)?;
                    if !groups.iter().any(|(k, _)| k.as_ref() == Some(&key)) {
                        groups.push((Some(key), Vec::new()));
                    }
                }
                for row in rows {
                    let key = field(&row, by)?;
                    match groups.iter_mut().find(|(k, _)| k.as_ref() == Some(&key)) {
                        Some((_, members)) => members.push(row),
                        None => anyhow::bail!("a row's `{by}` {key} is not among `{set}`'s"),
                    }
                }
                groups
            }
            (None, Some(_)) => anyhow::bail!("`groups` without `group_by`"),
        };
        for (key, rows) in groups {
            let mut context = globals.clone();
            if let Some(key) = key {
                context.insert("group".into(), key);
            }
            if let Some(heading) = &section.heading {
                let heading = self.render(heading, &context)?;
                if !heading.is_empty() {
                    doc.h(section.level, heading);
                }
            }
            for text in &section.text {
                self.paragraph(doc, text, &context)?;
            }
            if let Some(name) = &section.blocks {
                let Some(blocks) = self.frame.blocks.get(name) else {
                    anyhow::bail!("the code made no blocks `{name}`")
                };
                doc.blocks.extend(blocks.iter().cloned());
            }
            if section.rows.is_some() {
                let note_rows = match &section.set_notes {
                    Some(set_notes) => self.set(&set_notes.rows)?,
                    None => Vec::new(),
                };
                doc.table(self.table(section, &rows, &note_rows, &context)?);
            }
        }
        Ok(())
    }

    fn table(
        &self,
        section: &SectionSpec,
        rows: &[Value],
        note_rows: &[Value],
        context: &Names,
    ) -> anyhow::Result<Table> {
        let cells = (section.columns.iter())
            .map(|(_, cell)| {
                (self.env.template_from_str(cell)).map_err(|e| anyhow::anyhow!("{cell:?}: {e:#}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let row_notes = (section.row_notes.iter())
            .map(|note| {
                (self.env.template_from_str(note)).map_err(|e| anyhow::anyhow!("{note:?}: {e:#}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut notes = Vec::new();
        for note in &section.notes {
            let note = self.render(note, context)?;
            if !note.is_empty() {
                notes.push(note);
            }
        }
        let mut per_row = Vec::new();
        let mut body = Vec::with_capacity(rows.len());
        for row in rows {
            let row_context = with_row(context, row)?;
            let printed = (cells.iter().zip(&section.columns))
                .map(|(template, (header, source))| {
                    template
                        .render(&row_context)
                        .map_err(|e| anyhow::anyhow!("column {header:?}, {source:?}: {e:#}"))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            body.push(printed);
            for (template, source) in row_notes.iter().zip(&section.row_notes) {
                let note = (template.render(&row_context))
                    .map_err(|e| anyhow::anyhow!("row note {source:?}: {e:#}"))?;
                if !note.is_empty() {
                    per_row.push(note);
                }
            }
        }
        notes.extend(per_row);
        if let Some(set_notes) = &section.set_notes {
            for row in note_rows {
                let names = with_row(context, row)?;
                for note in &set_notes.notes {
                    let note = self.render(note, &names)?;
                    if !note.is_empty() {
                        notes.push(note);
                    }
                }
            }
        }
        for note in &section.closing_notes {
            let note = self.render(note, context)?;
            if !note.is_empty() {
                notes.push(note);
            }
        }
        let header = (section.columns.iter())
            .map(|(header, _)| self.render(header, context))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Table {
            text_columns: section.text_columns,
            header,
            rows: body,
            notes,
        })
    }

    /// Each of `ours` with each printed row it matches: maps of `ours`, `paper` and `model`.
    fn joined(&mut self, ours: &[Value], join: &JoinSpec) -> anyhow::Result<Vec<Value>> {
        let printed = self.set(&join.paper)?;
        let printed_models: Vec<String> = printed.iter().filter_map(model_of).collect();
        anyhow::ensure!(
            join.models == JoinModels::All || printed_models.len() == printed.len(),
            "`{}` has rows without a `model`: join them with models = \"all\"",
            join.paper
        );
        let models: Vec<String> = match join.models {
            JoinModels::Compared => {
                let names: Vec<&str> = printed_models.iter().map(String::as_str).collect();
                (compared_models(&names, self.against).into_iter())
                    .map(String::from)
                    .collect()
            }
            JoinModels::Against => vec![self.against.to_string()],
            JoinModels::All => Vec::new(),
        };
        let mut out = Vec::new();
        for r in ours {
            // The printed rows that agree with `r` on every `on` field, of `model` where given.
            let agreeing = |model: Option<&str>| -> anyhow::Result<Vec<Value>> {
                let mut found = Vec::new();
                for p in &printed {
                    if model.is_some_and(|m| model_of(p).as_deref() != Some(m)) {
                        continue;
                    }
                    let mut equal = true;
                    for key in &join.on {
                        equal &= field(r, key)? == field(p, key)?;
                    }
                    if equal {
                        found.push(p.clone());
                    }
                }
                Ok(found)
            };
            let mut matches: Vec<(Value, Option<String>)> = Vec::new();
            match (join.models, join.unmatched) {
                (JoinModels::All, unmatched) => {
                    matches.extend(agreeing(None)?.into_iter().map(|p| {
                        let model = model_of(&p);
                        (p, model)
                    }));
                    if matches.is_empty() && unmatched == Unmatched::Keep {
                        matches.push((Value::from(()), None));
                    }
                }
                // The compared models' rows in the table's order (`--against`: its first).
                (_, Unmatched::Skip) => {
                    for p in agreeing(None)? {
                        let model = model_of(&p);
                        if model.as_ref().is_some_and(|m| models.contains(m)) {
                            matches.push((p, model));
                        }
                    }
                    if join.models == JoinModels::Against {
                        matches.truncate(1);
                    }
                }
                // Model by model: each one's rows, or one row saying it prints none.
                (_, Unmatched::Keep) => {
                    for m in &models {
                        let mut found = agreeing(Some(m))?;
                        if join.models == JoinModels::Against {
                            found.truncate(1);
                        }
                        if found.is_empty() {
                            found.push(Value::from(()));
                        }
                        matches.extend(found.into_iter().map(|p| (p, Some(m.clone()))));
                    }
                }
            }
            for (p, model) in matches {
                let mut row = BTreeMap::new();
                row.insert("ours", r.clone());
                row.insert("paper", p);
                row.insert("model", Value::from(model));
                out.push(Value::from_serialize(row));
            }
        }
        Ok(out)
    }
}

/// `context` with a row's fields as names (over any of the same name) and the row as `row`.
fn with_row(context: &Names, row: &Value) -> anyhow::Result<Names> {
    let mut names = context.clone();
    if row.kind() == ValueKind::Map {
        for key in row.try_iter()? {
            let value = row.get_item(&key)?;
            names.insert(key.to_string(), value);
        }
    }
    names.insert("row".into(), row.clone());
    Ok(names)
}

/// The `model` field of a printed row, where it has one.
fn model_of(row: &Value) -> Option<String> {
    row.get_attr("model")
        .ok()
        .and_then(|m| m.as_str().map(String::from))
}

fn field(row: &Value, key: &str) -> anyhow::Result<Value> {
    let value = row
        .get_attr(key)
        .map_err(|e| anyhow::anyhow!("`{key}`: {e:#}"))?;
    anyhow::ensure!(
        !value.is_undefined(),
        "a row has no `{key}` (a join's `on`, `group_by`)"
    );
    Ok(value)
}

/// `rows` by the value of `field`, in first-seen order.
fn group(rows: Vec<Value>, field_name: &str) -> anyhow::Result<Vec<(Option<Value>, Vec<Value>)>> {
    let mut groups: Vec<(Option<Value>, Vec<Value>)> = Vec::new();
    for row in rows {
        let key = field(&row, field_name)?;
        match groups.iter_mut().find(|(k, _)| k.as_ref() == Some(&key)) {
            Some((_, members)) => members.push(row),
            None => groups.push((Some(key), vec![row])),
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> DocumentSpec {
        toml::from_str(text).unwrap()
    }

    #[derive(Serialize)]
    struct Row {
        model: &'static str,
        domain: &'static str,
        rate: Option<f64>,
    }

    /// Our rows, cells through the filters, and a note that renders empty left out.
    #[test]
    fn a_section_tabulates_a_row_set_through_its_templates() {
        let spec = spec(
            r#"
            title = "T: {{ against }}"
            text = ["caption"]
            [[sections]]
            heading = "This run"
            rows = "ours"
            text_columns = 1
            columns = [["Model", "{{ model }}"], ["Rate", "{{ rate | pct }}"]]
            notes = ["{% if against == 'X' %}x{% endif %}", "kept"]
            "#,
        );
        let ours = [
            Row {
                model: "m",
                domain: "arithmetic",
                rate: Some(0.5),
            },
            Row {
                model: "n",
                domain: "lexical",
                rate: None,
            },
        ];
        let doc = layout("none", &spec, Frame::new().rows("ours", &ours), "Q").unwrap();
        let md = doc.markdown();
        assert!(md.starts_with("# T: Q\n\ncaption\n"), "{md}");
        assert!(
            md.contains("| m | 50.0 |") && md.contains("| n | – |"),
            "{md}"
        );
        assert!(md.contains("kept") && !md.contains("x\n"), "{md}");
    }

    /// A joined section pairs each of our rows with the printed rows of the compared models
    /// that agree on its keys; `unmatched = "keep"` keeps a row with none.
    #[test]
    fn a_join_pairs_our_rows_with_the_printed_ones() {
        let spec = spec(
            r#"
            title = "T"
            [[sections]]
            heading = "minus ({{ compared | join(', ') }})"
            rows = "ours"
            join = { paper = "printed", on = ["domain"], unmatched = "keep" }
            columns = [["Ours", "{{ ours.model }}"], ["Paper", "{% if paper %}{{ model }} {{ paper.rate }}{% else %}none{% endif %}"]]
            "#,
        );
        #[derive(Serialize)]
        struct Printed {
            model: &'static str,
            domain: &'static str,
            rate: f64,
        }
        let printed = [
            Printed {
                model: "A",
                domain: "arithmetic",
                rate: 1.0,
            },
            Printed {
                model: "B",
                domain: "arithmetic",
                rate: 2.0,
            },
        ];
        let ours = [
            Row {
                model: "m",
                domain: "arithmetic",
                rate: None,
            },
            Row {
                model: "m",
                domain: "lexical",
                rate: None,
            },
        ];
        let frame = Frame::new().rows("ours", &ours).rows("printed", &printed);
        let md = layout("none", &spec, frame, "B").unwrap().markdown();
        assert!(md.contains("## minus (B)"), "{md}");
        assert!(
            md.contains("| m | B 2.0 |") && md.contains("| m | none |"),
            "{md}"
        );
        assert!(!md.contains("A 1.0"), "{md}");
    }

    /// An undefined name is an error that names the column and its template.
    #[test]
    fn an_undefined_name_is_an_error() {
        let spec = spec(
            r#"
            title = "T"
            [[sections]]
            rows = "ours"
            columns = [["Model", "{{ modle }}"]]
            "#,
        );
        let ours = [Row {
            model: "m",
            domain: "d",
            rate: None,
        }];
        let err = layout("none", &spec, Frame::new().rows("ours", &ours), "Q").unwrap_err();
        let err = format!("{err:#}");
        assert!(err.contains("section 1") && err.contains("modle"), "{err}");
    }
}
