//! Tests of the lexical rules on a tiny WordNet fixture, of a synthetic build, and of a build
//! from the real sources.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use c2s_records::{validate_item, ItemPolicy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::wordfreq::ZipfTable;
use crate::wordnet::WordNet;

use super::rules::sample_distinct;
use super::*;

/// A tiny WordNet written in the real file format.
#[derive(Default)]
struct Fixture {
    data: String,
    index: BTreeMap<String, Vec<u32>>,
    exc: String,
    next: u32,
}

impl Fixture {
    fn synset(&mut self, lemmas: &[&str], pointers: &[(&str, u32)], gloss: &str) -> u32 {
        self.next += 1;
        let offset = self.next;
        let mut line = format!("{offset:08} 03 n {:02x}", lemmas.len());
        for l in lemmas {
            write!(line, " {l} 0").unwrap();
        }
        write!(line, " {:03}", pointers.len()).unwrap();
        for (sym, off) in pointers {
            write!(line, " {sym} {off:08} n 0000").unwrap();
        }
        writeln!(line, " | {gloss}  ").unwrap();
        self.data.push_str(&line);
        for l in lemmas {
            self.index
                .entry(l.to_ascii_lowercase())
                .or_default()
                .push(offset);
        }
        offset
    }

    fn wn(&self) -> WordNet {
        let mut index = String::new();
        for (lemma, offs) in &self.index {
            write!(index, "{lemma} n {} 0 {} 0", offs.len(), offs.len()).unwrap();
            for o in offs {
                write!(index, " {o:08}").unwrap();
            }
            index.push_str("  \n");
        }
        WordNet::from_texts(&self.data, &index, &self.exc).unwrap()
    }
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn screen(wn: &WordNet, word: &str, eligible: &[&str]) -> Result<Target, &'static str> {
    target_exclusion(word, &word_forms(word, wn), wn, |l| eligible.contains(&l))
}

#[test]
fn rule1_word_shape() {
    assert!(is_single_word("dog"));
    for w in ["hot_dog", "hot dog", "x-ray", "b52"] {
        assert!(!is_single_word(w), "{w}");
    }
    assert!(is_ascii_lowercase_word("dog"));
    for w in ["Dog", "caf\u{e9}", "o'clock", "a.m", ""] {
        assert!(!is_ascii_lowercase_word(w), "{w}");
    }
    assert!(!length_in_range("ox"));
    assert!(length_in_range("ant"));
    assert!(length_in_range("aardvark"));
    assert!(!length_in_range("aardvarks"));
    assert!(zipf_sufficient(250));
    assert!(!zipf_sufficient(249));
}

#[test]
fn rule1_proper_name_senses_and_exclusion_reasons() {
    let mut fx = Fixture::default();
    let planet = fx.synset(&["planet"], &[], "a celestial body orbiting a star");
    let mars = fx.synset(
        &["Mars", "Red_Planet"],
        &[("@i", planet)],
        "a reddish planet",
    );
    let month = fx.synset(&["March", "Mar"], &[], "the month following February");
    let walk = fx.synset(&["march"], &[], "a steady walk of soldiers");
    let wn = fx.wn();
    assert!(is_proper_name_sense(wn.synset(mars).unwrap(), "mars"));
    assert!(is_proper_name_sense(wn.synset(month).unwrap(), "march"));
    assert!(!is_proper_name_sense(wn.synset(walk).unwrap(), "march"));
    assert!(has_common_noun_sense("march", &wn));
    assert!(!has_common_noun_sense("mars", &wn));
    assert_eq!(word_exclusion("march", 300, &wn), None);
    assert_eq!(
        word_exclusion("mars", 300, &wn),
        Some("only_proper_name_senses")
    );
    assert_eq!(word_exclusion("planet", 249, &wn), Some("zipf_below_2.5"));
    assert_eq!(
        word_exclusion("red_planet", 300, &wn),
        Some("not_single_word")
    );
    assert_eq!(
        word_exclusion("planetoids", 300, &wn),
        Some("length_out_of_range")
    );
    assert_eq!(word_exclusion("pl.", 300, &wn), Some("not_ascii_lowercase"));
}

#[test]
fn rule2_target_sense_is_first_and_not_proper() {
    let mut fx = Fixture::default();
    fx.synset(&["March", "Mar"], &[], "the month following February");
    fx.synset(&["march"], &[], "a steady walk of soldiers");
    fx.synset(&["kettle"], &[], "a metal pot for stewing or boiling");
    fx.synset(&["kettle"], &[], "a large hemispherical brass drum");
    let wn = fx.wn();
    assert_eq!(screen(&wn, "march", &["march"]), Err("proper_name_sense"));
    let t = screen(&wn, "kettle", &["kettle"]).unwrap();
    assert_eq!(t.definition, "a metal pot for stewing or boiling");
    assert_eq!(t.offset, 3);
}

