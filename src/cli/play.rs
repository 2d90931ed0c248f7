//! `play`: a person against an agent in the terminal. Reads commands line by line from stdin,
//! so a game can also be piped in.

use super::rules_cmds::{parse_size, parse_symmetry};
use crate::game::diagram::{diagram_with_captures, Style};
use crate::game::{Bitboard, Color, GameRecord, Move, Position, Rules, Status, SymmetryRule};
use crate::nn::DeviceChoice;
use crate::players::{
    default_agent, trained_rules, winning_chance, Limit, Player, PlayerKind, PlayerSpec,
};
use anyhow::{bail, Context};
use clap::Args;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Which player, and how long it may think (shared by `play`, `serve`, `engine` and `review`).
#[derive(Args, Debug, Clone)]
pub struct PlayerChoice {
    /// An exported agent or any checkpoint (default: the shipped agent for the board, the best
    /// rated in models/, else alphabeta).
    #[arg(long)]
    pub agent: Option<PathBuf>,
    /// Any player instead of an agent: random, greedy, alphabeta:depth=5, mcts-rollout, net:PATH.
    #[arg(long, conflicts_with = "agent")]
    pub player: Option<PlayerSpec>,
    /// Simulations (or searched positions) per move.
    #[arg(long)]
    pub sims: Option<u64>,
    /// Seconds per move.
    #[arg(long, value_parser = super::positive_number)]
    pub time: Option<f64>,
    /// Where the agent's network runs.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
}

/// Which player to face and under which rules (shared by `play`, `serve` and `engine`).
#[derive(Args, Debug, Clone)]
pub struct AgentArgs {
    #[command(flatten)]
    pub choice: PlayerChoice,
    /// Board: standard (14x12), crossings-board (8x8) or WxH; default: the agent's, else standard.
    #[arg(long, value_parser = parse_size)]
    pub size: Option<(u8, u8)>,
    /// Reading of the anti-copycat rule; default: the agent's, else mirror.
    #[arg(long, value_parser = parse_symmetry)]
    pub symmetry: Option<SymmetryRule>,
    /// The stones variant (three neutral stones placed before the first move); on by default
    /// for an agent trained with stones.
    #[arg(long)]
    pub stones: bool,
    /// Plies after which the game is a draw (0 or left out: none; the rules have no draw).
    #[arg(long)]
    pub ply_cap: Option<u16>,
}

/// The folder of shipped agents: `models` in the working directory, else the `models` folder of
/// the checkout this program was built from, so that an agent is found wherever the program is
/// started.
pub fn models_dir() -> PathBuf {
    let here = PathBuf::from("models");
    let built_from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    if here.is_dir() || !built_from.is_dir() {
        here
    } else {
        built_from
    }
}

impl AgentArgs {
    /// The player spec and the rules to play under.
    pub fn resolve(&self) -> anyhow::Result<(PlayerSpec, Rules)> {
        // Without an agent named, the shipped one for the board asked for (standard if none).
        let board =
            self.size.unwrap_or((crate::game::STANDARD_WIDTH, crate::game::STANDARD_HEIGHT));
        let choice = &self.choice;
        let mut spec = match (&choice.player, &choice.agent) {
            (Some(spec), _) => spec.clone(),
            (None, Some(path)) => PlayerSpec::new(
                PlayerKind::Net(path.clone()),
                Limit::default(),
                format!("net:{}", path.display()),
            ),
            (None, None) => {
                let models = models_dir();
                match default_agent(&models, board.0, board.1, self.stones)? {
                    Some(path) => {
                        eprintln!("using the shipped agent for this board, {}", path.display());
                        PlayerSpec::new(
                            PlayerKind::Net(path.clone()),
                            Limit::default(),
                            format!("net:{}", path.display()),
                        )
                    }
                    None => {
                        eprintln!(
                            "no agent for this board is shipped in {}: using the alphabeta player instead",
                            models.display()
                        );
                        "alphabeta".parse()?
                    }
                }
            }
        };
        if let Some(nodes) = choice.sims {
            spec.limit.nodes = Some(nodes.max(1));
        }
        if let Some(seconds) = choice.time {
            spec.limit.time = Some(Duration::from_secs_f64(seconds));
        }
        let trained = match &spec.kind {
            PlayerKind::Net(path) => trained_rules(path)?,
            _ => None,
        };
        let base = trained.unwrap_or_default();
        let (width, height) = self.size.unwrap_or((base.width, base.height));
        let rules = Rules {
            width,
            height,
            symmetry: self.symmetry.unwrap_or(base.symmetry),
            // The game has no draw rule: a cap only where the user sets one, whatever cap the
            // agent trained with.
            ply_cap: self.ply_cap.filter(|&cap| cap > 0),
            stones: self.stones || base.stones,
        };
        rules.validate()?;
        crate::players::check_rules(&spec, &rules)?;
        Ok((spec, rules))
    }
}

