//! The agents' strength against the hand-written players at equal time, over the whole lineage:
//! `cargo run --release --example lineage -- [docs/lineage.csv] [docs/lineage.svg]`.
//!
//! Each run's own Elo curve (`epaminondas plot`) rates its checkpoints in a pool of their own,
//! so curves of different runs cannot be laid end to end. The targets are scores against
//! fixed players, and every agent since the fourth was matched against mcts-rollout at equal
//! time, all but two against alphabeta too. This draws those scores, with 95% intervals,
//! against the self-play games behind each agent (its own and those of the networks it began
//! from or trained on), with the targets as dashed lines, and prints them as a table. Rows of
//! `line = main` are the lineage that made the default agent, joined by a line through each
//! agent's pooled result; `branch` rows are checkpoints off that lineage (runs begun from one of
//! its networks and not carried on), measured and not built on.

use epaminondas::arena::elo::Tally;
use plotters::prelude::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Line {
    Main,
    Branch,
}

/// One match, as `docs/lineage.csv` records it.
#[derive(Debug, Deserialize)]
struct MatchRow {
    agent: String,
    line: Line,
    lineage_games: u32,
    opponent: String,
    seconds_per_move: f64,
    wins: u32,
    draws: u32,
    losses: u32,
    machine: String,
    /// The README section the match is reported in.
    section: String,
}

impl MatchRow {
    fn tally(&self) -> Tally {
        Tally { wins: self.wins, draws: self.draws, losses: self.losses }
    }
}

/// What each opponent is drawn in, and the target against it.
struct Series {
    opponent: &'static str,
    colour: RGBColor,
    target: f64,
}

const SERIES: [Series; 2] = [
    Series { opponent: "mcts-rollout", colour: RGBColor(30, 90, 200), target: 0.9 },
    Series { opponent: "alphabeta", colour: RGBColor(210, 60, 30), target: 0.5 },
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = PathBuf::from(args.next().unwrap_or_else(|| "docs/lineage.csv".into()));
    let output = PathBuf::from(args.next().unwrap_or_else(|| "docs/lineage.svg".into()));
    let mut reader = csv::Reader::from_path(&input).map_err(|e| format!("{}: {e}", input.display()))?;
    let rows: Vec<MatchRow> = reader.deserialize().collect::<Result<_, _>>().map_err(|e| format!("{}: {e}", input.display()))?;
    if let Some(row) = rows.iter().find(|r| !SERIES.iter().any(|s| s.opponent == r.opponent)) {
        return Err(format!("{}: {} was matched against {}, which has no series", input.display(), row.agent, row.opponent).into());
    }

    println!("| agent | self-play games behind it | opponent | result | score, 95% interval | machine |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in &rows {
        let tally = row.tally();
        let (low, high) = tally.score_interval();
        println!(
            "| {} | {} | {} at {} s a move | +{} ={} -{} | {:.1}% [{:.1}, {:.1}] | {} ({}) |",
            row.agent,
            row.lineage_games,
            row.opponent,
            row.seconds_per_move,
            row.wins,
            row.draws,
            row.losses,
            100.0 * tally.score(),
            100.0 * low,
            100.0 * high,
            row.machine,
            row.section
        );
    }
    draw(&output, &rows).map_err(|e| format!("drawing {}: {e}", output.display()))?;
    eprintln!("wrote {}", output.display());
    Ok(())
}

fn draw(path: &std::path::Path, rows: &[MatchRow]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1000, 550)).into_drawing_area();
    root.fill(&WHITE)?;
    let (upper, lower) = root.split_vertically(525);
    let most_games = rows.iter().map(|r| r.lineage_games).max().unwrap_or(1) as f64 / 1000.0;
    let mut chart = ChartBuilder::on(&upper)
        .caption("Score at equal time against the hand-written players, over the lineage", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..most_games * 1.05, 0.0..100.0)?;
    chart.configure_mesh().x_desc("self-play games behind the agent (thousands)").y_desc("score (%)").draw()?;

    for series in &SERIES {
        let colour = series.colour;
        let label = format!("{} ({} s a move each)", series.opponent, rows.iter().find(|r| r.opponent == series.opponent).map_or(0.0, |r| r.seconds_per_move));
        let target = 100.0 * series.target;
        let dashes: Vec<f64> = (0..=60).map(|i| most_games * 1.05 * i as f64 / 60.0).collect();
        chart.draw_series(dashes.chunks(2).filter(|d| d.len() == 2).map(|d| PathElement::new(vec![(d[0], target), (d[1], target)], colour.mix(0.7))))?;
        chart.draw_series(std::iter::once(Text::new(format!("target against {}: {}%", series.opponent, target), (0.3, target + 3.0), ("sans-serif", 13).into_font().color(&colour))))?;

        let matches: Vec<&MatchRow> = rows.iter().filter(|r| r.opponent == series.opponent).collect();
        let x = |r: &MatchRow| r.lineage_games as f64 / 1000.0;
        chart.draw_series(matches.iter().map(|r| {
            let (low, high) = r.tally().score_interval();
            PathElement::new(vec![(x(r), 100.0 * low), (x(r), 100.0 * high)], colour.mix(0.35))
        }))?;
        chart.draw_series(matches.iter().filter(|r| r.line == Line::Branch).map(|r| Circle::new((x(r), 100.0 * r.tally().score()), 4, colour.stroke_width(1))))?;
        chart.draw_series(matches.iter().filter(|r| r.line == Line::Main).map(|r| Circle::new((x(r), 100.0 * r.tally().score()), 4, colour.filled())))?;

        // The lineage's line goes through each agent's matches pooled, in lineage order.
        let mut pooled: BTreeMap<u32, Tally> = BTreeMap::new();
        for r in matches.iter().filter(|r| r.line == Line::Main) {
            let tally = pooled.entry(r.lineage_games).or_default();
            tally.wins += r.wins;
            tally.draws += r.draws;
            tally.losses += r.losses;
        }
        chart
            .draw_series(LineSeries::new(pooled.iter().map(|(games, tally)| (*games as f64 / 1000.0, 100.0 * tally.score())), colour.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart.configure_series_labels().position(SeriesLabelPosition::LowerRight).background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
    lower.draw(&Text::new("filled: the default agent and the networks before it; hollow: runs off that lineage, not carried on; bars: 95% intervals", (70, 5), ("sans-serif", 12)))?;
    root.present()?;
    Ok(())
}
