//! `perft`, `moves` and `show`: the rules engine on the command line.

use crate::game::diagram::{diagram, Style};
use crate::game::{self, Bitboard, Position, Rules, SymmetryRule};
use anyhow::Context;
use clap::Args;
use std::io::IsTerminal;

/// Rule options shared by commands that take a position.
#[derive(Args, Debug, Clone)]
pub struct PositionArgs {
    /// A position text (rows from the top, `/`-separated, then `w` or `b`); default: the start.
    #[arg(long)]
    pub position: Option<String>,
    /// Reading of the anti-copycat rule.
    #[arg(long, default_value = "mirror", value_parser = parse_symmetry)]
    pub symmetry: SymmetryRule,
    /// Board for the start position: standard (14x12), crossings-board (8x8) or WxH (ignored with
    /// --position, whose text has a size).
    #[arg(long, default_value = "standard", value_parser = parse_size)]
    pub size: (u8, u8),
    /// The stones variant: three neutral stones placed before the first move (needed to read a
    /// position text with stones, `s`).
    #[arg(long)]
    pub stones: bool,
}

pub fn parse_symmetry(text: &str) -> Result<SymmetryRule, String> {
    SymmetryRule::from_name(text)
        .ok_or_else(|| format!("{text:?} is not one of mirror, rotation, both, off"))
}

/// A board by name (standard, crossings-board) or WxH.
pub fn parse_size(text: &str) -> Result<(u8, u8), String> {
    game::parse_board(text).map_err(|e| e.to_string())
}

impl PositionArgs {
    pub fn position(&self) -> anyhow::Result<Position> {
        let rules = Rules {
            width: self.size.0,
            height: self.size.1,
            symmetry: self.symmetry,
            ply_cap: None,
            stones: self.stones,
        };
        match &self.position {
            Some(text) => Position::parse(text, rules)
                .with_context(|| format!("cannot read position {text:?}")),
            None => Ok(Position::start(rules)?),
        }
    }
}

#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Plies to search.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=super::MAX_PERFT_DEPTH))]
    pub depth: u32,
    /// Print the count under each first move too.
    #[arg(long)]
    pub divide: bool,
    #[command(flatten)]
    pub position: PositionArgs,
}

pub fn perft(args: PerftArgs) -> anyhow::Result<()> {
    let position = args.position.position()?;
    let start = std::time::Instant::now();
    let nodes = if args.divide {
        let split = game::divide(&position, args.depth);
        for (mv, count) in &split {
            println!("{} {count}", position.notation(*mv));
        }
        split.iter().map(|(_, c)| c).sum()
    } else {
        game::perft(&position, args.depth)
    };
    let seconds = start.elapsed().as_secs_f64();
    eprintln!("{:.3} s, {:.0} nodes/s", seconds, nodes as f64 / seconds.max(1e-9));
    println!("{nodes}");
    Ok(())
}

#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    pub position: PositionArgs,
}

pub fn moves(args: MovesArgs) -> anyhow::Result<()> {
    let position = args.position.position()?;
    for mv in position.legal_moves() {
        println!("{}", position.notation(mv));
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Moves to play first, separated by spaces (either notation).
    #[arg(long)]
    pub moves: Option<String>,
    /// Plain ASCII even on a terminal.
    #[arg(long)]
    pub plain: bool,
    #[command(flatten)]
    pub position: PositionArgs,
}

pub fn show(args: ShowArgs) -> anyhow::Result<()> {
    let mut position = args.position.position()?;
    let mut highlight = Bitboard::EMPTY;
    for (i, text) in args.moves.as_deref().unwrap_or("").split_whitespace().enumerate() {
        let mv = position.parse_move(text).with_context(|| format!("move {} of --moves", i + 1))?;
        highlight = Bitboard::from_square(mv.from) | Bitboard::from_square(mv.to());
        position = position.play_unchecked(mv);
    }
    let style =
        if !args.plain && std::io::stdout().is_terminal() { Style::Ansi } else { Style::Plain };
    print!("{}", diagram(&position, highlight, style));
    println!("{position}");
    let status = match position.status() {
        game::Status::Ongoing => format!("{} to move", position.side_to_move()),
        game::Status::Draw => "draw (ply cap)".to_string(),
        game::Status::Won { winner, reason } => format!("{winner} has won ({reason:?})"),
    };
    println!("{status}");
    Ok(())
}
