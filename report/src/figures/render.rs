//! Writing figures: as an SVG string or SVG and PNG files (the PNG only with a usable font,
//! probed by [`png_font_problem`]), and file-name-safe stems.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use plotters::prelude::*;
use plotters::style::{FontDesc, FontFamily, FontStyle};

use super::Figure;

/// Why PNGs cannot be drawn here (no usable system font), or `None` when they can.
pub fn png_font_problem() -> Option<String> {
    let probe = catch_unwind(|| -> Result<(), String> {
        let font = FontDesc::new(FontFamily::SansSerif, 14.0, FontStyle::Normal);
        font.layout_box("Ag0.5%").map_err(|e| e.to_string())?;
        let mut buf = vec![255u8; 3 * 64 * 24];
        let root = BitMapBackend::with_buffer(&mut buf, (64, 24)).into_drawing_area();
        root.draw_text("Ag0", &TextStyle::from(font), (1, 1))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
        Ok(())
    });
    let advice = "PNG figures need a TrueType font found through fontconfig \
                  (on Debian/Ubuntu: apt-get install fonts-dejavu-core); \
                  the SVG figures were written";
    match probe {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("{advice} (font error: {e})")),
        Err(_) => Some(format!("{advice} (the font library panicked)")),
    }
}

/// The files written for one figure.
#[derive(Debug, Clone)]
pub struct Written {
    /// Path of the SVG file, always written.
    pub svg: PathBuf,
    /// Path of the PNG file; `None` when PNGs were not requested or drawing failed.
    pub png: Option<PathBuf>,
    /// Why the PNG is missing although PNGs were requested.
    pub png_error: Option<String>,
}

fn plot_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("{e}")
}

/// `fig` as an SVG document (what the report writes and the live page shows).
pub fn svg_string<F: Figure>(fig: &F) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        fig.draw(&root).map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Draws `fig` as `dir/stem.svg` and, when `png`, `dir/stem.png`. A failed PNG is reported
/// in [`Written::png_error`] (and its partial file removed); a failed SVG is an error.
pub fn render<F: Figure>(fig: &F, dir: &Path, stem: &str, png: bool) -> anyhow::Result<Written> {
    let size = fig.size();
    let svg_path = dir.join(format!("{stem}.svg"));
    let svg = svg_string(fig).with_context(|| format!("drawing {}", svg_path.display()))?;
    fs::write(&svg_path, svg).with_context(|| format!("writing {}", svg_path.display()))?;
    let mut written = Written {
        svg: svg_path,
        png: None,
        png_error: None,
    };
    if png {
        let png_path = dir.join(format!("{stem}.png"));
        let result = catch_unwind(AssertUnwindSafe(|| -> anyhow::Result<()> {
            let root = BitMapBackend::new(&png_path, size).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err)?;
            fig.draw(&root).map_err(plot_err)?;
            root.present().map_err(plot_err)?;
            Ok(())
        }));
        match result {
            Ok(Ok(())) => written.png = Some(png_path),
            Ok(Err(e)) => {
                let _ = fs::remove_file(&png_path);
                written.png_error = Some(format!("{}: {e:#}", png_path.display()));
            }
            Err(_) => {
                let _ = fs::remove_file(&png_path);
                written.png_error =
                    Some(format!("{}: the PNG backend panicked", png_path.display()));
            }
        }
    }
    Ok(written)
}

/// A file-name-safe slug of the parts, joined by `_`.
pub fn slug(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| {
            let mut s = String::new();
            for c in p.chars() {
                if c.is_ascii_alphanumeric() {
                    s.push(c.to_ascii_lowercase());
                } else if !s.ends_with('-') {
                    s.push('-');
                }
            }
            let s = s.trim_matches('-').to_string();
            if s.is_empty() {
                "x".to_string()
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join("_")
}
