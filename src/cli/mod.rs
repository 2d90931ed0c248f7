//! The command line: one file per subcommand, all parsed by clap's derive here.

mod rules_cmds;
mod train;

use clap::{Parser, Subcommand};

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
    /// Counts move sequences of a given length (move generator check).
    Perft(rules_cmds::PerftArgs),
    /// Lists the legal moves of a position in Abbott's notation.
    Moves(rules_cmds::MovesArgs),
    /// Draws a position, optionally after a sequence of moves.
    Show(rules_cmds::ShowArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Train(args) => train::train(args),
        Command::Perft(args) => rules_cmds::perft(args),
        Command::Moves(args) => rules_cmds::moves(args),
        Command::Show(args) => rules_cmds::show(args),
    }
}
