//! Elo arithmetic, SPRT, fitted ratings and the match runner.

use epaminondas::arena::elo::{
    elo_from_score, expected_score, EloEstimate, Sprt, SprtVerdict, Tally,
};
use epaminondas::arena::ratings::{fit, fit_with_errors, RatedGame};
use epaminondas::arena::{
    continue_match, games_from_records, play_match, random_opening, ArenaError, GameResult,
    MatchSettings,
};
use epaminondas::game::{GameRecord, Position, Rules};
use epaminondas::nn::DeviceChoice;
use epaminondas::players::{Limit, PlayerSpec};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn tally(wins: u32, draws: u32, losses: u32) -> Tally {
    Tally { wins, draws, losses }
}

#[test]
fn elo_of_known_scores() {
    assert!((elo_from_score(0.75) - 190.85).abs() < 0.01, "{}", elo_from_score(0.75));
    assert!(elo_from_score(0.5).abs() < 1e-9);
    assert!((elo_from_score(0.25) + 190.85).abs() < 0.01);
    assert!((expected_score(190.85) - 0.75).abs() < 1e-4);
    assert_eq!(elo_from_score(1.0), f64::INFINITY);
    // 30 wins, 20 draws, 10 losses = 40/60: +120 Elo.
    let estimate = tally(30, 20, 10).elo();
    assert!((estimate.elo - 120.4).abs() < 0.1, "{estimate:?}");
    assert!(estimate.low < estimate.elo && estimate.elo < estimate.high);
}

#[test]
fn the_interval_shrinks_with_more_games() {
    let small = tally(15, 0, 5).elo();
    let large = tally(150, 0, 50).elo();
    assert!((small.elo - large.elo).abs() < 1e-9);
    let (small_width, large_width) = (small.high - small.low, large.high - large.low);
    // About sqrt(10) narrower; more, because the logistic is steeper far from 50%.
    assert!(
        large_width < small_width / 2.8 && large_width > small_width / 4.5,
        "{small_width} vs {large_width}"
    );
    // A clean sweep: infinite estimate, finite lower bound from the Wilson interval, positive
    // even for a few games.
    let sweep = tally(100, 0, 0).elo();
    assert_eq!(sweep.elo, f64::INFINITY);
    assert!((sweep.low - 566.2).abs() < 0.1, "{sweep:?}");
    let short = tally(4, 0, 0).elo();
    assert!(short.low > 0.0 && short.low < sweep.low, "{short:?}");
    assert!(
        (tally(0, 0, 10).elo().high + tally(10, 0, 0).elo().low).abs() < 1e-9,
        "a null score mirrors a perfect one"
    );
}

#[test]
fn score_intervals_by_hand() {
    // 72 wins, 2 draws, 26 losses: mean 0.73; per-game variance (72 * 0.27^2 + 2 * 0.23^2 +
    // 26 * 0.73^2) / 100 = 0.1921, so the half width is 1.96 * sqrt(0.1921 / 100) = 0.0859.
    let (low, high) = tally(72, 2, 26).score_interval();
    assert!((low - 0.6441).abs() < 1e-3 && (high - 0.8159).abs() < 1e-3, "{low} {high}");
    // The Elo interval is the same interval through the logistic curve.
    let elo = tally(72, 2, 26).elo();
    assert!(
        (elo.low - elo_from_score(low)).abs() < 1e-9
            && (elo.high - elo_from_score(high)).abs() < 1e-9
    );
    // Near a clean sweep the normal interval would pass 1; it is clamped.
    let (_, high) = tally(98, 0, 2).score_interval();
    assert_eq!(high, 1.0);
    // A null score: Wilson's bound above, 3.84 / 103.84 for 100 games.
    let (low, high) = tally(0, 0, 100).score_interval();
    assert!(low == 0.0 && (high - 0.0370).abs() < 1e-3, "{high}");
    assert_eq!(Tally::default().score_interval(), (0.0, 1.0));
    assert_eq!(
        Tally::default().elo(),
        EloEstimate { elo: 0.0, low: f64::NEG_INFINITY, high: f64::INFINITY }
    );
}

