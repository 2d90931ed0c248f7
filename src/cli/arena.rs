//! `match` and `tournament`: players against each other, with Elo and fitted ratings; `compare`
//! and `tally` of their records; `yardstick`: a run's checkpoints against fixed opponents.

use super::rules_cmds::{parse_size, parse_symmetry};
use crate::arena::elo::{format_elo, Sprt, SprtVerdict, Tally};
use crate::arena::paired::{self, MatchRounds};
use crate::arena::ratings::{self, RatedGame};
use crate::arena::yardstick;
use crate::arena::{continue_match, games_from_records, play_match, GameResult, MatchSettings};
use crate::coach::{checkpoint_path, finished_metrics};
use crate::config::Config;
use crate::game::{GameRecord, Rules, SymmetryRule};
use crate::nn::{configure_threads, DeviceChoice};
use crate::players::{Limit, PlayerKind, PlayerSpec};
use crate::util::generation_name;
use anyhow::{bail, Context};
use clap::Args;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options shared by `match` and `tournament`.
#[derive(Args, Debug, Clone)]
pub struct ArenaArgs {
    /// Games per pairing (an even number gives every opening to both colours).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// Random plies at the start of every opening.
    #[arg(long, default_value_t = DEFAULT_OPENING_PLIES)]
    pub opening_plies: u32,
    /// Seconds per move for every player (overrides the players' own limits).
    #[arg(long, value_parser = super::positive_number)]
    pub time: Option<f64>,
    /// Simulations (MCTS) or searched positions (alpha-beta) per move for every player.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Search depth per move for depth-first players.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Games played at once; default: one per core, or 1 when a player is on a clock.
    #[arg(long)]
    pub parallel: Option<usize>,
    /// Seeds the random openings (and the random players): two matches with one seed play the
    /// same openings, so they compare game for game.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games longer than this are draws (the game has no draw rule of its own).
    #[arg(long, default_value_t = 300)]
    pub ply_cap: u16,
    /// Board: standard (14x12), crossings-board (8x8) or WxH.
    #[arg(long, default_value = "standard", value_parser = parse_size)]
    pub size: (u8, u8),
    /// The anti-copycat rule: mirror (Abbott's), rotation, both or off.
    #[arg(long, default_value = "mirror", value_parser = parse_symmetry)]
    pub symmetry: SymmetryRule,
    /// The stones variant: three neutral stones placed before the first move.
    #[arg(long)]
    pub stones: bool,
    /// Where the networks of `net:` players run.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
}

impl ArenaArgs {
    fn limit(&self) -> Limit {
        let time = self.time.map(Duration::from_secs_f64);
        Limit { nodes: self.nodes, depth: self.depth, time }
    }

    fn settings(&self, specs: &[&PlayerSpec], sprt: Option<Sprt>) -> anyhow::Result<MatchSettings> {
        let rules = Rules {
            width: self.size.0,
            height: self.size.1,
            symmetry: self.symmetry,
            ply_cap: Some(self.ply_cap),
            stones: self.stones,
        };
        let limit = self.limit();
        let timed =
            limit.time.is_some() || (limit.is_empty() && specs.iter().any(|s| s.is_timed()));
        let parallel =
            self.parallel.unwrap_or(if timed { 1 } else { crate::config::available_cores() });
        let settings = MatchSettings {
            rules,
            games: self.games,
            opening_plies: self.opening_plies,
            seed: self.seed,
            parallel: parallel.max(1),
            limit,
            sprt,
        };
        prepare(&settings, specs)?;
        Ok(settings)
    }
}

/// Readies a match to be played: its rules valid, every player able to play them, and each
/// game played at once given its share of the cores for libtorch.
fn prepare(settings: &MatchSettings, players: &[&PlayerSpec]) -> anyhow::Result<()> {
    settings.rules.validate()?;
    settings.check()?;
    for player in players {
        crate::players::check_rules(player, &settings.rules)?;
    }
    configure_threads((crate::config::available_cores() / settings.parallel).max(1));
    Ok(())
}

