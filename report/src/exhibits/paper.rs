//! The paper's printed numbers, as data: `exhibits/NAME.tsv` (or `NAME.PART.tsv` for an
//! exhibit that prints several tables) beside the exhibit's spec. Each file is one printed
//! table: a header naming its columns, then one tab-separated line per printed row, values as
//! the paper prints them (counts, percentages, intervals as three columns; no quoting; `#`
//! starts a comment line).
//!
//! Two readings: [`records`] gives each row as a map from the header's names to its values, as
//! the exhibit engine prints a table and the checks test it; an exhibit whose code computes with
//! the paper's numbers reads them into its own row type instead, field by field in column order
//! (a field that is a pair or an array takes that many columns):
//!
//! ```text
//! static PAPER: PaperTable<PaperRow> = PaperTable::new("table1");
//! for row in PAPER.rows()? { … }
//! ```
//!
//! There every column must be read: a row type narrower than its file's header is an error, as
//! is a value that does not parse, each naming the file and line.

use std::sync::OnceLock;

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::registry::PAPER_TABLES;

/// A table of the paper's printed numbers, read once on first use.
pub struct PaperTable<T: 'static> {
    name: &'static str,
    rows: OnceLock<Result<Vec<T>, String>>,
}

impl<T: DeserializeOwned + Serialize + Send + Sync + 'static> PaperTable<T> {
    /// The table `exhibits/NAME.tsv`.
    pub const fn new(name: &'static str) -> PaperTable<T> {
        PaperTable {
            name,
            rows: OnceLock::new(),
        }
    }

    /// Its rows, in the paper's order.
    pub fn rows(&'static self) -> anyhow::Result<&'static [T]> {
        let rows = self
            .rows
            .get_or_init(|| read(self.name).map_err(|e| format!("{e:#}")));
        rows.as_deref().map_err(|e| anyhow::anyhow!("{e}"))
    }
}

/// The table `text` (`exhibits/NAME.tsv`), split: its file name for messages, its header's column names and
/// each row's line number (as an editor numbers it) and cells, each row as wide as the header.
/// Comment and blank lines are skipped.
type Split<'t> = (String, Vec<&'t str>, Vec<(usize, Vec<&'t str>)>);

fn split<'t>(name: &str, text: &'t str) -> anyhow::Result<Split<'t>> {
    let file = format!("exhibits/{name}.tsv");
    let mut lines = (text.lines().enumerate())
        .map(|(i, line)| (i + 1, line))
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'));
    let Some((_, header)) = lines.next() else {
        anyhow::bail!("{file}: no header")
    };
    let columns: Vec<&str> = header.split('\t').collect();
    let mut rows = Vec::new();
    for (line, text) in lines {
        let cells: Vec<&str> = text.split('\t').collect();
        anyhow::ensure!(
            cells.len() == columns.len(),
            "{file}:{line}: {} values under {} columns",
            cells.len(),
            columns.len()
        );
        rows.push((line, cells));
    }
    Ok((file, columns, rows))
}

/// The text of the embedded table `name`.
fn text_of(name: &str) -> anyhow::Result<&'static str> {
    match PAPER_TABLES.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => Ok(text),
        None => anyhow::bail!("exhibits/{name}.tsv: no such table"),
    }
}

/// The rows of the embedded table `name`, each read into `T`.
fn read<T: DeserializeOwned + Serialize>(name: &str) -> anyhow::Result<Vec<T>> {
    parse(name, text_of(name)?)
}

/// The rows of the table `text`, each read into `T` (every column read).
fn parse<T: DeserializeOwned + Serialize>(name: &str, text: &str) -> anyhow::Result<Vec<T>> {
    let (file, columns, lines) = split(name, text)?;
    let mut rows = Vec::new();
    for (line, cells) in lines {
        let row: T = (csv::StringRecord::from(cells).deserialize(None))
            .with_context(|| format!("{file}:{line}"))?;
        let read = width(&row).with_context(|| format!("{file}:{line}"))?;
        anyhow::ensure!(
            read == columns.len(),
            "{file}:{line}: the exhibit reads {read} of the table's {} columns",
            columns.len()
        );
        rows.push(row);
    }
    Ok(rows)
}