#[test]
fn sprt_decides_both_ways() {
    let sprt = Sprt { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05 };
    let (lower, upper) = sprt.bounds();
    assert!((upper - (0.95f64 / 0.05).ln()).abs() < 1e-12 && (lower + upper).abs() < 1e-12);
    assert_eq!(sprt.verdict(&tally(0, 0, 0)), SprtVerdict::Continue);
    assert_eq!(sprt.verdict(&tally(12, 3, 8)), SprtVerdict::Continue);
    assert_eq!(sprt.verdict(&tally(300, 100, 150)), SprtVerdict::AcceptH1);
    assert_eq!(sprt.verdict(&tally(150, 100, 150)), SprtVerdict::AcceptH0);
    assert_eq!(sprt.verdict(&tally(20, 0, 0)), SprtVerdict::AcceptH1);
    assert!(Sprt { elo0: 10.0, elo1: 0.0, alpha: 0.05, beta: 0.05 }.validate().is_err());
}

/// Games drawn from known ratings and a known first-move advantage are fitted back.
#[test]
fn fitted_ratings_recover_the_truth() {
    let truth = [0.0, 200.0, -150.0, 400.0];
    let first_move = 60.0;
    let mut rng = StdRng::seed_from_u64(7);
    let mut games = Vec::new();
    for white in 0..truth.len() {
        for black in 0..truth.len() {
            if white == black {
                continue;
            }
            for _ in 0..600 {
                let p = expected_score(truth[white] - truth[black] + first_move);
                // Draws happen; a draw is worth half, and keeps the expectation at p.
                let draw_chance = 0.2 * (1.0 - (2.0 * p - 1.0).abs());
                let u: f64 = rng.random();
                let white_score = if u < draw_chance {
                    0.5
                } else if rng.random::<f64>() < (p - draw_chance / 2.0) / (1.0 - draw_chance) {
                    1.0
                } else {
                    0.0
                };
                games.push(RatedGame { white, black, white_score });
            }
        }
    }
    let (elo, advantage) = fit(truth.len(), &games, 0);
    for (fitted, real) in elo.iter().zip(truth) {
        assert!((fitted - real).abs() < 25.0, "fitted {elo:?}, truth {truth:?}");
    }
    assert!((advantage - first_move).abs() < 20.0, "first move {advantage}");
    let with_errors = fit_with_errors(truth.len(), &games, 0, 30, 1);
    assert_eq!(with_errors.error[0], 0.0, "the anchor is exact by definition");
    assert!(with_errors.error[1..].iter().all(|&e| e > 2.0 && e < 40.0), "{:?}", with_errors.error);
}

#[test]
fn a_perfect_record_gives_a_finite_rating() {
    let games: Vec<RatedGame> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                RatedGame { white: 1, black: 0, white_score: 1.0 }
            } else {
                RatedGame { white: 0, black: 1, white_score: 0.0 }
            }
        })
        .collect();
    let (elo, _) = fit(2, &games, 0);
    assert!(elo[1].is_finite() && elo[1] > 300.0, "{elo:?}");
}

fn settings(games: usize, parallel: usize) -> MatchSettings {
    let rules = Rules { ply_cap: Some(60), ..Rules::default() };
    MatchSettings {
        rules,
        games,
        opening_plies: 4,
        seed: 9,
        parallel,
        limit: Limit::default(),
        sprt: None,
    }
}

#[test]
fn openings_are_random_but_reproducible_and_unfinished() {
    let rules = Rules::default();
    let a = random_opening(rules, 6, 1);
    assert_eq!(a.len(), 6);
    assert_eq!(a, random_opening(rules, 6, 1));
    assert_ne!(a, random_opening(rules, 6, 2));
    let mut position = Position::start(rules).unwrap();
    for mv in a {
        position = position.play(mv).unwrap();
    }
    assert_eq!(position.status(), epaminondas::game::Status::Ongoing);
}

