//! Declared row sets: what an exhibit reads from its panels' runs or the paper's printed
//! tables, said in its spec, so that an exhibit whose rows are the run's metric rows (a
//! population's groups, the metrics each row carries), sums over its trajectories, its
//! contrasts or a printed table reshaped needs no code.
//!
//! ```toml
//! # Table 1: one row per paired group (model, domain) of each panel, with eight metrics.
//! [[sources]]
//! rows = "ours"
//! from = "metrics"
//! groups = "paired"
//! metrics = ["both", "native_only", "serial_only", "neither", "native_em", "serial_em", "scr"]
//! fields = { "table1-code" = { interface = "code" }, "table1-direct" = { interface = "direct" } }
//!
//! # Table D6: calls and candidate outputs of two arms, summed per (model, domain).
//! [[sources]]
//! rows = "ours"
//! from = "trajectories"
//! where = "arm in ['Serial/Full/code', 'Serial/UnionFill/code']"
//! group_by = [["model", "model"], ["domain", "domain | domain"]]
//! sums = [["full_calls", "calls if arm == 'Serial/Full/code' else 0"]]
//! ```
//!
//! A metrics row holds `model`, `domain` (as the paper prints it: `math`), `bank_domain`,
//! `comparison` (a pairing `A vs B`, or an arm for per-arm metrics), `panel`, `length` (with
//! `by_length`), the panel's `fields`, and each named metric as its metric row (`value`,
//! `numerator`, `denominator`, `ci_low`, `ci_high`, `ci_method`), or none where the run has
//! none; the groups and intervals are the run's statistics settings (its panel config's
//! bootstrap, exact intervals and Holm families), recomputed from its records. A trajectories
//! row holds the `group_by` values, `n` (the trajectories counted) and the `sums` (a Boolean
//! counts 1). Expressions are minijinja's, over a trajectory's fields (and `panel`, the
//! panel's `fields`) or a built metrics row; rows are kept where `where` is true and ordered
//! by `sort` (stable; metrics rows are otherwise in panel order, then by model, domain and
//! comparison; trajectory groups by their `group_by` values). `derive = [[name, expr], ...]`
//! adds fields computed from each built row (a metrics row before `where`, a trajectories
//! group after its sums), in turn, each seeing those before it: e.g. a label of the domain
//! (`"'Arithmetic' if domain == 'math' else 'Lexical'"`) a printed table's rows are joined on.
//! `subsets = [[value, item list], ...]` reads the rows once per subset, on the items of its
//! list (`data/panels/*.txt`; `""`: every item; a metrics set's statistics recomputed on them),
//! each row carrying its value as `subset` (after `where`; `sort` orders the rows of all).
//! Two filters give a count's exact binomial statistics: `k | clopper_pearson(n, level)` (its
//! interval, `[low, high]`) and `k | binomial_upper_tail(n, p)` (P(X ≥ k), X ~ Binomial(n, p)).
//!
//! `from = "contrasts"` reads each panel's declared unit contrasts (`[[stats.contrasts]]`,
//! recomputed from its records), one row per contrast row: `model`, `contrast`, `family`,
//! `units`, `incomplete_units`, `compared_mean`, `reference_mean`, `difference`, `ci_low`,
//! `ci_high`, `sign_p`, `sign_p_holm`, plus `panel` and the panel's `fields`; `from = "cells"`
//! its declared cells (`[[stats.cells]]`): `model`, `cell`, `arm`, `n`, `correct`,
//! `native_correct`, `both`, `scr`, `scr_upper_zero`, `panel`, the `fields`. Both take
//! `derive`, `where` (over the built row) and `sort` as a metrics set does (rows otherwise in
//! panel order, then the run's order).
//!
//! ```toml
//! [[sources]]
//! rows = "letter_digit"
//! from = "contrasts"
//! where = "contrast.startswith('letter - digit')"
//! ```
//!
//! `from = "paper"` reads a printed table (`table = "NAME"`: `exhibits/NAME.tsv`), one row per
//! printed row with its columns (as the engine's `paper` sets), for a table the paper prints in
//! another shape than the exhibit's. Every `derive` expression also sees its row as `row`, for
//! a column whose name is not a name (`row['T0/O0']`), and `explode = "FIELD"` (any kind, after
//! `derive`, before `where` but a trajectories set's, which keeps trajectories) makes a row one
//! row per element of its list FIELD (a row without that list is an error): a map element's
//! fields follow the row's own (replacing one of the same name) and FIELD is left out; any
//! other element stands as FIELD:
//!
//! ```toml
//! # Figure 15 (a, b): each printed row (a model and domain) one row per controller.
//! [[sources]]
//! rows = "paper_copies"
//! from = "paper"
//! table = "figure15"
//! derive = [["controls", "[{'label': 'Serial', 'raw': [serial_raw, parents]}, …]"]]
//! explode = "controls"
//! ```
//!
//! `index_by = "expression"` (any kind) also offers the set to every template as a var named
//! after it: a map from the expression's value over each finished row to the row (two rows
//! with one value are an error naming it), so a cell can look up another set's row, e.g.
//! Table D9's contrast of its row, `differences[key]` where the contrasts set `differences`
//! derives `key` and has `index_by = "key"`.

