//! Generates `include/wkcore.h` from `ffi/src` with the pinned cbindgen and `ffi/cbindgen.toml`.
//!
//! `cargo run -p wkcore-header -- OUT` writes the header to `OUT` (`scripts/header` runs it;
//! `scripts/test` writes to a temporary file and diffs it with the committed one). A plain build
//! of the library never runs this: it writes nothing into the source tree and does not compile
//! cbindgen.
//!
//! * The crate is parsed from `ffi/src/lib.rs` (following its `mod` items), not through
//!   `cargo metadata`, so the output depends only on the sources, the config and the cbindgen
//!   version.
//! * The only content not in `cbindgen.toml` is the version block (`WK_VERSION_*`), generated
//!   from this package's version, which is the workspace's (the library's) version, so the
//!   number has a single source.

use std::env;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let [out] = args.as_slice() else {
        eprintln!("usage: wkcore-header OUT   (writes the C header to OUT)");
        return ExitCode::from(2);
    };
    let ffi_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut config = match cbindgen::Config::from_file(ffi_dir.join("cbindgen.toml")) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("wkcore-header: ffi/cbindgen.toml: {e}");
            return ExitCode::FAILURE;
        }
    };
    config.after_includes = Some(version_block());
    let bindings = match cbindgen::Builder::new()
        .with_config(config)
        .with_src(ffi_dir.join("src").join("lib.rs"))
        .generate()
    {
        Ok(bindings) => bindings,
        Err(e) => {
            eprintln!("wkcore-header: cbindgen failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Leaves the file (and its mtime) alone when the content is unchanged.
    bindings.write_to_file(out);
    ExitCode::SUCCESS
}

/// `#define`s for the crate version.
fn version_block() -> String {
    let part = |s: &str| -> u32 { s.parse().expect("version parts are numbers") };
    let (major, minor, patch) = (
        part(env!("CARGO_PKG_VERSION_MAJOR")),
        part(env!("CARGO_PKG_VERSION_MINOR")),
        part(env!("CARGO_PKG_VERSION_PATCH")),
    );
    assert!(
        minor < 256 && patch < 256,
        "WK_VERSION_NUMBER packs minor and patch in 8 bits each"
    );
    let number = (major << 16) | (minor << 8) | patch;
    format!(
        "\n/* Version of the wkcore library this header was generated from. */\n\
         #define WK_VERSION \"{version}\"\n\
         #define WK_VERSION_MAJOR {major}\n\
         #define WK_VERSION_MINOR {minor}\n\
         #define WK_VERSION_PATCH {patch}\n\
         /* (MAJOR << 16) | (MINOR << 8) | PATCH */\n\
         #define WK_VERSION_NUMBER 0x{number:06x}\n",
        version = env!("CARGO_PKG_VERSION"),
    )
}
