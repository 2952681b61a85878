//! The `interpreter` binary. Everything it does lives in the `oi_cli` library.

fn main() -> std::process::ExitCode {
    oi_cli::main()
}
