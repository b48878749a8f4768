//! The filters of the exhibits' templates: one per way the paper prints a number (each `–`
//! for none), the metric rows' filters ([`super::sources::add_filters`]) and `table()`, in the
//! one environment every template and source expression of an exhibit renders in.

use minijinja::value::{Value, ValueKind};
use minijinja::{Environment, UndefinedBehavior};

use super::paper;
use crate::tables::UNDEFINED;

/// The environment every exhibit's templates render in: strict about undefined names, with
/// one filter per way the paper prints a number (each `–` for none).
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A fraction as a percentage, one decimal (`54.2`).
    env.add_filter("pct", crate::tables::pct);
    // Ours (a fraction) minus the paper's (a printed percentage), signed (`+1.2`, `−0.4`).
    env.add_filter("pp_diff", |ours: Option<f64>, paper: f64| {
        super::pp_diff(ours, paper)
    });
    // Fixed decimals as Rust prints them (`-0.5` with a hyphen), `–` for none.
    env.add_filter("dec", |v: Option<f64>, places: usize| {
        v.map_or_else(|| UNDEFINED.to_string(), |v| format!("{v:.places$}"))
    });
    // One decimal with a true minus and no plus (`−1.2`, `3.4`).
    env.add_filter("signed1", |v: Option<f64>| {
        v.map_or_else(undefined, super::signed1)
    });
    // Fixed decimals with Rust's sign (`+0.012`, `-0.004`: Tables D12 and D14's differences).
    env.add_filter("plus_dec", |v: f64, places: usize| format!("{v:+.places$}"));
    // A printed cell of `v` (its negative already signed) with `+` where `v` ≥ 0.
    env.add_filter("with_plus", |cell: String, v: f64| match v < 0.0 {
        true => cell,
        false => format!("+{cell}"),
    });
    // A dialogue statistic ({value, dialogue_ci}) in percent with its interval, true minus
    // signs (`−4.2 [−9.4, 1.0]`; `– ` for no interval; Appendix C's tables).
    env.add_filter("dialogue_interval", |stat: Value| {
        let value = stat.get_attr("value")?;
        let interval = stat.get_attr("dialogue_ci")?;
        if value.is_none() {
            return Ok(undefined());
        }
        if value.is_undefined() || interval.is_undefined() {
            return Err(not_a("{value, dialogue_ci}"));
        }
        let percent = |v: Value| f64::try_from(v).map(|v| super::signed1(100.0 * v));
        let interval = match interval.is_none() {
            true => undefined(),
            false => format!(
                "[{}, {}]",
                percent(interval.get_attr("low")?)?,
                percent(interval.get_attr("high")?)?
            ),
        };
        Ok(format!("{} {interval}", percent(value)?))
    });
    // Two decimals with a sign (`+0.50`, `−2.50`).
    env.add_filter("signed2", |v: Option<f64>| {
        v.map_or_else(undefined, super::signed2)
    });
    // A printed value with its interval, `v [lo, hi]` ([v, lo, hi]), one decimal, true
    // minus signs.
    env.add_filter("interval", |v: Option<Vec<f64>>| match v.as_deref() {
        None => Ok(undefined()),
        Some(&[v, lo, hi]) => Ok(super::printed_interval((v, lo, hi))),
        Some(_) => Err(not_a("[value, low, high]")),
    });
    // A fraction with its optional interval ([v, lo, hi]), in percent (`54.2 [43.8, 64.6]`).
    env.add_filter("pct_interval", |v: Option<Vec<Option<f64>>>| {
        match v.as_deref() {
            None => Ok(undefined()),
            Some(&[Some(v), lo, hi]) => Ok(super::percent_interval(Some((v, lo, hi)))),
            Some(_) => Err(not_a("[value, low, high]")),
        }
    });
    // A p-value: three decimals, or one-digit scientific below 0.001.
    env.add_filter("p_value", crate::tables::p_value);
    // A p-value with three significant digits (`0.0412`, `8.94e-8`).
    env.add_filter("sig3", sig3);
    // A cell with the paper's asterisk where its Holm p is below 0.05.
    env.add_filter("starred", |cell: String, holm_p: Option<f64>| {
        super::starred(cell, holm_p)
    });
    // k of n, `k/n` ([k, n]).
    env.add_filter("kn", |kn: Vec<u64>| {
        pair(&kn).map(|(k, n)| format!("{k}/{n}"))
    });
    // k of n, `k/n`, or `–` for n = 0.
    env.add_filter("kn_or_none", |kn: Vec<u64>| {
        pair(&kn).map(|(k, n)| match n {
            0 => undefined(),
            n => format!("{k}/{n}"),
        })
    });
    // The rate k / n of [k, n], none for n = 0.
    env.add_filter("rate", |kn: Vec<u64>| {
        pair(&kn).map(|(k, n)| (n > 0).then(|| k as f64 / n as f64))
    });
    // The domain as the paper prints it (`math` for `arithmetic`).
    env.add_filter("domain", |d: String| super::paper_domain(&d).to_string());
    // [v, lo, hi] or an estimate ({value, interval}) at fixed decimals (`0.1 [0.0, 0.2]`).
    // Anything else is an error, not a `–`.
    env.add_filter("dec_interval", |e: Value, places: usize| {
        let shape = || not_a("[value, low, high] or an estimate {value, interval}");
        let (v, lo, hi) = match e.kind() {
            ValueKind::None | ValueKind::Undefined => return Ok(undefined()),
            ValueKind::Map => {
                let i = map_field(&e, "interval").ok_or_else(shape)?;
                let (low, high) = match i.is_none() {
                    true => (None, None),
                    false => (
                        number(map_field(&i, "low"))?,
                        number(map_field(&i, "high"))?,
                    ),
                };
                (number(map_field(&e, "value"))?, low, high)
            }
            ValueKind::Seq if e.len() == Some(3) => {
                let at = |k: usize| number(e.get_item(&Value::from(k)).ok());
                (at(0)?, at(1)?, at(2)?)
            }
            _ => return Err(shape()),
        };
        Ok(match (v, lo, hi) {
            (None, _, _) => undefined(),
            (Some(v), Some(lo), Some(hi)) => format!("{v:.places$} [{lo:.places$}, {hi:.places$}]"),
            (Some(v), _, _) => format!("{v:.places$}"),
        })
    });
    // A fraction's [v, lo, hi] in pp with the asterisk of its Holm p (`72.9* [60.4, 83.3]`).
    env.add_filter(
        "marked_interval",
        |d: Option<Vec<Option<f64>>>, p: Option<f64>| match d.as_deref() {
            None => Ok(undefined()),
            Some(&[Some(v), lo, hi]) => {
                Ok(super::readout_grid::marked_interval(Some((v, lo, hi)), p))
            }
            Some(_) => Err(not_a("[value, low, high]")),
        },
    );
    // Thousands separators, a half as `.5`, a true minus (`1,128,960`, `−91.5`; Table D7).
    env.add_filter("grouped", super::table_d7::grouped);
    // Scientific notation as Rust prints it, `places` decimals (`1.25e-3`, `0.00e0`; Table D2).
    env.add_filter("sci", |v: Option<f64>, places: usize| {
        v.map_or_else(undefined, |v| format!("{v:.places$e}"))
    });
    // A mean estimate ({mean, ci_low, ci_high}) at fixed decimals, true minus signs
    // (`0.033 [−0.019, 0.086]`; the projection).
    // (anything else an error, not a `–`).
    env.add_filter("mean_interval", |e: Value, places: usize| {
        if e.is_none() || e.is_undefined() {
            return Ok(undefined());
        }
        if e.kind() != ValueKind::Map {
            return Err(not_a("mean estimate {mean, ci_low, ci_high}"));
        }
        let at = |k: &str| number(map_field(&e, k));
        let f = |x: f64| match x < 0.0 {
            true => format!("−{:.places$}", -x),
            false => format!("{x:.places$}"),
        };
        Ok(match (at("mean")?, at("ci_low")?, at("ci_high")?) {
            (Some(m), Some(lo), Some(hi)) => format!("{} [{}, {}]", f(m), f(lo), f(hi)),
            (Some(m), _, _) => f(m),
            _ => undefined(),
        })
    });
    super::sources::add_filters(&mut env);
    // A printed table's rows (`exhibits/NAME.tsv`), for a value taken from another table.
    env.add_function("table", |name: String| {
        paper::records(&name).map(Value::from).map_err(|e| {
            minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, format!("{e:#}"))
        })
    });
    env
}

