//! Preselected item panels of the paper's supplementary studies, drawn from the frozen test
//! banks by one seeded rule that sees no model outcome, and shipped as id lists under
//! `data/panels/` (configs select them with `select = { ids_file = … }`).
//!
//! The paper states the sizes and strata of these panels but not how their items were drawn
//! (e.g. A.4: "on 72 preselected natural items"; A.5: "The fresh own plan panel selects five
//! natural items per domain/length without outcomes"; D.11: "Ninety-six parents (eight
//! arithmetic/lexical pairs per length)"). The rule here: within each (domain, length) cell,
//! items ranked by SHA-256 of (seed, panel name, item id), the first `per_cell` taken; paired
//! panels rank the arithmetic items and take each one's K-vector partner with it.

use sha2::{Digest, Sha256};

use c2s_records::{Domain, Item};

/// Seed of every panel draw: the bank seed of A.6 ("Original inference uses 99,999 bootstrap
/// draws, seed 20261005").
pub const PANEL_SEED: u64 = 20261005;

/// Why a panel cannot be drawn from the test banks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PanelError {
    /// A (domain, length) cell holds fewer items than the panel takes from it.
    #[error("{panel}: only {found} {} items of length {length}", domain.as_str())]
    TooFewItems {
        /// The panel's name.
        panel: String,
        /// The domain of the cell (arithmetic or lexical).
        domain: Domain,
        /// The cell's length.
        length: usize,
        /// Items the cell holds.
        found: usize,
    },
    /// A paired panel chose an arithmetic item that names no lexical partner.
    #[error("{panel}: {item_id} has no partner")]
    NoPartner {
        /// The panel's name.
        panel: String,
        /// The arithmetic item.
        item_id: String,
    },
    /// A paired panel chose an arithmetic item whose partner is not among the lexical items.
    #[error("{panel}: partner {partner_id} is missing")]
    MissingPartner {
        /// The panel's name.
        panel: String,
        /// The partner id the arithmetic item names.
        partner_id: String,
    },
}

/// A panel: its name (file `data/panels/<name>.txt`), its items per (domain, length) cell,
/// whether it takes arithmetic/lexical partner pairs, and the passage that sizes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PanelSpec {
    /// File stem under `data/panels/`; also part of the rank key, so each panel draws apart.
    pub name: &'static str,
    /// Items taken per (domain, length) cell.
    pub per_cell: usize,
    /// Whether the lexical items are the K-vector partners of the chosen arithmetic items
    /// rather than a draw of their own.
    pub paired: bool,
    /// The paper passage that sizes the panel, quoted in the file header.
    pub passage: &'static str,
}

/// The shipped panels.
pub const PANELS: [PanelSpec; 7] = [
    PanelSpec {
        name: "robustness-72",
        per_cell: 6,
        paired: false,
        passage: "E.2: \"The original 72 item robustness panel uses v1 to v3 for Native, Independent and Serial\"",
    },
    PanelSpec {
        name: "stop-72",
        per_cell: 6,
        paired: false,
        passage: "A.4: \"The separate track with 51 choices uses … on 72 preselected natural items\"",
    },
    PanelSpec {
        name: "copy-96",
        per_cell: 8,
        paired: true,
        passage: "D.11: \"Ninety-six parents (eight arithmetic/lexical pairs per length)\"; D.13: \"the same 96 Copy parents\"",
    },
    PanelSpec {
        name: "fresh-plan-60",
        per_cell: 5,
        paired: false,
        passage: "A.5: \"The fresh own plan panel selects five natural items per domain/length without outcomes\"",
    },
    PanelSpec {
        name: "teacher-forced-120",
        per_cell: 10,
        paired: false,
        passage: "B.1: \"TeacherForced supplies the gold prefix on 60 preselected items per domain\"",
    },
    PanelSpec {
        name: "binding-120",
        per_cell: 10,
        paired: false,
        passage: "B.5: \"Sixty parents per domain and twelve symbolic bases each supply a target and one preselected position\" (the natural parents; the twelve symbolic bases are data/banks/binding-symbolic.jsonl)",
    },
    PanelSpec {
        name: "qwen-192",
        per_cell: 16,
        paired: false,
        passage: "Table 3: \"Qwen3.5-27B uses the same 96 items per domain\"; D.8: \"On the same 192 Qwen parents\"",
    },
];

/// The rank key of `item_id` in `panel`: SHA-256 of (seed, panel name, id).
pub(crate) fn rank(seed: u64, panel: &str, item_id: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update((panel.len() as u64).to_le_bytes());
    h.update(panel.as_bytes());
    h.update(item_id.as_bytes());
    h.finalize().into()
}

