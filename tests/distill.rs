//! Distillation end to end on the 8x8 board, the shipped 8x8 agent teaching a tiny student, and
//! its failure modes.

use epaminondas::coach::RunError;
use epaminondas::distill::{DistillConfig, DistillObserver, DistillRow, Distillation};
use epaminondas::game::Rules;
use epaminondas::nn::Network;
use epaminondas::replay::read_samples;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

const CONFIG: &str = r#"
[run]
seed = 7
threads = 2
device = "cpu"
# The student trains in f32; a teacher in f32 too makes the teacher as its own student agree
# exactly, on a CPU where auto would pick bf16 as well.
precision = "f32"
steps = 60
checkpoint_every = 20

[rules]
width = 8
height = 8
symmetry = "mirror"
ply_cap = 150

[network]
size = "tiny"

[training]
batch_size = 32
learning_rate = [[0, 0.003], [40, 0.001]]
weight_decay = 0.0001
max_grad_norm = 10.0
value_loss_weight = 1.0
mirror_augmentation = true

[games]
lockstep = 16
temperature = 1.0
random_opening_plies = 2
window = 3000
reuse = 2.0
held_out = 64
"#;

fn teacher() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/crossings-blend-gen70.safetensors")
}

fn config() -> DistillConfig {
    DistillConfig::parse(CONFIG, "test config").unwrap()
}

/// Collects the checkpoint rows and counts the steps reported.
#[derive(Default)]
struct Recorder {
    rows: RefCell<Vec<DistillRow>>,
    steps: RefCell<Vec<u64>>,
}

impl DistillObserver for Recorder {
    fn step(&self, steps: u64) {
        self.steps.borrow_mut().push(steps);
    }
    fn checkpoint(&self, row: &DistillRow) {
        self.rows.borrow_mut().push(row.clone());
    }
}

#[test]
fn a_student_learns_the_teacher_and_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("distill");
    let recorder = Recorder::default();
    let mut distillation =
        Distillation::open(&run, Some(&config()), Some(&teacher()), None).unwrap();
    distillation.run(None, &recorder).unwrap();

    assert_eq!(*recorder.steps.borrow(), (1..=60).collect::<Vec<u64>>());
    let rows = recorder.rows.borrow().clone();
    assert_eq!(rows.iter().map(|r| r.step).collect::<Vec<_>>(), [0, 20, 40, 60]);
    // Step 0 measures the random student before its first step: no training losses yet.
    assert!(rows[0].policy_loss.is_nan() && rows[0].value_loss.is_nan(), "{:?}", rows[0]);
    assert!(run.join("checkpoints/step-00000000.safetensors").exists());
    for row in &rows {
        // A cross-entropy is never below the target's own entropy (Gibbs' inequality): a
        // student "better than the teacher" would be a bug in the targets or the loss.
        assert!(row.held_out_policy_loss >= row.teacher_entropy - 1e-4, "{row:?}");
        assert!(row.held_out_value_loss >= row.teacher_value_entropy - 1e-4, "{row:?}");
        assert!((0.0..=1.0).contains(&row.top_move_agreement), "{row:?}");
        assert!(row.positions >= 64 && row.games > 0, "{row:?}");
    }
    assert!(
        rows[3].held_out_policy_loss < rows[1].held_out_policy_loss - 0.05,
        "the student learns the priors: {rows:?}"
    );
    assert!(rows[3].held_out_value_loss < rows[1].held_out_value_loss, "and the values: {rows:?}");
    assert!(
        rows[1].held_out_policy_loss < rows[0].held_out_policy_loss,
        "from where it started: {rows:?}"
    );
    assert_eq!(rows[1].learning_rate, 0.003);
    assert_eq!(rows[3].learning_rate, 0.001);

    // The held-out positions are the teacher's labels, kept on disk, never trained on.
    let held_out = read_samples(&run.join("held-out.bin"), &config().rules).unwrap();
    assert_eq!(held_out.len(), 64);
    for sample in &held_out {
        let total: f32 = sample.policy.iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-3, "priors over the legal moves sum to 1");
        assert_eq!(sample.policy.len(), sample.position.legal_moves().len());
        let chances = sample.searched.expect("the teacher's chances");
        assert!((chances.win + chances.draw + chances.loss - 1.0).abs() < 1e-3);
    }
    for step in [20, 40, 60] {
        assert!(run.join(format!("checkpoints/step-{step:08}.safetensors")).exists());
    }
    // The student is an agent like any other: it loads with its rules in its metadata.
    let (student, meta) = Network::load(&distillation.student_path(), tch::Device::Cpu).unwrap();
    assert_eq!(student.config, config().student_config().unwrap());
    let rules: Rules = serde_json::from_str(&meta["rules"]).unwrap();
    assert_eq!((rules.width, rules.height), (8, 8));
    assert_eq!(meta["distill_steps"], "60");

    // Resumed without the config or the teacher: both come from the directory.
    drop(distillation);
    let recorder = Recorder::default();
    let mut resumed = Distillation::open(&run, None, None, None).unwrap();
    assert_eq!(resumed.state().steps, 60);
    assert_eq!(resumed.state().teacher, teacher());
    resumed.run(Some(80), &recorder).unwrap();
    assert_eq!(*recorder.steps.borrow(), (61..=80).collect::<Vec<u64>>());
    assert_eq!(recorder.rows.borrow().len(), 1);
    assert!(
        resumed.state().positions > rows[3].positions && resumed.state().seconds > rows[3].seconds
    );
    let metrics = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    assert_eq!(
        metrics.lines().count(),
        6,
        "a header and the rows of steps 0, 20, 40, 60, 80:\n{metrics}"
    );
    assert_eq!(
        read_samples(&run.join("held-out.bin"), &config().rules).unwrap(),
        held_out,
        "the held-out positions stay the same"
    );
}

