//! A small document model (headings, paragraphs, key/value lists, tables, figures) rendered
//! both as Markdown and as a self-contained HTML page, so the two reports hold the same text
//! and the same tables.

use std::fmt::Write as _;

/// A table: header, rows of cells (already formatted) and notes printed under it.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Leading text columns (left-aligned); the others are right-aligned.
    pub text_columns: usize,
    /// Column headings, one per column.
    pub header: Vec<String>,
    /// Body rows, each a cell per column, already formatted for printing.
    pub rows: Vec<Vec<String>>,
    /// Paragraphs printed under the table (sources, footnotes, caveats).
    pub notes: Vec<String>,
}

/// A figure written as `svg` (and `png` when it could be rasterized), both relative to the
/// report.
#[derive(Debug, Clone)]
pub struct FigureRef {
    /// Figure title, also the image's alt text.
    pub title: String,
    /// Path of the SVG file, relative to the report.
    pub svg: String,
    /// Path of the PNG file, relative to the report; `None` when it was not rasterized.
    pub png: Option<String>,
    /// Caption printed after the title.
    pub caption: String,
}

/// One element of a [`Doc`], in reading order.
#[derive(Debug, Clone)]
pub enum Block {
    /// A heading of the given level (clamped to 2–6 when rendered) and its text.
    Heading(u8, String),
    /// A paragraph of plain text (escaped in HTML).
    Paragraph(String),
    /// `key: value` lines.
    List(Vec<(String, String)>),
    /// A table with its notes.
    Table(Table),
    /// A figure reference with its caption.
    Figure(FigureRef),
}

/// A report document: a title and its blocks, rendered by [`Doc::markdown`] and
/// [`Doc::html`].
#[derive(Debug, Clone, Default)]
pub struct Doc {
    /// The page title (the Markdown `#` heading and the HTML `<title>` and `<h1>`).
    pub title: String,
    /// The content, in reading order.
    pub blocks: Vec<Block>,
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Escapes `&`, `<`, `>`, `"` and `'` as HTML entities, for text and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Numeric-looking cells are right-aligned in HTML.
fn is_numeric(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || matches!(c, '–' | '−' | '-' | '<' | '+' | '['))
}

