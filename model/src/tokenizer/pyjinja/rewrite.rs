//! What minijinja's grammar decides differently from Jinja2, rewritten in the template's
//! source before it compiles: the template is parsed (minijinja's own parser), and
//! - the operators `%`, `~`, `+`, `/`, `//` and `**` become calls of Python's
//!   operators ([`operators`](super::operators)): `'%s' % x` formats as Python formats,
//!   `~` joins `str()`s, `Markup + str` escapes, `1 / 0` fails;
//! - tuple literals `(1, 2)` (and a bare `a, b` value) become `__py_tuple(…)`, so they print
//!   and compare as tuples;
//! - string literals are decoded as Python decodes them (`\` before a newline continues
//!   the line, `\x41`, `\101`, `\a`, `\v`, `\N{BULLET}`), where minijinja's decoding
//!   differs;
//! - comparisons and `in` become `__py_compare(a, "==", b, …)`, slices
//!   `__py_slice(x, start, stop, step)` and `*` `__py_mul(a, b)`
//!   ([`compare`](super::compare)); an `and` of two constants is kept from minijinja's
//!   folding (which gives `false` where Python gives the falsy operand);
//! - `{% set ns._x = … %}` refuses as transformers' sandbox does.
//!
//! Jinja2 also normalizes every line ending of the source to `\n`. Assignment targets
//! (`{% for k, v in … %}`, `{% set a, b = … %}`) are left as they are. A source that does
//! not parse is returned unchanged, so the compiler reports its error.

use minijinja::machinery::ast::{self, BinOpKind, CallArg, CompareOpKind, Expr, Stmt};
use minijinja::machinery::{parse, Span, WhitespaceConfig};
use minijinja::syntax::SyntaxConfig;

use super::compare::CompareOp;

/// One change to the source: text inserted at `at` after removing `remove` bytes.
struct Edit {
    at: usize,
    remove: usize,
    insert: String,
    /// At one offset: closings (deepest first), then openings (outermost first), then the
    /// replacement (an operator right after a closing, or a literal right after openings).
    order: (u8, i64),
}

/// The source with Python's operators, tuples and string literals (above).
pub fn rewrite(source: &str) -> String {
    let source = source.replace("\r\n", "\n").replace('\r', "\n");
    let ws = WhitespaceConfig {
        keep_trailing_newline: false,
        lstrip_blocks: true,
        trim_blocks: true,
    };
    let Ok(ast) = parse(&source, "chat", SyntaxConfig, ws) else {
        return source;
    };
    let mut edits = Vec::new();
    let mut walker = Walker {
        source: &source,
        edits: &mut edits,
    };
    walker.stmt(&ast, 0);
    apply(&source, edits)
}

fn apply(source: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.at, e.order));
    let mut out = String::with_capacity(source.len() + edits.len() * 12);
    let mut pos = 0;
    for e in edits {
        if e.at < pos {
            continue; // inside text already removed (cannot happen for well-formed spans)
        }
        out.push_str(&source[pos..e.at]);
        out.push_str(&e.insert);
        pos = e.at + e.remove;
    }
    out.push_str(&source[pos..]);
    out
}

struct Walker<'s, 'e> {
    source: &'s str,
    edits: &'e mut Vec<Edit>,
}

impl Walker<'_, '_> {
    fn open(&mut self, at: usize, text: &str, depth: i64) {
        self.edits.push(Edit {
            at,
            remove: 0,
            insert: text.into(),
            order: (1, depth),
        });
    }

    fn close(&mut self, at: usize, text: &str, depth: i64) {
        self.edits.push(Edit {
            at,
            remove: 0,
            insert: text.into(),
            order: (0, -depth),
        });
    }

    fn replace(&mut self, at: usize, remove: usize, text: &str) {
        self.edits.push(Edit {
            at,
            remove,
            insert: text.into(),
            order: (2, 0),
        });
    }

