//! Reader for the WordNet 3.0 noun database files (`data.noun`, `index.noun`, `noun.exc`),
//! parsed directly from their documented format (wndb(5WN)).
//!
//! Data lines: `offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] p_cnt
//! [ptr...] | gloss`, where `w_cnt` is two hex digits, `lex_id` one hex digit, `p_cnt` three
//! decimal digits and each pointer is `symbol offset pos source/target`. Index lines:
//! `lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offset...` with the
//! offsets ordered by sense frequency. License header lines start with two spaces.

use std::collections::BTreeMap;
use std::num::ParseIntError;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use thiserror::Error;

/// A problem reading a lexical source file.
#[derive(Debug, Error)]
pub enum SourceError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a WordNet file is malformed, or names a duplicate or unknown synset.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file holding the line.
        path: PathBuf,
        /// 1-based line number, header lines counted.
        line: usize,
        /// What is wrong with the line.
        message: String,
    },
    /// The file as a whole is unusable: not gzip or msgpack, wrong layout, or no synsets.
    #[error("{}: {message}", path.display())]
    Format {
        /// The file that failed.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

impl SourceError {
    /// [`SourceError::Io`] for `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        SourceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// [`SourceError::Format`] for `path`.
    pub fn format(path: &Path, message: impl Into<String>) -> Self {
        SourceError::Format {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// Why one line of `data.noun` or `index.noun` does not parse ([`parse_data_line`],
/// [`parse_index_line`]); [`SourceError::Parse`] adds the file and line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LineError {
    /// The line ends before a field its format requires.
    #[error("missing {field}")]
    Missing {
        /// The field expected next (`synset_offset`, `pointer pos`, …).
        field: &'static str,
    },
    /// A numeric field is not a number of its base (decimal, or hex for `w_cnt` and the
    /// pointer's source and target).
    #[error("bad {field}: {source}")]
    BadNumber {
        /// The field (`synset_offset`, `p_cnt`, `source`, …).
        field: &'static str,
        /// The text found.
        value: String,
        /// The parse failure.
        #[source]
        source: ParseIntError,
    },
    /// A word's `lex_id` is not a hex digit.
    #[error("bad lex_id `{value}`: {source}")]
    BadLexId {
        /// The text found.
        value: String,
        /// The parse failure.
        #[source]
        source: ParseIntError,
    },
    /// `ss_type` is not one of `n`, `v`, `a`, `s`, `r`.
    #[error("bad ss_type `{value}`")]
    BadSsType {
        /// The text found.
        value: String,
    },
    /// A synset lists no words.
    #[error("w_cnt is 0")]
    NoWords,
    /// A pointer's part of speech is not one character.
    #[error("bad pointer pos `{value}`")]
    BadPointerPos {
        /// The text found.
        value: String,
    },
    /// A pointer's source/target field is not four hex digits long.
    #[error("bad pointer source/target `{value}`")]
    BadSourceTarget {
        /// The text found.
        value: String,
    },
}

/// The [`LineError::BadNumber`] of `field`, whose text is `value`.
fn bad_number(field: &'static str, value: &str) -> impl FnOnce(ParseIntError) -> LineError {
    let value = value.to_string();
    move |source| LineError::BadNumber {
        field,
        value,
        source,
    }
}

/// `value`, the text of `field`, as a decimal number.
fn decimal<T: std::str::FromStr<Err = ParseIntError>>(
    field: &'static str,
    value: &str,
) -> Result<T, LineError> {
    value.parse().map_err(bad_number(field, value))
}

/// Relation named by a pointer symbol (only the taxonomic ones are distinguished).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PointerKind {
    /// `@`
    Hypernym,
    /// `@i`
    InstanceHypernym,
    /// `~`
    Hyponym,
    /// `~i`
    InstanceHyponym,
    /// Any other symbol (meronyms, attributes, derivations, domains, antonyms...).
    Other(String),
}

impl PointerKind {
    /// Kind of a `data.noun` pointer symbol; unknown symbols are kept as [`PointerKind::Other`].
    pub fn from_symbol(symbol: &str) -> PointerKind {
        match symbol {
            "@" => PointerKind::Hypernym,
            "@i" => PointerKind::InstanceHypernym,
            "~" => PointerKind::Hyponym,
            "~i" => PointerKind::InstanceHyponym,
            other => PointerKind::Other(other.to_string()),
        }
    }

    /// Direct hypernym or hyponym, instance relations included.
    pub fn is_taxonomic(&self) -> bool {
        !matches!(self, PointerKind::Other(_))
    }
}

/// One pointer of a synset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// Relation the pointer symbol names.
    pub kind: PointerKind,
    /// Byte offset of the target synset in the data file of its part of speech.
    pub offset: u32,
    /// Part of speech of the target synset (`n`, `v`, `a`, `s`, `r`).
    pub pos: char,
    /// Source word number (0: the whole synset).
    pub source: u8,
    /// Target word number (0: the whole synset).
    pub target: u8,
}

/// One noun synset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synset {
    /// Byte offset of the line in `data.noun`: the synset's key.
    pub offset: u32,
    /// Lexicographer file number (wndb(5WN)'s `lex_filenum`, e.g. 5 for `noun.animal`).
    pub lex_filenum: u8,
    /// Synset type letter; always `n` once loaded into [`WordNet`].
    pub ss_type: char,
    /// Raw lemma forms, in file order (case kept, spaces written as `_`).
    pub lemmas: Vec<String>,
    /// Pointers to other synsets, in file order.
    pub pointers: Vec<Pointer>,
    /// The whole gloss (after `| `), trimmed.
    pub gloss: String,
    /// Gloss text before the first `; "` example.
    pub definition: String,
    /// Quoted example sentences after the definition, without their quotes.
    pub examples: Vec<String>,
}