#[test]
fn rule2_one_eligible_lemma_per_sense() {
    let mut fx = Fixture::default();
    let car = fx.synset(
        &["car", "auto", "automobile", "motorcar"],
        &[],
        "a motor vehicle with four wheels",
    );
    let wn = fx.wn();
    // `automobile` is too long, so only `auto` competes with `car`.
    let s = wn.synset(car).unwrap();
    let eligible = |l: &str| ["car", "auto", "motorcar"].contains(&l);
    assert_eq!(
        other_eligible_lemmas(s, "car", eligible),
        vec!["auto", "motorcar"]
    );
    assert_eq!(
        screen(&wn, "car", &["car", "auto"]),
        Err("multiple_eligible_lemmas")
    );
    assert!(screen(&wn, "car", &["car"]).is_ok());
}

#[test]
fn rule2_forms_and_definition_cues() {
    let mut fx = Fixture {
        exc: "mice mouse\nmen man\n".into(),
        ..Default::default()
    };
    fx.synset(&["mouse"], &[], "a small rodent; \"the mouse ran\"");
    let wn = fx.wn();
    assert_eq!(
        word_forms("mouse", &wn),
        set(&["mice", "mouse", "mouse's", "mousees", "mouses"])
    );
    assert!(word_forms("berry", &wn).contains("berries"));
    assert!(word_forms("men", &wn).contains("man"));
    assert_eq!(
        definition_tokens("Dogs' bones, a dog's-life (x-ray)"),
        vec!["dogs", "bones", "a", "dog's", "life", "x", "ray"]
    );
    let cues = |def: &str, w: &str| definition_cues_word(def, w, &word_forms(w, &wn));
    assert!(cues("a young Dog", "dog"));
    assert!(cues("a pack of dogs", "dog"));
    assert!(cues("the dog's tail", "dog"));
    assert!(cues("dogs' tails", "dog"));
    assert!(cues("boxes of things", "box"));
    assert!(cues("fruit of the berries", "berry"));
    assert!(cues("small mice", "mouse"));
    assert!(cues("a household item", "house"));
    // Prefix matching only for words of four letters or more.
    assert!(!cues("a category", "cat"));
    assert!(!cues("a feline pet", "dog"));
    assert!(definition_too_short("a rodent"));
    assert!(definition_too_short(""));
    assert!(!definition_too_short("a small rodent"));
}

#[test]
fn rule2_screening_reasons() {
    let mut fx = Fixture::default();
    fx.synset(&["rodent"], &[], "rodent");
    fx.synset(
        &["cattle"],
        &[],
        "domesticated bovine animals kept as cattle",
    );
    fx.synset(&["kettle"], &[], "a metal pot for boiling");
    let wn = fx.wn();
    assert_eq!(screen(&wn, "rodent", &[]), Err("definition_too_short"));
    assert_eq!(
        screen(&wn, "cattle", &[]),
        Err("definition_contains_target")
    );
    assert!(screen(&wn, "kettle", &[]).is_ok());
}

#[test]
fn rule3_distractor_conflicts() {
    let mut fx = Fixture {
        exc: "geese goose\n".into(),
        ..Default::default()
    };
    // Offsets: 1 bird, 2 goose, 3 gander (pointers may refer forward).
    let bird = fx.synset(
        &["bird"],
        &[("~", 2)],
        "a warm-blooded egg-laying vertebrate",
    );
    let goose = fx.synset(
        &["goose"],
        &[("@", bird), ("~", 3)],
        "web-footed aquatic bird with a long neck",
    );
    fx.synset(&["gander"], &[("@", goose)], "mature male goose");
    fx.synset(&["honker", "goose"], &[], "a slang word for a nose");
    fx.synset(
        &["swan"],
        &[],
        "stately heavy-bodied aquatic bird with long neck",
    );
    fx.synset(&["geese"], &[], "an unrelated sense invented for this test");
    fx.synset(&["pencil"], &[], "a writing implement with graphite");
    fx.synset(
        &["neck"],
        &[],
        "the part of an organism connecting head and body",
    );
    let wn = fx.wn();
    let t = screen(&wn, "goose", &["goose"]).unwrap();
    let check = |d: &str| {
        distractor_conflict(
            d,
            &word_forms(d, &wn),
            "goose",
            &word_forms("goose", &wn),
            &t,
            &wn,
        )
    };
    // Synthetic synset that lists a distractor among the target's lemmas.
    let mut t2 = t.clone();
    t2.synset_lower.insert("swan".into());
    assert_eq!(
        distractor_conflict(
            "swan",
            &word_forms("swan", &wn),
            "goose",
            &word_forms("goose", &wn),
            &t2,
            &wn
        ),
        Some("same_synset")
    );
    assert_eq!(check("bird"), Some("adjacent_taxonomic"));
    assert_eq!(check("gander"), Some("adjacent_taxonomic"));
    assert_eq!(check("geese"), Some("morphological_form"));
    assert_eq!(check("neck"), Some("distractor_in_definition"));
    assert_eq!(check("swan"), None);
    assert_eq!(check("pencil"), None);
    // `honker` has no sense in the goose synset; a word with one does.
    assert_eq!(check("honker"), None);
    let mut t3 = t.clone();
    t3.synset_lower.clear();
    let d = "goose";
    assert_eq!(
        distractor_conflict(d, &BTreeSet::new(), "x", &BTreeSet::new(), &t3, &wn),
        Some("sense_is_target_synset")
    );
}

