//! Named float tensors plus string metadata in one safetensors file: the form of network
//! checkpoints and of optimiser state.

use super::NetError;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tch::{Device, Kind, Tensor};

/// Writes `tensors` (as f32) and `metadata` atomically: a crash leaves the old file or the new
/// one, never a part.
pub fn write(
    path: &Path,
    tensors: &[(String, Tensor)],
    metadata: BTreeMap<String, String>,
) -> Result<(), NetError> {
    let mut buffers = Vec::with_capacity(tensors.len());
    for (name, tensor) in tensors {
        let tensor = tensor.to_device(Device::Cpu).to_kind(Kind::Float).contiguous();
        let shape: Vec<usize> = tensor.size().iter().map(|&d| d as usize).collect();
        let values = Vec::<f32>::try_from(&tensor.flatten(0, -1))?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        buffers.push((name.clone(), shape, bytes));
    }
    let views: Vec<(String, safetensors::tensor::TensorView)> = buffers
        .iter()
        .map(|(name, shape, bytes)| {
            let view =
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), bytes)
                    .expect("shape matches data");
            (name.clone(), view)
        })
        .collect();
    let metadata: HashMap<String, String> = metadata.into_iter().collect();
    let bytes = safetensors::tensor::serialize(views, &Some(metadata))
        .map_err(|e| NetError::Format { path: path.to_path_buf(), problem: e.to_string() })?;
    crate::util::write_atomically(path, &bytes)
        .map_err(|source| NetError::Io { path: path.to_path_buf(), source })
}

/// A tensor file read into memory, checked to carry `format` in its metadata.
pub struct TensorFile {
    path: PathBuf,
    bytes: Vec<u8>,
    pub metadata: BTreeMap<String, String>,
}

impl TensorFile {
    pub fn read(path: &Path, format: &str) -> Result<TensorFile, NetError> {
        let bytes = std::fs::read(path)
            .map_err(|source| NetError::Io { path: path.to_path_buf(), source })?;
        let file = TensorFile { path: path.to_path_buf(), bytes, metadata: BTreeMap::new() };
        let (_, header) = safetensors::SafeTensors::read_metadata(&file.bytes)
            .map_err(|e| file.format_error(format!("unreadable header ({e:?})")))?;
        let metadata: BTreeMap<String, String> =
            header.metadata().clone().unwrap_or_default().into_iter().collect();
        if metadata.get("format").map(String::as_str) != Some(format) {
            return Err(file.format_error(format!("its metadata has no format={format}")));
        }
        // The tensor table must parse too, before anyone asks for a tensor.
        safetensors::SafeTensors::deserialize(&file.bytes)
            .map_err(|e| file.format_error(format!("unreadable tensors ({e:?})")))?;
        Ok(TensorFile { metadata, ..file })
    }

    pub fn format_error(&self, problem: String) -> NetError {
        NetError::Format { path: self.path.clone(), problem }
    }

    /// The metadata value `key`, or an error naming it.
    pub fn meta(&self, key: &str) -> Result<&str, NetError> {
        self.metadata
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| self.format_error(format!("no {key} in its metadata")))
    }

    /// The values its tensors hold, all together.
    pub fn value_count(&self) -> u64 {
        let tensors =
            safetensors::SafeTensors::deserialize(&self.bytes).expect("checked when read");
        tensors
            .tensors()
            .iter()
            .map(|(_, view)| view.shape().iter().product::<usize>() as u64)
            .sum()
    }

    /// The tensor `name`, which must be f32 of shape `expected`, on `device`.
    pub fn tensor(&self, name: &str, expected: &[i64], device: Device) -> Result<Tensor, NetError> {
        let tensors =
            safetensors::SafeTensors::deserialize(&self.bytes).expect("checked when read");
        let view = tensors
            .tensor(name)
            .map_err(|_| NetError::Missing { path: self.path.clone(), name: name.to_string() })?;
        let found = view.shape().to_vec();
        if view.dtype() != safetensors::Dtype::F32
            || found.iter().map(|&d| d as i64).ne(expected.iter().copied())
        {
            return Err(NetError::Shape {
                path: self.path.clone(),
                name: name.to_string(),
                expected: expected.to_vec(),
                found,
            });
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        // A NaN or infinite weight poisons every evaluation, and the search cannot rank NaNs.
        if !values.iter().all(|v| v.is_finite()) {
            return Err(NetError::NotFinite { path: self.path.clone(), name: name.to_string() });
        }
        Ok(Tensor::from_slice(&values).view(expected).to_device(device))
    }
}