#[derive(Args, Debug)]
pub struct MatchArgs {
    /// Player A (random, greedy, alphabeta, mcts-rollout, net:PATH; options as in alphabeta:depth=4).
    pub a: PlayerSpec,
    /// Player B.
    pub b: PlayerSpec,
    #[command(flatten)]
    pub arena: ArenaArgs,
    /// Stop early by a sequential probability ratio test of ELO0 against ELO1 (A's Elo over B).
    #[arg(long, value_name = "ELO0,ELO1")]
    pub sprt: Option<String>,
    /// SPRT false-positive rate.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// SPRT false-negative rate.
    #[arg(long, default_value_t = 0.05)]
    pub beta: f64,
    /// Where the game records go (default: matches/A-vs-B-seedS.txt). A file that already holds
    /// games is never overwritten: continue its match with --resume, or name another file.
    #[arg(long)]
    pub records: Option<PathBuf>,
    /// Continue the match whose records file this is (after a crash or Ctrl-C): its games count
    /// and the rest are played and added to it. Give the same players and options as before.
    #[arg(long)]
    pub resume: bool,
}

/// A file-name-safe version of a player spec.
fn slug(spec: &PlayerSpec) -> String {
    let text = spec.text.rsplit('/').next().unwrap_or(&spec.text).trim_end_matches(".safetensors");
    let kind = spec.text.split(':').next().unwrap_or("");
    let text = if kind == "net" && !text.starts_with("net") {
        format!("net-{text}")
    } else {
        text.to_string()
    };
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
        .collect()
}

/// Appends records to a file as games finish, so an interrupted match keeps what it played.
struct RecordSink {
    path: PathBuf,
    file: RefCell<std::fs::File>,
}

impl RecordSink {
    /// A new records file. One that already holds games is refused, not overwritten: `remedy`
    /// says what to do instead.
    fn create(path: &Path, remedy: &str) -> anyhow::Result<RecordSink> {
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            bail!(
                "{} already holds game records, which are left as they are; {remedy}",
                path.display()
            );
        }
        RecordSink::open(path, false)
    }

    /// Adds to a records file (creating it if need be).
    fn append(path: &Path) -> anyhow::Result<RecordSink> {
        RecordSink::open(path, true)
    }

    fn open(path: &Path, append: bool) -> anyhow::Result<RecordSink> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .append(append)
            .truncate(!append)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(RecordSink { path: path.to_path_buf(), file: RefCell::new(file) })
    }

    /// One write call a record, so that a match killed mid-game leaves whole records behind
    /// (and `--resume` can read them).
    fn write(&self, result: &GameResult) {
        let text = format!("{}\n", result.record);
        if let Err(error) = self.file.borrow_mut().write_all(text.as_bytes()) {
            eprintln!("warning: cannot write to {}: {error}", self.path.display());
        }
    }
}

fn progress(games: usize) -> super::LoggedBar {
    super::LoggedBar::new(games, "{msg} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta}")
}

fn parse_sprt(text: &str, alpha: f64, beta: f64) -> anyhow::Result<Sprt> {
    let (elo0, elo1) = text
        .split_once(',')
        .with_context(|| format!("--sprt {text:?}: expected ELO0,ELO1 such as 0,30"))?;
    let parse =
        |t: &str| t.trim().parse::<f64>().with_context(|| format!("--sprt: {t:?} is not a number"));
    let sprt = Sprt { elo0: parse(elo0)?, elo1: parse(elo1)?, alpha, beta };
    sprt.validate().map_err(anyhow::Error::msg)?;
    Ok(sprt)
}

fn describe(tally: &Tally) -> String {
    let estimate = tally.elo();
    format!(
        "+{} ={} -{}, score {:.3}, Elo {} [{}, {}]",
        tally.wins,
        tally.draws,
        tally.losses,
        tally.score(),
        format_elo(estimate.elo),
        format_elo(estimate.low),
        format_elo(estimate.high)
    )
}