#[test]
fn set_helpers() {
    assert_eq!(zipf_range_cents(&[250, 400, 300]), 150);
    assert!(has_repeated_letter("apple"));
    assert!(!has_repeated_letter("chair"));
    assert_eq!(frequency_stratum(400), FrequencyStratum::High);
    assert_eq!(frequency_stratum(399), FrequencyStratum::Low);
    let c = cell_of("egg", 450);
    assert_eq!(c.frequency_stratum, FrequencyStratum::High);
    assert!(c.repeated_letters);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..200 {
        let s: [usize; 4] = sample_distinct(&mut rng, 5);
        assert_eq!(s.iter().collect::<BTreeSet<_>>().len(), 4);
        assert!(s.iter().all(|&i| i < 5));
    }
}

#[test]
fn quota_takes_first_ranks_and_redistributes() {
    let [hd, hr, ld, lr] = CELLS;
    let stream = vec![ld, hd, ld, hr, ld, hd, lr, ld, hd, lr, lr];
    let (sel, counts) = select_quota(&stream, 2);
    assert_eq!(sel, vec![0, 1, 2, 3, 5, 6, 8, 9]);
    assert_eq!(counts[&hr], 1);
    assert_eq!(counts[&hd], 3);
    assert_eq!(counts[&ld], 2);
    assert_eq!(counts[&lr], 2);
    assert_eq!(hd.donors(), [hr, ld, lr]);
    assert_eq!(lr.donors(), [ld, hr, hd]);
}

/// A synthetic vocabulary large enough for a small two-length build.
fn synthetic() -> (WordNet, ZipfTable) {
    let mut fx = Fixture::default();
    let mut zipf = Vec::new();
    let tails = "qrstuvwxyz".as_bytes();
    for len in 3..=4usize {
        for first in b'a'..=b'h' {
            // Eight words with distinct letters (consecutive tail letters) and four
            // with a doubled letter; even indices are high-frequency, odd ones low.
            for n in 0..12usize {
                let mut w = String::from(first as char);
                for j in 0..len - 1 {
                    let k = if n < 8 {
                        n + j
                    } else {
                        (n - 8) + j.saturating_sub(1)
                    };
                    w.push(tails[k % 10] as char);
                }
                let gloss = format!("a synthetic thing of kind {len}{first}{n}");
                fx.synset(&[&w], &[], &gloss);
                zipf.push((w, if n % 2 == 0 { 4.5 } else { 3.5 }));
            }
        }
    }
    // Noise that rule 1 must exclude.
    fx.synset(&["Paris"], &[], "the capital of France");
    fx.synset(&["hot_dog"], &[], "a sausage in a bun");
    zipf.push(("paris".into(), 5.0));
    let z = ZipfTable::from_pairs(zipf.iter().map(|(w, z)| (w.as_str(), *z)));
    (fx.wn(), z)
}

fn small() -> LexicalConfig {
    LexicalConfig {
        min_length: 3,
        max_length: 4,
        test_per_cell: 2,
        dev_per_cell: 1,
        max_attempts_per_stream: 200_000,
    }
}

