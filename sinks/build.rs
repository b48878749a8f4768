//! Records the compiler version and target triple for the run manifest.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    if let Ok(out) = Command::new(rustc).arg("--version").output() {
        if out.status.success() {
            let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
            println!("cargo:rustc-env=C2S_SINKS_RUSTC_VERSION={version}");
        }
    }
    if let Ok(target) = std::env::var("TARGET") {
        println!("cargo:rustc-env=C2S_SINKS_TARGET={target}");
    }
    if let Ok(profile) = std::env::var("PROFILE") {
        println!("cargo:rustc-env=C2S_SINKS_PROFILE={profile}");
    }
}
