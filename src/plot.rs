//! Pictures of a run: one SVG with four panels (Elo against hours and against games played,
//! the losses, game length, beside it the score against each self-play opponent and in the
//! matches of `[matches]` when the run has any), drawn from `metrics.csv`, `opponents.csv`,
//! `matches.csv` and `ratings/ratings.csv`; and of several runs side by side (an A/B of configs). SVG needs no fonts on the machine and shows in any
//! browser and in the docs.

use crate::arena::elo::Tally;
use crate::arena::yardstick::{read_table, YardstickRow};
use crate::coach::matches::{read_rows, MatchRow};
use crate::coach::rating::{read_ratings, RatingRow};
use crate::coach::{read_metrics, read_opponents, MetricsRow, OpponentRow, RunError};
use plotters::coord::{cartesian::Cartesian2d, types::RangedCoordf64};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("{0} has no finished generations to plot")]
    Empty(PathBuf),
    #[error("drawing {path}: {problem}")]
    Draw { path: PathBuf, problem: String },
    #[error("{0} has no rated checkpoints to compare")]
    Unrated(PathBuf),
}

/// A checkpoint's rating placed in time and games.
struct EloPoint {
    hours: f64,
    games: f64,
    elo: f64,
    error: f64,
}

/// The ratings of rated checkpoints (the latest fit over all rating games), placed at the
/// wall time and game count of their generation.
fn elo_points(metrics: &[MetricsRow], ratings: &[RatingRow]) -> Vec<EloPoint> {
    let at = |generation: u32| -> (f64, f64) {
        metrics
            .iter()
            .find(|m| m.generation == generation)
            .map_or((0.0, 0.0), |m| (m.wall_seconds / 3600.0, m.total_games as f64))
    };
    let mut points: Vec<EloPoint> = ratings
        .iter()
        .filter_map(|r| r.generation.map(|g| (g, r)))
        .filter(|(g, _)| *g == 0 || metrics.iter().any(|m| m.generation == *g))
        .map(|(g, r)| {
            let (hours, games) = at(g);
            EloPoint { hours, games, elo: r.elo, error: r.error }
        })
        .collect();
    points.sort_by(|a, b| a.games.total_cmp(&b.games));
    points
}

fn range(values: impl Iterator<Item = f64> + Clone) -> std::ops::Range<f64> {
    let low = values.clone().fold(f64::INFINITY, f64::min);
    let high = values.fold(f64::NEG_INFINITY, f64::max);
    if !low.is_finite() || !high.is_finite() {
        return 0.0..1.0;
    }
    let pad = ((high - low) * 0.08).max(1e-6);
    (low - pad)..(high + pad)
}

/// Draws `RUN/plots/progress.svg` (or into `out`) and returns its path.
pub fn plot_run(run: &Path, out: Option<&Path>) -> Result<PathBuf, PlotError> {
    let metrics = read_metrics(&run.join("metrics.csv"), u32::MAX)?;
    if metrics.is_empty() {
        return Err(PlotError::Empty(run.to_path_buf()));
    }
    let opponents = read_opponents(&run.join("opponents.csv"), u32::MAX)?;
    let matches = read_rows(&run.join("matches.csv"), u32::MAX)?;
    let ratings = read_ratings(&run.join("ratings").join("ratings.csv"))?;
    let baselines: Vec<(String, f64)> = ratings
        .iter()
        .filter(|r| r.generation.is_none())
        .map(|r| (r.player.clone(), r.elo))
        .collect();
    let points = elo_points(&metrics, &ratings);
    let dir = out.map(Path::to_path_buf).unwrap_or_else(|| run.join("plots"));
    std::fs::create_dir_all(&dir).map_err(|source| RunError::Io { path: dir.clone(), source })?;
    let path = dir.join("progress.svg");
    let title = run.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let scores = Scores { opponents: &opponents, matches: &matches };
    redraw(&path, |temp| draw(temp, &title, &metrics, scores, &points, &baselines))?;
    Ok(path)
}