impl Synset {
    /// Identifier in the bank format: `"{offset:08}-n"`.
    pub fn id(&self) -> String {
        format!("{:08}-{}", self.offset, self.ss_type)
    }

    /// Whether the synset has an instance-hypernym pointer (`@i`): a named instance.
    pub fn is_instance(&self) -> bool {
        self.pointers
            .iter()
            .any(|p| p.kind == PointerKind::InstanceHypernym)
    }

    /// Offsets of noun synsets that are direct hypernyms or hyponyms (instance ones included).
    pub fn taxonomic_neighbours(&self) -> impl Iterator<Item = u32> + '_ {
        self.pointers
            .iter()
            .filter(|p| p.kind.is_taxonomic() && p.pos == 'n')
            .map(|p| p.offset)
    }
}

/// Split a gloss into its definition (text before the first `; "`) and its quoted examples.
pub fn split_gloss(gloss: &str) -> (String, Vec<String>) {
    let gloss = gloss.trim();
    let (definition, rest) = if let Some(rest) = gloss.strip_prefix('"') {
        ("", Some(rest))
    } else {
        match gloss.find("; \"") {
            Some(i) => (&gloss[..i], Some(&gloss[i + 3..])),
            None => (gloss, None),
        }
    };
    let definition = definition
        .trim()
        .trim_end_matches(';')
        .trim_end()
        .to_string();
    let mut examples = Vec::new();
    if let Some(rest) = rest {
        // `rest` starts inside the first quote; quotes alternate open/close from there.
        let mut inside = true;
        let mut current = String::new();
        for ch in rest.chars() {
            if ch == '"' {
                if inside {
                    let e = current.trim();
                    if !e.is_empty() {
                        examples.push(e.to_string());
                    }
                    current.clear();
                }
                inside = !inside;
            } else if inside {
                current.push(ch);
            }
        }
        let e = current.trim();
        if inside && !e.is_empty() {
            examples.push(e.to_string());
        }
    }
    (definition, examples)
}

