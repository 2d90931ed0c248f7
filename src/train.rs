//! Training steps: batches drawn from the replay window (and the game records a run holds beside
//! it, `replay.records`), policy cross-entropy plus win/draw/loss
//! cross-entropy (against the result, or a blend with the search's chances), the optimiser with
//! weight decay and gradient clipping.

use crate::config::TrainingConfig;
use crate::encode;
use crate::evaluator::Wdl;
use crate::nn::optim::Optimizer;
use crate::nn::{encode_batch, Network};
use crate::replay::{ReplayBuffer, Sample};
use rand::Rng;
use std::time::Instant;
use tch::{Kind, Tensor};

/// Averages over one generation's training.
#[derive(Clone, Copy, Debug, Default)]
pub struct TrainStats {
    pub steps: usize,
    pub samples: usize,
    pub policy_loss: f64,
    pub value_loss: f64,
    /// Entropy of the network's policy on the training positions (nats).
    pub policy_entropy: f64,
    /// How often the most likely of win/draw/loss was the actual result.
    pub value_accuracy: f64,
    /// Gradient norm before clipping.
    pub grad_norm: f64,
    pub seconds: f64,
}

impl TrainStats {
    /// Whether the losses or the gradients stopped being finite numbers: the network's weights
    /// are then lost, and saving them would make every later generation NaN too.
    pub fn diverged(&self) -> bool {
        ![self.policy_loss, self.value_loss, self.grad_norm].iter().all(|v| v.is_finite())
    }
}

/// A batch as tensors: inputs, dense policy targets, value targets (chances of a win, a draw
/// and a loss), and the games' results as classes (0 win, 1 draw, 2 loss).
pub struct Batch {
    pub inputs: Tensor,
    pub policy: Tensor,
    pub value: Tensor,
    pub value_class: Tensor,
}

/// A sample's value target: its game's result, with `search_value_share` of it replaced by the
/// search's chances where the sample has them.
pub fn value_target(sample: &Sample, search_value_share: f64) -> [f32; 3] {
    let mut target = [0.0; 3];
    target[(1 - sample.outcome as i64).clamp(0, 2) as usize] = 1.0;
    if let Some(Wdl { win, draw, loss }) = sample.searched {
        let share = search_value_share as f32;
        for (t, searched) in target.iter_mut().zip([win, draw, loss]) {
            *t = (1.0 - share) * *t + share * searched;
        }
    }
    target
}

/// Builds a batch from samples for a network reading `inputs`, mirroring each left-right when
/// `mirror` says so.
pub fn make_batch(
    samples: &[&Sample],
    mirror: &[bool],
    inputs: encode::Inputs,
    search_value_share: f64,
    device: tch::Device,
) -> Batch {
    let first = &samples[0].position;
    let (width, height) = (first.rules().width, first.rules().height);
    let positions: Vec<_> = samples
        .iter()
        .zip(mirror)
        .map(|(s, &m)| if m { s.position.mirrored() } else { s.position })
        .collect();
    let refs: Vec<_> = positions.iter().collect();
    let planes = encode_batch(&refs, inputs);
    let policy_size = encode::policy_size(first.rules());
    let mut policy = vec![0.0f32; samples.len() * policy_size];
    for (i, (sample, &m)) in samples.iter().zip(mirror).enumerate() {
        for &(index, p) in &sample.policy {
            let index = if m {
                encode::mirror_index(index as usize, width, height)
            } else {
                index as usize
            };
            policy[i * policy_size + index] = p;
        }
    }
    let value: Vec<f32> =
        samples.iter().flat_map(|s| value_target(s, search_value_share)).collect();
    let value_class: Vec<i64> =
        samples.iter().map(|s| (1 - s.outcome as i64).clamp(0, 2)).collect();
    let b = samples.len() as i64;
    Batch {
        inputs: Tensor::from_slice(&planes)
            .view([b, inputs.planes() as i64, height as i64, width as i64])
            .to_device(device),
        policy: Tensor::from_slice(&policy).view([b, policy_size as i64]).to_device(device),
        value: Tensor::from_slice(&value).view([b, 3]).to_device(device),
        value_class: Tensor::from_slice(&value_class).to_device(device),
    }
}