/// One run of a comparison: its name, rated checkpoints, and its own fit of the baselines.
struct RunCurve {
    name: String,
    points: Vec<EloPoint>,
    baselines: Vec<(String, f64)>,
}

fn run_curve(run: &Path) -> Result<RunCurve, PlotError> {
    let metrics = read_metrics(&run.join("metrics.csv"), u32::MAX)?;
    let ratings = read_ratings(&run.join("ratings").join("ratings.csv"))?;
    let points = elo_points(&metrics, &ratings);
    if points.is_empty() {
        return Err(PlotError::Unrated(run.to_path_buf()));
    }
    let name = run.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let baselines = ratings
        .iter()
        .filter(|r| r.generation.is_none() && r.elo != 0.0)
        .map(|r| (r.player.clone(), r.elo))
        .collect();
    Ok(RunCurve { name, points, baselines })
}

/// Draws `out/comparison.svg`: the Elo of every run's checkpoints against hours and against
/// games, one colour a run, with each run's own fit of the baselines dashed in its colour (each
/// run rates against random = 0 separately, so the baselines show how comparable the scales are).
pub fn plot_comparison(runs: &[PathBuf], out: &Path) -> Result<PathBuf, PlotError> {
    let curves = runs.iter().map(|run| run_curve(run)).collect::<Result<Vec<_>, _>>()?;
    std::fs::create_dir_all(out)
        .map_err(|source| RunError::Io { path: out.to_path_buf(), source })?;
    let path = out.join("comparison.svg");
    redraw(&path, |temp| draw_comparison(temp, &curves))?;
    Ok(path)
}

fn draw_comparison(path: &Path, curves: &[RunCurve]) -> DrawResult {
    let root = SVGBackend::new(path, (1200, 450)).into_drawing_area();
    root.fill(&WHITE)?;
    let names: Vec<&str> = curves.iter().map(|c| c.name.as_str()).collect();
    let root = root.titled(&format!("runs {}", names.join(" vs ")), ("sans-serif", 22))?;
    let panels = root.split_evenly((1, 2));
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let elo = range(
        all()
            .flat_map(|p| [p.elo - p.error, p.elo + p.error])
            .chain(curves.iter().flat_map(|c| c.baselines.iter().map(|b| b.1))),
    );
    for (panel, (caption, x_desc, x)) in panels.iter().zip([
        (
            "Elo (random = 0) against hours",
            "hours",
            (|p: &EloPoint| p.hours) as fn(&EloPoint) -> f64,
        ),
        ("Elo (random = 0) against self-play games", "games", |p: &EloPoint| p.games),
    ]) {
        let x_range = range(all().map(x).chain([0.0]));
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(x_range.clone(), elo.clone())?;
        chart.configure_mesh().x_desc(x_desc).draw()?;
        for (index, (curve, colour)) in curves.iter().zip(SERIES_COLOURS.iter().cycle()).enumerate()
        {
            let colour = *colour;
            // Each run's labels start further right, so runs with equal baselines stay legible.
            let label_x = x_range.start + (x_range.end - x_range.start) * 0.3 * (index % 3) as f64;
            for (name, rating) in &curve.baselines {
                let dashes = (0..40)
                    .map(|i| x_range.start + (x_range.end - x_range.start) * i as f64 / 40.0)
                    .collect::<Vec<_>>();
                chart.draw_series(dashes.chunks(2).filter(|d| d.len() == 2).map(|d| {
                    PathElement::new(vec![(d[0], *rating), (d[1], *rating)], colour.mix(0.6))
                }))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("{name} ({})", curve.name),
                    (label_x, *rating),
                    ("sans-serif", 12).into_font().color(&colour),
                )))?;
            }
            let points: Vec<SeriesPoint> = curve
                .points
                .iter()
                .map(|p| (x(p), p.elo, Some((p.elo - p.error, p.elo + p.error))))
                .collect();
            draw_line(&mut chart, curve.name.clone(), colour, &points)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    }
    root.present()?;
    Ok(())
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Draws the picture at `path` with `draw` (given the path to draw to) so that a picture being
/// redrawn, as a run's is every generation, is never seen or left half written.
fn redraw(path: &Path, draw: impl FnOnce(&Path) -> DrawResult) -> Result<(), PlotError> {
    crate::util::replace_atomically(path, |temp| {
        draw(temp).map_err(|e| std::io::Error::other(e.to_string()))
    })
    .map_err(|e| PlotError::Draw { path: path.to_path_buf(), problem: e.to_string() })
}