/// Parse one `data.noun` line (without the trailing newline).
pub fn parse_data_line(line: &str) -> Result<Synset, LineError> {
    let (head, gloss) = match line.find(" | ") {
        Some(i) => (&line[..i], line[i + 3..].trim()),
        None => (line.trim_end_matches(" |").trim_end(), ""),
    };
    let mut f = head.split_ascii_whitespace();
    let mut next = |field: &'static str| f.next().ok_or(LineError::Missing { field });
    let offset: u32 = decimal("synset_offset", next("synset_offset")?)?;
    let lex_filenum: u8 = decimal("lex_filenum", next("lex_filenum")?)?;
    let ss_type_s = next("ss_type")?;
    let mut chars = ss_type_s.chars();
    let ss_type = match (chars.next(), chars.next()) {
        (Some(c), None) if "nvasr".contains(c) => c,
        _ => {
            return Err(LineError::BadSsType {
                value: ss_type_s.to_string(),
            })
        }
    };
    let w_cnt_s = next("w_cnt")?;
    let w_cnt = usize::from_str_radix(w_cnt_s, 16).map_err(bad_number("w_cnt", w_cnt_s))?;
    if w_cnt == 0 {
        return Err(LineError::NoWords);
    }
    let mut lemmas = Vec::with_capacity(w_cnt);
    for _ in 0..w_cnt {
        let word = next("word")?;
        let lex_id = next("lex_id")?;
        u8::from_str_radix(lex_id, 16).map_err(|source| LineError::BadLexId {
            value: lex_id.to_string(),
            source,
        })?;
        lemmas.push(word.to_string());
    }
    let p_cnt: usize = decimal("p_cnt", next("p_cnt")?)?;
    let mut pointers = Vec::with_capacity(p_cnt);
    for _ in 0..p_cnt {
        let symbol = next("pointer_symbol")?;
        let target_offset: u32 = decimal("pointer offset", next("pointer offset")?)?;
        let pos_s = next("pointer pos")?;
        let pos = match pos_s.chars().next() {
            Some(c) if pos_s.len() == 1 => c,
            _ => {
                return Err(LineError::BadPointerPos {
                    value: pos_s.to_string(),
                })
            }
        };
        let st = next("pointer source/target")?;
        if st.len() != 4 {
            return Err(LineError::BadSourceTarget {
                value: st.to_string(),
            });
        }
        let source = u8::from_str_radix(&st[..2], 16).map_err(bad_number("source", &st[..2]))?;
        let target = u8::from_str_radix(&st[2..], 16).map_err(bad_number("target", &st[2..]))?;
        pointers.push(Pointer {
            kind: PointerKind::from_symbol(symbol),
            offset: target_offset,
            pos,
            source,
            target,
        });
    }
    // Verb frames may follow; nouns have none. Anything else is ignored.
    let (definition, examples) = split_gloss(gloss);
    Ok(Synset {
        offset,
        lex_filenum,
        ss_type,
        lemmas,
        pointers,
        gloss: gloss.to_string(),
        definition,
        examples,
    })
}

/// Parse one `index.noun` line into (lemma, offsets in sense-frequency order).
pub fn parse_index_line(line: &str) -> Result<(String, Vec<u32>), LineError> {
    let mut f = line.split_ascii_whitespace();
    let mut next = |field: &'static str| f.next().ok_or(LineError::Missing { field });
    let lemma = next("lemma")?.to_string();
    next("pos")?;
    let synset_cnt: usize = decimal("synset_cnt", next("synset_cnt")?)?;
    let p_cnt: usize = decimal("p_cnt", next("p_cnt")?)?;
    for _ in 0..p_cnt {
        next("ptr_symbol")?;
    }
    next("sense_cnt")?;
    next("tagsense_cnt")?;
    let mut offsets = Vec::with_capacity(synset_cnt);
    for _ in 0..synset_cnt {
        offsets.push(decimal("synset_offset", next("synset_offset")?)?);
    }
    Ok((lemma, offsets))
}

/// The noun part of WordNet: synsets, the lemma index and irregular plurals.
#[derive(Debug, Clone, Default)]
pub struct WordNet {
    /// Version found in the license header (e.g. `3.0`), or `unknown`.
    pub version: String,
    /// SHA-256 over data.noun, index.noun and noun.exc (in that order); empty in memory.
    pub sha256: String,
    synsets: BTreeMap<u32, Synset>,
    index: BTreeMap<String, Vec<u32>>,
    /// inflected form → base forms (noun.exc).
    exc_bases: BTreeMap<String, Vec<String>>,
    /// base form → irregular inflected forms (inverse of noun.exc).
    exc_plurals: BTreeMap<String, Vec<String>>,
}

fn is_header(line: &str) -> bool {
    line.starts_with("  ")
}

fn header_version(line: &str) -> Option<String> {
    let i = line.find("WordNet ")?;
    let v: String = line[i + 8..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!v.is_empty()).then_some(v)
}