use std::collections::BTreeMap;

use anyhow::Context;
use c2s_records::Trajectory;
use c2s_stats::{CellRow, ContrastRow, MetricRow};
use minijinja::value::{Value, ViaDeserialize};
use minijinja::Environment;
use serde::Deserialize;

use super::engine::Frame;
use super::{paper_domain, PanelRun};
use crate::tables::{self, Group, MetricIndex};

/// One declared row set: `[[sources]]` of an exhibit's spec.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// The row set's name (`ours`, …), as the document's sections name it.
    pub rows: String,
    /// Which records the rows are made of.
    pub from: Records,
    /// The panels read, in this order (default: every panel of the exhibit).
    #[serde(default)]
    pub panels: Vec<String>,
    /// Metrics: which groups of the run's metric rows make the rows.
    pub groups: Option<Population>,
    /// Metrics: only these comparisons (`A vs B`, or an arm), where given.
    #[serde(default)]
    pub comparisons: Vec<String>,
    /// Metrics: one row per target length (the all-lengths rows left out).
    #[serde(default)]
    pub by_length: bool,
    /// Metrics: the metrics each row carries.
    #[serde(default)]
    pub metrics: Vec<String>,
    /// Constant fields of each panel's rows (e.g. Table 1's interface).
    #[serde(default)]
    pub fields: BTreeMap<String, BTreeMap<String, toml::Value>>,
    /// Trajectories: `[name, expression]` of each grouping value.
    #[serde(default)]
    pub group_by: Vec<(String, String)>,
    /// Trajectories: `[name, expression]` of each sum.
    #[serde(default)]
    pub sums: Vec<(String, String)>,
    /// `[name, expression]` of fields computed from each built row (a metrics, contrast, cell
    /// or printed row, or a trajectories group with its `n` and sums), in turn, each seeing
    /// those before it and the row as `row`.
    #[serde(default)]
    pub derive: Vec<(String, String)>,
    /// An expression: the rows (metrics) or trajectories kept.
    #[serde(rename = "where")]
    pub keep: Option<String>,
    /// Expressions the rows are ordered by, in turn.
    #[serde(default)]
    pub sort: Vec<String>,
    /// `[value, item list]` of each subset the rows are read on, in turn (`""`: every item),
    /// each row carrying its subset's value as `subset`.
    #[serde(default)]
    pub subsets: Vec<(String, String)>,
    /// An expression over a built row: the set is also every template's var of its name, a
    /// map from this value of each row to the row.
    pub index_by: Option<String>,
    /// Paper: the printed table read (`exhibits/NAME.tsv`).
    pub table: Option<String>,
    /// A list field of the built rows: each row becomes one row per element.
    pub explode: Option<String>,
}

/// One panel's records, every model's, as a declared row set reads them.
#[derive(Debug, Clone, Default)]
pub struct PanelRecords {
    /// The panel's config stem.
    pub panel: String,
    /// Its metric rows, recomputed with its statistics settings (empty for a trajectories set).
    pub metric_rows: Vec<MetricRow>,
    /// Its trajectories, every arm's.
    pub trajectories: Vec<Trajectory>,
}

/// One panel's declared unit contrasts and cells, every model's, as a contrasts or cells row
/// set reads them.
#[derive(Debug, Clone, Default)]
pub struct PanelTables {
    /// The panel's config stem.
    pub panel: String,
    /// Its declared contrasts' rows, recomputed from its records.
    pub contrasts: Vec<ContrastRow>,
    /// Its declared cells' rows.
    pub cells: Vec<CellRow>,
}

