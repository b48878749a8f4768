//! Unit tests of label humanization, text normalization, TSV parsing and stream seeds.

use super::*;

#[test]
fn labels_are_humanized_mechanically() {
    assert_eq!(humanize_label("card_arrival"), "card arrival");
    assert_eq!(
        humanize_label("Refund_not_showing_up"),
        "refund not showing up"
    );
    assert_eq!(
        humanize_label("reverted_card_payment?"),
        "reverted card payment"
    );
    assert_eq!(humanize_label("FilmFestival"), "film festival");
    assert_eq!(humanize_label("NCAATeamSeason"), "ncaa team season");
    assert_eq!(
        humanize_label("SupremeCourtOfTheUnitedStatesCase"),
        "supreme court of the united states case"
    );
    assert_eq!(humanize_label("rollover_401k"), "rollover 401k");
    assert_eq!(humanize_label("w2"), "w2");
    assert_eq!(humanize_label("ABBR:exp"), "abbr exp");
    assert_eq!(describe_label("card_arrival"), "Texts about: card arrival.");
}

#[test]
fn normalization_lowercases_and_collapses_whitespace() {
    assert_eq!(normalize_text("  Hello\n  WORLD\t!  "), "hello world !");
    assert_eq!(normalize_text(" \n "), "");
}

#[test]
fn tsv_quoting_follows_rfc_4180() {
    let t = "text\tlabel\n\"a \"\"q\"\"\tb\"\tx\n\"\nmulti\nline\"\ty\nplain \"mid\" quote\tz\r\n\nlast\tw";
    let r = parse_tsv(t, "f.tsv").unwrap();
    assert_eq!(r.len(), 5);
    assert_eq!(r[1].fields, ["a \"q\"\tb", "x"]);
    assert_eq!(r[1].line, 2);
    assert_eq!(r[2].fields, ["\nmulti\nline", "y"]);
    assert_eq!(r[2].line, 3);
    assert_eq!(r[3].fields, ["plain \"mid\" quote", "z"]);
    assert_eq!(r[3].line, 6);
    assert_eq!(r[4].fields, ["last", "w"]);
    assert_eq!(r[4].line, 8);
    let e = parse_tsv("text\tlabel\n\"open\tx\n", "g.tsv").unwrap_err();
    assert_eq!(e.to_string(), "g.tsv:2: a quoted field is not closed");
    let e = parse_tsv("a\tb\n\"x\"y\tz\n", "h.tsv").unwrap_err();
    assert!(e.to_string().starts_with("h.tsv:2:"), "{e}");
}

#[test]
fn stream_seeds_are_stable_and_distinct() {
    assert_eq!(stream_seed(1, "a"), stream_seed(1, "a"));
    assert_ne!(stream_seed(1, "a/k2"), stream_seed(1, "a/k4"));
    assert_ne!(stream_seed(1, "a"), stream_seed(2, "a"));
}