    fn stmts(&mut self, body: &[Stmt<'_>], depth: i64) {
        for s in body {
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, stmt: &Stmt<'_>, depth: i64) {
        match stmt {
            Stmt::Template(t) => self.stmts(&t.children, depth),
            Stmt::EmitExpr(e) => self.expr(&e.expr, depth),
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                self.target(&f.target, depth);
                // `for x in E` iterates `__py_iter(E)`: None raises as in Python, a string
                // becomes its characters (so `loop.length` and `loop.revindex` exist).
                let span = span_of(&f.iter);
                self.open(leftmost(&f.iter) as usize, "__py_iter(", depth);
                self.close(span.end_offset as usize, ")", depth);
                self.expr(&f.iter, depth + 1);
                if let Some(e) = &f.filter_expr {
                    self.expr(e, depth);
                }
                self.stmts(&f.body, depth);
                self.stmts(&f.else_body, depth);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr, depth);
                self.stmts(&i.true_body, depth);
                self.stmts(&i.false_body, depth);
            }
            Stmt::WithBlock(w) => {
                for (target, value) in &w.assignments {
                    self.target(target, depth);
                    self.expr(value, depth);
                }
                self.stmts(&w.body, depth);
            }
            Stmt::Set(s) => {
                self.target(&s.target, depth);
                // transformers' sandbox refuses `set ns._x = …` when it runs (after the value).
                if let Expr::GetAttr(g) = &s.target {
                    if g.name.starts_with('_') {
                        let call = format!("__py_refuse_underscore_attr({}, ", quote(g.name));
                        self.open(leftmost(&s.expr) as usize, &call, depth);
                        self.close(span_of(&s.expr).end_offset as usize, ")", depth);
                        self.expr(&s.expr, depth + 1);
                        return;
                    }
                }
                self.expr(&s.expr, depth);
            }
            Stmt::SetBlock(s) => {
                self.target(&s.target, depth);
                if let Some(f) = &s.filter {
                    self.expr(f, depth);
                }
                self.stmts(&s.body, depth);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled, depth);
                self.stmts(&a.body, depth);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter, depth);
                self.stmts(&f.body, depth);
            }
            Stmt::Block(b) => self.stmts(&b.body, depth),
            Stmt::Import(_) | Stmt::FromImport(_) | Stmt::Extends(_) | Stmt::Include(_) => {}
            Stmt::Macro(m) => self.macro_decl(m, depth),
            Stmt::CallBlock(c) => {
                self.call(&c.call, depth);
                self.macro_decl(&c.macro_decl, depth);
            }
            Stmt::Do(d) => self.call(&d.call, depth),
        }
    }

    fn macro_decl(&mut self, m: &ast::Macro<'_>, depth: i64) {
        for d in &m.defaults {
            self.expr(d, depth);
        }
        self.stmts(&m.body, depth);
    }

    fn call(&mut self, c: &ast::Call<'_>, depth: i64) {
        self.expr(&c.expr, depth);
        self.args(&c.args, depth);
    }

    fn args(&mut self, args: &[CallArg<'_>], depth: i64) {
        for a in args {
            match a {
                CallArg::Pos(e)
                | CallArg::Kwarg(_, e)
                | CallArg::PosSplat(e)
                | CallArg::KwargSplat(e) => self.expr(e, depth),
            }
        }
    }

    /// An assignment target: only the values inside it (e.g. a subscript) are rewritten.
    fn target(&mut self, e: &Expr<'_>, depth: i64) {
        match e {
            Expr::List(l) => {
                for item in &l.items {
                    self.target(item, depth);
                }
            }
            Expr::Var(_) | Expr::GetAttr(_) => {}
            other => self.expr(other, depth),
        }
    }

    fn expr(&mut self, e: &Expr<'_>, depth: i64) {
        match e {
            Expr::Var(_) => {}
            Expr::Const(c) => self.string_literal(c.span(), &c.value),
            Expr::Slice(s) => self.slice(s.span(), s, depth),
            Expr::UnaryOp(u) => self.expr(&u.expr, depth),
            Expr::BinOp(b) => self.binop(b.span(), b, depth),
            Expr::Compare(c) => {
                let links: Vec<(CompareOp, &Expr<'_>)> = c
                    .ops
                    .iter()
                    .map(|op| (chain_comparison(op.op), &op.expr))
                    .collect();
                self.comparison(&c.expr, &links, c.span().end_offset, depth)
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr, depth);
                self.expr(&i.true_expr, depth);
                if let Some(f) = &i.false_expr {
                    self.expr(f, depth);
                }
            }
            Expr::Filter(f) => {
                if let Some(e) = &f.expr {
                    self.expr(e, depth);
                }
                self.args(&f.args, depth);
            }
            Expr::Test(t) => {
                // `x.upper is callable`: Jinja2's getattr finds the method first.
                if let (Expr::GetAttr(g), "callable") = (&t.expr, t.name) {
                    if self.getattr(g, depth) {
                        return self.args(&t.args, depth);
                    }
                }
                self.expr(&t.expr, depth);
                self.args(&t.args, depth);
            }
            Expr::GetAttr(g) => self.expr(&g.expr, depth),
            Expr::GetItem(g) => {
                self.expr(&g.expr, depth);
                self.expr(&g.subscript_expr, depth);
            }
            Expr::Call(c) => self.call(c, depth),
            Expr::List(l) => self.list(l.span(), &l.items, depth),
            Expr::Map(m) => {
                for (k, v) in m.keys.iter().zip(&m.values) {
                    self.expr(k, depth);
                    self.expr(v, depth);
                }
            }
        }
    }

    fn binop(&mut self, span: Span, b: &ast::BinOp<'_>, depth: i64) {
        // A lone comparison is a binary operator in minijinja's tree (`not in` an `in`
        // under a `not`); its span starts at the token before it.
        if let Some(op) = binop_comparison(b.op) {
            return self.comparison(&b.left, &[(op, &b.right)], span.end_offset, depth);
        }
        let (function, symbol) = match b.op {
            BinOpKind::Rem => ("__py_mod", "%"),
            BinOpKind::Concat => ("__py_concat", "~"),
            BinOpKind::Add => ("__py_add", "+"),
            BinOpKind::Div => ("__py_div", "/"),
            BinOpKind::FloorDiv => ("__py_floordiv", "//"),
            BinOpKind::Pow => ("__py_pow", "**"),
            BinOpKind::Mul => ("__py_mul", "*"),
            // minijinja folds `and` of two constants to `false` where Python gives the
            // falsy operand (`0 and 'b'` is 0): a call on the left is not folded.
            BinOpKind::ScAnd if b.left.as_const().is_some() && b.right.as_const().is_some() => {
                self.open(leftmost(&b.left) as usize, "__py_value(", depth);
                self.close(span_of(&b.left).end_offset as usize, ")", depth);
                self.expr(&b.left, depth + 1);
                self.expr(&b.right, depth);
                return;
            }
            _ => {
                self.expr(&b.left, depth);
                self.expr(&b.right, depth);
                return;
            }
        };
        let (left_end, right_start) = (
            span_of(&b.left).end_offset as usize,
            span_of(&b.right).start_offset as usize,
        );
        // Between the operands there is only whitespace, parentheses and the operator.
        let Some(gap) = self.source.get(left_end..right_start) else {
            return;
        };
        let Some(at) = gap.find(symbol).map(|i| left_end + i) else {
            return;
        };
        self.open(span.start_offset as usize, &format!("{function}("), depth);
        self.replace(at, symbol.len(), ", ");
        self.close(span.end_offset as usize, ")", depth);
        self.expr(&b.left, depth + 1);
        self.expr(&b.right, depth + 1);
    }

    /// `a OP b OP c …` becomes `__py_compare(a, "OP", b, "OP", c …)`: Python's comparisons
    /// ([`compare`](super::compare)), a chain ending at its first false link. `links` are
    /// the operators (`in` stands for `in` and `not in`: the text tells) and right operands;
    /// `end` is where the comparison's text ends.
    fn comparison(
        &mut self,
        first: &Expr<'_>,
        links: &[(CompareOp, &Expr<'_>)],
        end: u32,
        depth: i64,
    ) {
        let mut replacements = Vec::new();
        let mut left_end = span_of(first).end_offset as usize;
        let mut first_parens = 0;
        for (i, (op, right)) in links.iter().enumerate() {
            let right_start = leftmost(right) as usize;
            let symbol = op.symbol();
            // Between the operands there is only whitespace, parentheses and the operator.
            let found = self.source.get(left_end..right_start).and_then(|gap| {
                let at = gap.find(symbol)?;
                let not = (*op == CompareOp::In)
                    .then(|| gap[..at].find("not"))
                    .flatten();
                if i == 0 {
                    first_parens = gap[..at].matches(')').count();
                }
                Some(match not {
                    Some(n) => (left_end + n, at + symbol.len() - n, CompareOp::NotIn),
                    None => (left_end + at, symbol.len(), *op),
                })
            });
            let Some(found) = found else {
                return self.comparison_operands(first, links, depth);
            };
            replacements.push(found);
            left_end = span_of(right).end_offset as usize;
        }
        let Some(start) = self.start_with_parens(first, first_parens) else {
            return self.comparison_operands(first, links, depth);
        };
        self.open(start, "__py_compare(", depth);
        for (at, len, op) in replacements {
            self.replace(at, len, &format!(", {}, ", quote(op.symbol())));
        }
        self.close(end as usize, ")", depth);
        self.comparison_operands(first, links, depth + 1);
    }

    /// `x.name` becomes `__py_getattr(x, "name")` (Python's methods before minijinja's
    /// attributes and items); false if the text is not as expected.
    fn getattr(&mut self, g: &ast::Spanned<ast::GetAttr<'_>>, depth: i64) -> bool {
        let (base_end, end) = (
            span_of(&g.expr).end_offset as usize,
            g.span().end_offset as usize,
        );
        let Some(dot) = self.source.get(base_end..end).and_then(|t| t.find('.')) else {
            return false;
        };
        let parens = self.source[base_end..base_end + dot].matches(')').count();
        let Some(start) = self.start_with_parens(&g.expr, parens) else {
            return false;
        };
        self.open(start, "__py_getattr(", depth);
        self.replace(
            base_end + dot,
            end - base_end - dot,
            &format!(", {})", quote(g.name)),
        );
        self.expr(&g.expr, depth + 1);
        true
    }

    /// Where the text of `e` starts with its `parens` enclosing parentheses (the ones closed
    /// between it and the operator after it): its span starts inside them.
    fn start_with_parens(&self, e: &Expr<'_>, mut parens: usize) -> Option<usize> {
        let mut start = leftmost(e) as usize;
        let bytes = self.source.as_bytes();
        while parens > 0 {
            start = start.checked_sub(1)?;
            match bytes[start] {
                b'(' => parens -= 1,
                b' ' | b'\t' | b'\n' => {}
                _ => return None,
            }
        }
        Some(start)
    }

    fn comparison_operands(
        &mut self,
        first: &Expr<'_>,
        links: &[(CompareOp, &Expr<'_>)],
        depth: i64,
    ) {
        self.expr(first, depth);
        for (_, right) in links {
            self.expr(right, depth);
        }
    }

    /// `seq[start:stop:step]` becomes `__py_slice(seq, start, stop, step)` (absent parts
    /// `none`): Python's slice indices, and a tuple's or a range's slice keeps its type.
    fn slice(&mut self, span: Span, s: &ast::Slice<'_>, depth: i64) {
        let parts = [&s.start, &s.stop, &s.step];
        let (seq_end, end) = (
            span_of(&s.expr).end_offset as usize,
            span.end_offset as usize,
        );
        let close = end.checked_sub(1);
        let bracket = self
            .source
            .get(seq_end..end)
            .and_then(|t| t.find('['))
            .map(|i| seq_end + i);
        let (Some(bracket), Some(close)) = (bracket, close) else {
            return self.slice_parts(s, &parts, depth);
        };
        if self.source.as_bytes().get(close) != Some(&b']') {
            return self.slice_parts(s, &parts, depth);
        }
        // The separators: `[`, then each `:` after the previous part, then `]`.
        let mut separators = vec![bracket];
        let mut from = bracket + 1;
        for part in parts.iter().take(2) {
            if let Some(p) = part {
                from = span_of(p).end_offset as usize;
            }
            match self.source.get(from..close).and_then(|t| t.find(':')) {
                Some(i) => {
                    separators.push(from + i);
                    from += i + 1;
                }
                None => break,
            }
        }
        let parens = self.source[seq_end..bracket].matches(')').count();
        let Some(start) = self.start_with_parens(&s.expr, parens) else {
            return self.slice_parts(s, &parts, depth);
        };
        self.open(start, "__py_slice(", depth);
        for (i, part) in parts.iter().enumerate() {
            let absent = if part.is_none() { "none" } else { "" };
            match separators.get(i) {
                Some(&at) => self.replace(at, 1, &format!(", {absent}")),
                // `[a]`-less forms: `x[a:b]` has no second `:`, the step goes before `]`.
                None => self.open(close, &format!(", {absent}"), depth),
            }
        }
        self.replace(close, 1, ")");
        self.slice_parts(s, &parts, depth + 1);
    }

    fn slice_parts(&mut self, s: &ast::Slice<'_>, parts: &[&Option<Expr<'_>>; 3], depth: i64) {
        self.expr(&s.expr, depth);
        for part in parts.iter().copied().flatten() {
            self.expr(part, depth);
        }
    }

    fn list(&mut self, span: Span, items: &[Expr<'_>], depth: i64) {
        // A bare tuple's span starts after its first item: start at that item.
        let start = items.first().map_or(span.start_offset, |first| {
            span_of(first).start_offset.min(span.start_offset)
        }) as usize;
        match self.source.as_bytes().get(start) {
            Some(b'[') => {}
            Some(b'(') => self.open(start, "__py_tuple", depth),
            _ => {
                self.open(start, "__py_tuple(", depth);
                self.close(span.end_offset as usize, ")", depth);
            }
        }
        for item in items {
            self.expr(item, depth + 1);
        }
    }

    /// A string literal whose Python decoding differs from minijinja's is replaced by a
    /// literal of Python's value.
    fn string_literal(&mut self, span: Span, value: &minijinja::Value) {
        let Some(ours) = value.as_str() else {
            return;
        };
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        let Some(raw) = self.source.get(start..end) else {
            return;
        };
        if raw.len() < 2 || !raw.contains('\\') {
            return;
        }
        let Some(python) = python_unescape(&raw[1..raw.len() - 1]) else {
            return;
        };
        if python != ours {
            self.replace(start, end - start, &quote(&python));
        }
    }
}

/// Where an expression's text starts: a postfix expression's span (an attribute, an item, a
/// call, a filter, a test) and a bare tuple's start at their operator or second item, after
/// the text of their base.
fn leftmost(e: &Expr<'_>) -> u32 {
    // A comparison's own span starts at the token before it.
    match e {
        Expr::Compare(c) => return leftmost(&c.expr),
        Expr::BinOp(b) if binop_comparison(b.op).is_some() => return leftmost(&b.left),
        _ => {}
    }
    let own = span_of(e).start_offset;
    let base = match e {
        Expr::GetAttr(g) => Some(leftmost(&g.expr)),
        Expr::GetItem(g) => Some(leftmost(&g.expr)),
        Expr::Call(c) => Some(leftmost(&c.expr)),
        Expr::Slice(s) => Some(leftmost(&s.expr)),
        Expr::Filter(f) => f.expr.as_ref().map(leftmost),
        Expr::Test(t) => Some(leftmost(&t.expr)),
        Expr::BinOp(b) => Some(leftmost(&b.left)),
        Expr::Compare(c) => Some(leftmost(&c.expr)),
        Expr::IfExpr(i) => Some(leftmost(&i.true_expr)),
        Expr::List(l) => l.items.first().map(leftmost),
        _ => None,
    };
    base.map_or(own, |b| b.min(own))
}

/// The comparison that minijinja's tree holds as a binary operator (a lone comparison), if
/// `op` is one (`not in` is an `in` under a `not`: the rewriter reads the text).
fn binop_comparison(op: BinOpKind) -> Option<CompareOp> {
    Some(match op {
        BinOpKind::Eq => CompareOp::Eq,
        BinOpKind::Ne => CompareOp::Ne,
        BinOpKind::Lt => CompareOp::Lt,
        BinOpKind::Lte => CompareOp::Le,
        BinOpKind::Gt => CompareOp::Gt,
        BinOpKind::Gte => CompareOp::Ge,
        BinOpKind::In => CompareOp::In,
        _ => return None,
    })
}

/// A chained comparison's operator (`not in` as `in`: the rewriter reads which).
fn chain_comparison(op: CompareOpKind) -> CompareOp {
    match op {
        CompareOpKind::Eq => CompareOp::Eq,
        CompareOpKind::Ne => CompareOp::Ne,
        CompareOpKind::Lt => CompareOp::Lt,
        CompareOpKind::Lte => CompareOp::Le,
        CompareOpKind::Gt => CompareOp::Gt,
        CompareOpKind::Gte => CompareOp::Ge,
        CompareOpKind::In | CompareOpKind::NotIn => CompareOp::In,
    }
}

fn span_of(e: &Expr<'_>) -> Span {
    match e {
        Expr::Var(s) => s.span(),
        Expr::Const(s) => s.span(),
        Expr::Slice(s) => s.span(),
        Expr::UnaryOp(s) => s.span(),
        Expr::BinOp(s) => s.span(),
        Expr::Compare(s) => s.span(),
        Expr::IfExpr(s) => s.span(),
        Expr::Filter(s) => s.span(),
        Expr::Test(s) => s.span(),
        Expr::GetAttr(s) => s.span(),
        Expr::GetItem(s) => s.span(),
        Expr::Call(s) => s.span(),
        Expr::List(s) => s.span(),
        Expr::Map(s) => s.span(),
    }
}

/// Python's `unicode-escape` decoding of a literal's body, as Jinja2's lexer decodes it
/// (None for an escape Python refuses, such as an unknown `\N{name}`: minijinja decides).
fn python_unescape(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut n = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            n = n * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(n)?);
            }
            'x' | 'u' | 'U' => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..len).filter_map(|_| chars.next()).collect();
                if hex.len() != len {
                    return None;
                }
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            // `\N{BULLET}`: Python looks the name up in Unicode's table (any case).
            'N' => {
                if chars.next() != Some('{') {
                    return None;
                }
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                out.push(unicode_names2::character(&name.to_uppercase())?);
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// A minijinja string literal of `value` (only `\\`, `"` and control characters escaped).
fn quote(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_tuples_and_literals_are_rewritten() {
        assert_eq!(rewrite("{{ '%s' % x }}"), "{{ __py_mod('%s' ,  x) }}");
        assert_eq!(
            rewrite("{{ a % b % c }}"),
            "{{ __py_mod(__py_mod(a ,  b) ,  c) }}"
        );
        assert_eq!(
            rewrite("{{ (a) ~ (b ~ c) }}"),
            "{{ __py_concat((a) ,  (__py_concat(b ,  c))) }}"
        );
        assert_eq!(
            rewrite("{{ (1, 2) }}{{ [1] }}{{ (1,) }}"),
            "{{ __py_tuple(1, 2) }}{{ [1] }}{{ __py_tuple(1,) }}"
        );
        assert_eq!(
            rewrite("{% set t = 1, 2 %}"),
            "{% set t = __py_tuple(1, 2) %}"
        );
        // The target is left alone; the iterable goes through `__py_iter`, from the start of
        // its text (a call's span starts at its `.`).
        assert_eq!(
            rewrite("{% for k, v in d %}{% endfor %}"),
            "{% for k, v in __py_iter(d) %}{% endfor %}"
        );
        assert_eq!(
            rewrite("{% for k, v in tool.items() if k != 'a' %}{% endfor %}"),
            "{% for k, v in __py_iter(tool.items()) if __py_compare(k , \"!=\",  'a') %}{% endfor %}"
        );
        assert_eq!(
            rewrite("{% for m in messages[1:]|reverse %}{% endfor %}"),
            "{% for m in __py_iter(__py_slice(messages, 1, none, none)|reverse) %}{% endfor %}"
        );
        assert_eq!(
            rewrite("{% for x in (1, 2) %}{% endfor %}"),
            "{% for x in __py_iter(__py_tuple(1, 2)) %}{% endfor %}"
        );
        assert_eq!(rewrite("{{ 'a\\\nb' }}"), "{{ \"ab\" }}");
        assert_eq!(rewrite("a\r\nb"), "a\nb");
        assert_eq!(
            rewrite("{{ 'a\\\nb' ~ x }}"),
            "{{ __py_concat(\"ab\" ,  x) }}"
        );
        assert_eq!(rewrite("{{ 1 - 2 }}{% if %}"), "{{ 1 - 2 }}{% if %}");
    }

    #[test]
    fn comparisons_slices_and_products_are_rewritten() {
        let cases = [
            (
                "{{ (1, 2) == [1, 2] }}",
                r#"{{ __py_compare(__py_tuple(1, 2) , "==",  [1, 2]) }}"#,
            ),
            // A left operand's own parentheses stay inside the call; `not x in y` keeps its
            // `not`, `x not in y` becomes one operator.
            (
                "{% if ((a)) != (b) or not x in y %}{% endif %}",
                r#"{% if __py_compare(((a)) , "!=",  (b)) or not __py_compare(x , "in",  y) %}{% endif %}"#,
            ),
            (
                "{% if a < b <= c and x not  in y %}{% endif %}",
                r#"{% if __py_compare(a , "<",  b , "<=",  c) and __py_compare(x , "not in",  y) %}{% endif %}"#,
            ),
            (
                "{{ f((a) == b) }}",
                r#"{{ f(__py_compare((a) , "==",  b)) }}"#,
            ),
            (
                "{{ m[1:] }}{{ m[::-1] }}{{ m[a:b] }}{{ m[:2:] }}",
                "{{ __py_slice(m, 1, none, none) }}{{ __py_slice(m, none, none, -1) }}\
                 {{ __py_slice(m, a, b, none) }}{{ __py_slice(m, none, 2, none) }}",
            ),
            (
                "{{ ('a').upper is callable }}",
                r#"{{ __py_getattr(('a'), "upper") is callable }}"#,
            ),
            (
                "{{ ('<b>'|safe)[::-1] }}",
                "{{ __py_slice(('<b>'|safe), none, none, -1) }}",
            ),
            (
                "{{ x.y[i + 1:] * 2 }}",
                "{{ __py_mul(__py_slice(x.y, __py_add(i ,  1), none, none) ,  2) }}",
            ),
            // Two constants under `and` would be folded to `false`.
            ("{{ 0 and 'b' }}", "{{ __py_value(0) and 'b' }}"),
            (
                "{% set ns._x = 1 %}",
                r#"{% set ns._x = __py_refuse_underscore_attr("_x", 1) %}"#,
            ),
        ];
        for (source, rewritten) in cases {
            assert_eq!(rewrite(source), rewritten, "{source}");
        }
    }
}
