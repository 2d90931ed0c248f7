//! The board curriculum: self-play on smaller boards first, one network for every size.

use epaminondas::coach::{checkpoint_path, Run, Silent};
use epaminondas::config::{BoardStage, Config};
use epaminondas::game::{GameRecord, Rules};
use epaminondas::mcts::{GumbelRoot, RootNoise};
use epaminondas::nn::Network;
use epaminondas::replay::read_chunk;
use std::path::Path;

fn smoke() -> Config {
    Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))).unwrap()
}

const STAGES: &str = "[[curriculum]]\nuntil = 1\nwidth = 8\nheight = 8\nply_cap = 30\n\n\
                      [[curriculum]]\nuntil = 3\nwidth = 10\nheight = 8\nply_cap = 36\n";

/// A stage of the board only, with the large board's settings.
fn stage(until: u32, width: u8, height: u8, ply_cap: u16) -> BoardStage {
    BoardStage { until, width, height, ply_cap, draw_value: None, stall_plies: None }
}

#[test]
fn each_generation_plays_on_its_stages_board() {
    let config = Config::parse(STAGES, "stages.toml").unwrap();
    assert_eq!(config.curriculum[1], stage(3, 10, 8, 36));
    let board = |generation: u32| {
        let rules = config.rules_for(generation);
        (rules.width, rules.height, rules.ply_cap)
    };
    assert_eq!(board(1), (8, 8, Some(30)));
    assert_eq!(board(2), (10, 8, Some(36)));
    assert_eq!(board(3), (10, 8, Some(36)));
    assert_eq!(board(4), (14, 12, Some(300)), "then [rules]' board");
    // The other rules are [rules]'.
    let config = Config::parse(&format!("[rules]\nsymmetry = \"both\"\n{STAGES}"), "x").unwrap();
    assert_eq!(config.rules_for(1).symmetry, epaminondas::game::SymmetryRule::Both);
    // What a run stores reads back the same.
    assert_eq!(Config::parse(&config.to_toml(), "saved").unwrap(), config);
    // By default generations 1-32 play on 8x8; `curriculum = []` turns it off.
    assert_eq!(
        Config::default().curriculum,
        [BoardStage {
            until: 32,
            width: 8,
            height: 8,
            ply_cap: 150,
            draw_value: Some(0.0),
            stall_plies: Some(0)
        }]
    );
    assert!(smoke().curriculum.is_empty());
    assert_eq!(Config::parse(&smoke().to_toml(), "saved").unwrap(), smoke());
}

/// A stage may set its own draw value and quiet-game stop; left out, the large board's hold.
/// The default recipe plays 8x8 without draw contempt or the quiet-game stop, and 14x12 with
/// both.
#[test]
fn a_stage_may_have_its_own_draw_value_and_quiet_game_stop() {
    let config = Config::default();
    let settings = |g: u32| (config.search_for(g).draw_value, config.selfplay_for(g).stall_plies);
    assert_eq!(settings(1), (0.0, 0));
    assert_eq!(settings(32), (0.0, 0));
    assert_eq!(settings(33), (-0.7, 60));
    assert_eq!(config.search_for(33), config.search);
    let config = Config::parse(&format!("{STAGES}draw_value = -0.2\n"), "x").unwrap();
    assert_eq!(config.search_for(1).draw_value, -0.7, "the first stage keeps [search]'s");
    assert_eq!(config.search_for(2).draw_value, -0.2);
    assert_eq!(config.selfplay_for(2).stall_plies, 60);
    assert_eq!(Config::parse(&config.to_toml(), "saved").unwrap(), config);
    let error = Config::parse(&format!("{STAGES}draw_value = 2.0\n"), "x").unwrap_err();
    assert!(error.to_string().contains("draw_value"), "{error}");
    let error = Config::parse(&format!("{STAGES}forced_playouts = 2.0\n"), "x").unwrap_err();
    assert!(error.to_string().contains("forced_playouts"), "an unknown key: {error}");
}

#[test]
fn bad_stages_are_refused_by_name() {
    let stage = |until: u32, size: &str, cap: u16| {
        let (w, h) = size.split_once('x').unwrap();
        format!("[[curriculum]]\nuntil = {until}\nwidth = {w}\nheight = {h}\nply_cap = {cap}\n")
    };
    for (text, named) in [
        (stage(0, "8x8", 30), "must increase from 1"),
        (stage(5, "8x8", 30) + &stage(5, "10x8", 30), "must increase from 1, not 5 after 5"),
        (stage(5, "8x8", 30) + &stage(2, "10x8", 30), "must increase from 1, not 2 after 5"),
        (stage(5, "30x8", 30), "30x8"),
        (stage(5, "8x8", 0), "ply cap"),
        (stage(5, "8x8", 30).replace("ply_cap", "plycap"), "plycap"),
    ] {
        let error = Config::parse(&text, "stages.toml").unwrap_err().to_string();
        assert!(error.contains(named), "{text}: {error}");
    }
}

