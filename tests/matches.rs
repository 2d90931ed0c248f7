//! Matches inside the training loop (`[matches]`): a match each generation with the newest
//! checkpoint, its records and its row in matches.csv, its positions trained on, a match cut
//! short resumed with the games it saved, and the settings that are refused.

use epaminondas::coach::matches::{read_rows, records_path};
use epaminondas::coach::{checkpoint_path, Run, Silent};
use epaminondas::config::{Config, MatchesConfig};
use epaminondas::game::{GameRecord, RecordResult};
use epaminondas::replay::samples_of_game;
use std::path::Path;

mod common;

const SMOKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml");

/// The smoke config with two games a generation against random, the network at 2 simulations.
fn with_matches(learn: bool) -> Config {
    let mut config = Config::load(Path::new(SMOKE)).unwrap();
    config.matches = Some(MatchesConfig {
        opponent: "random".into(),
        agent: "sims=2".into(),
        games: 2,
        parallel: 2,
        opening_plies: 2,
        learn,
    });
    if learn {
        config.replay.records_share = 0.25;
    }
    config.validate().unwrap();
    config
}

fn records(path: &Path) -> Vec<GameRecord> {
    GameRecord::parse_all(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn each_generation_plays_a_match_with_the_newest_checkpoint_and_trains_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    Run::open(&run_dir, Some(with_matches(true))).unwrap().train(Some(2), &Silent).unwrap();

    for generation in 1..=2u32 {
        let games = records(&records_path(&run_dir, generation));
        assert_eq!(games.len(), 2);
        let agent = format!("gen-{:06}:sims=2", generation - 1);
        // Each opening with both colours, the checkpoint named by its generation.
        assert_eq!((games[0].white.as_str(), games[0].black.as_str()), (agent.as_str(), "random"));
        assert_eq!((games[1].white.as_str(), games[1].black.as_str()), ("random", agent.as_str()));
        assert!(games.iter().all(|g| g.result != RecordResult::Unfinished));
    }
    let rows = read_rows(&run_dir.join("matches.csv"), 2).unwrap();
    assert_eq!(
        rows.iter().map(|r| (r.generation, r.checkpoint)).collect::<Vec<_>>(),
        vec![(1, 0), (2, 1)]
    );
    for row in &rows {
        assert_eq!(
            (row.games, row.wins + row.draws + row.losses, row.opponent.as_str()),
            (2, 2, "random")
        );
        assert!((row.score - (row.wins as f64 + 0.5 * row.draws as f64) / 2.0).abs() < 1e-12);
        assert!(row.elo_low <= row.elo && row.elo <= row.elo_high);
    }
    // The run's picture draws them in its scores panel.
    let picture =
        std::fs::read_to_string(epaminondas::plot::plot_run(&run_dir, None).unwrap()).unwrap();
    assert!(
        picture.contains("score against each opponent")
            && picture.contains("match: random (by checkpoint)")
    );
    // The journal went with the commit.
    assert!(!run_dir.join("selfplay/gen-000002").exists());

    // A later invocation holds both matches' positions beside the window.
    let messages = common::Messages::default();
    Run::open(&run_dir, None).unwrap().train(Some(3), &messages).unwrap();
    let said = messages.0.borrow().join("\n");
    assert!(said.contains("of the run's 2 matches beside the window"), "{said}");
    assert_eq!(read_rows(&run_dir.join("matches.csv"), 3).unwrap().len(), 3);
}

#[test]
fn a_match_is_trained_on_only_when_learned_from() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    Run::open(&plain, Some(Config::load(Path::new(SMOKE)).unwrap()))
        .unwrap()
        .train(Some(1), &Silent)
        .unwrap();
    let measured = dir.path().join("measured");
    let measured_said = common::Messages::default();
    Run::open(&measured, Some(with_matches(false)))
        .unwrap()
        .train(Some(1), &measured_said)
        .unwrap();
    let learned = dir.path().join("learned");
    let learned_said = common::Messages::default();
    Run::open(&learned, Some(with_matches(true))).unwrap().train(Some(1), &learned_said).unwrap();

    // The match changes nothing in self-play's games.
    let games = |run: &Path| std::fs::read(run.join("games/gen-000001.txt")).unwrap();
    assert_eq!(games(&measured), games(&plain));
    assert_eq!(games(&learned), games(&plain));
    // Both matches were played and recorded; only the learned one's positions joined training.
    let positions: usize =
        records(&records_path(&learned, 1)).iter().map(|game| samples_of_game(game).len()).sum();
    assert!(positions > 0 && records_path(&measured, 1).exists());
    let learned_said = learned_said.0.borrow().join("\n");
    assert!(learned_said.contains(&format!("generation 1: the match's {positions} positions join the records held beside the window ({positions} in all)")), "{learned_said}");
    assert!(!measured_said.0.borrow().iter().any(|m| m.contains("join the records")));
}

