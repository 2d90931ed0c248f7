//! The command line: one file per subcommand, all parsed by clap's derive here.

mod arena;
mod bench;
mod distill;
mod engine;
mod export;
mod play;
mod review;
mod rules_cmds;
mod serve;
mod train;
mod worker;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::Cell;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(
    name = "epaminondas",
    version,
    about = "Learns Robert Abbott's Epaminondas by self-play, and plays it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Trains an agent by self-play in a run directory (creates or resumes it).
    Train(train::TrainArgs),
    /// Plays self-play games for a learner (`train --cluster`) through a NATS server.
    Worker(worker::WorkerArgs),
    /// Teaches a smaller network a trained one's move priors and values (creates or resumes).
    Distill(distill::DistillArgs),
    /// Plays a match between two players: score, Elo with a 95% interval, optional SPRT.
    Match(arena::MatchArgs),
    /// Plays a round robin and fits ratings by maximum likelihood (with a first-move term).
    Tournament(arena::TournamentArgs),
    /// Compares two matches played on the same openings (same seed and games) round by round:
    /// each one's first player's score and their difference with a 95% interval; several such
    /// pairs pool into one comparison.
    Compare(arena::CompareArgs),
    /// Pools matches of the same two players (other seeds, say) into one score and Elo with a
    /// 95% interval, as a single match reports it.
    Tally(arena::TallyArgs),
    /// Measures a run's newest checkpoint at given hours of training against fixed opponents
    /// at equal time a move (resumable): RUN/yardstick.csv and RUN/plots/scores.svg.
    Yardstick(arena::YardstickArgs),
    /// Draws a run's progress (Elo against time and games, losses, game length) as SVG, or
    /// compares the Elo curves of several runs.
    Plot(PlotArgs),
    /// Measures move generation, the machine's FLOP/s, the network, search, self-play and training.
    Bench(bench::BenchArgs),
    /// Plays against an agent (or any player) in the terminal.
    Play(play::PlayArgs),
    /// Serves a page on localhost for playing against an agent in the browser.
    Serve(serve::ServeArgs),
    /// Speaks a UCI-style protocol on stdin/stdout for GUIs, scripts and referees.
    Engine(engine::EngineArgs),
    /// Goes over recorded games move by move with an agent and marks the moves that gave a
    /// result away.
    Review(review::ReviewArgs),
    /// Writes a checkpoint as a self-contained agent (plus TorchScript and a draft card).
    Export(export::ExportArgs),
    /// Counts move sequences of a given length (move generator check).
    Perft(rules_cmds::PerftArgs),
    /// Lists the legal moves of a position in Abbott's notation.
    Moves(rules_cmds::MovesArgs),
    /// Draws a position, optionally after a sequence of moves.
    Show(rules_cmds::ShowArgs),
}

#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// The run directory; with several, one picture compares their Elo curves.
    #[arg(required = true)]
    pub runs: Vec<std::path::PathBuf>,
    /// Folder for progress.svg (default: RUN/plots), or for comparison.svg (default: the
    /// current folder).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Draws scores.svg instead: the run's checkpoints against each opponent by hours of
    /// training, from this CSV (generation,opponent,wins,draws,losses: `match` results).
    #[arg(long, value_name = "CSV")]
    pub yardstick: Option<std::path::PathBuf>,
}

/// The deepest move-generation count `perft` and `bench` take: the count grows about 30-fold a
/// ply, and the search keeps a move list for each ply.
pub const MAX_PERFT_DEPTH: i64 = 20;

/// A CSV table built in memory (`csv::Writer::from_writer(Vec::new())`), written to `path`
/// atomically: a table being rewritten is never seen, or left, half written.
pub fn save_csv(path: &std::path::Path, table: csv::Writer<Vec<u8>>) -> anyhow::Result<()> {
    let bytes = table.into_inner().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    crate::util::write_atomically(path, &bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// A command-line number of seconds or hours, for clap: above zero and at most
/// [`crate::players::MAX_SECONDS`] (which keeps the clock's arithmetic in range).
pub fn positive_number(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(number) if number > 0.0 && number <= crate::players::MAX_SECONDS => Ok(number),
        _ => Err(format!("{text:?} is not a number above 0 and at most 1e9 (e.g. 2 or 0.5)")),
    }
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Train(args) => train::train(args),
        Command::Worker(args) => worker::worker(args),
        Command::Distill(args) => distill::distill(args),
        Command::Match(args) => arena::run_match(args),
        Command::Tournament(args) => arena::tournament(args),
        Command::Compare(args) => arena::compare(args),
        Command::Tally(args) => arena::tally(args),
        Command::Yardstick(args) => arena::yardstick(args),
        Command::Plot(args) => {
            let path = match (args.runs.as_slice(), &args.yardstick) {
                ([run], Some(scores)) => {
                    crate::plot::plot_yardstick(run, scores, args.out.as_deref())?
                }
                (_, Some(_)) => anyhow::bail!("--yardstick draws one run's scores: name one run"),
                ([run], None) => crate::plot::plot_run(run, args.out.as_deref())?,
                (runs, None) => crate::plot::plot_comparison(
                    runs,
                    args.out.as_deref().unwrap_or(std::path::Path::new(".")),
                )?,
            };
            println!("{}", path.display());
            Ok(())
        }
        Command::Bench(args) => bench::bench(args),
        Command::Play(args) => play::play(args),
        Command::Serve(args) => serve::serve(args),
        Command::Engine(args) => engine::engine(args),
        Command::Review(args) => review::review(args),
        Command::Export(args) => export::export(args),
        Command::Perft(args) => rules_cmds::perft(args),
        Command::Moves(args) => rules_cmds::moves(args),
        Command::Show(args) => rules_cmds::show(args),
    }
}

