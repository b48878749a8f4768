//! The spec's Full-support alphabet ([`full_alphabet`]). The checks on a spec before a
//! controller is built live beside [`ArmSpec`] (`c2s_records::validate_spec`), so the config
//! runs them without this crate.

use c2s_records::{ArmSpec, Item};

/// The Full-support alphabet of `spec` on `item`: the domain's, or the 26 lowercase letters
/// (D.7's a–z arms).
pub fn full_alphabet(item: &Item, spec: &ArmSpec) -> &'static [char] {
    match spec.alphabet {
        c2s_records::LocalAlphabet::Domain => item.domain.alphabet(),
        c2s_records::LocalAlphabet::Lowercase => &c2s_records::LETTERS,
    }
}