#[derive(Args, Debug)]
pub struct PlayArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The colour you play.
    #[arg(long = "as", value_enum, default_value_t = Side::White)]
    pub side: Side,
    /// Plain ASCII board even on a terminal.
    #[arg(long)]
    pub plain: bool,
    /// Where the game record goes (default: games/play-UNIXTIME-PID.txt).
    #[arg(long)]
    pub record: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    White,
    Black,
}

const HELP: &str = "\
commands:
  <move>        a move in notation: a1-a3, a1xa3 or the tail,head-destination form f1,g2-h3
                (with --stones the game opens with stone placements: @f6)
  moves [SQ]    legal moves (all, or those of the phalanxes whose tail is on SQ)
  hint          the agent's suggestion for you
  undo          take back your last move and the agent's reply
  resign        give up the game
  help          this text
  quit          leave (the record is saved)";

/// The game in progress: its start, moves, and what to draw.
struct Game {
    start: Position,
    moves: Vec<Move>,
}

impl Game {
    fn position(&self) -> Position {
        self.moves.iter().fold(self.start, |p, mv| p.play_unchecked(*mv))
    }

    /// Squares of the last move, and of the pieces it captured.
    fn last_move_marks(&self) -> (Bitboard, Bitboard) {
        let Some(&last) = self.moves.last() else { return (Bitboard::EMPTY, Bitboard::EMPTY) };
        let before = self.moves[..self.moves.len() - 1]
            .iter()
            .fold(self.start, |p, mv| p.play_unchecked(*mv));
        let after = before.play_unchecked(last);
        let victim = before.side_to_move().opponent();
        let captured = before.pieces(victim) & !after.pieces(victim);
        (Bitboard::from_square(last.from) | Bitboard::from_square(last.to()), captured)
    }
}

fn describe_status(position: &Position) -> Option<String> {
    match position.status() {
        Status::Ongoing => None,
        Status::Draw => Some("the game is drawn (ply cap)".into()),
        Status::Won { winner, reason } => Some(format!(
            "{winner} wins ({})",
            match reason {
                crate::game::WinReason::BackRow =>
                    "more pieces on the far row at the start of the turn",
                crate::game::WinReason::NoMoves => "the opponent cannot move",
            }
        )),
    }
}

pub fn play(args: PlayArgs) -> anyhow::Result<()> {
    let (spec, rules) = args.agent.resolve()?;
    let path = record_path(args.record.clone())?;
    let mut agent: Box<dyn Player> =
        spec.build(args.agent.choice.device, std::process::id() as u64)?;
    let human = if args.side == Side::White { Color::White } else { Color::Black };
    let style =
        if !args.plain && std::io::stdout().is_terminal() { Style::Ansi } else { Style::Plain };
    let mut game = Game { start: Position::start(rules)?, moves: Vec::new() };
    let mut resigned = None;
    let played = play_turns(&mut game, &mut resigned, agent.as_mut(), human, style);
    // The game so far is saved however the turns ended: finished, quit, input closed or
    // unreadable, or output closed.
    let (white, black) = if human == Color::White {
        ("you".to_string(), agent.name())
    } else {
        (agent.name(), "you".to_string())
    };
    let mut record = GameRecord::new(&white, &black, game.start, game.moves);
    if let Some(loser) = resigned {
        record = record.resigned(loser);
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    crate::util::write_atomically(&path, format!("{record}\n").as_bytes())
        .with_context(|| format!("cannot save the record to {}", path.display()))?;
    // Said where the game went; the output may be closed already.
    let _ = writeln!(std::io::stdout(), "game record saved to {}", path.display());
    played
}

/// Where the game's record goes: `--record`, refused if it already holds something (a game
/// is never written over), else a new file named by the time and the process.
fn record_path(asked: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match asked {
        Some(path) if std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) => bail!(
            "{} already holds something, which is left as it is; name another file with --record",
            path.display()
        ),
        Some(path) => Ok(path),
        None => {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            Ok(PathBuf::from(format!("games/play-{stamp}-{}.txt", std::process::id())))
        }
    }
}

