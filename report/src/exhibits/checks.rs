//! What the paper's printed numbers must satisfy, as data: a spec's `[[checks]]`, each an
//! expression over one printed table, evaluated by one test over every spec
//! (`every_specs_checks_hold`). A transcription error that breaks a printed identity (joint
//! counts that do not add up to the items, an SCR count that is not both / Native correct) fails
//! it, naming the spec, the table, the row and the expression.
//!
//! ```toml
//! [[checks]]
//! why = "every row holds 384 items"
//! each = "both + native_only + serial_only + neither == 384"   # true of every row
//!
//! [[checks]]
//! why = "Jev's math row prints 123 both-correct items"
//! all = "(rows | selectattr('model', 'eq', 'Jev') | first).both == 123"   # `rows`: the table
//! ```
//!
//! `table` names the printed table (`paper`, the exhibit's own, or `paper:OTHER`). Expressions
//! are minijinja's, with the engine's filters, `approx(x, y, tolerance)` (`|x − y| ≤
//! tolerance`) and `table("OTHER")` (the rows of `exhibits/OTHER.tsv`, for an identity between
//! two printed tables).

use anyhow::Context;
use minijinja::value::Value;
use serde::Deserialize;

/// One check of a spec's printed numbers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// What the check holds, as the paper states or implies it.
    pub why: String,
    /// The printed table: `paper` (the exhibit's own) or `paper:OTHER`.
    #[serde(default = "own_table")]
    pub table: String,
    /// An expression true of every row (the row's columns as names, and the row as `row`,
    /// for a column whose name is not one: `row['T0/O0']`).
    pub each: Option<String>,
    /// An expression true of the whole table (`rows`).
    pub all: Option<String>,
}

fn own_table() -> String {
    "paper".into()
}

/// Evaluates the checks of the spec `name`; the first that fails is the error.
pub fn run(name: &str, checks: &[CheckSpec]) -> anyhow::Result<()> {
    let mut env = super::filters::environment();
    env.add_function("approx", |x: f64, y: f64, tolerance: f64| {
        (x - y).abs() <= tolerance
    });
    for check in checks {
        let table = match check.table.split_once(':') {
            None if check.table == "paper" => name,
            Some(("paper", table)) => table,
            _ => anyhow::bail!("exhibits/{name}.toml: no printed table `{}`", check.table),
        };
        let context = || format!("exhibits/{name}.toml: check {:?} on {table}", check.why);
        let rows = super::paper::records(table).with_context(context)?;
        match (&check.each, &check.all) {
            (Some(each), None) => {
                let expression = (env.compile_expression(each))
                    .map_err(|e| anyhow::anyhow!("{each:?}: {e:#}"))
                    .with_context(context)?;
                for (i, row) in rows.iter().enumerate() {
                    let names = minijinja::context! { row => row.clone(), ..row.clone() };
                    let holds = (expression.eval(names))
                        .map_err(|e| anyhow::anyhow!("{each:?}: {e:#}"))
                        .with_context(context)?;
                    anyhow::ensure!(
                        holds.is_true(),
                        "{}: row {} ({row}) breaks {each:?}",
                        context(),
                        i + 1
                    );
                }
            }
            (None, Some(all)) => {
                let expression = (env.compile_expression(all))
                    .map_err(|e| anyhow::anyhow!("{all:?}: {e:#}"))
                    .with_context(context)?;
                let holds = (expression.eval(minijinja::context! { rows => Value::from(rows) }))
                    .map_err(|e| anyhow::anyhow!("{all:?}: {e:#}"))
                    .with_context(context)?;
                anyhow::ensure!(holds.is_true(), "{}: the table breaks {all:?}", context());
            }
            _ => anyhow::bail!("{}: give one of `each` and `all`", context()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spec's checks hold of the paper's printed tables.
    #[test]
    fn every_specs_checks_hold() {
        let specs = super::super::registry::specs().unwrap();
        let mut checked = 0;
        for spec in specs {
            run(&spec.name, &spec.checks).unwrap();
            checked += spec.checks.len();
        }
        assert!(checked > 0);
    }

    /// A check that does not hold names the spec, the row and the expression.
    #[test]
    fn a_broken_check_names_its_row() {
        let checks: Vec<CheckSpec> =
            toml::from_str::<toml::Table>("[[checks]]\nwhy = \"w\"\neach = \"both < 100\"\n")
                .unwrap()["checks"]
                .clone()
                .try_into()
                .unwrap();
        let err = format!("{:#}", run("table1", &checks).unwrap_err());
        assert!(
            err.contains("exhibits/table1.toml") && err.contains("row 1"),
            "{err}"
        );
        assert!(err.contains("both < 100"), "{err}");
    }
}