/// The losses of one batch: `total` to step on, the rest as numbers.
pub struct Losses {
    pub total: Tensor,
    /// The two parts of `total`: the policy loss (a mean over the samples with a policy
    /// target), and the weighted value loss (a mean over all).
    pub policy_term: Tensor,
    pub value_term: Tensor,
    /// Cross-entropy against the policy target.
    pub policy: f64,
    /// Cross-entropy against the value target.
    pub value: f64,
    /// Entropy of the network's policy (nats).
    pub entropy: f64,
    /// How often the most likely of win/draw/loss was the game's result.
    pub accuracy: f64,
}

/// The weights of the losses in the total (the policy's is 1).
#[derive(Clone, Copy, Debug)]
pub struct LossWeights {
    pub value: f64,
}

impl LossWeights {
    pub fn of(config: &TrainingConfig) -> LossWeights {
        LossWeights { value: config.value_loss_weight }
    }
}

/// [`Losses`] of `network` on a batch.
pub fn losses(network: &Network, batch: &Batch, weights: LossWeights, train: bool) -> Losses {
    let (policy, wdl) = network.model.forward_t(&batch.inputs, train);
    let log_policy = policy.log_softmax(-1, Kind::Float);
    // A sample without a policy target (a position from a game record, whose move was no
    // search's visit shares) has an all-zero row: it adds nothing to the policy loss, which is
    // the mean over the samples that have one, so a batch's policy loss does not shrink with
    // the records' share of it.
    let with_policy =
        batch.policy.sum_dim_intlist(-1, false, Kind::Float).gt(0.0).to_kind(Kind::Float);
    let policy_loss =
        -(&batch.policy * &log_policy).sum_dim_intlist(-1, false, Kind::Float).sum(Kind::Float)
            / with_policy.sum(Kind::Float).clamp_min(1.0);
    let value_loss = -(&batch.value * wdl.log_softmax(-1, Kind::Float))
        .sum_dim_intlist(-1, false, Kind::Float)
        .mean(Kind::Float);
    let entropy =
        -(log_policy.exp() * &log_policy).sum_dim_intlist(-1, false, Kind::Float).mean(Kind::Float);
    let accuracy =
        wdl.argmax(-1, false).eq_tensor(&batch.value_class).to_kind(Kind::Float).mean(Kind::Float);
    let value_term = weights.value * &value_loss;
    Losses {
        policy: policy_loss.double_value(&[]),
        value: value_loss.double_value(&[]),
        entropy: entropy.double_value(&[]),
        accuracy: accuracy.double_value(&[]),
        total: &policy_loss + &value_term,
        policy_term: policy_loss,
        value_term,
    }
}

/// Mean losses of a network over samples it has not trained on, in evaluation mode
/// (batch-norm running statistics, as in play) and unmirrored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldOutLosses {
    pub policy: f64,
    pub value: f64,
}

/// [`HeldOutLosses`] of `network` over `samples` (none when there are no samples), with the
/// value target of `search_value_share`.
pub fn held_out_losses(
    network: &Network,
    samples: &[Sample],
    search_value_share: f64,
) -> Option<HeldOutLosses> {
    if samples.is_empty() {
        return None;
    }
    let (mut policy, mut value) = (0.0, 0.0);
    // The weights only make the total, which is not used here.
    let weights = LossWeights { value: 1.0 };
    let all: Vec<&Sample> = samples.iter().collect();
    for (group, _) in by_board(&all, &vec![false; all.len()]) {
        for refs in group.chunks(256) {
            let batch = make_batch(
                refs,
                &vec![false; refs.len()],
                network.config.inputs(),
                search_value_share,
                network.device(),
            );
            let chunk_losses = tch::no_grad(|| losses(network, &batch, weights, false));
            policy += chunk_losses.policy * refs.len() as f64;
            value += chunk_losses.value * refs.len() as f64;
        }
    }
    let n = samples.len() as f64;
    Some(HeldOutLosses { policy: policy / n, value: value / n })
}

