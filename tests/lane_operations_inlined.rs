//! The vector build's lane operations (`src/curve/lanes.rs`) compile to one instruction each
//! only when the compiler inlines them into the function that enables AVX-512 IFMA. Any helper
//! left out of line on the way is compiled without those CPU features, and the intrinsics in it
//! become calls: results stay right, so no correctness test notices, but signing gets about 37
//! times slower (this happened once, in one build, through `std::array::from_fn`).
//!
//! So this checks the compiled code of this very test binary, which links the library like any
//! user's program: no `core::core_arch` intrinsic may remain as a function of its own (CPU
//! detection's `_xgetbv` aside). Release builds only, like the code users run; in a debug build
//! nothing is inlined.
#![cfg(all(not(debug_assertions), target_arch = "x86_64", target_os = "linux"))]

use std::process::Command;

#[test]
fn no_intrinsic_is_left_out_of_line() {
    // Keep the vector build (and the other builds) in this binary.
    let mut k = [0x42u8; 32];
    k[31] = 0x0f;
    let vector_build: unsafe fn(&curve25519_dalek::Scalar) -> perps::curve::Checked = perps::curve::mul_base_ifma;
    std::hint::black_box(vector_build);
    std::hint::black_box(perps::curve::mul_base_compressed(std::hint::black_box(&k)));

    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("nm")
        .arg("--demangle")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("nm could not be started ({e}); install binutils"));
    assert!(output.status.success(), "nm failed: {}", String::from_utf8_lossy(&output.stderr));
    let symbols = String::from_utf8_lossy(&output.stdout);
    assert!(symbols.contains("perps::curve::mul_base_ifma"), "the vector build is not in this binary");
    let out_of_line: Vec<&str> =
        symbols.lines().filter(|line| line.contains("core::core_arch::") && !line.contains("_xgetbv")).collect();
    assert!(out_of_line.is_empty(), "intrinsics compiled as functions of their own:\n{}", out_of_line.join("\n"));
}