fn undefined() -> String {
    UNDEFINED.to_string()
}

fn not_a(what: &str) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!("not a {what}"),
    )
}

/// The field `name` of a map; `None` where it has none.
fn map_field(map: &Value, name: &str) -> Option<Value> {
    map.get_attr(name).ok().filter(|v| !v.is_undefined())
}

/// A number, or none; a field that is missing or not a number is an error.
fn number(v: Option<Value>) -> Result<Option<f64>, minijinja::Error> {
    match v {
        Some(v) if v.is_none() => Ok(None),
        Some(v) => f64::try_from(v).map(Some).map_err(|_| not_a("number")),
        None => Err(not_a("number (a field is missing)")),
    }
}

fn pair(kn: &[u64]) -> Result<(u64, u64), minijinja::Error> {
    match kn {
        &[k, n] => Ok((k, n)),
        _ => Err(not_a("[k, n] pair")),
    }
}

/// Our intervals' confidence level as the exhibits print it, `95%`, `90%`, `97.5%` (the var
/// `ci_level` of every exhibit with runs: `[{{ ci_level }} CI]`).
pub fn ci_level(level: f64) -> String {
    let percent = format!("{:.1}", 100.0 * level);
    format!("{}%", percent.strip_suffix(".0").unwrap_or(&percent))
}