impl Doc {
    /// An empty document with this title.
    pub fn new(title: impl Into<String>) -> Doc {
        Doc {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Appends a heading of `level` (2–6 when rendered).
    pub fn h(&mut self, level: u8, text: impl Into<String>) {
        self.blocks.push(Block::Heading(level, text.into()));
    }

    /// Appends a paragraph.
    pub fn p(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Paragraph(text.into()));
    }

    /// Appends a `key: value` list; an empty list adds nothing.
    pub fn list(&mut self, items: Vec<(String, String)>) {
        if !items.is_empty() {
            self.blocks.push(Block::List(items));
        }
    }

    /// Appends a table.
    pub fn table(&mut self, t: Table) {
        self.blocks.push(Block::Table(t));
    }

    /// Appends a figure reference.
    pub fn figure(&mut self, f: FigureRef) {
        self.blocks.push(Block::Figure(f));
    }

    /// The document as Markdown: pipe tables (text columns left-aligned, the rest
    /// right-aligned), figures showing the PNG when there is one and linking both files.
    pub fn markdown(&self) -> String {
        let mut s = format!("# {}\n\n", self.title);
        for b in &self.blocks {
            match b {
                Block::Heading(level, text) => {
                    let _ = writeln!(
                        s,
                        "{} {text}\n",
                        "#".repeat(usize::from(*level).clamp(2, 6))
                    );
                }
                Block::Paragraph(text) => {
                    let _ = writeln!(s, "{text}\n");
                }
                Block::List(items) => {
                    for (k, v) in items {
                        let _ = writeln!(s, "- **{k}:** {v}");
                    }
                    s.push('\n');
                }
                Block::Table(t) => {
                    let _ = writeln!(
                        s,
                        "| {} |",
                        t.header
                            .iter()
                            .map(|h| md_cell(h))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    );
                    let _ = writeln!(
                        s,
                        "|{}|",
                        t.header
                            .iter()
                            .enumerate()
                            .map(|(i, _)| if i < t.text_columns.max(1) {
                                "---"
                            } else {
                                "---:"
                            })
                            .collect::<Vec<_>>()
                            .join("|")
                    );
                    for r in &t.rows {
                        let _ = writeln!(
                            s,
                            "| {} |",
                            r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
                        );
                    }
                    s.push('\n');
                    for n in &t.notes {
                        let _ = writeln!(s, "{n}\n");
                    }
                }
                Block::Figure(f) => {
                    let shown = f.png.as_deref().unwrap_or(&f.svg);
                    let _ = writeln!(s, "![{}]({shown})\n", md_cell(&f.title));
                    let mut links = format!("[SVG]({})", f.svg);
                    if let Some(png) = &f.png {
                        let _ = write!(links, " · [PNG]({png})");
                    }
                    let _ = writeln!(s, "*{}* — {}. {links}\n", f.title, f.caption);
                }
            }
        }
        s
    }

    /// The document as a self-contained HTML page with inline CSS; figures embed the SVG and
    /// link the PNG, numeric-looking cells are right-aligned.
    pub fn html(&self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
            html_escape(&self.title),
            html_escape(&self.title)
        );
        for b in &self.blocks {
            match b {
                Block::Heading(level, text) => {
                    let l = level.clamp(&2, &6);
                    let _ = writeln!(s, "<h{l}>{}</h{l}>", html_escape(text));
                }
                Block::Paragraph(text) => {
                    let _ = writeln!(s, "<p>{}</p>", html_escape(text));
                }
                Block::List(items) => {
                    s.push_str("<ul>\n");
                    for (k, v) in items {
                        let _ = writeln!(
                            s,
                            "<li><strong>{}:</strong> {}</li>",
                            html_escape(k),
                            html_escape(v)
                        );
                    }
                    s.push_str("</ul>\n");
                }
                Block::Table(t) => {
                    s.push_str("<div class=\"table\"><table>\n<thead><tr>");
                    for h in &t.header {
                        let _ = write!(s, "<th>{}</th>", html_escape(h));
                    }
                    s.push_str("</tr></thead>\n<tbody>\n");
                    for r in &t.rows {
                        s.push_str("<tr>");
                        for (i, c) in r.iter().enumerate() {
                            let class = if i >= t.text_columns.max(1) && is_numeric(c) {
                                " class=\"num\""
                            } else {
                                ""
                            };
                            let _ = write!(s, "<td{class}>{}</td>", html_escape(c));
                        }
                        s.push_str("</tr>\n");
                    }
                    s.push_str("</tbody>\n</table></div>\n");
                    for n in &t.notes {
                        let _ = writeln!(s, "<p class=\"note\">{}</p>", html_escape(n));
                    }
                }
                Block::Figure(f) => {
                    let _ = write!(
                        s,
                        "<figure>\n<img src=\"{}\" alt=\"{}\">\n<figcaption><strong>{}</strong> — {}. \
                         <a href=\"{}\">SVG</a>",
                        html_escape(&f.svg),
                        html_escape(&f.title),
                        html_escape(&f.title),
                        html_escape(&f.caption),
                        html_escape(&f.svg)
                    );
                    if let Some(png) = &f.png {
                        let _ = write!(s, " · <a href=\"{}\">PNG</a>", html_escape(png));
                    }
                    s.push_str("</figcaption>\n</figure>\n");
                }
            }
        }
        s.push_str("</body>\n</html>\n");
        s
    }
}

const CSS: &str = "body { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; \
margin: 2em auto; max-width: 1280px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.5em; }
.table { overflow-x: auto; margin: 0.8em 0; }
table { border-collapse: collapse; font-size: 0.88em; }
th, td { border: 1px solid #d0d0d0; padding: 0.25em 0.55em; white-space: nowrap; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
p.note { font-size: 0.85em; color: #555; margin: 0.3em 0; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; }
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_tables_and_figures_in_both_formats() {
        let mut d = Doc::new("T <1>");
        d.h(2, "Section");
        d.table(Table {
            text_columns: 1,
            header: vec!["a".into(), "b|c".into()],
            rows: vec![vec!["x".into(), "–".into()]],
            notes: vec!["note".into()],
        });
        d.figure(FigureRef {
            title: "F".into(),
            svg: "figures/f.svg".into(),
            png: Some("figures/f.png".into()),
            caption: "cap".into(),
        });
        let md = d.markdown();
        assert!(md.contains("| a | b\\|c |"));
        assert!(md.contains("![F](figures/f.png)"));
        let html = d.html();
        assert!(html.contains("<title>T &lt;1&gt;</title>"));
        assert!(html.contains("<img src=\"figures/f.svg\""));
        assert!(html.contains("<td class=\"num\">–</td>"));
    }
}