/// The games a match's records file already holds (none if there is no such file yet).
fn earlier_games(
    records: &Path,
    a: &PlayerSpec,
    b: &PlayerSpec,
    settings: &MatchSettings,
) -> anyhow::Result<Vec<GameResult>> {
    let text = match std::fs::read_to_string(records) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", records.display()))
        }
    };
    let parsed = GameRecord::parse_all(&text)
        .with_context(|| format!("cannot resume from {}", records.display()))?;
    let earlier = games_from_records(parsed, a, b, settings)
        .with_context(|| format!("cannot resume from {}", records.display()))?;
    let tally: Tally = earlier.iter().map(|g| g.a_score).collect();
    eprintln!(
        "resuming {}: {} of {} games played (+{} ={} -{})",
        records.display(),
        earlier.len(),
        settings.games,
        tally.wins,
        tally.draws,
        tally.losses
    );
    Ok(earlier)
}

/// Plays the rest of a match whose games so far are `earlier`, each game added to `sink` as it
/// finishes, under a progress bar that shows `title` and the score so far.
fn play_recorded(
    a: &PlayerSpec,
    b: &PlayerSpec,
    device: DeviceChoice,
    settings: &MatchSettings,
    earlier: Vec<GameResult>,
    sink: &RecordSink,
    title: &str,
) -> anyhow::Result<crate::arena::MatchResult> {
    let bar = progress(settings.games);
    bar.set_message(title.to_string());
    bar.set_position(earlier.len());
    let result = continue_match(a, b, device, settings, earlier, &|game, tally| {
        sink.write(game);
        bar.set_message(format!("{title}+{} ={} -{}", tally.wins, tally.draws, tally.losses));
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    Ok(result)
}

pub fn run_match(args: MatchArgs) -> anyhow::Result<()> {
    let sprt = args.sprt.as_deref().map(|t| parse_sprt(t, args.alpha, args.beta)).transpose()?;
    let settings = args.arena.settings(&[&args.a, &args.b], sprt)?;
    let records = args.records.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "matches/{}-vs-{}-seed{}.txt",
            slug(&args.a),
            slug(&args.b),
            settings.seed
        ))
    });
    let (earlier, sink) = if args.resume {
        let earlier = earlier_games(&records, &args.a, &args.b, &settings)?;
        (earlier, RecordSink::append(&records)?)
    } else {
        (
            Vec::new(),
            RecordSink::create(
                &records,
                "continue that match with --resume, or write to another file with --records",
            )?,
        )
    };
    let result = play_recorded(&args.a, &args.b, args.arena.device, &settings, earlier, &sink, "")?;

    let by_colour = |white: bool| -> Tally {
        result.games.iter().filter(|g| g.a_is_white == white).map(|g| g.a_score).collect()
    };
    let (as_white, as_black) = (by_colour(true), by_colour(false));
    println!("{} vs {}: {} games", args.a, args.b, result.tally.games());
    println!("  {}: {} (95% interval)", args.a, describe(&result.tally));
    println!("  as White: {}", describe(&as_white));
    println!("  as Black: {}", describe(&as_black));
    if let (Some(sprt), Some(verdict)) = (sprt, result.sprt) {
        let (lower, upper) = sprt.bounds();
        let said = match verdict {
            SprtVerdict::AcceptH1 => {
                format!("accepted H1 (A is at least {} Elo stronger)", sprt.elo1)
            }
            SprtVerdict::AcceptH0 => {
                format!("accepted H0 (A is at most {} Elo stronger)", sprt.elo0)
            }
            SprtVerdict::Continue => "no decision within the games allowed".into(),
        };
        println!(
            "  SPRT [{}, {}]: {said}; LLR {:.2} (bounds {lower:.2}, {upper:.2})",
            sprt.elo0,
            sprt.elo1,
            sprt.llr(&result.tally)
        );
    }
    println!("  records: {}", records.display());
    Ok(())
}

#[derive(Args, Debug)]
pub struct TournamentArgs {
    /// The players (two or more); each pair plays --games games.
    #[arg(required = true, num_args = 2..)]
    pub players: Vec<PlayerSpec>,
    #[command(flatten)]
    pub arena: ArenaArgs,
    /// The player rated 0 (default: the first).
    #[arg(long)]
    pub anchor: Option<String>,
    /// Folder for ratings.csv, pairs.csv and games.txt (default: matches/tournament-seedS).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct RatingRow<'a> {
    rank: usize,
    player: &'a str,
    elo: f64,
    error: f64,
    games: u32,
    score: f64,
}