/// The colours of a picture's series (runs, opponents), in order.
const SERIES_COLOURS: [RGBColor; 4] =
    [RGBColor(30, 90, 200), RGBColor(210, 60, 30), RGBColor(0, 150, 0), RGBColor(150, 0, 150)];

/// A chart of these pictures: numbers on both axes, drawn as SVG.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A point of a series: x, y, and y's 95% interval where one is known.
type SeriesPoint = (f64, f64, Option<(f64, f64)>);

/// The legend's sample of a series drawn in `style`: a short line.
fn swatch<S: Into<ShapeStyle> + Copy>(style: S) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style)
}

/// The legend of `chart`'s labelled series, in a framed box at `position`.
fn draw_legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, position: SeriesLabelPosition) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The distinct names among `names`, in the order they first appear (a picture's series).
fn distinct<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

/// One labelled series: a pale bar over each point's interval, a line through the points, a
/// dot on each, and the line's swatch in the legend.
fn draw_line(
    chart: &mut Chart,
    label: impl Into<String>,
    colour: RGBColor,
    points: &[SeriesPoint],
) -> DrawResult {
    chart.draw_series(points.iter().filter_map(|&(x, _, interval)| {
        let (low, high) = interval?;
        Some(PathElement::new(vec![(x, low), (x, high)], colour.mix(0.4)))
    }))?;
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|&(x, y, _)| (x, y)),
            colour.stroke_width(2),
        ))?
        .label(label)
        .legend(swatch(colour.stroke_width(2)));
    chart.draw_series(points.iter().map(|&(x, y, _)| Circle::new((x, y), 3, colour.filled())))?;
    Ok(())
}

/// A run's scores against other players: in self-play's games (`opponents.csv`) and in its
/// matches (`matches.csv`).
struct Scores<'a> {
    opponents: &'a [OpponentRow],
    matches: &'a [MatchRow],
}

