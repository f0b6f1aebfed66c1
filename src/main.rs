//! The `okn-benchmark` binary: the command-line definition lives in
//! [`okn_benchmark::cli`]; this file only hands over to it.

/// The allocator. `build` allocates and frees small strings and vectors
/// for every file of a runs root it reads and every page it renders; with
/// mimalloc instead of the C library's, `build --check` over a 10,000-attempt
/// root took 9% less wall time and 11% less CPU in seven paired runs
/// (docs/PERFORMANCE.md, "build and build --check").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    okn_benchmark::cli::main()
}