/// A student distilled before goes on in a new distillation: it starts with those weights (the
/// same network measured on the same held-out positions gives the same losses at step 0), and
/// only in a new directory, only from a network of the config's size.
#[test]
fn a_distillation_starts_from_a_student_distilled_before() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    let recorder = Recorder::default();
    let mut distillation =
        Distillation::open(&first, Some(&config()), Some(&teacher()), None).unwrap();
    distillation.run(Some(20), &recorder).unwrap();
    let trained = recorder.rows.borrow()[1].clone();
    assert_eq!(trained.step, 20);

    // The same config and seed play the same first games, so the held-out positions are the same.
    let second = dir.path().join("second");
    let recorder = Recorder::default();
    let mut continued = Distillation::start_from(
        &second,
        &config(),
        &teacher(),
        &distillation.student_path(),
        None,
    )
    .unwrap();
    assert_eq!(
        continued.state().initialised_from.as_deref(),
        Some(distillation.student_path().as_path())
    );
    continued.run(Some(1), &recorder).unwrap();
    let started = recorder.rows.borrow()[0].clone();
    assert_eq!(started.step, 0);
    assert!(
        (started.held_out_policy_loss - trained.held_out_policy_loss).abs() < 1e-4,
        "{started:?} {trained:?}"
    );
    assert!(
        (started.held_out_value_loss - trained.held_out_value_loss).abs() < 1e-4,
        "{started:?} {trained:?}"
    );
    assert_eq!(started.top_move_agreement, trained.top_move_agreement);
    let (_, meta) = Network::load(&continued.student_path(), tch::Device::Cpu).unwrap();
    assert_eq!(meta["distill_initialised_from"], distillation.student_path().display().to_string());
    // A resume keeps the record of where the student began.
    let initialised_from = continued.state().initialised_from.clone();
    drop(continued);
    let resumed = Distillation::open(&second, None, None, None).unwrap();
    assert_eq!(resumed.state().initialised_from, initialised_from);

    let error = Distillation::start_from(
        &second,
        &config(),
        &teacher(),
        &distillation.student_path(),
        None,
    )
    .err()
    .expect("a started directory");
    assert!(matches!(error, RunError::AlreadyStarted { .. }), "{error}");
    // The teacher is larger than the tiny student (four blocks against one): refused, naming
    // the tensor the student lacks.
    let error = Distillation::start_from(
        &dir.path().join("third"),
        &config(),
        &teacher(),
        &teacher(),
        None,
    )
    .err()
    .expect("another size");
    assert!(
        error.to_string().contains("that this network lacks")
            && error.to_string().contains("crossings-blend-gen70"),
        "{error}"
    );
    assert!(
        !dir.path().join("third/config.toml").exists(),
        "a refused start leaves nothing behind"
    );
}