fn draw(
    path: &Path,
    title: &str,
    metrics: &[MetricsRow],
    scores: Scores,
    points: &[EloPoint],
    baselines: &[(String, f64)],
) -> DrawResult {
    let root = SVGBackend::new(path, (1200, 800)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&format!("run {title}"), ("sans-serif", 24))?;
    let panels = root.split_evenly((2, 2));
    let elo_range = range(
        points
            .iter()
            .flat_map(|p| [p.elo - p.error, p.elo + p.error])
            .chain(baselines.iter().map(|b| b.1)),
    );
    elo_panel(
        &panels[0],
        "Elo (random = 0) against hours",
        "hours",
        points.iter().map(|p| p.hours).collect(),
        points,
        baselines,
        elo_range.clone(),
    )?;
    elo_panel(
        &panels[1],
        "Elo (random = 0) against self-play games",
        "games",
        points.iter().map(|p| p.games).collect(),
        points,
        baselines,
        elo_range,
    )?;

    let generations = range(metrics.iter().map(|m| m.generation as f64));
    let losses = range(
        metrics
            .iter()
            .flat_map(|m| {
                [Some(m.policy_loss), Some(m.value_loss), m.fresh_policy_loss, m.fresh_value_loss]
            })
            .flatten(),
    );
    let mut chart = ChartBuilder::on(&panels[2])
        .caption("losses", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(generations.clone(), losses)?;
    chart.configure_mesh().x_desc("generation").draw()?;
    chart
        .draw_series(LineSeries::new(
            metrics.iter().map(|m| (m.generation as f64, m.policy_loss)),
            &BLUE,
        ))?
        .label("policy")
        .legend(swatch(BLUE));
    chart
        .draw_series(LineSeries::new(
            metrics.iter().map(|m| (m.generation as f64, m.value_loss)),
            &RED,
        ))?
        .label("value")
        .legend(swatch(RED));
    // The held-out losses, on each generation's games before training on them, paler.
    type HeldOutLoss = fn(&MetricsRow) -> Option<f64>;
    let held_out: [(HeldOutLoss, RGBColor, &str); 2] = [
        (|m| m.fresh_policy_loss, BLUE, "policy, new games"),
        (|m| m.fresh_value_loss, RED, "value, new games"),
    ];
    for (loss, colour, label) in held_out {
        let points: Vec<_> =
            metrics.iter().filter_map(|m| Some((m.generation as f64, loss(m)?))).collect();
        if !points.is_empty() {
            let colour = colour.mix(0.4);
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
                .label(label)
                .legend(swatch(colour));
        }
    }
    draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;

    // A run with self-play opponents or matches shares the last panel between game length and
    // its scores.
    let (length_area, score_area) = if scores.opponents.is_empty() && scores.matches.is_empty() {
        (panels[3].clone(), None)
    } else {
        let (left, right) = panels[3].split_horizontally(panels[3].dim_in_pixel().0 / 2);
        (left, Some(right))
    };
    let lengths = range(metrics.iter().map(|m| m.mean_game_length).chain([0.0]));
    let mut chart = ChartBuilder::on(&length_area)
        .caption("mean game length (plies)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(generations.clone(), lengths)?;
    chart.configure_mesh().x_desc("generation").draw()?;
    chart.draw_series(LineSeries::new(
        metrics.iter().map(|m| (m.generation as f64, m.mean_game_length)),
        &BLACK,
    ))?;
    if let Some(area) = score_area {
        scores_panel(&area, &scores, generations)?;
    }
    root.present()?;
    Ok(())
}

/// The network's score in its self-play games against each opponent, by generation, and each
/// checkpoint's in its match (`[matches]`), with the 95% interval.
fn scores_panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    scores: &Scores,
    generations: std::ops::Range<f64>,
) -> DrawResult {
    // A match is played by the checkpoint before its generation: gen-000000's sits at 0.
    let generations = generations.start.min(0.0)..generations.end;
    let mut chart = ChartBuilder::on(area)
        .caption("score against each opponent (%)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(40)
        .build_cartesian_2d(generations, 0.0..100.0)?;
    chart.configure_mesh().x_desc("generation").draw()?;
    let names = distinct(scores.opponents.iter().map(|row| row.opponent.as_str()));
    for (name, colour) in names.into_iter().zip(SERIES_COLOURS.iter().cycle()) {
        let colour = *colour;
        let points: Vec<SeriesPoint> = scores
            .opponents
            .iter()
            .filter(|o| o.opponent == name)
            .filter_map(|o| Some((o.generation as f64, 100.0 * o.score?, None)))
            .collect();
        draw_line(&mut chart, name, colour, &points)?;
    }
    if let Some(first) = scores.matches.first() {
        let point = |m: &MatchRow| {
            let tally = Tally { wins: m.wins, draws: m.draws, losses: m.losses };
            let (low, high) = tally.score_interval();
            (m.checkpoint as f64, 100.0 * tally.score(), Some((100.0 * low, 100.0 * high)))
        };
        let points: Vec<SeriesPoint> = scores.matches.iter().map(point).collect();
        let label = format!("match: {} (by checkpoint)", first.opponent);
        draw_line(&mut chart, label, BLACK, &points)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    Ok(())
}

fn elo_panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    caption: &str,
    x_desc: &str,
    xs: Vec<f64>,
    points: &[EloPoint],
    baselines: &[(String, f64)],
    elo: std::ops::Range<f64>,
) -> DrawResult {
    let x_range = range(xs.iter().copied().chain([0.0]));
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(x_range.clone(), elo)?;
    chart.configure_mesh().x_desc(x_desc).draw()?;
    let baseline_colours = [
        RGBColor(120, 120, 120),
        RGBColor(0, 150, 0),
        RGBColor(200, 120, 0),
        RGBColor(150, 0, 150),
    ];
    for ((name, rating), colour) in baselines.iter().zip(baseline_colours.iter().cycle()) {
        let colour = *colour;
        chart
            .draw_series(LineSeries::new(
                [(x_range.start, *rating), (x_range.end, *rating)],
                colour.stroke_width(1),
            ))?
            .label(name.clone())
            .legend(swatch(colour));
    }
    let series: Vec<SeriesPoint> = xs
        .iter()
        .zip(points)
        .map(|(&x, p)| (x, p.elo, Some((p.elo - p.error, p.elo + p.error))))
        .collect();
    draw_line(&mut chart, "checkpoints", BLUE, &series)?;
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    Ok(())
}

/// Why a yardstick picture could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum YardstickError {
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("{path}: no rows to plot")]
    Empty { path: PathBuf },
    #[error("{path}: generation {generation} is not in the run's metrics.csv")]
    UnknownGeneration { path: PathBuf, generation: u32 },
}