/// Samples of one board size, with their mirror flags.
type BoardGroup<'a> = (Vec<&'a Sample>, Vec<bool>);

/// `samples` (with their `mirror` flags) split by board size, in the order each size first
/// appears: a batch's tensors need one size.
fn by_board<'a>(samples: &[&'a Sample], mirror: &[bool]) -> Vec<BoardGroup<'a>> {
    let mut groups: Vec<((u8, u8), BoardGroup<'a>)> = Vec::new();
    for (sample, &m) in samples.iter().zip(mirror) {
        let rules = sample.position.rules();
        let board = (rules.width, rules.height);
        match groups.iter_mut().find(|(b, _)| *b == board) {
            Some((_, (group, flags))) => {
                group.push(sample);
                flags.push(m);
            }
            None => groups.push((board, (vec![*sample], vec![m]))),
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

/// One call of [`train`]: `steps` optimiser steps at `learning_rate`, on batches drawn from the
/// newest `window` positions of `buffer`.
pub struct Round<'a> {
    pub buffer: &'a ReplayBuffer,
    pub window: usize,
    pub steps: usize,
    pub learning_rate: f64,
}

/// Trains `network` for one [`Round`], calling `on_step` with the number of steps taken so far.
pub fn train(
    network: &Network,
    optimizer: &mut Optimizer,
    round: Round,
    config: &TrainingConfig,
    rng: &mut impl Rng,
    on_step: &dyn Fn(usize),
) -> TrainStats {
    let started = Instant::now();
    let mut stats = TrainStats::default();
    let Round { buffer, window, steps, learning_rate } = round;
    if buffer.is_empty() {
        return stats;
    }
    for step in 0..steps {
        let samples = buffer.draw_batch(window, config.batch_size, rng);
        let mirror: Vec<bool> =
            samples.iter().map(|_| config.mirror_augmentation && rng.random_bool(0.5)).collect();
        // A window may hold several board sizes (a curriculum's): one forward pass a size, each
        // part of the loss the mean over the samples it counts, as one batch's would be (the
        // policy's over the samples with a policy target, the value's over all).
        let with_policy = samples.iter().filter(|s| !s.policy.is_empty()).count().max(1) as f64;
        let mut total: Option<Tensor> = None;
        for (group, group_mirror) in by_board(&samples, &mirror) {
            let batch = make_batch(
                &group,
                &group_mirror,
                network.config.inputs(),
                config.search_value_share,
                network.device(),
            );
            let group_losses = losses(network, &batch, LossWeights::of(config), true);
            let share = group.len() as f64 / samples.len() as f64;
            let policy_share =
                group.iter().filter(|s| !s.policy.is_empty()).count() as f64 / with_policy;
            stats.policy_loss += policy_share * group_losses.policy;
            stats.value_loss += share * group_losses.value;
            stats.policy_entropy += share * group_losses.entropy;
            stats.value_accuracy += share * group_losses.accuracy;
            let part = group_losses.policy_term * policy_share + group_losses.value_term * share;
            total = Some(match total {
                Some(sum) => sum + part,
                None => part,
            });
        }
        optimizer.zero_grad();
        total.expect("a batch has samples").backward();
        stats.grad_norm += optimizer.step(learning_rate, config.max_grad_norm);
        stats.steps += 1;
        stats.samples += samples.len();
        on_step(step + 1);
    }
    let n = stats.steps.max(1) as f64;
    stats.policy_loss /= n;
    stats.value_loss /= n;
    stats.policy_entropy /= n;
    stats.value_accuracy /= n;
    stats.grad_norm /= n;
    stats.seconds = started.elapsed().as_secs_f64();
    stats
}
