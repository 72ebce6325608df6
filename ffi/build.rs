//! Gives the shared library its SONAME on ELF targets: `libwkcore.so.0` (the major version of
//! the installed C ABI; `scripts/install` installs `libwkcore.so.0.<version>` with the
//! `libwkcore.so.0` and `libwkcore.so` links). Nothing is generated into the source tree.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd"
    ) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libwkcore.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
