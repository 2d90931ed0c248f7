//! `review`: recorded games gone over move by move by an agent (see [`crate::review`]), printed
//! as a table with the moves that gave a result away marked, and optionally written as CSV.

use super::play::{AgentArgs, PlayerChoice};
use super::LoggedBar;
use crate::game::{GameRecord, RecordResult, Rules};
use crate::players::{winning_chance, Limit, Player, PlayerSpec};
use crate::review::{review_game, ReviewedMove};
use anyhow::{bail, Context};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// A file of game records, as `match --records`, `play` and self-play write them.
    pub records: PathBuf,
    /// Which game of the file to review, counted from 1 (default: every game).
    #[arg(long)]
    pub game: Option<usize>,
    /// The reviewing player, at its limit a position; it must evaluate positions (random
    /// cannot).
    #[command(flatten)]
    pub choice: PlayerChoice,
    /// Marks a move that gave away at least this share of a win (0 to 1, in win probability).
    #[arg(long, default_value_t = 0.2)]
    pub threshold: f32,
    /// Also writes every reviewed move here as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

/// One row of the CSV.
#[derive(serde::Serialize)]
struct Row {
    game: usize,
    ply: usize,
    mover: String,
    played: String,
    preferred: String,
    win_before: f32,
    win_after: f32,
    given_away: f32,
}

pub fn review(args: ReviewArgs) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&args.threshold) {
        bail!("--threshold must be a share of a win between 0 and 1, not {}", args.threshold);
    }
    let text = std::fs::read_to_string(&args.records)
        .with_context(|| format!("reading {}", args.records.display()))?;
    let records =
        GameRecord::parse_all(&text).with_context(|| format!("{}", args.records.display()))?;
    let chosen: Vec<(usize, &GameRecord)> = match args.game {
        Some(n) if n == 0 || n > records.len() => bail!(
            "--game {n}: {} holds {} game(s), counted from 1",
            args.records.display(),
            records.len()
        ),
        Some(n) => vec![(n, &records[n - 1])],
        None if records.is_empty() => bail!("{} holds no game records", args.records.display()),
        None => records.iter().enumerate().map(|(i, r)| (i + 1, r)).collect(),
    };
    // The table is written at the end; a folder that is not there is said before the review.
    if let Some(path) = &args.csv {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(folder) = folder.filter(|folder| !folder.is_dir()) {
            bail!("--csv {}: there is no folder {}", path.display(), folder.display());
        }
        // It could be the records themselves, or another review's table.
        if path.exists() {
            bail!(
                "--csv {}: the file exists; name another (review never replaces a file)",
                path.display()
            );
        }
    }
    let mut csv = args.csv.as_ref().map(|_| csv::Writer::from_writer(Vec::new()));
    let mut out = std::io::stdout().lock();
    // Built once for each set of rules the file's games are played under (usually one), not
    // once a game: a network is loaded, and the shipped agent named, once.
    let mut reviewer: Option<(Rules, Box<dyn Player>)> = None;
    for (number, record) in chosen {
        if reviewer.as_ref().is_none_or(|(rules, _)| rules != record.rules()) {
            let spec = reviewer_for(&args, record)?;
            reviewer = Some((*record.rules(), spec.build(args.choice.device, number as u64)?));
        }
        let (_, player) = reviewer.as_mut().expect("built above");
        let bar = LoggedBar::new(
            record.moves.len() + 1,
            "{msg} [{bar:30}] {pos}/{len} positions, {elapsed}",
        );
        bar.set_message(format!("game {number}"));
        let reviewed = review_game(record, player.as_mut(), Limit::default(), &mut |done, _| {
            bar.set_position(done)
        })?;
        bar.finish_and_clear();
        write_table(&mut out, number, record, &player.name(), &reviewed, args.threshold)?;
        if let Some(csv) = csv.as_mut() {
            for m in &reviewed {
                csv.serialize(Row {
                    game: number,
                    ply: m.ply,
                    mover: m.mover.to_string(),
                    played: m.position.notation(m.played),
                    preferred: m.position.notation(m.preferred),
                    win_before: winning_chance(m.before),
                    win_after: winning_chance(m.after),
                    given_away: m.given_away(),
                })?;
            }
        }
    }
    if let (Some(path), Some(table)) = (&args.csv, csv) {
        super::save_csv(path, table)?;
    }
    Ok(())
}

/// The reviewing player for a game: the one asked for, at the limit asked for, under the
/// game's own rules (a network trained for another board or variant is refused by name).
fn reviewer_for(args: &ReviewArgs, record: &GameRecord) -> anyhow::Result<PlayerSpec> {
    let rules = record.rules();
    let agent = AgentArgs {
        choice: args.choice.clone(),
        size: Some((rules.width, rules.height)),
        symmetry: Some(rules.symmetry),
        stones: rules.stones,
        ply_cap: Some(rules.ply_cap.unwrap_or(0)),
    };
    Ok(agent.resolve()?.0)
}

/// The game's moves with the reviewer's view of each, `??` where a move gave away at least
/// `threshold` of a win and `?` at half that, then the largest such move of each side.
fn write_table(
    out: &mut impl Write,
    number: usize,
    record: &GameRecord,
    reviewer: &str,
    reviewed: &[ReviewedMove],
    threshold: f32,
) -> anyhow::Result<()> {
    let result = match record.result {
        RecordResult::Unfinished => "unfinished".to_string(),
        result => format!("{} ({})", result.token(), record.termination.name()),
    };
    writeln!(
        out,
        "game {number}: {} (White) - {} (Black), {result}; reviewed by {reviewer}",
        record.white, record.black
    )?;
    writeln!(
        out,
        "{:>4}  {:<5}  {:<9}  {:<9}  {:>6}  {:>6}  {:>6}",
        "ply", "mover", "played", "preferred", "before", "after", "lost"
    )?;
    for m in reviewed {
        let mark = if m.given_away() >= threshold {
            "??"
        } else if m.given_away() >= threshold / 2.0 {
            "?"
        } else {
            ""
        };
        let preferred = if m.preferred == m.played {
            "=".to_string()
        } else {
            m.position.notation(m.preferred)
        };
        writeln!(
            out,
            "{:>4}  {:<5}  {:<9}  {:<9}  {:>5.1}%  {:>5.1}%  {:>5.1}%  {mark}",
            m.ply,
            m.mover.to_string(),
            m.position.notation(m.played),
            preferred,
            100.0 * winning_chance(m.before),
            100.0 * winning_chance(m.after),
            100.0 * m.given_away()
        )?;
    }
    for side in [crate::game::Color::White, crate::game::Color::Black] {
        let marked =
            reviewed.iter().filter(|m| m.mover == side && m.given_away() >= threshold).count();
        match reviewed.iter().filter(|m| m.mover == side).max_by(|a, b| a.given_away().total_cmp(&b.given_away())) {
            Some(worst) if worst.given_away() > 0.0 => writeln!(
                out,
                "{side}: {marked} move(s) gave away {:.0}% or more; the most, {:.1}%, at ply {} ({}; {} preferred)",
                100.0 * threshold,
                100.0 * worst.given_away(),
                worst.ply,
                worst.position.notation(worst.played),
                worst.position.notation(worst.preferred)
            )?,
            _ => writeln!(out, "{side}: no move gave anything away")?,
        }
    }
    writeln!(out)?;
    Ok(())
}