/// Progress on stderr: a bar on a terminal. Where stderr is not one (a log file, CI) the bar is
/// hidden, as its redraws would fill the log, and a plain line is written at every tenth of the
/// way, and whenever [`HEARTBEAT`] has passed without one (a heartbeat thread sees to it while
/// nothing moves), so a log never stays silent for long while a long job runs.
pub struct LoggedBar {
    bar: ProgressBar,
    /// The tenths of the way already logged.
    tenths_logged: Cell<u64>,
    /// When the last line was logged, shared with the heartbeat.
    logged_at: Arc<Mutex<Instant>>,
    /// Tells the heartbeat thread to stop (when the bar is dropped).
    stop: Arc<AtomicBool>,
}

/// The longest a hidden bar stays silent.
pub const HEARTBEAT: Duration = Duration::from_secs(20);

impl LoggedBar {
    /// A bar of `length` steps drawn with the indicatif `template`.
    pub fn new(length: usize, template: &str) -> LoggedBar {
        LoggedBar::with_heartbeat(length, template, !std::io::stderr().is_terminal(), HEARTBEAT)
    }

    /// A bar that is `hidden` (logged as lines) or drawn, logging at least every `heartbeat`
    /// when hidden.
    fn with_heartbeat(
        length: usize,
        template: &str,
        hidden: bool,
        heartbeat: Duration,
    ) -> LoggedBar {
        let bar = ProgressBar::new(length as u64);
        if hidden {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        } else {
            // Redrawn every second, so the elapsed time and the message move while a step takes
            // long.
            bar.enable_steady_tick(Duration::from_secs(1));
        }
        bar.set_style(
            ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> "),
        );
        let logged_at = Arc::new(Mutex::new(Instant::now()));
        let stop = Arc::new(AtomicBool::new(false));
        if hidden {
            let (bar, logged_at, stop) = (bar.clone(), logged_at.clone(), stop.clone());
            std::thread::spawn(move || {
                let tick = (heartbeat / 20).max(Duration::from_millis(10));
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    let mut last =
                        logged_at.lock().expect("the heartbeat's lock is never poisoned");
                    if last.elapsed() >= heartbeat && !stop.load(Ordering::Relaxed) {
                        eprintln!("{}", status_line(&bar));
                        *last = Instant::now();
                    }
                }
            });
        }
        LoggedBar { bar, tenths_logged: Cell::new(0), logged_at, stop }
    }

    pub fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    pub fn set_position(&self, position: usize) {
        self.bar.set_position(position as u64);
        self.log_if_due();
    }

    pub fn inc(&self, steps: u64) {
        self.bar.inc(steps);
        self.log_if_due();
    }

    /// A line above the bar (printed plainly where the bar is hidden).
    pub fn println(&self, line: String) {
        if self.bar.is_hidden() {
            println!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    pub fn finish_and_clear(&self) {
        self.stop_heartbeat();
        self.bar.finish_and_clear();
    }

    /// Stops the heartbeat, under its lock, so that no line of a finished bar can follow.
    fn stop_heartbeat(&self) {
        let _quiet = self.logged_at.lock().expect("the heartbeat's lock is never poisoned");
        self.stop.store(true, Ordering::Relaxed);
    }

    fn log_if_due(&self) {
        let (position, length) = (self.bar.position(), self.bar.length().unwrap_or(0).max(1));
        let tenths = (position * 10 / length).min(10);
        if self.bar.is_hidden() && tenths > self.tenths_logged.get() {
            self.tenths_logged.set(tenths);
            let mut last = self.logged_at.lock().expect("the heartbeat's lock is never poisoned");
            eprintln!("{}", status_line(&self.bar));
            *last = Instant::now();
        }
    }
}

impl Drop for LoggedBar {
    fn drop(&mut self) {
        self.stop_heartbeat();
    }
}

/// A hidden bar as one log line: its message, how far, and for how long.
fn status_line(bar: &ProgressBar) -> String {
    format!(
        "{}: {}/{} after {}",
        bar.message(),
        bar.position(),
        bar.length().unwrap_or(0),
        indicatif::HumanDuration(bar.elapsed())
    )
}