#[test]
fn synthetic_build_is_valid_balanced_and_deterministic() {
    let (wn, z) = synthetic();
    let b = build_lexical_with(&wn, &z, 7, &small()).unwrap();
    assert_eq!(b.test.len(), 16);
    assert_eq!(b.dev.len(), 8);
    assert_eq!(b.exclusions["word.only_proper_name_senses"], 1);
    assert_eq!(b.exclusions["word.not_single_word"], 1);
    let test_golds: BTreeSet<&str> = b.test.iter().map(|i| i.target.as_str()).collect();
    let dev_golds: BTreeSet<&str> = b.dev.iter().map(|i| i.target.as_str()).collect();
    assert_eq!(test_golds.len(), 16);
    assert_eq!(dev_golds.len(), 8);
    assert!(test_golds.is_disjoint(&dev_golds));
    for item in b.test.iter().chain(&b.dev) {
        let mut copy = item.clone();
        validate_item(&mut copy, &ItemPolicy::default(), true).unwrap();
        assert_eq!(copy, *item);
        assert_eq!(item.k_vector[0], 8);
        assert_eq!(item.k_vector[1], 2);
        let meta = item.lexical.as_ref().unwrap();
        assert_eq!(meta.candidate_zipf.len(), 8);
        assert_eq!(meta.synset_lemmas, vec![item.target.clone()]);
        assert!(item.problem.starts_with("a synthetic thing"));
    }
    assert_eq!(b.test[0].item_id, "lex-test-3-01");
    assert_eq!(b.dev[7].item_id, "lex-dev-4-04");
    for c in &b.cell_counts {
        assert_eq!(c.selected, c.quota, "{c:?}");
    }
    let again = build_lexical_with(&wn, &z, 7, &small()).unwrap();
    assert_eq!(
        serde_json::to_string(&b).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    let other = build_lexical_with(&wn, &z, 8, &small()).unwrap();
    assert_ne!(
        serde_json::to_string(&b.test).unwrap(),
        serde_json::to_string(&other.test).unwrap()
    );
}

#[test]
fn impossible_quota_is_a_clear_error() {
    let (wn, z) = synthetic();
    let mut cfg = small();
    cfg.test_per_cell = 50;
    cfg.max_attempts_per_stream = 20_000;
    let err = build_lexical_with(&wn, &z, 7, &cfg).unwrap_err();
    assert!(
        matches!(
            err,
            BankError::Shortfall {
                split: Split::Test,
                length: 3,
                ..
            }
        ),
        "{err}"
    );
    cfg.min_length = 2;
    assert!(matches!(
        build_lexical_with(&wn, &z, 7, &cfg),
        Err(BankError::Config(_))
    ));
}

/// The full banks from the real sources. Fails, naming what is missing, when the sources are
/// not installed: scripts/fetch-sources.sh installs them, and scripts/test.sh runs it.
#[test]
fn real_sources_build() {
    let wn_dir = std::path::Path::new("/usr/share/wordnet");
    let wf = std::path::PathBuf::from(
        // Cargo's runtime value first: a target directory shared with a checkout at another
        // path may hold this build with that path compiled in.
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../.tools/wordfreq/large_en.msgpack.gz");
    let missing: Vec<String> = [
        ("WordNet 3.0", wn_dir.join("data.noun")),
        ("wordfreq 3.1.1", wf.clone()),
    ]
    .into_iter()
    .filter(|(_, path)| !path.exists())
    .map(|(what, path)| format!("{what} ({})", path.display()))
    .collect();
    assert!(
        missing.is_empty(),
        "lexical bank sources missing: {}; run scripts/fetch-sources.sh (scripts/test.sh does)",
        missing.join(" and ")
    );
    let t0 = std::time::Instant::now();
    let wn = WordNet::load(wn_dir).unwrap();
    let z = ZipfTable::load(&wf).unwrap();
    let t_load = t0.elapsed();
    let b = build_lexical(&wn, &z, 20_261_016).unwrap();
    let t_build = t0.elapsed() - t_load;
    eprintln!("load {t_load:?}, build {t_build:?}");
    eprintln!("exclusions: {:#?}", b.exclusions);
    for c in &b.cell_counts {
        eprintln!(
            "{} L{} {:?}/{} quota {} available {} selected {}",
            c.split,
            c.length,
            c.frequency_stratum,
            if c.repeated_letters { "rep" } else { "dist" },
            c.quota,
            c.available,
            c.selected
        );
    }
    for s in &b.streams {
        eprintln!("{s:?}");
    }
    assert_eq!(b.test.len(), 384);
    assert_eq!(b.dev.len(), 48);
    for len in 3..=8 {
        assert_eq!(b.test.iter().filter(|i| i.length == len).count(), 64);
        assert_eq!(b.dev.iter().filter(|i| i.length == len).count(), 8);
    }
    let test_golds: BTreeSet<&str> = b.test.iter().map(|i| i.target.as_str()).collect();
    let dev_golds: BTreeSet<&str> = b.dev.iter().map(|i| i.target.as_str()).collect();
    assert_eq!(test_golds.len(), 384);
    assert_eq!(dev_golds.len(), 48);
    assert!(test_golds.is_disjoint(&dev_golds));
    for item in b.test.iter().chain(&b.dev) {
        let mut copy = item.clone();
        validate_item(&mut copy, &ItemPolicy::default(), true).unwrap();
        assert_eq!(item.k_vector[0], 8);
        assert_eq!(item.k_vector[1], 2);
    }
    let again = build_lexical(&wn, &z, 20_261_016).unwrap();
    assert_eq!(
        serde_json::to_string(&b).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}
