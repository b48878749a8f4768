//! Summaries as console text: what `choice2seq coverage` and `choice2seq dialogue` print, and
//! what the live monitor's page shows for run directories (`choice2seq view`).

pub mod coverage;
pub mod dialogue;