/// Draws `scores.svg` into `out` (default `RUN/plots`): the score of the run's checkpoints
/// against each opponent of the yardstick file `scores` (CSV of [`YardstickRow`]), by hours of
/// training (the generation's `wall_seconds`), with 95% intervals. Returns its path.
pub fn plot_yardstick(
    run: &Path,
    scores: &Path,
    out: Option<&Path>,
) -> Result<PathBuf, YardstickError> {
    let metrics = read_metrics(&run.join("metrics.csv"), u32::MAX).map_err(PlotError::from)?;
    let rows: Vec<YardstickRow> = read_table(scores).map_err(PlotError::from)?;
    if rows.is_empty() {
        return Err(YardstickError::Empty { path: scores.to_path_buf() });
    }
    let mut points = Vec::new();
    for row in &rows {
        let hours = match row.generation {
            0 => 0.0,
            g => match metrics.iter().find(|m| m.generation == g) {
                Some(m) => m.wall_seconds / 3600.0,
                None => {
                    return Err(YardstickError::UnknownGeneration {
                        path: scores.to_path_buf(),
                        generation: g,
                    })
                }
            },
        };
        let tally = row.tally();
        let (low, high) = tally.score_interval();
        points.push((
            row.opponent.as_str(),
            hours,
            100.0 * tally.score(),
            100.0 * low,
            100.0 * high,
        ));
    }
    let dir = out.map(Path::to_path_buf).unwrap_or_else(|| run.join("plots"));
    std::fs::create_dir_all(&dir)
        .map_err(|source| PlotError::from(RunError::Io { path: dir.clone(), source }))?;
    let path = dir.join("scores.svg");
    redraw(&path, |temp| draw_yardstick(temp, &points))?;
    Ok(path)
}

/// (opponent, hours, score, low, high), scores in percent.
type YardstickPoint<'a> = (&'a str, f64, f64, f64, f64);

fn draw_yardstick(path: &Path, points: &[YardstickPoint]) -> DrawResult {
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let last_hour = points.iter().map(|p| p.1).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption("score against each opponent (%, 95% intervals)", ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(40)
        .build_cartesian_2d(0.0..last_hour * 1.05, 0.0..100.0)?;
    chart.configure_mesh().x_desc("hours of training").draw()?;
    let names = distinct(points.iter().map(|point| point.0));
    for (name, colour) in names.into_iter().zip(SERIES_COLOURS.iter().cycle()) {
        let colour = *colour;
        let mut series: Vec<SeriesPoint> = points
            .iter()
            .filter(|p| p.0 == name)
            .map(|&(_, x, score, low, high)| (x, score, Some((low, high))))
            .collect();
        series.sort_by(|a, b| a.0.total_cmp(&b.0));
        draw_line(&mut chart, name, colour, &series)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present()?;
    Ok(())
}
