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

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::Cell;
use std::io::IsTerminal;

#[derive(Parser, Debug)]
#[command(name = "epaminondas", version, about = "Learns Robert Abbott's Epaminondas by self-play, and plays it")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Trains an agent by self-play in a run directory (creates or resumes it).
    Train(train::TrainArgs),
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
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Train(args) => train::train(args),
        Command::Distill(args) => distill::distill(args),
        Command::Match(args) => arena::run_match(args),
        Command::Tournament(args) => arena::tournament(args),
        Command::Compare(args) => arena::compare(args),
        Command::Tally(args) => arena::tally(args),
        Command::Plot(args) => {
            let path = match args.runs.as_slice() {
                [run] => crate::plot::plot_run(run, args.out.as_deref())?,
                runs => crate::plot::plot_comparison(runs, args.out.as_deref().unwrap_or(std::path::Path::new(".")))?,
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
/// way instead, so that the log of a long job (a generation of a large network on a CPU takes
/// half an hour) still shows it advancing.
pub struct LoggedBar {
    bar: ProgressBar,
    /// The tenths of the way already logged.
    tenths_logged: Cell<u64>,
}

impl LoggedBar {
    /// A bar of `length` steps drawn with the indicatif `template`.
    pub fn new(length: usize, template: &str) -> LoggedBar {
        let bar = ProgressBar::new(length as u64);
        if !std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> "));
        LoggedBar { bar, tenths_logged: Cell::new(0) }
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
        self.bar.finish_and_clear();
    }

    fn log_if_due(&self) {
        let (position, length) = (self.bar.position(), self.bar.length().unwrap_or(0).max(1));
        let tenths = (position * 10 / length).min(10);
        if self.bar.is_hidden() && tenths > self.tenths_logged.get() {
            self.tenths_logged.set(tenths);
            eprintln!("{}: {position}/{length} after {}", self.bar.message(), indicatif::HumanDuration(self.bar.elapsed()));
        }
    }
}