/// Every opening is played twice with colours swapped, records replay, and a match is
/// reproducible whatever the number of threads.
#[test]
fn matches_pair_openings_and_reproduce() {
    let random: PlayerSpec = "random".parse().unwrap();
    let one = play_match(&random, &random, DeviceChoice::Cpu, &settings(8, 1), &|_, _| {}).unwrap();
    let two = play_match(&random, &random, DeviceChoice::Cpu, &settings(8, 2), &|_, _| {}).unwrap();
    assert_eq!((one.games.len(), two.games.len()), (8, 8));
    assert_eq!(one.tally.games(), 8);
    for (x, y) in one.games.iter().zip(&two.games) {
        assert_eq!(
            x.record.moves, y.record.moves,
            "game {} differs between 1 and 2 threads",
            x.index
        );
    }
    for pair in one.games.chunks(2) {
        assert!(pair[0].a_is_white && !pair[1].a_is_white);
        let plies =
            pair[0].record.tag("OpeningPlies").map(|v| v.parse::<usize>().unwrap()).unwrap();
        assert_eq!(
            pair[0].record.moves[..plies],
            pair[1].record.moves[..plies],
            "a pair shares its opening"
        );
    }
    for game in &one.games {
        let text = game.record.to_string();
        let replayed = epaminondas::game::GameRecord::parse_all(&text).unwrap();
        assert_eq!(replayed[0].moves, game.record.moves);
    }
    // Records name the players by their specs, options included.
    let quick: PlayerSpec = "mcts-rollout:sims=20".parse().unwrap();
    let named =
        play_match(&quick, &random, DeviceChoice::Cpu, &settings(2, 1), &|_, _| {}).unwrap();
    let names: Vec<(&str, &str)> =
        named.games.iter().map(|g| (g.record.white.as_str(), g.record.black.as_str())).collect();
    assert_eq!(names, [("mcts-rollout:sims=20", "random"), ("random", "mcts-rollout:sims=20")]);
}

/// The records of `games`, as a match writes them to its file.
fn records_text(games: &[&GameResult]) -> String {
    games.iter().map(|g| format!("{}\n", g.record)).collect()
}

/// A match cut short after some games (finished out of order, as parallel games do) and
/// continued from its records plays the remaining games, and only those, exactly as the whole
/// match played in one go.
#[test]
fn a_match_cut_short_continues_to_the_same_match() {
    let greedy: PlayerSpec = "greedy".parse().unwrap();
    let random: PlayerSpec = "random".parse().unwrap();
    let whole =
        play_match(&greedy, &random, DeviceChoice::Cpu, &settings(6, 1), &|_, _| {}).unwrap();
    let kept = [&whole.games[3], &whole.games[0], &whole.games[4]];
    let records = GameRecord::parse_all(&records_text(&kept)).unwrap();
    let earlier = games_from_records(records, &greedy, &random, &settings(6, 2)).unwrap();
    assert_eq!(
        earlier.iter().map(|g| (g.index, g.a_is_white)).collect::<Vec<_>>(),
        [(3, false), (0, true), (4, true)]
    );
    let new_games = std::sync::Mutex::new(Vec::new());
    let continued = continue_match(
        &greedy,
        &random,
        DeviceChoice::Cpu,
        &settings(6, 2),
        earlier,
        &|game, tally| new_games.lock().unwrap().push((game.index, tally.games())),
    )
    .unwrap();
    let mut new_games = new_games.into_inner().unwrap();
    new_games.sort();
    assert_eq!(
        new_games.iter().map(|&(index, _)| index).collect::<Vec<_>>(),
        [1, 2, 5],
        "only the missing rounds are played"
    );
    assert!(new_games.iter().all(|&(_, so_far)| so_far > 3), "the tally counts the earlier games");
    assert_eq!(continued.tally, whole.tally);
    for (x, y) in continued.games.iter().zip(&whole.games) {
        assert_eq!((x.index, x.a_score, &x.record.moves), (y.index, y.a_score, &y.record.moves));
    }
    // A finished match has nothing left to play.
    let all =
        GameRecord::parse_all(&records_text(&whole.games.iter().collect::<Vec<_>>())).unwrap();
    let earlier = games_from_records(all, &greedy, &random, &settings(6, 1)).unwrap();
    let again =
        continue_match(&greedy, &random, DeviceChoice::Cpu, &settings(6, 1), earlier, &|_, _| {
            panic!("no game is left to play")
        })
        .unwrap();
    assert_eq!(again.tally, whole.tally);
}