/// A p-value with three significant digits, as Tables D9 and D10 print them.
pub fn sig3(p: Option<f64>) -> String {
    match p {
        None => UNDEFINED.to_string(),
        Some(p) if p == 0.0 || p >= 0.001 => {
            let digits = if p == 0.0 {
                0
            } else {
                (2 - p.log10().floor() as i32).max(0) as usize
            };
            format!("{p:.digits$}")
        }
        Some(p) => format!("{p:.2e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::engine::{layout, DocumentSpec, Frame};

    fn spec(text: &str) -> DocumentSpec {
        toml::from_str(text).unwrap()
    }

    /// The signed filters print as the paper's tables do: Rust's sign for D12/D14, a `+` on a
    /// cell already signed with a true minus, a dialogue statistic with or without interval.
    #[test]
    fn the_signed_filters_print_the_papers_signs() {
        let env = environment();
        let render = |t: &str, ctx: minijinja::Value| env.render_str(t, ctx).unwrap();
        let ctx = minijinja::context! {
            d => -0.0041, e => 1234.0,
            stat => minijinja::context! { value => -0.042, dialogue_ci => minijinja::context! { low => -0.094, high => 0.01 } },
            bare => minijinja::context! { value => 0.5, dialogue_ci => () },
            empty => minijinja::context! { value => (), dialogue_ci => () },
        };
        assert_eq!(
            render(
                "{{ d | plus_dec(3) }} {{ 0.012 | plus_dec(3) }}",
                ctx.clone()
            ),
            "-0.004 +0.012"
        );
        assert_eq!(
            render(
                "{{ e | grouped | with_plus(e) }} {{ -e | grouped | with_plus(-e) }}",
                ctx.clone()
            ),
            "+1,234 −1,234"
        );
        assert_eq!(
            render("{{ stat | dialogue_interval }}|{{ bare | dialogue_interval }}|{{ empty | dialogue_interval }}", ctx.clone()),
            "−4.2 [−9.4, 1.0]|50.0 –|–"
        );
        assert!(env.render_str("{{ d | dialogue_interval }}", ctx).is_err());
    }

    /// A header of ours names the runs' level, not the paper's 95%.
    #[test]
    fn our_headers_name_the_runs_level() {
        assert_eq!(
            (ci_level(0.95), ci_level(0.9), ci_level(0.975)),
            ("95%".into(), "90%".into(), "97.5%".into())
        );
        let spec = spec(
            r#"
title = "T"
[[sections]]
rows = "ours"
columns = [["Gain [{{ ci_level }} CI]", "{{ gain }}"]]
"#,
        );
        let frame = Frame::new()
            .rows("ours", &[serde_json::json!({"gain": 1})])
            .var("ci_level", ci_level(0.9));
        let md = layout("table1", &spec, frame, "Jev").unwrap().markdown();
        assert!(md.contains("| Gain [90% CI] |"), "{md}");
    }

    #[test]
    fn sig3_prints_three_significant_digits() {
        assert_eq!(sig3(Some(8.94e-8)), "8.94e-8");
        assert_eq!(sig3(Some(0.0412)), "0.0412");
        assert_eq!(sig3(Some(1.0)), "1.00");
        assert_eq!(sig3(None), "–");
    }
}
