//! `distill`: creates or resumes a distillation directory and teaches the student, with a
//! progress bar on a terminal (plain lines elsewhere) and one line per checkpoint.

use super::LoggedBar;
use crate::distill::{DistillConfig, DistillObserver, DistillRow, Distillation};
use crate::nn::DeviceChoice;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DistillArgs {
    /// The trained network to learn from. Needed to start; a resumed distillation keeps its own.
    #[arg(long)]
    pub teacher: Option<PathBuf>,
    /// Distillation config (TOML): the student's network, training and the teacher's games.
    /// Needed to start; a resumed distillation uses its stored config.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Distillation directory: created if new, resumed if it holds a distillation.
    #[arg(long)]
    pub run: PathBuf,
    /// Starts a new distillation whose student begins with this network's weights instead of
    /// random ones (a student of the config's size, distilled before); needs --teacher and
    /// --config.
    #[arg(long, value_name = "STUDENT")]
    pub init_from: Option<PathBuf>,
    /// Optimiser steps the distillation should have taken when this invocation stops (default:
    /// the config's run.steps).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Overrides the config's device for this invocation.
    #[arg(long, value_enum)]
    pub device: Option<DeviceChoice>,
}

struct Progress {
    bar: LoggedBar,
}

impl DistillObserver for Progress {
    fn step(&self, steps: u64) {
        self.bar.set_position(steps as usize);
    }

    fn checkpoint(&self, r: &DistillRow) {
        if r.step == 0 {
            self.bar.println(format!(
                "step       0: the student as it starts: held out {:.3} / {:.3} (the teacher's entropies {:.3} / {:.3}), top move agreed {:.1}%",
                r.held_out_policy_loss, r.held_out_value_loss, r.teacher_entropy, r.teacher_value_entropy, 100.0 * r.top_move_agreement
            ));
            return;
        }
        self.bar.println(format!(
            "step {:>7}: {} positions from {} games; policy / value loss {:.3} / {:.3}; held out {:.3} / {:.3} (the teacher's entropies {:.3} / {:.3}), top move agreed {:.1}%; {:.0} s",
            r.step, r.positions, r.games, r.policy_loss, r.value_loss, r.held_out_policy_loss, r.held_out_value_loss, r.teacher_entropy, r.teacher_value_entropy, 100.0 * r.top_move_agreement, r.seconds
        ));
    }
}

pub fn distill(args: DistillArgs) -> anyhow::Result<()> {
    let config = args.config.as_deref().map(DistillConfig::load).transpose()?;
    let mut distillation = match (&args.init_from, &config, &args.teacher) {
        (None, _, _) => {
            Distillation::open(&args.run, config.as_ref(), args.teacher.as_deref(), args.device)?
        }
        (Some(init), Some(config), Some(teacher)) => {
            Distillation::start_from(&args.run, config, teacher, init, args.device)?
        }
        (Some(_), _, _) => anyhow::bail!(
            "--init-from starts a new distillation, which needs --teacher and --config"
        ),
    };
    let goal = args.steps.unwrap_or(distillation.config().run.steps);
    let state = distillation.state();
    let student = distillation.config().student_config()?;
    let threats = if student.threats { ", with threat planes" } else { "" };
    let from = state
        .initialised_from
        .as_ref()
        .map_or(String::new(), |init| format!(", starting from {}", init.display()));
    eprintln!(
        "distilling {} into a student of {} blocks x {} channels{threats}{from}: step {} of {goal}",
        state.teacher.display(),
        student.blocks,
        student.channels,
        state.steps
    );
    let bar = LoggedBar::new(
        goal as usize,
        "{msg:>10} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta}",
    );
    bar.set_message("distilling".into());
    bar.set_position(state.steps as usize);
    let progress = Progress { bar };
    distillation.run(Some(goal), &progress)?;
    progress.bar.finish_and_clear();
    println!("{}", distillation.student_path().display());
    Ok(())
}