#[derive(serde::Serialize)]
struct PairRow<'a> {
    a: &'a str,
    b: &'a str,
    a_wins: u32,
    draws: u32,
    b_wins: u32,
    a_score: f64,
}

pub fn tournament(args: TournamentArgs) -> anyhow::Result<()> {
    let players = &args.players;
    let anchor = match &args.anchor {
        Some(name) => players
            .iter()
            .position(|p| &p.text == name)
            .with_context(|| format!("--anchor {name:?} is not one of the players"))?,
        None => 0,
    };
    let specs: Vec<&PlayerSpec> = players.iter().collect();
    let settings = args.arena.settings(&specs, None)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("matches/tournament-seed{}", settings.seed)));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let sink = RecordSink::create(
        &out.join("games.txt"),
        "write the tournament to another folder with --out",
    )?;
    let pairs: Vec<(usize, usize)> =
        (0..players.len()).flat_map(|i| (i + 1..players.len()).map(move |j| (i, j))).collect();
    let bar = progress(settings.games * pairs.len());
    let mut games = Vec::new();
    let mut tallies = vec![Tally::default(); players.len()];
    let mut pair_rows = Vec::new();
    for (pair, &(i, j)) in pairs.iter().enumerate() {
        bar.set_message(format!("{} vs {}", players[i], players[j]));
        let settings = MatchSettings {
            seed: settings.seed.wrapping_add(pair as u64 * 1_000_003),
            ..settings.clone()
        };
        let result =
            play_match(&players[i], &players[j], args.arena.device, &settings, &|game, _| {
                sink.write(game);
                bar.inc(1);
            })?;
        for game in &result.games {
            let (white, black) = if game.a_is_white { (i, j) } else { (j, i) };
            let white_score = if game.a_is_white { game.a_score } else { 1.0 - game.a_score };
            games.push(RatedGame { white, black, white_score });
            tallies[i].add(game.a_score);
            tallies[j].add(1.0 - game.a_score);
        }
        let t = result.tally;
        pair_rows.push((i, j, t));
    }
    bar.finish_and_clear();

    let fitted = ratings::fit_with_errors(players.len(), &games, anchor, 200, settings.seed);
    let mut order: Vec<usize> = (0..players.len()).collect();
    order.sort_by(|&x, &y| fitted.elo[y].total_cmp(&fitted.elo[x]));
    let mut writer = csv::Writer::from_writer(Vec::new());
    println!(
        "{:>4}  {:<40} {:>7} {:>6} {:>6} {:>6}",
        "rank", "player", "Elo", "+/-", "games", "score"
    );
    for (rank, &p) in order.iter().enumerate() {
        let row = RatingRow {
            rank: rank + 1,
            player: &players[p].text,
            elo: fitted.elo[p],
            error: fitted.error[p],
            games: tallies[p].games(),
            score: tallies[p].score(),
        };
        println!(
            "{:>4}  {:<40} {:>7.0} {:>6.0} {:>6} {:>6.3}",
            row.rank, row.player, row.elo, row.error, row.games, row.score
        );
        writer.serialize(row)?;
    }
    super::save_csv(&out.join("ratings.csv"), writer)?;
    println!(
        "first-move advantage (White): {:+.0} +/- {:.0} Elo",
        fitted.first_move, fitted.first_move_error
    );
    let mut writer = csv::Writer::from_writer(Vec::new());
    for (i, j, t) in pair_rows {
        writer.serialize(PairRow {
            a: &players[i].text,
            b: &players[j].text,
            a_wins: t.wins,
            draws: t.draws,
            b_wins: t.losses,
            a_score: t.score(),
        })?;
    }
    super::save_csv(&out.join("pairs.csv"), writer)?;
    println!("ratings, pairs and games in {}", out.display());
    Ok(())
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Records of two matches (`match --records`) played with the same seed, games and opening
    /// plies: the first candidate's, then the second's. More such pairs (other seeds) pool into
    /// one comparison: FIRST SECOND FIRST SECOND ...
    #[arg(required = true, num_args = 2.., value_name = "RECORDS")]
    pub files: Vec<PathBuf>,
}

