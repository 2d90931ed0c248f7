//! TorchScript export, so Python or C++ users can run a network without our code.
//!
//! The traced module takes one float32 tensor `[batch, 7, height, width]` (the planes of
//! [`crate::encode`], from the side to move's view, Black's boards flipped vertically) and
//! returns one tensor `[batch, 64 * height * width + 3]` (TorchScript methods return a single
//! value): first the policy logits, plane `dir * 8 + distance - 1` over the tail square (see
//! `encode::move_index`), then the win/draw/loss probabilities for the side to move. A network
//! for the stones variant takes 8 planes (the last: stones) and has 65 policy planes (the last:
//! placing a stone on the square).

use super::{NetError, Network};
use std::path::Path;
use tch::{Kind, Tensor};

pub fn export_torchscript(
    network: &mut Network,
    path: &Path,
    width: u8,
    height: u8,
) -> Result<(), NetError> {
    network.vs.freeze();
    let planes = network.config.input_planes() as i64;
    let example =
        Tensor::zeros([1, planes, height as i64, width as i64], (Kind::Float, network.device()));
    let model = &network.model;
    let mut forward = |inputs: &[Tensor]| {
        let (policy, wdl) = model.forward_t(&inputs[0], false);
        vec![Tensor::cat(&[policy, wdl.softmax(-1, Kind::Float)], 1)]
    };
    let module = tch::no_grad(|| {
        tch::CModule::create_by_tracing("EpaminondasNet", "forward", &[example], &mut forward)
    })?;
    // libtorch writes in place; write beside the target and rename, as for every other file.
    let temp = path.with_extension(format!("pt.tmp-{}", std::process::id()));
    let saved = module.save(&temp);
    // The module holds the very weight tensors as constants, and TorchScript refuses to load
    // constants that require gradients: unfreeze only after saving.
    network.vs.unfreeze();
    let renamed = saved.map_err(NetError::from).and_then(|()| {
        std::fs::rename(&temp, path)
            .map_err(|source| NetError::Io { path: path.to_path_buf(), source })
    });
    if renamed.is_err() {
        // Whatever libtorch wrote half of is no use to anyone.
        let _ = std::fs::remove_file(&temp);
    }
    renamed
}