/// A run with a curriculum plays its first generation on 8x8 and its second on 14x12, keeps
/// each generation's samples under the board and cap they were played on, trains one network
/// on the mixed window, and rates it on [rules]' board once the stages are over.
#[test]
fn a_run_trains_one_network_on_every_board_of_its_curriculum() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let mut config = smoke();
    config.curriculum = vec![stage(1, 8, 8, 30)];
    (config.replay.min_window, config.replay.max_window) = (10_000, 20_000);
    let mut run = Run::open(&run_dir, Some(config.clone())).unwrap();
    run.train(Some(2), &Silent).unwrap();

    for (generation, (width, height, cap)) in [(1, (8, 8, Some(30))), (2, (14, 12, Some(40)))] {
        let samples = read_chunk(&run_dir.join("replay"), generation, &config.rules).unwrap();
        assert!(!samples.is_empty());
        for sample in &samples {
            let rules = sample.position.rules();
            assert_eq!((rules.width, rules.height, rules.ply_cap), (width, height, cap));
        }
        let text = std::fs::read_to_string(run_dir.join(format!("games/gen-{generation:06}.txt")))
            .unwrap();
        let records = GameRecord::parse_all(&text).unwrap();
        assert_eq!(records.len(), config.selfplay.games_per_generation);
        for record in &records {
            assert_eq!((record.rules().width, record.rules().height), (width, height));
        }
    }
    // The window after generation 2 holds both boards, and the second generation trained on
    // it: its network differs from the first's.
    drop(run);
    let window = Run::open(&run_dir, None).unwrap().replay_window().unwrap();
    let mut boards: Vec<(u8, u8)> = window
        .into_samples()
        .iter()
        .map(|s| (s.position.rules().width, s.position.rules().height))
        .collect();
    boards.dedup();
    assert_eq!(boards, [(8, 8), (14, 12)]);
    let (first, _) = Network::load(&checkpoint_path(&run_dir, 1), tch::Device::Cpu).unwrap();
    let (second, _) = Network::load(&checkpoint_path(&run_dir, 2), tch::Device::Cpu).unwrap();
    let changed = first
        .vs
        .variables()
        .iter()
        .any(|(name, tensor)| !tensor.equal(&second.vs.variables()[name]));
    assert!(changed, "the second generation trained");
    // Rating games start after the last stage, on [rules]' board.
    assert!(!run_dir.join("ratings/gen-000001.txt").exists(), "no rating during a stage");
    let ratings = std::fs::read_to_string(run_dir.join("ratings/gen-000002.txt")).unwrap();
    let rated = GameRecord::parse_all(&ratings).unwrap();
    assert!(!rated.is_empty());
    assert!(rated.iter().all(|r| *r.rules() == Rules { ply_cap: Some(40), ..Rules::default() }));
}

/// A run made before the curriculum existed stored a config without one: it resumes without
/// one, not with the default's 8x8 stage.
#[test]
fn runs_stored_without_a_curriculum_resume_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    Run::open(&run_dir, Some(smoke())).unwrap().train(Some(1), &Silent).unwrap();
    let stored = run_dir.join("config.toml");
    let text = std::fs::read_to_string(&stored).unwrap();
    assert!(text.contains("curriculum = []"), "{text}");
    std::fs::write(&stored, text.replace("curriculum = []\n", "")).unwrap();
    let resumed = Run::open(&run_dir, None).unwrap();
    assert!(resumed.config.curriculum.is_empty());
    assert!(
        Config::parse(&text.replace("curriculum = []\n", ""), "x").unwrap().curriculum.len() == 1
    );
}