#[test]
fn a_match_cut_short_resumes_with_the_games_it_saved() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    Run::open(&whole, Some(with_matches(true))).unwrap().train(Some(1), &Silent).unwrap();
    let first = records(&records_path(&whole, 1)).remove(0);

    // The same run stopped after its match's first game: the journal holds that game (marked,
    // to tell it from a game played again).
    let stopped = dir.path().join("stopped");
    let run = Run::open(&stopped, Some(with_matches(true))).unwrap();
    let journal = stopped.join("selfplay/gen-000001");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::write(
        journal.join("match-000001.txt"),
        first.clone().with_tag("Saved", "yes").to_string(),
    )
    .unwrap();
    drop(run);
    Run::open(&stopped, None).unwrap().train(Some(1), &Silent).unwrap();
    let games = records(&records_path(&stopped, 1));
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].tag("Saved"), Some("yes"));
    assert_eq!(games[0].moves, first.moves);
    assert_eq!(games[1].tag("Saved"), None);

    // A saved game of another match stops the run with the journal named, and nothing lost.
    let foreign = dir.path().join("foreign");
    let run = Run::open(&foreign, Some(with_matches(true))).unwrap();
    let journal = foreign.join("selfplay/gen-000001");
    std::fs::create_dir_all(&journal).unwrap();
    let mut other = first.clone();
    other.white = "gen-000000:sims=3".into();
    std::fs::write(journal.join("match-000001.txt"), other.to_string()).unwrap();
    drop(run);
    let error = Run::open(&foreign, None).unwrap().train(Some(1), &Silent).unwrap_err().to_string();
    assert!(
        error.contains("selfplay/gen-000001") && error.contains("round 1 is gen-000000:sims=3"),
        "{error}"
    );
    assert!(journal.join("match-000001.txt").exists());
    assert!(!checkpoint_path(&foreign, 1).exists());
}

#[test]
fn match_settings_that_cannot_work_are_refused() {
    let text = std::fs::read_to_string(SMOKE).unwrap();
    let with = |matches: &str, share: &str| {
        format!(
            "{}\n[matches]\n{matches}\n",
            text.replace("[replay]", &format!("[replay]\n{share}"))
        )
    };
    let good = "opponent = \"alphabeta:time=1\"\nagent = \"time=1:precision=bf16\"\ngames = 20\nparallel = 2";
    let parsed = Config::parse(&with(good, "records_share = 0.25"), "x.toml").unwrap();
    let matches = parsed.matches.clone().unwrap();
    assert_eq!(
        (matches.games, matches.parallel, matches.opening_plies, matches.learn),
        (20, 2, 4, true)
    );
    // A run saves it and reads it back the same.
    assert_eq!(Config::parse(&parsed.to_toml(), "saved").unwrap(), parsed);
    assert!(Config::parse(&with(&format!("{good}\nlearn = false"), ""), "x.toml").is_ok());
    for (matches, share, named) in [
        (good, "", "records_share is 0"),
        (
            "opponent = \"alphabeta:time=1\"\nagent = \"precision=bf16\"\ngames = 20\nparallel = 2",
            "records_share = 0.25",
            "no limit",
        ),
        (
            "opponent = \"alphabeta:time=1\"\nagent = \"time=1\"\ngames = 5\nparallel = 2",
            "records_share = 0.25",
            "matches.games",
        ),
        (
            "opponent = \"alphabeta:time=1\"\nagent = \"time=1\"\ngames = 20\nparallel = 0",
            "records_share = 0.25",
            "matches.parallel",
        ),
        (
            "opponent = \"chess\"\nagent = \"time=1\"\ngames = 20\nparallel = 2",
            "records_share = 0.25",
            "matches.opponent",
        ),
        (
            "opponent = \"random\"\nagent = \"speed=9\"\ngames = 20\nparallel = 2",
            "records_share = 0.25",
            "matches.agent",
        ),
    ] {
        let error = Config::parse(&with(matches, share), "x.toml").unwrap_err().to_string();
        assert!(error.contains(named), "{matches} / {share}: {error}");
    }
    // Without [matches], the records share still needs files.
    let error =
        Config::parse(&text.replace("[replay]", "[replay]\nrecords_share = 0.25"), "x.toml")
            .unwrap_err()
            .to_string();
    assert!(error.contains("names no files"), "{error}");
    // A config without them saves as before.
    assert!(!Config::load(Path::new(SMOKE)).unwrap().to_toml().contains("matches"));
}