/// The ids of `spec`'s panel from the test banks, by length, arithmetic before lexical.
pub fn select_panel(
    spec: &PanelSpec,
    arithmetic: &[Item],
    lexical: &[Item],
    seed: u64,
) -> Result<Vec<String>, PanelError> {
    let mut out = Vec::new();
    let lengths: std::collections::BTreeSet<usize> =
        arithmetic.iter().chain(lexical).map(|i| i.length).collect();
    for length in lengths {
        let ranked = |items: &[Item]| -> Vec<Item> {
            let mut cell: Vec<Item> = items
                .iter()
                .filter(|i| i.length == length)
                .cloned()
                .collect();
            cell.sort_by_key(|i| rank(seed, spec.name, &i.item_id));
            cell
        };
        let arith = ranked(arithmetic);
        if arith.len() < spec.per_cell {
            return Err(PanelError::TooFewItems {
                panel: spec.name.to_string(),
                domain: Domain::Arithmetic,
                length,
                found: arith.len(),
            });
        }
        let chosen: Vec<&Item> = arith.iter().take(spec.per_cell).collect();
        let lex: Vec<String> = if spec.paired {
            chosen
                .iter()
                .map(|a| {
                    let partner = a.partner_id.clone().ok_or_else(|| PanelError::NoPartner {
                        panel: spec.name.to_string(),
                        item_id: a.item_id.clone(),
                    })?;
                    lexical
                        .iter()
                        .find(|l| l.item_id == partner && l.domain == Domain::Lexical)
                        .map(|l| l.item_id.clone())
                        .ok_or_else(|| PanelError::MissingPartner {
                            panel: spec.name.to_string(),
                            partner_id: partner.clone(),
                        })
                })
                .collect::<Result<_, _>>()?
        } else {
            let lex = ranked(lexical);
            if lex.len() < spec.per_cell {
                return Err(PanelError::TooFewItems {
                    panel: spec.name.to_string(),
                    domain: Domain::Lexical,
                    length,
                    found: lex.len(),
                });
            }
            lex.iter()
                .take(spec.per_cell)
                .map(|l| l.item_id.clone())
                .collect()
        };
        out.extend(chosen.iter().map(|a| a.item_id.clone()));
        out.extend(lex);
    }
    Ok(out)
}

/// The text of a panel file: a header naming the rule and the passage, then one id a line.
pub fn panel_file_text(spec: &PanelSpec, ids: &[String]) -> String {
    let mut s = format!(
        "# {name}: {n} items of data/banks/{{arithmetic,lexical}}-test.jsonl\n\
         # {passage}\n\
         # Rule (banks/src/panels.rs): per (domain, length), items ranked by SHA-256 of\n\
         # (seed {seed}, \"{name}\", item id); the first {per} taken{pairs}. No model outcome is used.\n",
        name = spec.name,
        n = ids.len(),
        passage = spec.passage,
        seed = PANEL_SEED,
        per = spec.per_cell,
        pairs = if spec.paired {
            " among arithmetic items, each with its K-vector lexical partner"
        } else {
            ""
        },
    );
    for id in ids {
        s.push_str(id);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bank::read_bank;
    use c2s_records::ItemPolicy;
    use std::path::PathBuf;

    fn root() -> PathBuf {
        PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("..")
    }

    /// The shipped `data/panels/*.txt` are exactly what the rule draws from the frozen test
    /// banks (set C2S_WRITE_PANELS=1 to rewrite them after a bank change).
    #[test]
    fn shipped_panels_equal_the_seeded_rule() {
        let policy = ItemPolicy::default();
        let arith = read_bank(&root().join("data/banks/arithmetic-test.jsonl"), &policy).unwrap();
        let lex = read_bank(&root().join("data/banks/lexical-test.jsonl"), &policy).unwrap();
        for spec in PANELS {
            let ids = select_panel(&spec, &arith, &lex, PANEL_SEED).unwrap();
            assert_eq!(ids.len(), spec.per_cell * 2 * 6, "{}", spec.name);
            let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
            assert_eq!(unique.len(), ids.len());
            let text = panel_file_text(&spec, &ids);
            let path = root().join(format!("data/panels/{}.txt", spec.name));
            if std::env::var_os("C2S_WRITE_PANELS").is_some() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
            }
            assert_eq!(
                std::fs::read_to_string(&path).unwrap_or_default(),
                text,
                "{} differs from the rule (C2S_WRITE_PANELS=1 rewrites it)",
                path.display()
            );
            if spec.paired {
                for a in arith.iter().filter(|a| ids.contains(&a.item_id)) {
                    assert!(ids.contains(a.partner_id.as_ref().unwrap()));
                }
            }
        }
        // Another seed draws other items.
        let other = select_panel(&PANELS[0], &arith, &lex, PANEL_SEED + 1).unwrap();
        assert_ne!(
            other,
            select_panel(&PANELS[0], &arith, &lex, PANEL_SEED).unwrap()
        );
    }

    #[test]
    fn panel_errors_keep_their_messages() {
        let item = |id: &str, domain: Domain, partner: Option<&str>| Item {
            item_id: id.into(),
            domain,
            problem: String::new(),
            target: "123".into(),
            length: 3,
            candidates: vec![],
            k_vector: vec![],
            partner_id: partner.map(str::to_string),
            geometry: None,
            arithmetic: None,
            lexical: None,
            symbolic: None,
            semantic: None,
        };
        let spec = PanelSpec {
            name: "p",
            per_cell: 1,
            paired: true,
            passage: "",
        };
        let err = select_panel(&spec, &[], &[item("l", Domain::Lexical, None)], 1).unwrap_err();
        assert_eq!(err.to_string(), "p: only 0 arithmetic items of length 3");
        let lone = [item("a", Domain::Arithmetic, None)];
        let err = select_panel(&spec, &lone, &[], 1).unwrap_err();
        assert_eq!(err.to_string(), "p: a has no partner");
        let paired = [item("a", Domain::Arithmetic, Some("l"))];
        let err = select_panel(&spec, &paired, &[], 1).unwrap_err();
        assert_eq!(err.to_string(), "p: partner l is missing");
        let unpaired = PanelSpec {
            paired: false,
            ..spec
        };
        let err = select_panel(&unpaired, &paired, &[], 1).unwrap_err();
        assert!(matches!(
            err,
            PanelError::TooFewItems {
                domain: Domain::Lexical,
                found: 0,
                ..
            }
        ));
        assert_eq!(err.to_string(), "p: only 0 lexical items of length 3");
    }
}