impl WordNet {
    /// Load `data.noun`, `index.noun` and `noun.exc` from a WordNet `dict` directory.
    pub fn load(dir: impl AsRef<Path>) -> Result<WordNet, SourceError> {
        let dir = dir.as_ref();
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path)
                .map(|t| (path.clone(), t))
                .map_err(|e| SourceError::io(&path, e))
        };
        let (data_path, data) = read("data.noun")?;
        let (index_path, index) = read("index.noun")?;
        let (exc_path, exc) = read("noun.exc")?;
        let mut wn = WordNet::default();
        let mut hasher = Sha256::new();
        for text in [&data, &index, &exc] {
            hasher.update(text.as_bytes());
        }
        wn.sha256 = hex::encode(hasher.finalize());
        wn.read_data(&data, &data_path)?;
        wn.read_index(&index, &index_path)?;
        wn.read_exc(&exc, &exc_path)?;
        if wn.synsets.is_empty() {
            return Err(SourceError::format(&data_path, "no synsets"));
        }
        Ok(wn)
    }

    /// Build from file contents (the paths only label errors); for tests and fixtures.
    pub fn from_texts(data: &str, index: &str, exc: &str) -> Result<WordNet, SourceError> {
        let mut wn = WordNet::default();
        wn.read_data(data, Path::new("data.noun"))?;
        wn.read_index(index, Path::new("index.noun"))?;
        wn.read_exc(exc, Path::new("noun.exc"))?;
        Ok(wn)
    }

    fn read_data(&mut self, text: &str, path: &Path) -> Result<(), SourceError> {
        for (i, line) in text.lines().enumerate() {
            if is_header(line) {
                if let Some(v) = header_version(line) {
                    self.version = v;
                }
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let synset = parse_data_line(line).map_err(|e| SourceError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })?;
            if synset.ss_type != 'n' {
                return Err(SourceError::Parse {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: format!("ss_type `{}` in a noun file", synset.ss_type),
                });
            }
            if self.synsets.insert(synset.offset, synset).is_some() {
                return Err(SourceError::Parse {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: "duplicate synset offset".into(),
                });
            }
        }
        if self.version.is_empty() {
            self.version = "unknown".into();
        }
        Ok(())
    }

    fn read_index(&mut self, text: &str, path: &Path) -> Result<(), SourceError> {
        for (i, line) in text.lines().enumerate() {
            if is_header(line) || line.trim().is_empty() {
                continue;
            }
            let err = |message: String| SourceError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                message,
            };
            let (lemma, offsets) = parse_index_line(line).map_err(|e| err(e.to_string()))?;
            if let Some(missing) = offsets.iter().find(|o| !self.synsets.contains_key(o)) {
                return Err(err(format!(
                    "`{lemma}` points to unknown synset {missing:08}"
                )));
            }
            self.index.insert(lemma, offsets);
        }
        Ok(())
    }

    fn read_exc(&mut self, text: &str, path: &Path) -> Result<(), SourceError> {
        for (i, line) in text.lines().enumerate() {
            if is_header(line) || line.trim().is_empty() {
                continue;
            }
            let mut f = line.split_ascii_whitespace();
            let (Some(inflected), Some(first)) = (f.next(), f.next()) else {
                return Err(SourceError::Parse {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: "expected `inflected base [base...]`".into(),
                });
            };
            for base in std::iter::once(first).chain(f) {
                self.exc_bases
                    .entry(inflected.to_string())
                    .or_default()
                    .push(base.to_string());
                self.exc_plurals
                    .entry(base.to_string())
                    .or_default()
                    .push(inflected.to_string());
            }
        }
        Ok(())
    }

    /// The synset at `offset`.
    pub fn synset(&self, offset: u32) -> Option<&Synset> {
        self.synsets.get(&offset)
    }

    /// Number of noun synsets.
    pub fn synset_count(&self) -> usize {
        self.synsets.len()
    }

    /// Noun senses of `lemma` (lowercase index form), most frequent first; empty if none.
    pub fn senses(&self, lemma: &str) -> &[u32] {
        self.index.get(lemma).map_or(&[], Vec::as_slice)
    }

    /// All index lemmas, in sorted order.
    pub fn lemmas(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(String::as_str)
    }

    /// Irregular plurals of `base` (noun.exc read backwards).
    pub fn irregular_plurals(&self, base: &str) -> &[String] {
        self.exc_plurals.get(base).map_or(&[], Vec::as_slice)
    }

    /// Base forms of the irregular plural `inflected` (noun.exc).
    pub fn irregular_bases(&self, inflected: &str) -> &[String] {
        self.exc_bases.get(inflected).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOG: &str = "02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 003 @ 02083346 n 0000 ~ 01322604 n 0000 %p 02158846 n 0000 | a member of the genus Canis; occurs in many breeds; \"the dog barked all night\"  ";

    #[test]
    fn parses_data_line() {
        let s = parse_data_line(DOG).unwrap();
        assert_eq!(s.offset, 2084071);
        assert_eq!(s.lex_filenum, 5);
        assert_eq!(s.lemmas, vec!["dog", "domestic_dog", "Canis_familiaris"]);
        assert_eq!(s.pointers.len(), 3);
        assert_eq!(s.pointers[0].kind, PointerKind::Hypernym);
        assert_eq!(s.pointers[1].kind, PointerKind::Hyponym);
        assert_eq!(s.pointers[2].kind, PointerKind::Other("%p".into()));
        assert_eq!(
            s.definition,
            "a member of the genus Canis; occurs in many breeds"
        );
        assert_eq!(s.examples, vec!["the dog barked all night"]);
        assert_eq!(s.id(), "02084071-n");
        assert!(!s.is_instance());
        assert_eq!(
            s.taxonomic_neighbours().collect::<Vec<_>>(),
            vec![2083346, 1322604]
        );
    }

    #[test]
    fn splits_glosses() {
        assert_eq!(
            split_gloss("a plain definition"),
            ("a plain definition".into(), vec![])
        );
        assert_eq!(
            split_gloss("def; \"one\"; \"two, three\" - Author"),
            (
                "def".into(),
                vec!["one".to_string(), "two, three".to_string()]
            )
        );
        assert_eq!(split_gloss("\"only an example\"").0, "");
        assert_eq!(split_gloss("trailing semicolon;").0, "trailing semicolon");
    }

    #[test]
    fn parses_index_line_in_sense_order() {
        let (lemma, offs) =
            parse_index_line("dog n 3 2 @ ~ 3 1 02084071 10114209 10023039  ").unwrap();
        assert_eq!(lemma, "dog");
        assert_eq!(offs, vec![2084071, 10114209, 10023039]);
        assert!(parse_index_line("dog n 3 0 3 1 02084071").is_err());
    }

    #[test]
    fn line_errors_keep_their_messages() {
        let index = |line: &str| parse_index_line(line).unwrap_err().to_string();
        let data = |line: &str| parse_data_line(line).unwrap_err().to_string();
        assert_eq!(
            parse_index_line("dog n 3 0 3 1 02084071"),
            Err(LineError::Missing {
                field: "synset_offset"
            })
        );
        assert_eq!(index("dog n 3 0 3 1 02084071"), "missing synset_offset");
        assert_eq!(
            index("dog n x"),
            "bad synset_cnt: invalid digit found in string"
        );
        assert_eq!(data(""), "missing synset_offset");
        let err = parse_data_line("0000000x 03 n 01").unwrap_err();
        assert!(
            matches!(&err, LineError::BadNumber { field: "synset_offset", value, .. } if value == "0000000x")
        );
        assert!(std::error::Error::source(&err).is_some());
        assert_eq!(
            err.to_string(),
            "bad synset_offset: invalid digit found in string"
        );
        assert_eq!(data("00000001 03 q 01"), "bad ss_type `q`");
        assert_eq!(
            data("00000001 03 n 0g"),
            "bad w_cnt: invalid digit found in string"
        );
        assert_eq!(data("00000001 03 n 00"), "w_cnt is 0");
        assert_eq!(
            data("00000001 03 n 01 thing z 000"),
            "bad lex_id `z`: invalid digit found in string"
        );
        let pointer = |rest: &str| data(&format!("00000001 03 n 01 thing 0 001 @ 00000002 {rest}"));
        assert_eq!(pointer("nn 0000"), "bad pointer pos `nn`");
        assert_eq!(pointer("n 000"), "bad pointer source/target `000`");
        assert_eq!(
            pointer("n 0g00"),
            "bad source: invalid digit found in string"
        );
        assert_eq!(
            pointer("n 000g"),
            "bad target: invalid digit found in string"
        );
    }

    #[test]
    fn reports_file_and_line() {
        let data = "  1 license header\n00000001 03 n 01 thing 0 000 | a thing\nbogus line\n";
        let err = WordNet::from_texts(data, "", "").unwrap_err();
        assert!(matches!(err, SourceError::Parse { line: 3, .. }), "{err}");
        assert!(err.to_string().starts_with("data.noun:3:"), "{err}");
        let err = WordNet::from_texts(
            "00000001 03 n 01 thing 0 000 | a thing\n",
            "thing n 1 0 1 0 00000002\n",
            "",
        )
        .unwrap_err();
        assert!(err.to_string().contains("index.noun:1"), "{err}");
    }

    #[test]
    fn loads_directory_with_exceptions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("data.noun"),
            "  14 WordNet 3.0 Copyright 2006 by Princeton University.  \n\
             00000001 03 n 01 man 0 001 @i 00000002 n 0000 | an adult male person  \n\
             00000002 03 n 01 Person 0 000 | a human  \n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("index.noun"),
            "man n 1 0 1 0 00000001  \nperson n 1 0 1 0 00000002  \n",
        )
        .unwrap();
        std::fs::write(dir.path().join("noun.exc"), "men man\n").unwrap();
        let wn = WordNet::load(dir.path()).unwrap();
        assert_eq!(wn.version, "3.0");
        assert_eq!(wn.sha256.len(), 64);
        assert_eq!(wn.senses("man"), &[1]);
        assert!(wn.synset(1).unwrap().is_instance());
        assert_eq!(wn.irregular_plurals("man"), &["men".to_string()]);
        assert_eq!(wn.irregular_bases("men"), &["man".to_string()]);
        assert_eq!(wn.lemmas().collect::<Vec<_>>(), vec!["man", "person"]);
        let err = WordNet::load(dir.path().join("absent")).unwrap_err();
        assert!(err.to_string().contains("absent"), "{err}");
    }
}

