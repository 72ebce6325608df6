//! Generates `include/wkcore.h` from `ffi/src` with the pinned cbindgen and `ffi/cbindgen.toml`.
//!
//! * The crate is parsed from `src/lib.rs` (following its `mod` items), not through
//!   `cargo metadata`, so the build script never calls back into cargo and the output depends only
//!   on the sources, the config and the cbindgen version.
//! * The only content not in `cbindgen.toml` is the version block (`WK_VERSION_*`), generated here
//!   from `CARGO_PKG_VERSION*` so the number has a single source (STYLE.md convention 5).
//! * The header is written only when its content changed (cbindgen's `write_to_file` compares),
//!   so an unchanged build leaves its mtime alone and C/C++ dependants do not rebuild.
//! * `WKCORE_SKIP_HEADER=1` skips generation (e.g. a read-only source tree).

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=WKCORE_SKIP_HEADER");

    if env::var_os("WKCORE_SKIP_HEADER").is_some_and(|v| v == "1") {
        return;
    }

    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml must parse");
    config.after_includes = Some(version_block());

    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src").join("lib.rs"))
        .generate()
        .expect("cbindgen failed to generate include/wkcore.h");

    let header = crate_dir.join("..").join("include").join("wkcore.h");
    // Returns false (and does not touch the file) when the content is unchanged.
    bindings.write_to_file(header);
}

/// `#define`s for the crate version, from the `CARGO_PKG_VERSION*` variables cargo sets.
fn version_block() -> String {
    let var = |name: &str| env::var(name).unwrap_or_else(|_| panic!("{name} is set by cargo"));
    let part = |name: &str| -> u32 {
        var(name)
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number"))
    };
    let (major, minor, patch) = (
        part("CARGO_PKG_VERSION_MAJOR"),
        part("CARGO_PKG_VERSION_MINOR"),
        part("CARGO_PKG_VERSION_PATCH"),
    );
    assert!(
        minor < 256 && patch < 256,
        "WK_VERSION_NUMBER packs minor and patch in 8 bits each"
    );
    let number = (major << 16) | (minor << 8) | patch;
    format!(
        "\n/* Version of the wkcore crate this header was generated from (Cargo.toml). */\n\
         #define WK_VERSION \"{version}\"\n\
         #define WK_VERSION_MAJOR {major}\n\
         #define WK_VERSION_MINOR {minor}\n\
         #define WK_VERSION_PATCH {patch}\n\
         /* (MAJOR << 16) | (MINOR << 8) | PATCH */\n\
         #define WK_VERSION_NUMBER 0x{number:06x}\n",
        version = var("CARGO_PKG_VERSION"),
    )
}
