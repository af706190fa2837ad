//! The `prooflog` command line: a thin layer over the library. See `cli` for the
//! command-line contract (docs/cli.md).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
