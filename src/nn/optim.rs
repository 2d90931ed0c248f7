//! The optimiser, written out rather than taken from tch so that its state (moments and step
//! count) can be saved with each checkpoint: a resumed run continues with the same moments
//! instead of a cold AdamW whose first steps are far larger than the ones it replaced.

use super::tensor_file::{self, TensorFile};
use super::{NetError, Network};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use tch::{Kind, Tensor};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// SGD with Nesterov momentum and L2 weight decay.
    Sgd,
    /// Adam with decoupled weight decay.
    AdamW,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptimizerSettings {
    pub kind: OptimizerKind,
    /// SGD momentum (AdamW uses the usual betas below).
    pub momentum: f64,
    pub weight_decay: f64,
}

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPSILON: f64 = 1e-8;
const FORMAT: &str = "epaminondas-optimizer-v1";

/// Per-parameter state: SGD keeps a momentum buffer, AdamW both moments.
struct Slot {
    name: String,
    parameter: Tensor,
    first: Tensor,
    second: Option<Tensor>,
    /// Weight decay applies to convolution and linear weights only: decaying batch-norm scales
    /// and biases only fights the normalisation.
    decays: bool,
}

pub struct Optimizer {
    settings: OptimizerSettings,
    /// Steps taken so far (AdamW's bias correction depends on it).
    steps: u64,
    slots: Vec<Slot>,
}

impl Optimizer {
    /// A fresh optimiser over the trainable variables of `network`.
    pub fn new(network: &Network, settings: OptimizerSettings) -> Optimizer {
        let mut variables: Vec<(String, Tensor)> =
            network.vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        variables.sort_by(|a, b| a.0.cmp(&b.0));
        let slots = variables
            .into_iter()
            .map(|(name, parameter)| Slot {
                first: parameter.zeros_like(),
                second: (settings.kind == OptimizerKind::AdamW).then(|| parameter.zeros_like()),
                decays: parameter.dim() > 1,
                name,
                parameter,
            })
            .collect();
        Optimizer { settings, steps: 0, slots }
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }

    pub fn zero_grad(&mut self) {
        for slot in &mut self.slots {
            slot.parameter.zero_grad();
        }
    }

    /// Clips the gradients to a total norm of `max_norm`, then takes one step at `learning_rate`.
    /// Returns the gradient norm before clipping.
    pub fn step(&mut self, learning_rate: f64, max_norm: f64) -> f64 {
        self.steps += 1;
        let settings = self.settings;
        // Past i32::MAX steps the bias corrections are 1 to every digit anyway.
        let steps = i32::try_from(self.steps).unwrap_or(i32::MAX);
        tch::no_grad(|| {
            let grads: Vec<Tensor> = self.slots.iter().map(|s| s.parameter.grad()).collect();
            let norm = grads
                .iter()
                .filter(|g| g.defined())
                .map(|g| g.square().sum(Kind::Float).double_value(&[]))
                .sum::<f64>()
                .sqrt();
            let scale = if norm.is_finite() && norm > max_norm { max_norm / norm } else { 1.0 };
            for (slot, grad) in self.slots.iter_mut().zip(grads) {
                if !grad.defined() {
                    continue;
                }
                let grad = grad * scale;
                let decay = if slot.decays { settings.weight_decay } else { 0.0 };
                match settings.kind {
                    OptimizerKind::AdamW => {
                        let second = slot.second.as_mut().expect("AdamW keeps second moments");
                        slot.first.copy_(&(&slot.first * BETA1 + &grad * (1.0 - BETA1)));
                        second.copy_(&(&*second * BETA2 + grad.square() * (1.0 - BETA2)));
                        let first_hat = &slot.first / (1.0 - BETA1.powi(steps));
                        let second_hat = &*second / (1.0 - BETA2.powi(steps));
                        let update =
                            first_hat / (second_hat.sqrt() + EPSILON) + &slot.parameter * decay;
                        slot.parameter.copy_(&(&slot.parameter - update * learning_rate));
                    }
                    OptimizerKind::Sgd => {
                        let grad = grad + &slot.parameter * decay;
                        slot.first.copy_(&(&slot.first * settings.momentum + &grad));
                        let update = grad + &slot.first * settings.momentum;
                        slot.parameter.copy_(&(&slot.parameter - update * learning_rate));
                    }
                }
            }
            norm
        })
    }

    /// Writes the optimiser's state atomically.
    pub fn save(&self, path: &Path) -> Result<(), NetError> {
        let mut tensors = Vec::new();
        for slot in &self.slots {
            tensors.push((format!("{}#first", slot.name), slot.first.shallow_clone()));
            if let Some(second) = &slot.second {
                tensors.push((format!("{}#second", slot.name), second.shallow_clone()));
            }
        }
        let mut metadata = BTreeMap::new();
        metadata.insert("format".into(), FORMAT.into());
        metadata.insert(
            "kind".into(),
            serde_json::to_string(&self.settings.kind).expect("kind serialises"),
        );
        metadata.insert("steps".into(), self.steps.to_string());
        tensor_file::write(path, &tensors, metadata)
    }

    /// An optimiser over `network` with the state saved in `path`. The file must be for the same
    /// optimiser kind and hold a moment of the right shape for every parameter.
    pub fn load(
        path: &Path,
        network: &Network,
        settings: OptimizerSettings,
    ) -> Result<Optimizer, NetError> {
        let file = TensorFile::read(path, FORMAT)?;
        let kind: OptimizerKind = serde_json::from_str(file.meta("kind")?)
            .map_err(|e| file.format_error(format!("bad kind: {e}")))?;
        if kind != settings.kind {
            return Err(file.format_error(format!(
                "it holds {kind:?} state, the config asks for {:?}",
                settings.kind
            )));
        }
        // Adam's bias correction takes the count as an i32 exponent; more steps than that fit
        // were never taken.
        let text = file.meta("steps")?;
        let steps: u64 = text
            .parse()
            .ok()
            .filter(|&steps| steps < i32::MAX as u64)
            .ok_or_else(|| file.format_error(format!("bad steps {text:?}")))?;
        let mut optimizer = Optimizer::new(network, settings);
        optimizer.steps = steps;
        for slot in &mut optimizer.slots {
            let device = slot.parameter.device();
            slot.first =
                file.tensor(&format!("{}#first", slot.name), &slot.parameter.size(), device)?;
            if let Some(second) = &mut slot.second {
                *second =
                    file.tensor(&format!("{}#second", slot.name), &slot.parameter.size(), device)?;
            }
        }
        Ok(optimizer)
    }
}
