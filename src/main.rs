//! The `epaminondas` command: parses the command line and hands over to `cli`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    sleep_idle_openmp_threads();
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

/// libtorch runs its CPU kernels on libgomp's threads, and libgomp reads its wait policy from
/// the environment once, when the library loads, before `main`. By default an idle thread spins
/// at every barrier for a while before it sleeps: with any other busy program on the machine the
/// spinning threads and that program starve each other (self-play beside one busy process ran
/// at 0.36 of its quiet speed on 2 cores, 0.61 with the passive policy). So, unless the
/// environment names a policy, the program starts itself again with the passive one, which
/// puts idle threads to sleep at once. Where that fails, it runs on as it is.
fn sleep_idle_openmp_threads() {
    #[cfg(unix)]
    if std::env::var_os(epaminondas::nn::WAIT_POLICY).is_none() {
        use std::os::unix::process::CommandExt;
        if let Ok(program) = std::env::current_exe() {
            let error = std::process::Command::new(program)
                .args(std::env::args_os().skip(1))
                .env(epaminondas::nn::WAIT_POLICY, "passive")
                .exec();
            eprintln!("warning: could not restart with idle libtorch threads sleeping: {error}");
        }
    }
}