/// Records of another match never count in this one: each mismatch is refused by record
/// number and named.
#[test]
fn records_of_another_match_are_refused_by_name() {
    let greedy: PlayerSpec = "greedy".parse().unwrap();
    let random: PlayerSpec = "random".parse().unwrap();
    let whole =
        play_match(&greedy, &random, DeviceChoice::Cpu, &settings(4, 2), &|_, _| {}).unwrap();
    let text = records_text(&[&whole.games[0], &whole.games[3]]);
    let refusal = |text: &str, a: &PlayerSpec, b: &PlayerSpec, settings: &MatchSettings| {
        games_from_records(GameRecord::parse_all(text).unwrap(), a, b, settings)
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        games_from_records(
            GameRecord::parse_all(&text).unwrap(),
            &greedy,
            &random,
            &settings(4, 2)
        )
        .unwrap()
        .len(),
        2
    );

    let other_seed = MatchSettings { seed: 10, ..settings(4, 2) };
    assert!(refusal(&text, &greedy, &random, &other_seed)
        .contains("record 1 is not a game of this match: its seed is \"9\""));
    let swapped = refusal(&text, &random, &greedy, &settings(4, 2));
    assert!(
        swapped.contains("round 1 is greedy (White) against random, not random against greedy"),
        "{swapped}"
    );
    assert!(refusal(&text, &greedy, &random, &settings(2, 2))
        .contains("record 2 is not a game of this match: round \"4\" is not one of 1..=2"));
    let longer_openings = MatchSettings { opening_plies: 6, ..settings(4, 2) };
    assert!(refusal(&text, &greedy, &random, &longer_openings).contains("opening"));
    let other_rules =
        MatchSettings { rules: Rules { ply_cap: Some(80), ..Rules::default() }, ..settings(4, 2) };
    assert!(refusal(&text, &greedy, &random, &other_rules).contains("other rules"));
    let twice = records_text(&[&whole.games[3], &whole.games[0], &whole.games[3]]);
    assert!(refusal(&twice, &greedy, &random, &settings(4, 2))
        .contains("record 3 is not a game of this match: round 4 appears twice"));
    let untagged =
        format!("{}\n", whole.games[0].record.to_string().replace("[Round \"1\"]\n", ""));
    assert!(refusal(&untagged, &greedy, &random, &settings(4, 2)).contains("no Round tag"));
}

/// `match` never overwrites a records file that holds games, and `--resume` finishes the match
/// in that file.
#[test]
fn the_match_command_keeps_and_continues_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("games.txt");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "match",
            "greedy",
            "random",
            "--games",
            "4",
            "--parallel",
            "1",
            "--ply-cap",
            "60",
            "--seed",
            "3",
            "--records",
        ];
        args.push(records.to_str().unwrap());
        args.extend_from_slice(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_epaminondas")).args(&args).output().unwrap()
    };
    assert!(run(&[]).status.success());
    let whole = std::fs::read_to_string(&records).unwrap();
    let games = GameRecord::parse_all(&whole).unwrap();
    assert_eq!(games.len(), 4);

    let again = run(&[]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already holds game records"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&records).unwrap(),
        whole,
        "the records are left as they were"
    );

    // Cut the file after its first two games, then resume.
    let cut: String = games[..2].iter().map(|g| format!("{g}\n")).collect();
    std::fs::write(&records, &cut).unwrap();
    let resumed = run(&["--resume"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("2 of 4 games played"));
    let finished = GameRecord::parse_all(&std::fs::read_to_string(&records).unwrap()).unwrap();
    assert_eq!(
        finished.iter().map(|g| g.moves.clone()).collect::<Vec<_>>(),
        games.iter().map(|g| g.moves.clone()).collect::<Vec<_>>()
    );

    // Resuming with other players is refused and leaves the file alone.
    let before = std::fs::read_to_string(&records).unwrap();
    let mut args = vec![
        "match",
        "random",
        "greedy",
        "--games",
        "4",
        "--ply-cap",
        "60",
        "--seed",
        "3",
        "--resume",
        "--records",
    ];
    args.push(records.to_str().unwrap());
    let wrong =
        std::process::Command::new(env!("CARGO_BIN_EXE_epaminondas")).args(&args).output().unwrap();
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("is not a game of this match"),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
    assert_eq!(std::fs::read_to_string(&records).unwrap(), before);
}

#[test]
fn matches_refuse_rules_without_a_ply_cap_and_bad_players() {
    let random: PlayerSpec = "random".parse().unwrap();
    let mut uncapped = settings(2, 1);
    uncapped.rules.ply_cap = None;
    let error = play_match(&random, &random, DeviceChoice::Cpu, &uncapped, &|_, _| {});
    assert!(matches!(error, Err(ArenaError::NoPlyCap)), "{:?}", error.map(|r| r.tally));
    // Sizes that would exhaust memory are refused up front, by name.
    for (games, parallel, named) in
        [(100_000_000_000, 1, "at most 100000 games"), (2, 20_000, "at most 256 games at once")]
    {
        let error =
            play_match(&random, &random, DeviceChoice::Cpu, &settings(games, parallel), &|_, _| {})
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
        assert!(error.contains(named), "{games} games, {parallel} at once: {error}");
    }
    let missing: PlayerSpec = "net:/no/such/file.safetensors".parse().unwrap();
    let error = play_match(&missing, &random, DeviceChoice::Cpu, &settings(2, 2), &|_, _| {})
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("/no/such/file.safetensors"), "{error}");
}