/// The game's turns in the terminal until it ends, the human quits or resigns, or input ends.
fn play_turns(
    game: &mut Game,
    resigned: &mut Option<Color>,
    agent: &mut dyn Player,
    human: Color,
    style: Style,
) -> anyhow::Result<()> {
    let rules = *game.start.rules();
    let mut out = std::io::stdout();
    writeln!(
        out,
        "You play {human} against {} on {rules}. Type `help` for commands.",
        agent.name()
    )?;
    let mut lines = std::io::stdin().lock().lines();
    loop {
        let position = game.position();
        if position.status() == Status::Ongoing && position.side_to_move() != human {
            let decision = agent.choose(&position, Limit::default());
            // The game's record must read back: an agent's illegal move ends the game here.
            if let Err(reason) = position.check(decision.mv) {
                anyhow::bail!(
                    "the agent chose {}, which is illegal here ({reason}); this is a bug in the agent",
                    decision.mv
                );
            }
            let notation = position.notation(decision.mv);
            game.moves.push(decision.mv);
            let chance = decision
                .value
                .map(|v| format!(" (its winning chance: {:.0}%)", 100.0 * winning_chance(v)))
                .unwrap_or_default();
            writeln!(out, "{} plays {notation}{chance}", agent.name())?;
            continue;
        }
        let (marks, captured) = game.last_move_marks();
        write!(out, "{}", diagram_with_captures(&position, marks, captured, style))?;
        if let Some(result) = describe_status(&position) {
            writeln!(out, "{result}")?;
            break;
        }
        write!(
            out,
            "{} to move ({}), move {}> ",
            position.side_to_move(),
            if position.side_to_move() == human { "you" } else { "agent" },
            move_number(&position)
        )?;
        out.flush()?;
        let Some(line) = lines.next() else {
            writeln!(out, "\nend of input: leaving the game unfinished")?;
            break;
        };
        let Ok(line) = line else {
            writeln!(out, "\ninput unreadable: leaving the game unfinished")?;
            break;
        };
        let (command, rest) =
            line.trim().split_once(' ').map_or((line.trim(), ""), |(c, r)| (c, r.trim()));
        match command {
            "" => {}
            "help" => writeln!(out, "{HELP}")?,
            "quit" => break,
            "resign" => {
                *resigned = Some(human);
                writeln!(out, "You resign: {} wins.", human.opponent())?;
                break;
            }
            "undo" => {
                let human_first = game.start.side_to_move() == human;
                let human_moves =
                    if human_first { game.moves.len().div_ceil(2) } else { game.moves.len() / 2 };
                if human_moves == 0 {
                    writeln!(out, "nothing to take back")?;
                } else {
                    // Back to the position before your last move: the agent's reply goes too.
                    while game.moves.pop().is_some() && game.position().side_to_move() != human {}
                    agent.new_game(game.moves.len() as u64);
                    writeln!(out, "taken back")?;
                }
            }
            "hint" => {
                let decision = agent.choose(&position, Limit::default());
                let chance = decision
                    .value
                    .map(|v| format!(", your winning chance {:.0}%", 100.0 * winning_chance(v)))
                    .unwrap_or_default();
                writeln!(out, "hint: {}{chance}", position.notation(decision.mv))?;
            }
            "moves" => {
                let from = if rest.is_empty() {
                    None
                } else {
                    crate::game::Square::parse(rest, rules.width, rules.height)
                        .map(Some)
                        .unwrap_or(None)
                };
                if !rest.is_empty() && from.is_none() {
                    writeln!(out, "{rest:?} is not a square of this board")?;
                } else {
                    let listed: Vec<String> = position
                        .legal_moves()
                        .into_iter()
                        .filter(|mv| from.is_none_or(|f| mv.from == f))
                        .map(|mv| position.notation(mv))
                        .collect();
                    if listed.is_empty() {
                        writeln!(
                            out,
                            "no legal moves{}",
                            if from.is_some() { " from there" } else { "" }
                        )?;
                    } else {
                        writeln!(out, "{}", listed.join(" "))?;
                    }
                }
            }
            text => match position.parse_move(text) {
                Ok(mv) => game.moves.push(mv),
                Err(error) => {
                    writeln!(out, "{text}: {error}. Type `moves` for the legal moves or `help`.")?
                }
            },
        }
    }

    Ok(())
}

/// The number of the move being made, counted from 1 and going up with each White move, as in
/// game records: with stones Black places first, at ply 0, so White plays the odd plies.
fn move_number(position: &Position) -> u16 {
    (position.ply() + position.rules().stones as u16) / 2 + 1
}