fn read_records(path: &Path) -> anyhow::Result<Vec<GameRecord>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    GameRecord::parse_all(&text)
        .with_context(|| format!("cannot read the records in {}", path.display()))
}

/// Each file's records, read as one match's and pooled (see [`paired::pool`]).
fn read_matches(paths: &[&PathBuf]) -> anyhow::Result<Vec<MatchRounds>> {
    let records =
        paths.iter().map(|path| read_records(path)).collect::<anyhow::Result<Vec<_>>>()?;
    let names: Vec<String> = paths.iter().map(|path| path.display().to_string()).collect();
    let files: Vec<(&str, &[GameRecord])> =
        names.iter().map(String::as_str).zip(records.iter().map(Vec::as_slice)).collect();
    Ok(paired::pool(&files)?)
}

/// `compare`: the first players (A of `match A B`) of two matches on the same openings,
/// paired round by round; or of several such pairs, pooled.
pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    if !args.files.len().is_multiple_of(2) {
        anyhow::bail!(
            "compare takes records in pairs (FIRST SECOND, then more pairs), not {} files",
            args.files.len()
        );
    }
    let firsts = read_matches(&args.files.iter().step_by(2).collect::<Vec<_>>())?;
    let seconds = read_matches(&args.files.iter().skip(1).step_by(2).collect::<Vec<_>>())?;
    let comparison = paired::compare_pooled(&firsts, &seconds).context("cannot pair the files")?;
    let points = |share: f64| 100.0 * share;
    let pairs = if firsts.len() > 1 {
        format!(" of {} pairs of files", firsts.len())
    } else {
        " in both files".into()
    };
    println!("{} rounds on the same openings{pairs}", comparison.rounds);
    println!(
        "  first:  {} against {} scored {:.1}%",
        comparison.players.0,
        comparison.opponents.0,
        points(comparison.scores.0)
    );
    println!(
        "  second: {} against {} scored {:.1}%",
        comparison.players.1,
        comparison.opponents.1,
        points(comparison.scores.1)
    );
    println!(
        "  first - second: {:+.1} points a game +/- {:.1} (95% interval, paired by round)",
        points(comparison.difference),
        points(comparison.half_width)
    );
    if comparison.unpaired > 0 {
        println!("  {} round(s) in one file only were left out", comparison.unpaired);
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct TallyArgs {
    /// Records of matches between the same two players (`match A B --records`, any seeds).
    #[arg(required = true, num_args = 1.., value_name = "RECORDS")]
    pub files: Vec<PathBuf>,
}

/// `tally`: matches of the same two players pooled, as `match` reports one.
pub fn tally(args: TallyArgs) -> anyhow::Result<()> {
    let matches = read_matches(&args.files.iter().collect::<Vec<_>>())?;
    let scores = || matches.iter().flat_map(MatchRounds::scores);
    let total: Tally = scores().map(|(_, score)| score).collect();
    let by_colour = |white: bool| -> Tally {
        scores().filter(|(a_white, _)| *a_white == white).map(|(_, score)| score).collect()
    };
    let (a, b) = &matches[0].players;
    println!("{a} vs {b}: {} games in {} file(s)", total.games(), matches.len());
    for (path, one) in args.files.iter().zip(&matches) {
        println!(
            "  {}: {}",
            path.display(),
            describe(&one.scores().map(|(_, score)| score).collect())
        );
    }
    let (low, high) = total.score_interval();
    println!(
        "  {a}: {} (95% interval; score {:.1}% to {:.1}%)",
        describe(&total),
        100.0 * low,
        100.0 * high
    );
    println!("  as White: {}", describe(&by_colour(true)));
    println!("  as Black: {}", describe(&by_colour(false)));
    Ok(())
}

/// Random plies at the start of every opening, unless `--opening-plies` says otherwise (the
/// yardstick always plays these).
const DEFAULT_OPENING_PLIES: u32 = 4;

#[derive(Args, Debug)]
pub struct YardstickArgs {
    /// The run directory (its config.toml, metrics.csv and checkpoints).
    pub run: PathBuf,
    /// Hours of training at which the run's newest checkpoint is measured.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8", value_parser = super::positive_number)]
    pub hours: Vec<f64>,
    /// The opponents, each at the same time a move as the checkpoint (random and greedy take
    /// no clock).
    #[arg(long, value_delimiter = ',', default_value = "greedy,mcts-rollout,alphabeta")]
    pub opponents: Vec<PlayerSpec>,
    /// Seconds a move.
    #[arg(long, default_value_t = 1.0, value_parser = super::positive_number)]
    pub time: f64,
    /// Games a match (an even number gives every opening to both colours).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub games: u32,
    /// Seeds the openings: runs measured with one seed compare game for game.
    #[arg(long, default_value_t = 11)]
    pub seed: u64,
    /// Games played at once (default: one per core, each game on one core).
    #[arg(long)]
    pub parallel: Option<usize>,
    /// Where the networks run.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
}

/// `yardstick`: the run's newest checkpoint at each of the given hours of training against
/// each opponent, at equal time a move, on the run's own rules. Each match keeps its games in
/// `RUN/yardstick/` as they finish and goes on from them, so an interrupted yardstick resumes
/// where it stopped and a finished match is not played again; results go to
/// `RUN/yardstick.csv` (other checkpoints' and opponents' rows kept) and the picture to
/// `RUN/plots/scores.svg`.
pub fn yardstick(args: YardstickArgs) -> anyhow::Result<()> {
    let run = &args.run;
    let rules = Config::load_stored_rules(&run.join("config.toml"))
        .with_context(|| format!("{} is not a training run", run.display()))?;
    let metrics = finished_metrics(run)?;
    if metrics.is_empty() {
        bail!("{} has no finished generation to measure", run.display());
    }
    let settings = MatchSettings {
        rules,
        games: args.games as usize,
        opening_plies: DEFAULT_OPENING_PLIES,
        seed: args.seed,
        parallel: args.parallel.unwrap_or_else(crate::config::available_cores).max(1),
        limit: Limit { time: Some(Duration::from_secs_f64(args.time)), ..Limit::default() },
        sprt: None,
    };
    prepare(&settings, &args.opponents.iter().collect::<Vec<_>>())?;
    let table = run.join("yardstick.csv");
    let mut measured = false;
    for &hours in &args.hours {
        let generation = match yardstick::generation_at(&metrics, hours) {
            Ok(generation) => generation,
            Err(not_yet) => {
                eprintln!("{}: {not_yet}", run.display());
                continue;
            }
        };
        // Named by its generation, not its path, so that the run's records still resume (and
        // read) after the run is moved or named another way.
        let name = generation_name(generation);
        let checkpoint = checkpoint_path(run, generation);
        let net =
            PlayerSpec::new(PlayerKind::Net(checkpoint), Limit::default(), format!("net:{name}"));
        crate::players::check_rules(&net, &settings.rules)?;
        for opponent in &args.opponents {
            let label = yardstick::opponent_label(opponent, args.time);
            let records = run.join("yardstick").join(format!(
                "{name}-vs-{}-{}s-seed{}.txt",
                slug(opponent),
                args.time,
                args.seed
            ));
            let earlier = earlier_games(&records, &net, opponent, &settings)?;
            let sink = RecordSink::append(&records)?;
            let title = format!("{hours} h (generation {generation}) against {label}: ");
            let result =
                play_recorded(&net, opponent, args.device, &settings, earlier, &sink, &title)?;
            println!("{title}{}", describe(&result.tally));
            yardstick::record(
                &table,
                yardstick::YardstickRow::new(generation, label, &result.tally),
            )?;
            measured = true;
        }
    }
    if measured {
        let picture = crate::plot::plot_yardstick(run, &table, None)?;
        println!("results: {}; picture: {}", table.display(), picture.display());
    }
    Ok(())
}