#[test]
fn player_specs_parse_and_name_their_errors() {
    let spec: PlayerSpec = "alphabeta:depth=3:time=0.5".parse().unwrap();
    assert_eq!(spec.limit.depth, Some(3));
    assert_eq!(spec.limit.time, Some(std::time::Duration::from_millis(500)));
    let net: PlayerSpec = "net:runs/a:b/gen.safetensors:sims=50".parse().unwrap();
    assert_eq!(net.kind, epaminondas::players::PlayerKind::Net("runs/a:b/gen.safetensors".into()));
    assert_eq!(net.limit.nodes, Some(50));
    let net: PlayerSpec = "net:gen.safetensors:draw=-0.25:forced=off".parse().unwrap();
    assert_eq!(
        (net.search_config().draw_value, net.search_config().forced_results),
        (-0.25, false)
    );
    let net: PlayerSpec = "net:gen.safetensors:precision=f32".parse().unwrap();
    assert_eq!(net.precision, Some(epaminondas::nn::Precision::F32));
    let net: PlayerSpec = "net:gen.safetensors:leaves=2".parse().unwrap();
    assert_eq!(net.leaves, Some(2));
    let net: PlayerSpec = "net:gen.safetensors:captures=0.25".parse().unwrap();
    assert_eq!(net.search_config().capture_prior, 0.25);
    for (text, expected) in [
        ("net:a:speed=3", "not known"),
        ("net:a:forced=yes", "on or off"),
        ("minimax", "unknown kind"),
        ("net", "needs a path"),
        ("alphabeta:depth=0", "needs a depth 1..=64"),
        ("random:sims=x", "positive"),
        ("greedy:speed=3", "not known"),
        ("net:a:draw=-2", "[-1, 1]"),
        ("net:a:precision=f16", "f32, bf16 or auto"),
        ("net:a:leaves=0", "1..=256"),
        ("net:a:captures=2", "needs a number in [0, 1]"),
    ] {
        let error = text.parse::<PlayerSpec>().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains(expected), "{text}: {error}");
    }
}