/// The teacher as its own student: at step 0 it picks the teacher's move on every held-out
/// position, and its value loss there is the teacher's own entropy (the floor, reached). Its
/// policy loss stays above that floor: the loss spreads the student's priors over every move
/// index, legal or not, while the labels hold only the legal moves.
#[test]
fn the_teacher_as_its_student_agrees_on_every_move() {
    let dir = tempfile::tempdir().unwrap();
    let config = DistillConfig::parse(
        &CONFIG.replace(r#"size = "tiny""#, r#"size = "small""#),
        "test config",
    )
    .unwrap();
    let recorder = Recorder::default();
    Distillation::start_from(dir.path(), &config, &teacher(), &teacher(), None)
        .unwrap()
        .run(Some(1), &recorder)
        .unwrap();
    let started = recorder.rows.borrow()[0].clone();
    assert_eq!(started.step, 0);
    assert_eq!(started.top_move_agreement, 1.0, "{started:?}");
    assert!(
        (started.held_out_value_loss - started.teacher_value_entropy).abs() < 1e-3,
        "{started:?}"
    );
}

#[test]
fn a_distillation_refuses_what_it_was_not_made_with() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("distill");
    Distillation::open(&run, Some(&config()), Some(&teacher()), None)
        .unwrap()
        .run(Some(1), &Recorder::default())
        .unwrap();

    let mut other = config();
    other.run.steps = 99;
    let error = Distillation::open(&run, Some(&other), None, None).err().expect("another config");
    assert!(
        matches!(error, RunError::Incompatible { .. }) && error.to_string().contains("[run]"),
        "{error}"
    );
    // Another network of the teacher's shape, in another file.
    let (shipped, _) = Network::load(&teacher(), tch::Device::Cpu).unwrap();
    let other_teacher = dir.path().join("other-teacher.safetensors");
    Network::new(&shipped.config, tch::Device::Cpu, Some(5))
        .unwrap()
        .save(&other_teacher, &Default::default())
        .unwrap();
    let error =
        Distillation::open(&run, None, Some(&other_teacher), None).err().expect("another teacher");
    assert!(
        matches!(error, RunError::Teacher { .. }) && error.to_string().contains("other-teacher"),
        "{error}"
    );

    let empty = dir.path().join("empty");
    assert!(matches!(
        Distillation::open(&empty, Some(&config()), None, None).err(),
        Some(RunError::NoTeacher { .. })
    ));
    assert!(matches!(
        Distillation::open(&empty, None, Some(&teacher()), None).err(),
        Some(RunError::NoConfig { .. })
    ));

    // A training run's directory is not taken over: its config stays as it was.
    let training_run = dir.path().join("training-run");
    std::fs::create_dir_all(&training_run).unwrap();
    std::fs::write(training_run.join("config.toml"), "a training run's config").unwrap();
    std::fs::write(training_run.join("run.json"), "{}").unwrap();
    let error = Distillation::open(&training_run, Some(&config()), Some(&teacher()), None)
        .err()
        .expect("a training run");
    assert!(
        matches!(&error, RunError::NotADistillation { found, .. } if found == "run.json" || found == "config.toml"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(training_run.join("config.toml")).unwrap(),
        "a training run's config"
    );
    // Nor is a folder holding only the user's own config (no start made its `checkpoints`).
    let own = dir.path().join("own-config");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join("config.toml"), "the user's config").unwrap();
    let error = Distillation::open(&own, Some(&config()), Some(&teacher()), None)
        .err()
        .expect("a user's config");
    assert!(
        matches!(&error, RunError::NotADistillation { found, .. } if found == "config.toml"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(own.join("config.toml")).unwrap(), "the user's config");

    let missing = dir.path().join("no-such-teacher.safetensors");
    let error = Distillation::open(&empty, Some(&config()), Some(&missing), None)
        .err()
        .expect("a missing teacher");
    assert!(error.to_string().contains("no-such-teacher"), "{error}");

    // One process at a time: a second opening waits for the first to let go.
    let holding = Distillation::open(&run, None, None, None).unwrap();
    let error = Distillation::open(&run, None, None, None).err().expect("held by another");
    assert!(matches!(&error, RunError::InUse { dir } if dir == &run), "{error}");
    drop(holding);
    Distillation::open(&run, None, None, None).unwrap();

    std::fs::write(run.join("state.json"), "{ not json").unwrap();
    let error = Distillation::open(&run, None, None, None).err().expect("a corrupt state");
    assert!(
        matches!(&error, RunError::Corrupt { path, .. } if path.ends_with("state.json")),
        "{error}"
    );
}

/// The shipped distillation configs load, validate and come back unchanged from the config.toml
/// a distillation saves (a resume given the same file compares the two).
#[test]
fn shipped_distillation_configs_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("distill") && name.ends_with(".toml") {
            let config = DistillConfig::load(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(DistillConfig::parse(&config.to_toml(), "saved").unwrap(), config, "{name}");
            assert_eq!((config.rules.width, config.rules.height), (14, 12), "{name}");
            names.push(name);
        }
    }
    names.sort();
    assert_eq!(names, ["distill.toml"]);
}

#[test]
fn broken_distillation_configs_are_refused_by_name() {
    for (from, to, named) in [
        ("temperature = 1.0", "temperature = 0.0", "games.temperature"),
        ("window = 3000", "window = 8", "games.window"),
        ("ply_cap = 150", "", "ply_cap"),
        (
            "learning_rate = [[0, 0.003], [40, 0.001]]",
            "learning_rate = [[40, 0.003], [0, 0.001]]",
            "learning_rate",
        ),
        ("lockstep = 16", "lockstep = 0", "games.lockstep"),
        ("lockstep = 16", "lockstep = 1000000000000", "games.lockstep must be at most"),
        ("batch_size = 32", "batch_size = 10000000", "training.batch_size must be at most"),
        ("weight_decay = 0.0001", "weight_decay = inf", "weight_decay"),
        ("steps = 60", "steps = 60\nsurprise = 1", "surprise"),
    ] {
        let text = CONFIG.replacen(from, to, 1);
        let error = DistillConfig::parse(&text, "test config")
            .err()
            .unwrap_or_else(|| panic!("{to} is refused"));
        assert!(error.to_string().contains(named), "{to}: {error}");
    }
}