/// The rows of the embedded table `name` as maps from its column names to its values, for the
/// exhibit engine ([`super::engine`]): `true`/`false` read as booleans, whole numbers as
/// integers, other numbers as floats, an empty cell as none, anything else as text.
pub fn records(name: &str) -> anyhow::Result<Vec<minijinja::Value>> {
    let (_, columns, lines) = split(name, text_of(name)?)?;
    Ok((lines.into_iter())
        .map(|(_, cells)| {
            (columns.iter().zip(cells))
                .map(|(column, cell)| (column.to_string(), typed(cell)))
                .collect()
        })
        .collect())
}

fn typed(cell: &str) -> minijinja::Value {
    if cell.is_empty() {
        return minijinja::Value::from(());
    }
    if let Ok(b) = cell.parse::<bool>() {
        return minijinja::Value::from(b);
    }
    if let Ok(i) = cell.parse::<i64>() {
        return minijinja::Value::from(i);
    }
    match cell.parse::<f64>() {
        Ok(f) => minijinja::Value::from(f),
        Err(_) => minijinja::Value::from(cell),
    }
}

/// Whether the table `exhibits/NAME.tsv` exists.
pub fn exists(name: &str) -> bool {
    PAPER_TABLES.iter().any(|(n, _)| *n == name)
}

/// How many columns a row takes: its fields written out flat.
fn width<T: Serialize>(row: &T) -> anyhow::Result<usize> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    writer.serialize(row)?;
    writer.flush()?;
    let bytes = writer.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes.as_slice());
    Ok(reader.records().next().transpose()?.map_or(0, |r| r.len()))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    struct Row {
        model: String,
        joint: [u64; 2],
        scr: (f64, f64, f64),
    }

    #[test]
    fn rows_are_read_in_column_order_with_pairs_and_arrays_flat() {
        let text =
            "model\tboth\tneither\tscr\tlow\thigh\n# a comment\nJev\t1\t2\t33.0\t-29\t37.5\n";
        let rows: Vec<Row> = parse("t", text).unwrap();
        let want = Row {
            model: "Jev".into(),
            joint: [1, 2],
            scr: (33.0, -29.0, 37.5),
        };
        assert_eq!(rows, [want]);
    }

    #[test]
    fn a_column_left_unread_or_a_bad_value_names_the_file_and_line() {
        let wide = "model\tboth\tneither\tscr\tlow\thigh\textra\nJev\t1\t2\t3\t4\t5\t6\n";
        let err = parse::<Row>("t", wide).unwrap_err();
        assert!(
            format!("{err:#}").contains("exhibits/t.tsv:2: the exhibit reads 6 of the table's 7"),
            "{err:#}"
        );
        let bad = "# a comment\nmodel\tboth\tneither\tscr\tlow\thigh\n\nJev\t1\tx\t3\t4\t5\n";
        let err = parse::<Row>("t", bad).unwrap_err();
        assert!(
            format!("{err:#}").starts_with("exhibits/t.tsv:4"),
            "{err:#}"
        );
        let short = "model\tboth\tneither\tscr\tlow\thigh\nJev\t1\t2\t3\t4\n";
        let err = parse::<Row>("t", short).unwrap_err();
        assert!(
            format!("{err:#}").contains("t.tsv:2: 5 values under 6 columns"),
            "{err:#}"
        );
    }

    /// Every embedded table is read by its exhibit's tests; here, that each one is named by a
    /// registered exhibit (`NAME.tsv` or `NAME.PART.tsv`).
    #[test]
    fn every_table_belongs_to_an_exhibit() {
        let specs = super::super::registry::specs().unwrap();
        for (name, _) in PAPER_TABLES {
            let exhibit = name.split('.').next().unwrap_or(name);
            assert!(
                specs.iter().any(|s| s.name == exhibit),
                "exhibits/{name}.tsv: no exhibit {exhibit}"
            );
        }
    }
}