/// Two matches on the same openings compare round by round: each first player's score as the
/// match itself counted it, and the interval of the per-round differences worked out here from
/// the matches' own scores. Files that are not matches on the same openings are refused by name.
#[test]
fn matches_on_the_same_openings_compare_round_by_round() {
    use epaminondas::arena::paired::{compare, compare_pooled, pool, MatchRounds, PairingError};
    let (random, greedy): (PlayerSpec, PlayerSpec) =
        ("random".parse().unwrap(), "greedy".parse().unwrap());
    let strong =
        play_match(&greedy, &random, DeviceChoice::Cpu, &settings(12, 2), &|_, _| {}).unwrap();
    let even =
        play_match(&greedy, &greedy, DeviceChoice::Cpu, &settings(12, 2), &|_, _| {}).unwrap();
    // Through the text of a records file, as `compare` reads it.
    let records = |games: &[GameResult]| {
        GameRecord::parse_all(
            &games.iter().map(|g| g.record.to_string() + "\n").collect::<String>(),
        )
        .unwrap()
    };
    let comparison = compare(&records(&strong.games), &records(&even.games)).unwrap();
    let differences: Vec<f64> =
        strong.games.iter().zip(&even.games).map(|(a, b)| a.a_score - b.a_score).collect();
    let n = differences.len() as f64;
    let mean = differences.iter().sum::<f64>() / n;
    let sd = (differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert_eq!(comparison.rounds, 12);
    assert_eq!(comparison.unpaired, 0);
    assert_eq!(
        (
            comparison.players.0.as_str(),
            comparison.opponents.0.as_str(),
            comparison.opponents.1.as_str()
        ),
        ("greedy", "random", "greedy")
    );
    assert_eq!(comparison.scores, (strong.tally.score(), even.tally.score()));
    assert!(
        (comparison.difference - mean).abs() < 1e-12 && comparison.difference > 0.2,
        "{comparison:?}"
    );
    assert!(
        (comparison.half_width - 1.959_963_984_540_054 * sd / n.sqrt()).abs() < 1e-12
            && comparison.half_width > 0.0,
        "{comparison:?}"
    );

    // Rounds in one file only are left out and counted.
    let fewer = records(&even.games[..8]);
    let partial = compare(&records(&strong.games), &fewer).unwrap();
    assert_eq!((partial.rounds, partial.unpaired), (8, 4));
    // Another seed plays other openings: nothing to pair.
    let other_seed = MatchSettings { seed: 10, ..settings(12, 2) };
    let other = play_match(&random, &random, DeviceChoice::Cpu, &other_seed, &|_, _| {}).unwrap();
    assert!(matches!(
        compare(&records(&strong.games), &records(&other.games)),
        Err(PairingError::OtherOpening { pair: 1, round: 1 })
    ));
    // A record that is no match game, and a file holding two matches.
    let mut untagged = records(&strong.games);
    untagged[3].extra.retain(|(key, _)| key != "Round");
    let refused = compare(&untagged, &records(&even.games)).unwrap_err();
    assert!(
        refused.to_string().contains("record 4 of the first file")
            && refused.to_string().contains("Round"),
        "{refused}"
    );
    let mut mixed = records(&strong.games[..6]);
    mixed.extend(records(&even.games[6..]));
    let refused = compare(&records(&even.games), &mixed).unwrap_err();
    assert!(
        refused.to_string().contains("record 7 of the second file")
            && refused.to_string().contains("one match"),
        "{refused}"
    );
    assert!(matches!(
        compare(&records(&strong.games[..1]), &records(&even.games)),
        Err(PairingError::TooFewRounds(1))
    ));

    // Pairs of matches on other openings pool into one comparison, every round of each pair one
    // difference; the pairs need not share openings, each side must be of one pair of players.
    let strong_again =
        play_match(&greedy, &random, DeviceChoice::Cpu, &other_seed, &|_, _| {}).unwrap();
    let even_again =
        play_match(&greedy, &greedy, DeviceChoice::Cpu, &other_seed, &|_, _| {}).unwrap();
    let (strong_records, strong_again_records) =
        (records(&strong.games), records(&strong_again.games[..10]));
    let firsts = pool(&[("seed 9", &strong_records), ("seed 10", &strong_again_records)]).unwrap();
    let (even_records, even_again_records) = (records(&even.games), records(&even_again.games));
    let seconds = pool(&[("seed 9", &even_records), ("seed 10", &even_again_records)]).unwrap();
    let pooled = compare_pooled(&firsts, &seconds).unwrap();
    let pairs = strong
        .games
        .iter()
        .zip(&even.games)
        .chain(strong_again.games[..10].iter().zip(&even_again.games));
    let differences: Vec<f64> = pairs.map(|(a, b)| a.a_score - b.a_score).collect();
    let n = differences.len() as f64;
    let mean = differences.iter().sum::<f64>() / n;
    let sd = (differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert_eq!((pooled.rounds, pooled.unpaired), (22, 2));
    assert!((pooled.difference - mean).abs() < 1e-12, "{pooled:?}");
    assert!(
        (pooled.half_width - 1.959_963_984_540_054 * sd / n.sqrt()).abs() < 1e-12,
        "{pooled:?}"
    );
    // A pooled side's games are each file's, with A's colour as the match gave it.
    let scores: Vec<(bool, f64)> = firsts.iter().flat_map(MatchRounds::scores).collect();
    let played: Vec<(bool, f64)> = strong
        .games
        .iter()
        .chain(&strong_again.games[..10])
        .map(|g| (g.a_is_white, g.a_score))
        .collect();
    assert_eq!(scores, played);
    // The seconds swapped in among the firsts: other players, refused naming the file.
    let refused = pool(&[("seed 9", &strong_records), ("even.txt", &even_records)])
        .err()
        .expect("other players");
    assert!(
        matches!(&refused, PairingError::OtherPlayers { file, .. } if file == "even.txt")
            && refused.to_string().contains("greedy against greedy"),
        "{refused}"
    );
    // Pairs on other openings than each other's are still refused, naming the pair.
    let crossed = compare_pooled(
        &firsts,
        &pool(&[("seed 10", &even_again_records), ("seed 9", &even_records)]).unwrap(),
    );
    assert!(matches!(crossed, Err(PairingError::OtherOpening { pair: 1, round: 1 })));
}

/// `tally` and `compare` on the shipped records of the default agent and its teacher against
/// alphabeta: the pooled results docs/agents.md and docs/methods.md quote.
#[test]
fn shipped_records_tally_and_compare_as_the_docs_say() {
    use std::path::Path;
    let records =
        |name: &str| Path::new(env!("CARGO_MANIFEST_DIR")).join("data/records").join(name);
    let run = |args: &[&Path]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_epaminondas"))
            .args(args)
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr),
        )
    };
    let student = |seed: u32| records(&format!("distill-6x64-gpu-step26000-ab-seed{seed}.txt"));
    let teacher = |seed: u32| records(&format!("gpu-8x96-sparring-ab-gen1-ab-seed{seed}.txt"));
    let (ok, out) = run(&[Path::new("tally"), &student(13), &student(14), &student(15)]);
    assert!(
        ok && out.contains("300 games in 3 file(s)")
            && out.contains("+161 =13 -126, score 0.558")
            && out.contains("score 50.3% to 61.3%"),
        "{out}"
    );
    let (ok, out) =
        run(&[Path::new("compare"), &student(13), &teacher(13), &student(14), &teacher(14)]);
    assert!(
        ok && out.contains("200 rounds on the same openings of 2 pairs of files")
            && out.contains("+3.0 points a game +/- 8.8"),
        "{out}"
    );
    let (ok, out) = run(&[Path::new("tally"), &student(13), &teacher(13)]);
    assert!(!ok && out.contains("pooled matches must be of the same players"), "{out}");
    let (ok, out) = run(&[Path::new("compare"), &student(13), &teacher(13), &student(14)]);
    assert!(!ok && out.contains("in pairs"), "{out}");
}