/// The lemmas of WordNet's four index files (`index.noun`, `index.verb`, `index.adj`,
/// `index.adv`): what the lexical membership classes of D.17 consult ("another indexed noun,
/// another indexed word, and unindexed string").
#[derive(Debug, Clone, Default)]
pub struct WordIndex {
    nouns: std::collections::HashSet<String>,
    words: std::collections::HashSet<String>,
    /// SHA-256 over the four index files, in the order above.
    pub sha256: String,
}

impl WordIndex {
    /// Read the four index files from a WordNet `dict` directory (Debian: /usr/share/wordnet).
    pub fn load(dir: impl AsRef<Path>) -> Result<WordIndex, SourceError> {
        let dir = dir.as_ref();
        let mut out = WordIndex::default();
        let mut hash = Sha256::new();
        for (file, noun) in [
            ("index.noun", true),
            ("index.verb", false),
            ("index.adj", false),
            ("index.adv", false),
        ] {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).map_err(|e| SourceError::io(&path, e))?;
            hash.update(text.as_bytes());
            out.add_index(&text, noun)
                .map_err(|(line, message)| SourceError::Parse {
                    path: path.clone(),
                    line,
                    message,
                })?;
        }
        out.sha256 = hex::encode(hash.finalize());
        Ok(out)
    }

    /// Add the lemmas of one index file's text (license lines start with a space).
    pub fn add_index(&mut self, text: &str, noun: bool) -> Result<(), (usize, String)> {
        for (n, line) in text.lines().enumerate() {
            if line.starts_with(' ') || line.trim().is_empty() {
                continue;
            }
            let lemma = line
                .split_ascii_whitespace()
                .next()
                .ok_or((n + 1, "empty index line".to_string()))?;
            if noun {
                self.nouns.insert(lemma.to_string());
            }
            self.words.insert(lemma.to_string());
        }
        Ok(())
    }
}

impl c2s_protocol::Lexicon for WordIndex {
    fn is_noun(&self, word: &str) -> bool {
        self.nouns.contains(word)
    }

    fn is_word(&self, word: &str) -> bool {
        self.words.contains(word)
    }
}

#[cfg(test)]
mod word_index_tests {
    use super::*;
    use c2s_protocol::Lexicon;

    #[test]
    fn index_lemmas_by_part_of_speech() {
        let mut w = WordIndex::default();
        w.add_index("  1 license line\napple n 1 1 @ 1 0 07739125\n", true)
            .unwrap();
        w.add_index("abandon v 1 1 @ 1 0 02228049\n", false)
            .unwrap();
        assert!(w.is_noun("apple") && w.is_word("apple"));
        assert!(!w.is_noun("abandon") && w.is_word("abandon"));
        assert!(!w.is_word("license") && !w.is_word("zzz"));
        let dir = Path::new("/usr/share/wordnet");
        if dir.join("index.adv").exists() {
            let real = WordIndex::load(dir).unwrap();
            assert!(real.is_noun("apple") && real.is_word("quickly") && !real.is_noun("quickly"));
        }
    }
}