/// The records a declared row set is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Records {
    /// The run's metric rows, recomputed from its records with its statistics settings.
    Metrics,
    /// The run's trajectories, every arm's.
    Trajectories,
    /// The run's declared unit contrasts (`[[stats.contrasts]]`).
    Contrasts,
    /// The run's declared cells (`[[stats.cells]]`).
    Cells,
    /// A printed table of the paper (`table`).
    Paper,
}

/// The groups of metric rows a metrics row set is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Population {
    /// Paired comparisons (Native vs a local arm): the joint counts, EM, SCR.
    Paired,
    /// Arms with confidence metrics (prevalence, Brier, ECE, AUROC).
    Calibration,
    /// Arms with an independence reference.
    Independence,
}

impl Records {
    /// The kind as a spec names it (`from = "metrics"`).
    fn name(self) -> &'static str {
        match self {
            Records::Metrics => "metrics",
            Records::Trajectories => "trajectories",
            Records::Contrasts => "contrasts",
            Records::Cells => "cells",
            Records::Paper => "paper",
        }
    }
}

impl Population {
    /// The groups of `index` of this population.
    fn groups(self, index: &MetricIndex<'_>) -> Vec<Group> {
        match self {
            Population::Paired => index.paired_groups(),
            Population::Calibration => index.calibration_groups(),
            Population::Independence => index.independence_groups(),
        }
    }

    /// The metric every group of this population has, whose lengths are the group's.
    fn marker(self) -> &'static str {
        match self {
            Population::Paired => "both",
            Population::Calibration => "prevalence",
            Population::Independence => "independence_reference",
        }
    }
}

impl SourceSpec {
    /// Checks what can be checked without runs: the fields of its kind, its panels among the
    /// exhibit's.
    pub fn validate(&self, exhibit_panels: &[String]) -> anyhow::Result<()> {
        let name = &self.rows;
        for panel in self.panels.iter().chain(self.fields.keys()) {
            anyhow::ensure!(
                exhibit_panels.contains(panel),
                "source `{name}`: `{panel}` is not among the exhibit's panels"
            );
        }
        anyhow::ensure!(
            self.from != Records::Metrics || self.groups.is_some(),
            "source `{name}`: `groups` (paired, calibration or independence) is required"
        );
        // The keys only some kinds of records take: the key, whether given, the kinds taking it.
        use Records::{Cells, Contrasts, Metrics, Paper, Trajectories};
        let runs = [Metrics, Trajectories, Contrasts, Cells];
        let keys: [(&str, bool, &[Records]); 10] = [
            ("groups", self.groups.is_some(), &[Metrics]),
            ("comparisons", !self.comparisons.is_empty(), &[Metrics]),
            ("by_length", self.by_length, &[Metrics]),
            ("metrics", !self.metrics.is_empty(), &[Metrics]),
            ("group_by", !self.group_by.is_empty(), &[Trajectories]),
            ("sums", !self.sums.is_empty(), &[Trajectories]),
            (
                "subsets",
                !self.subsets.is_empty(),
                &[Metrics, Trajectories],
            ),
            ("fields", !self.fields.is_empty(), &runs),
            ("panels", !self.panels.is_empty(), &runs),
            ("table", self.table.is_some(), &[Paper]),
        ];
        for (key, given, kinds) in keys {
            let takers: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            anyhow::ensure!(
                !given || kinds.contains(&self.from),
                "source `{name}`: `{key}` is for {} rows, not {}",
                takers.join(" or "),
                self.from.name()
            );
        }
        if self.from == Paper {
            let Some(table) = &self.table else {
                anyhow::bail!("source `{name}`: paper rows need their `table`")
            };
            anyhow::ensure!(
                super::paper::exists(table),
                "source `{name}`: no printed table exhibits/{table}.tsv"
            );
        }
        // A misspelt metric or arm would only print `–` or leave the table empty.
        for metric in &self.metrics {
            c2s_records::Metric::parse(metric)
                .with_context(|| format!("source `{name}`: `metrics`"))?;
        }
        for comparison in &self.comparisons {
            let arms = match c2s_records::comparison_arms(comparison) {
                Some((native, local)) => vec![native, local],
                None => vec![comparison.as_str()],
            };
            for arm in arms {
                c2s_records::ArmSpec::from_label(arm)
                    .with_context(|| format!("source `{name}`: `comparisons` {comparison:?}"))?;
            }
        }
        Ok(())
    }