/// `yardstick` plays a run's newest checkpoint at each asked hour of training against each
/// opponent, keeps the games under the run, goes on from an interrupted match's games, never
/// plays a finished match again, and says which hours the run has not trained yet.
#[test]
fn yardstick_measures_a_runs_checkpoints_by_hours_and_resumes() {
    use epaminondas::arena::yardstick::{read_table, YardstickRow};
    use epaminondas::coach::{read_metrics, Run, Silent};
    use epaminondas::config::Config;
    use std::path::Path;

    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let smoke = || {
        Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))).unwrap()
    };
    Run::open(&run_dir, Some(smoke())).unwrap().train(Some(2), &Silent).unwrap();
    let metrics = read_metrics(&run_dir.join("metrics.csv"), u32::MAX).unwrap();
    let first = metrics[0].wall_seconds / 3600.0;
    // Half the first generation's time stands for the untrained network, a hair past it for
    // generation 1; 1,000 hours the run has not trained.
    let hours = format!("{},{},1000", first / 2.0, first * 1.0001);
    let yardstick_of = |run: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_epaminondas"))
            .args(["yardstick", run.to_str().unwrap(), "--hours", &hours])
            .args(["--opponents", "random,greedy", "--time", "0.01", "--games", "2"])
            .args(["--seed", "3", "--parallel", "1", "--device", "cpu"])
            .output()
            .unwrap()
    };
    let yardstick = || yardstick_of(&run_dir);
    let output = yardstick();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("not yet 1000"), "{stderr}");
    let table = run_dir.join("yardstick.csv");
    let rows = read_table(&table).unwrap();
    let measured: Vec<(u32, &str, u32)> =
        rows.iter().map(|r| (r.generation, r.opponent.as_str(), r.tally().games())).collect();
    assert_eq!(
        measured,
        [
            (0, "random at 0.01 s", 2),
            (0, "greedy at 0.01 s", 2),
            (1, "random at 0.01 s", 2),
            (1, "greedy at 0.01 s", 2),
        ]
    );
    assert!(run_dir.join("plots/scores.svg").exists());
    let records = run_dir.join("yardstick/gen-000001-vs-greedy-0.01s-seed3.txt");
    let games = GameRecord::parse_all(&std::fs::read_to_string(&records).unwrap()).unwrap();
    assert_eq!(games.len(), 2);
    // The checkpoint is named by its generation, not its path.
    assert!(games.iter().all(|g| [&g.white, &g.black].contains(&&"net:gen-000001".to_string())));

    // Again, with the run named another way: every match is finished, so nothing is played and
    // nothing changes.
    let before = std::fs::read_to_string(&records).unwrap();
    let same_run = run_dir.parent().unwrap().join(".").join("run");
    let again = yardstick_of(&same_run);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(std::fs::read_to_string(&records).unwrap(), before);
    assert_eq!(read_table(&table).unwrap(), rows);
    // A copy of the run kept without its state.json (as a run's data is kept to be measured)
    // is measured from every row of its metrics: the same generations, all finished.
    let state = run_dir.join("state.json");
    let kept_aside = dir.path().join("state.json");
    std::fs::rename(&state, &kept_aside).unwrap();
    let copy = yardstick();
    assert!(copy.status.success(), "{}", String::from_utf8_lossy(&copy.stderr));
    assert_eq!(std::fs::read_to_string(&records).unwrap(), before);
    assert_eq!(read_table(&table).unwrap(), rows);
    std::fs::rename(&kept_aside, &state).unwrap();
    // A run whose config names an option since removed cannot go on, but is still measured.
    let config = run_dir.join("config.toml");
    let stored = std::fs::read_to_string(&config).unwrap();
    let removed = stored.replace("[search]\n", "[search]\nminimax_weight = 0.3\n");
    assert_ne!(removed, stored);
    std::fs::write(&config, removed).unwrap();
    assert!(Run::open(&run_dir, None).is_err());
    let old = yardstick();
    assert!(old.status.success(), "{}", String::from_utf8_lossy(&old.stderr));
    assert_eq!(read_table(&table).unwrap(), rows);
    std::fs::write(&config, stored).unwrap();

    // A match cut short after its first game goes on from it, and its row is replaced.
    std::fs::write(&records, format!("{}\n", games[0])).unwrap();
    let stale = YardstickRow { wins: 0, draws: 0, losses: 1, ..rows[3].clone() };
    epaminondas::arena::yardstick::record(&table, stale).unwrap();
    let output = yardstick();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("1 of 2 games played"));
    let resumed = GameRecord::parse_all(&std::fs::read_to_string(&records).unwrap()).unwrap();
    assert_eq!(resumed.len(), 2);
    assert_eq!(resumed[0], games[0]);
    let rows_after = read_table(&table).unwrap();
    let tally: epaminondas::arena::elo::Tally = resumed
        .iter()
        .map(|g| {
            let white_score = epaminondas::arena::white_score(g);
            if g.white == "net:gen-000001" {
                white_score
            } else {
                1.0 - white_score
            }
        })
        .collect();
    assert_eq!(rows_after.len(), 4);
    assert_eq!(rows_after[3].tally(), tally, "the row counts both games, the kept and the new");

    // Not a run, and no games: named.
    let refused = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_epaminondas"))
            .arg("yardstick")
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let not_a_run = refused(&[dir.path().to_str().unwrap(), "--device", "cpu"]);
    assert!(not_a_run.contains("is not a training run"), "{not_a_run}");
    let no_games = refused(&[run_dir.to_str().unwrap(), "--games", "0"]);
    assert!(no_games.contains("--games"), "{no_games}");
    let unplayed = dir.path().join("unplayed");
    Run::open(&unplayed, Some(smoke())).unwrap();
    let nothing = refused(&[unplayed.to_str().unwrap(), "--device", "cpu"]);
    assert!(nothing.contains("has no finished generation to measure"), "{nothing}");
}

