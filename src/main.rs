//! The `epaminondas` command: parses the command line and hands over to `cli`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = epaminondas::cli::Cli::parse();
    match epaminondas::cli::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