/// A run stored by an older version, with keys of options removed since, resumes when those keys
/// say the option was off, and is refused by name when the run used it.
#[test]
fn stored_configs_with_removed_options_resume_only_if_they_were_off() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    Run::open(&run_dir, Some(smoke())).unwrap().train(Some(1), &Silent).unwrap();
    let stored = run_dir.join("config.toml");
    let text = std::fs::read_to_string(&stored).unwrap();
    let old = |minimax: &str| {
        text.replace("[search]\n", &format!("[search]\nminimax_weight = {minimax}\n"))
            .replace("[training]\n", "[training]\nlead_loss_weight = 0.0\n")
            .replace("[selfplay]\n", "[selfplay]\nroot_search = { kind = \"puct\" }\n")
            .replace("curriculum = []\n", "")
    };
    std::fs::write(&stored, old("0.0")).unwrap();
    let mut resumed = Run::open(&run_dir, None).unwrap();
    assert_eq!(resumed.config, smoke());
    resumed.train(Some(2), &Silent).unwrap();
    assert_eq!(std::fs::read_to_string(&stored).unwrap(), text, "stored anew in today's form");
    drop(resumed);
    // Made before stall_plies had a default: its games were never stopped early.
    let without_stall = old("0.0").replace("stall_plies = 60\n", "");
    assert_ne!(without_stall, old("0.0"));
    std::fs::write(&stored, without_stall).unwrap();
    assert_eq!(Run::open(&run_dir, None).unwrap().config.selfplay.stall_plies, 0);
    // Made before the capture share: its searches had none, where a new config's get a quarter.
    let without_share = old("0.0").replace("capture_prior = 0.25\n", "");
    assert_ne!(without_share, old("0.0"));
    std::fs::write(&stored, &without_share).unwrap();
    assert_eq!(Run::open(&run_dir, None).unwrap().config.search.capture_prior, 0.0);
    let new = Config::parse(&text.replace("capture_prior = 0.25\n", ""), "new").unwrap();
    assert_eq!(new.search.capture_prior, 0.25);
    std::fs::write(&stored, old("0.3")).unwrap();
    let error = Run::open(&run_dir, None).err().expect("a removed option in use").to_string();
    assert!(error.contains("search.minimax_weight = 0.3") && error.contains("removed"), "{error}");
    assert_eq!(std::fs::read_to_string(&stored).unwrap(), old("0.3"), "nothing is rewritten");
    let gumbel = old("0.0").replace("kind = \"puct\"", "kind = \"gumbel\", considered = 16");
    std::fs::write(&stored, &gumbel).unwrap();
    let error = Run::open(&run_dir, None).err().expect("a removed option in use").to_string();
    assert!(error.contains("selfplay.root_search") && error.contains("removed"), "{error}");
}

/// A run stored before the Gumbel root was the recipe: one that tried it beside Dirichlet noise
/// (`[search] gumbel`) resumes with that root, its forced playouts (which acted on
/// Dirichlet-noised roots only) dropped; one with Dirichlet noise is refused by name, with the
/// edit that lets it go on.
#[test]
fn stored_configs_from_before_the_gumbel_root_resume_with_it_or_name_the_edit() {
    let text = Config::default().to_toml();
    let gumbel =
        "[search.root_noise]\nkind = \"gumbel\"\nconsidered = 16\nc_visit = 50.0\nc_scale = 0.1\n";
    assert!(text.contains(gumbel), "{text}");
    let dirichlet =
        "[search.root_noise]\nkind = \"dirichlet\"\nalpha_total = 10.0\nweight = 0.25\n";
    let before = text
        .replace(gumbel, dirichlet)
        .replace("[search]\n", "[search]\nforced_playouts = 0.0\n")
        .replace("stall_plies = 0\n", "forced_playouts = 2.0\nstall_plies = 0\n");
    assert_eq!(before.matches("forced_playouts").count(), 2, "{before}");
    let trial =
        before.replace(dirichlet, &format!("{dirichlet}\n[search.gumbel]\nconsidered = 8\n"));
    let mut resumed = Config::parse_stored(&trial, "trial").unwrap();
    let considered = RootNoise::Gumbel(GumbelRoot { considered: 8, ..GumbelRoot::default() });
    assert_eq!(resumed.search.root_noise, considered);
    resumed.search.root_noise = RootNoise::self_play();
    assert_eq!(resumed, Config::default(), "all else as stored");
    let error = Config::parse_stored(&before, "old/config.toml").unwrap_err().to_string();
    for named in ["old/config.toml", "root_noise = dirichlet", "removed", "kind = \"gumbel\""] {
        assert!(error.contains(named), "{named}: {error}");
    }
}

/// The curriculum of a run may change on resume only for generations still to come: the
/// finished ones and the one in progress were played under the stored rules.
#[test]
fn a_resumed_run_keeps_the_boards_of_its_past_generations() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let mut config = smoke();
    config.curriculum = vec![stage(3, 8, 8, 30)];
    Run::open(&run_dir, Some(config.clone())).unwrap().train(Some(1), &Silent).unwrap();
    // Generation 2, in progress next, would move to 14x12: refused.
    let mut shorter = config.clone();
    shorter.curriculum[0].until = 1;
    let error = Run::open(&run_dir, Some(shorter)).err().expect("other past boards").to_string();
    assert!(error.contains("generation 2") && error.contains("curriculum"), "{error}");
    assert!(error.contains("(14x12") && error.contains("(8x8"), "both rules named: {error}");
    // Without the stage generation 1 would have been on 14x12: refused too.
    let mut none = config.clone();
    none.curriculum.clear();
    let error = Run::open(&run_dir, Some(none)).err().expect("another finished board").to_string();
    assert!(error.contains("generation 1 "), "the finished generation named: {error}");
    // A longer stage changes only generations to come.
    let mut longer = config.clone();
    longer.curriculum[0].until = 8;
    assert_eq!(Run::open(&run_dir, Some(longer)).unwrap().config.curriculum[0].until, 8);
}