/// The checkpoint that stands for an hour of training is the newest one finished by then.
#[test]
fn yardstick_picks_the_newest_checkpoint_finished_by_each_hour() {
    use epaminondas::arena::yardstick::generation_at;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metrics.csv");
    let mut csv = String::from(
        "generation,games,positions,samples,mean_game_length,white_wins,black_wins,draws,policy_loss,value_loss,policy_entropy,value_accuracy,grad_norm,elo,elo_error,selfplay_sims_per_second,train_samples_per_second,train_steps,learning_rate,window,total_games,total_positions,wall_seconds\n",
    );
    for (generation, wall_seconds) in
        [(1, 1800.0), (2, 3600.0), (3, 5000.0), (4, 7300.0), (5, 9000.0)]
    {
        csv += &format!("{generation},64,6000,1500,95,30,30,4,2.2,0.7,2.2,0.7,1,,,9000,1900,72,0.001,100000,64,6000,{wall_seconds}\n");
    }
    std::fs::write(&path, csv).unwrap();
    let metrics = epaminondas::coach::read_metrics(&path, u32::MAX).unwrap();
    assert_eq!(generation_at(&metrics, 0.25), Ok(0));
    assert_eq!(generation_at(&metrics, 1.0), Ok(2));
    assert_eq!(generation_at(&metrics, 2.0), Ok(3));
    assert_eq!(generation_at(&metrics, 2.1), Ok(4));
    assert_eq!(generation_at(&metrics, 2.5), Ok(5));
    let not_yet = generation_at(&metrics, 2.6).unwrap_err();
    assert_eq!(not_yet.to_string(), "the run has trained 2.50 hours, not yet 2.6");
    assert!(generation_at(&[], 0.1).is_err());
}
