//! The `okn-benchmark` binary: the command-line definition lives in
//! [`okn_benchmark::cli`]; this file only hands over to it.

fn main() -> std::process::ExitCode {
    okn_benchmark::cli::main()
}
