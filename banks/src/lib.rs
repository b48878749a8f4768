//! Frozen item banks (paper A.2–A.3): the arithmetic generator with its column
//! carry simulator, the lexical generator over WordNet 3.0 and wordfreq, the pairing of
//! arithmetic and lexical items by K vector, and bank files with provenance.

#![deny(missing_docs)]

pub mod arithmetic;
pub mod bank;
pub mod coverage;
pub mod dialogue;
pub mod lexical;
pub mod panels;
pub mod plans;
pub mod semantic;
pub mod symbolic;
pub mod wordfreq;
pub mod wordnet;