    /// The rows of this set from `runs` (every panel of the exhibit, each every model's).
    pub fn rows(
        &self,
        runs: &[PanelRun],
        env: &Environment<'static>,
    ) -> anyhow::Result<Vec<Value>> {
        if let Some(table) = &self.table {
            return self.finished(super::paper::records(table)?, env);
        }
        let selected: Vec<&PanelRun> = match self.panels.is_empty() {
            true => runs.iter().collect(),
            false => (self.panels.iter())
                .map(|p| super::run_of(runs, p))
                .collect::<anyhow::Result<_>>()?,
        };
        let loaded = (selected.iter())
            .map(|run| Ok((run.panel.to_string(), run.load()?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if matches!(self.from, Records::Contrasts | Records::Cells) {
            let tables = (loaded.iter())
                .map(|(panel, loaded)| {
                    let (contrasts, cells) = loaded.contrast_tables()?;
                    let panel = panel.clone();
                    anyhow::Ok(PanelTables {
                        panel,
                        contrasts,
                        cells,
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            return self.rows_of_tables(&tables, env);
        }
        let records = |ids: Option<&std::collections::BTreeSet<String>>| {
            let mut panels = Vec::new();
            for (panel, loaded) in &loaded {
                let subset = ids.map(|ids| loaded.restricted(ids));
                let loaded = subset.as_ref().unwrap_or(loaded);
                panels.push(PanelRecords {
                    panel: panel.clone(),
                    metric_rows: match self.from {
                        Records::Metrics => loaded.metric_rows()?,
                        _ => Vec::new(),
                    },
                    trajectories: loaded.trajectories.clone(),
                });
            }
            anyhow::Ok(panels)
        };
        if self.subsets.is_empty() {
            return self.rows_of(&records(None)?, env);
        }
        let mut subsets = Vec::new();
        for (value, list) in &self.subsets {
            let ids = (!list.is_empty()).then(|| super::panel_ids(list));
            subsets.push((value.clone(), records(ids.transpose()?.as_ref())?));
        }
        self.rows_of_subsets(&subsets, env)
    }

    /// `frame` with this set's `rows` and, with `index_by`, the var of the same name: a map
    /// from each row's key to the row (two rows with one key are an error naming it).
    pub fn add_to(
        &self,
        frame: Frame,
        rows: Vec<Value>,
        env: &Environment<'static>,
    ) -> anyhow::Result<Frame> {
        let Some(index_by) = &self.index_by else {
            return Ok(frame.values(&self.rows, rows));
        };
        let key = self.compile(env, index_by)?;
        let mut index = BTreeMap::new();
        for row in &rows {
            let k = self.eval(&key, row, "index_by")?;
            anyhow::ensure!(
                !k.is_undefined() && !k.is_none(),
                "source `{}`: a row has no key (`index_by` {index_by:?})",
                self.rows
            );
            anyhow::ensure!(
                index.insert(k.clone(), row.clone()).is_none(),
                "source `{}`: two rows have the key {k:?} (`index_by`)",
                self.rows
            );
        }
        Ok(frame
            .var(&self.rows, Value::from_iter(index))
            .values(&self.rows, rows))
    }

    /// The rows of this set from each subset's panels' records already read (`[value,
    /// panels]`), each row carrying its subset's value as `subset`, ordered by `sort` over all.
    pub fn rows_of_subsets(
        &self,
        subsets: &[(String, Vec<PanelRecords>)],
        env: &Environment<'static>,
    ) -> anyhow::Result<Vec<Value>> {
        let mut rows = Vec::new();
        for (subset, panels) in subsets {
            for row in self.rows_of(panels, env)? {
                let subset = ("subset".to_string(), Value::from(subset.as_str()));
                rows.push(with_fields(&row, [subset])?);
            }
        }
        self.sorted(rows, env)
    }

    /// The rows of this set from panels' records already read.
    pub fn rows_of(
        &self,
        panels: &[PanelRecords],
        env: &Environment<'static>,
    ) -> anyhow::Result<Vec<Value>> {
        let rows = match self.from {
            Records::Metrics => self.metric_rows(panels)?,
            Records::Trajectories => self.trajectory_rows(panels, env)?,
            Records::Contrasts | Records::Cells | Records::Paper => {
                anyhow::bail!("source `{}`: its rows are read from tables", self.rows)
            }
        };
        self.finished(rows, env)
    }

    /// The rows of a contrasts or cells set from panels' tables already read.
    pub fn rows_of_tables(
        &self,
        panels: &[PanelTables],
        env: &Environment<'static>,
    ) -> anyhow::Result<Vec<Value>> {
        let mut rows = Vec::new();
        for run in panels {
            let records: Vec<Value> = match self.from {
                Records::Contrasts => run.contrasts.iter().map(Value::from_serialize).collect(),
                Records::Cells => run.cells.iter().map(Value::from_serialize).collect(),
                _ => anyhow::bail!("source `{}`: its rows are not read from tables", self.rows),
            };
            for record in records {
                rows.push(with_fields(&record, self.panel_fields(&run.panel))?);
            }
        }
        self.finished(rows, env)
    }

    /// Built rows with their `derive` fields, exploded, kept where `where` is true (but
    /// trajectories, kept before grouping), ordered by `sort`.
    fn finished(
        &self,
        mut rows: Vec<Value>,
        env: &Environment<'static>,
    ) -> anyhow::Result<Vec<Value>> {
        let derived = self.compiled(env, &self.derive)?;
        for row in rows.iter_mut().filter(|_| !derived.is_empty()) {
            let mut fields: BTreeMap<String, Value> = fields(row)?.into_iter().collect();
            for (name, e) in &derived {
                // The row's fields as names and the row as `row`, as a check sees its row.
                let current = Value::from(fields.clone());
                let names = minijinja::context! { row => current.clone(), ..current };
                let value = self.eval(e, &names, &format!("derive `{name}`"))?;
                fields.insert(name.to_string(), value);
            }
            *row = Value::from_iter(fields);
        }
        if let Some(field) = &self.explode {
            rows = self.exploded(rows, field)?;
        }
        if let Some(keep) = self.keep.as_deref() {
            if self.from != Records::Trajectories {
                let keep = self.compile(env, keep)?;
                let mut kept = Vec::with_capacity(rows.len());
                for row in rows {
                    if self.eval(&keep, &row, "where")?.is_true() {
                        kept.push(row);
                    }
                }
                rows = kept;
            }
        }
        self.sorted(rows, env)
    }

    /// Each row one row per element of its list `field`: a map element's fields after the
    /// row's own and `field` left out, any other element as `field`.
    fn exploded(&self, rows: Vec<Value>, field: &str) -> anyhow::Result<Vec<Value>> {
        let mut out = Vec::new();
        for row in rows {
            let own = fields(&row)?.into_iter().filter(|(name, _)| name != field);
            let own: Vec<(String, Value)> = own.collect();
            let list = row.get_attr(field)?;
            // A missing field, none or a string would iterate as no rows or as characters.
            anyhow::ensure!(
                list.kind() == minijinja::value::ValueKind::Seq,
                "source `{}`: `explode` {field:?} is not a list in the row {row}",
                self.rows
            );
            for element in list.try_iter()? {
                let extra = match element.kind() {
                    minijinja::value::ValueKind::Map => fields(&element)?,
                    _ => vec![(field.to_string(), element)],
                };
                out.push(Value::from_iter(own.iter().cloned().chain(extra)));
            }
        }
        Ok(out)
    }

    /// `rows` ordered by `sort` (stable).
    fn sorted(&self, rows: Vec<Value>, env: &Environment<'static>) -> anyhow::Result<Vec<Value>> {
        if self.sort.is_empty() {
            return Ok(rows);
        }
        let keys = (self.sort.iter())
            .map(|e| self.compile(env, e))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut keyed = Vec::with_capacity(rows.len());
        for row in rows {
            let key = (keys.iter())
                .map(|k| self.eval(k, &row, "sort"))
                .collect::<anyhow::Result<Vec<_>>>()?;
            keyed.push((key, row));
        }
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(keyed.into_iter().map(|(_, row)| row).collect())
    }

    fn compile<'env, 'source>(
        &self,
        env: &'env Environment<'static>,
        expression: &'source str,
    ) -> anyhow::Result<minijinja::Expression<'env, 'source>> {
        (env.compile_expression(expression))
            .map_err(|e| anyhow::anyhow!("source `{}`: {expression:?}: {e:#}", self.rows))
    }

    /// `[name, expression]` pairs, compiled.
    fn compiled<'env, 'source>(
        &self,
        env: &'env Environment<'static>,
        named: &'source [(String, String)],
    ) -> anyhow::Result<Vec<(&'source str, minijinja::Expression<'env, 'source>)>> {
        (named.iter())
            .map(|(name, e)| Ok((name.as_str(), self.compile(env, e)?)))
            .collect()
    }

    /// `e`'s value over `names`, an error naming the source and `what` (`where`, …).
    fn eval(
        &self,
        e: &minijinja::Expression<'_, '_>,
        names: &impl serde::Serialize,
        what: &str,
    ) -> anyhow::Result<Value> {
        (e.eval(names)).with_context(|| format!("source `{}`: {what}", self.rows))
    }

    /// The panel's name (`panel`) and constant fields.
    fn panel_fields(&self, panel: &str) -> Vec<(String, Value)> {
        let constants = self.fields.get(panel).into_iter().flatten();
        let constants = constants.map(|(k, v)| (k.clone(), Value::from_serialize(v)));
        [("panel".to_string(), Value::from(panel))]
            .into_iter()
            .chain(constants)
            .collect()
    }

    fn metric_rows(&self, panels: &[PanelRecords]) -> anyhow::Result<Vec<Value>> {
        let population = self.groups.context("`groups` is required")?;
        let mut out = Vec::new();
        for run in panels {
            let index = MetricIndex::new(&run.metric_rows);
            let groups = (population.groups(&index).into_iter()).filter(|g| {
                self.comparisons.is_empty() || self.comparisons.contains(&g.comparison)
            });
            for g in groups {
                let lengths = match self.by_length {
                    true => (index.lengths(&g, population.marker()).into_iter())
                        .map(Some)
                        .collect(),
                    false => vec![None],
                };
                for length in lengths {
                    let mut row: Vec<(String, Value)> = vec![
                        ("model".into(), Value::from(g.model.as_str())),
                        ("domain".into(), Value::from(paper_domain(&g.domain))),
                        ("bank_domain".into(), Value::from(g.domain.as_str())),
                        ("comparison".into(), Value::from(g.comparison.as_str())),
                    ];
                    let mut fields = self.panel_fields(&run.panel).into_iter();
                    row.extend(fields.next());
                    if let Some(length) = length {
                        row.push(("length".into(), Value::from(length)));
                    }
                    row.extend(fields);
                    for metric in &self.metrics {
                        let found = index.get(&g, length, metric);
                        row.push((metric.clone(), Value::from_serialize(found)));
                    }
                    out.push(Value::from_iter(row));
                }
            }
        }
        Ok(out)
    }

    fn trajectory_rows(
        &self,
        panels: &[PanelRecords],
        env: &Environment<'static>,
    ) -> anyhow::Result<Vec<Value>> {
        let (keys, sums) = (
            self.compiled(env, &self.group_by)?,
            self.compiled(env, &self.sums)?,
        );
        let keep = (self.keep.as_deref())
            .map(|e| self.compile(env, e))
            .transpose()?;
        let mut groups: BTreeMap<Vec<Value>, (u64, Vec<Sum>)> = BTreeMap::new();
        for run in panels {
            let fields = self.panel_fields(&run.panel);
            for t in &run.trajectories {
                let record = with_fields(&Value::from_serialize(t), fields.iter().cloned())?;
                let at = |what: &str| {
                    let (source, item, arm) = (&self.rows, &t.item_id, &t.arm);
                    format!("source `{source}`: {what}, item {item} ({arm})")
                };
                let of = |what: &str, e: &minijinja::Expression<'_, '_>| {
                    e.eval(&record).with_context(|| at(what))
                };
                if let Some(keep) = &keep {
                    if !of("where", keep)?.is_true() {
                        continue;
                    }
                }
                let key = (keys.iter())
                    .map(|(name, e)| of(name, e))
                    .collect::<anyhow::Result<Vec<_>>>()?;
                let (n, totals) = groups
                    .entry(key)
                    .or_insert_with(|| (0, vec![Sum::Int(0); sums.len()]));
                *n += 1;
                for ((name, e), total) in sums.iter().zip(totals.iter_mut()) {
                    (total.add(&of(name, e)?)).with_context(|| at(&format!("sum `{name}`")))?;
                }
            }
        }
        Ok((groups.into_iter())
            .map(|(key, (n, totals))| {
                let named = (keys.iter().map(|(name, _)| name.to_string()).zip(key))
                    .chain([("n".to_string(), Value::from(n))])
                    .chain(
                        (sums.iter().zip(totals))
                            .map(|((name, _), t)| (name.to_string(), t.value())),
                    );
                Value::from_iter(named)
            })
            .collect())
    }
}

/// A row's fields, in order.
fn fields(row: &Value) -> anyhow::Result<Vec<(String, Value)>> {
    (row.try_iter()?)
        .map(|key| Ok((key.to_string(), row.get_item(&key)?)))
        .collect()
}

/// `row` with the fields `extra` after its own (one of the same name replacing its value).
fn with_fields(
    row: &Value,
    extra: impl IntoIterator<Item = (String, Value)>,
) -> anyhow::Result<Value> {
    let mut all = fields(row)?;
    all.extend(extra);
    Ok(Value::from_iter(all))
}

/// A running sum: whole while every term is (a Boolean counts 1), else a float.
#[derive(Debug, Clone, Copy)]
enum Sum {
    Int(i64),
    Float(f64),
}

impl Sum {
    fn add(&mut self, term: &Value) -> anyhow::Result<()> {
        let whole = match term.kind() {
            minijinja::value::ValueKind::Bool => Some(i64::from(term.is_true())),
            _ if term.is_integer() => term.as_i64(),
            _ => None,
        };
        *self = match (whole, *self) {
            (Some(x), Sum::Int(s)) => s
                .checked_add(x)
                .map_or(Sum::Float(s as f64 + x as f64), Sum::Int),
            (Some(x), Sum::Float(s)) => Sum::Float(s + x as f64),
            (None, _) => {
                let x = f64::try_from(term.clone())
                    .map_err(|_| anyhow::anyhow!("{term} is not a number"))?;
                Sum::Float(f64::try_from(self.value()).unwrap_or_default() + x)
            }
        };
        Ok(())
    }

    fn value(self) -> Value {
        match self {
            Sum::Int(s) => Value::from(s),
            Sum::Float(s) => Value::from(s),
        }
    }
}

/// The filters of a metrics row's metrics (each a metric row, or none), as every report
/// prints them (`report::tables`): `estimate` (a rate in percent with its interval, † for an
/// exact interval, ‡ when the metric given holds dropped bootstrap draws), `estimate_pp` (a
/// difference in signed percentage points), `value` (the point value), `ratio`
/// (`numerator/denominator`), `numerator` and `denominator`; `–` where undefined.
pub fn add_filters(env: &mut Environment<'static>) {
    type Metric = ViaDeserialize<Option<MetricRow>>;
    env.add_filter("estimate", |m: Metric, dropped: Option<Metric>| {
        let dropped = dropped.and_then(|d| d.0.and_then(|d| d.value));
        tables::estimate(m.0.as_ref(), dropped)
    });
    env.add_filter("estimate_pp", |m: Metric| tables::estimate_pp(m.0.as_ref()));
    env.add_filter("value", |m: Metric| m.0.and_then(|m| m.value));
    env.add_filter("ratio", |m: Metric| tables::ratio(m.0.as_ref()));
    env.add_filter("numerator", |m: Metric| tables::count(m.0.as_ref()));
    env.add_filter("denominator", |m: Metric| {
        let n = m.0.and_then(|m| m.denominator);
        n.map_or_else(|| tables::UNDEFINED.to_string(), |n| n.to_string())
    });
    // Exact binomial statistics of a count k of n (a trajectories row's sums): the
    // Clopper–Pearson interval at a level, `[low, high]` (none for n = 0 or an invalid level),
    // and the one-sided tail P(X ≥ k) for X ~ Binomial(n, p) (none for n = 0).
    env.add_filter("clopper_pearson", |k: u64, n: u64, level: f64| {
        let interval = c2s_stats::clopper_pearson(k, n, level).ok().flatten();
        interval.map(|i| vec![i.low, i.high])
    });
    env.add_filter("binomial_upper_tail", |k: u64, n: u64, p: f64| {
        c2s_stats::binomial_upper_tail(k, n, p)
    });
}

#[cfg(test)]
mod tests;
