//! The `epaminondas` command: parses the command line and hands over to `cli`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    epaminondas::nn::keep_freed_memory();
    let cli = epaminondas::cli::Cli::parse();
    match epaminondas::cli::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", describe(&error));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each cause once: our errors name their source in their own text
/// ("{path}: {source}"), and printing the chain as well said it twice.
fn describe(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1).map(|cause| cause.to_string()) {
        if !text.contains(&cause) {
            text = format!("{text}: {cause}");
        }
    }
    text
}
