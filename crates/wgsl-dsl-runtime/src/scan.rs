//! [`PrefixScan`]: a scan (prefix sum with any associative operation) of a whole buffer, the
//! multi-block pattern of [`wgsl_dsl_core::kernel::scan`]: each workgroup scans its block and writes
//! the block's total, the totals are scanned the same way (recursively, until one block
//! holds them), and each block's offset is combined into its elements.

use bytemuck::Pod;

use super::buffer::{BindArg, GpuBuffer};
use super::gpu::Gpu;
use super::pipeline::Kernel;
use super::recorder::Recorder;
use wgsl_dsl_core::kernel::scan::{ScanKind, ScanOp, ScanScalar, add_block_offsets, scan_blocks};
use wgsl_dsl_exec::ceil_div;
use wgsl_dsl_exec::{DispatchError, DispatchErrorKind};

/// A compiled scan of buffers of `T` in blocks of `BLOCK` elements (the workgroup size).
/// A buffer of `n` elements takes `ceil(log_BLOCK(n))` block-scan dispatches and one fewer
/// offset dispatches, recorded in one submit. The block scans use subgroup operations where
/// the device has them ([`wgsl_dsl_core::KernelBuilder::workgroup_scan_subgroups`]).
///
/// ```
/// use wgsl_dsl::kernel::scan::{ScanKind, ScanOp};
/// use wgsl_dsl::runtime::{Gpu, GpuBuffer, PrefixScan};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let gpu = Gpu::new()?;
/// let scan = PrefixScan::<u32, 64>::new(&gpu, &ScanOp::add(), ScanKind::Exclusive)?;
/// let x = GpuBuffer::from_slice(&gpu, &[3u32, 1, 4, 1, 5])?;
/// let mut y = GpuBuffer::<u32>::zeroed(&gpu, 5)?;
/// scan.run(&gpu, &x, &mut y)?;
/// assert_eq!(y.read(&gpu)?, vec![0, 3, 4, 8, 9]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct PrefixScan<T, const BLOCK: usize> {
    first: Kernel,
    exclusive: Kernel,
    offsets: Kernel,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T: ScanScalar + Pod, const BLOCK: usize> PrefixScan<T, BLOCK> {
    /// Compile the kernels of a `kind` scan with `op` on `gpu`.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Build`] if `BLOCK` exceeds the device's workgroup limits; the errors
    /// of [`Gpu::compile`].
    pub fn new(gpu: &Gpu, op: &ScanOp<T>, kind: ScanKind) -> Result<Self, DispatchError> {
        let subgroups = gpu
            .capabilities()
            .contains(naga::valid::Capabilities::SUBGROUP);
        Self::with_subgroups(gpu, op, kind, subgroups)
    }

    /// As [`PrefixScan::new`], choosing whether the block scans use subgroup operations
    /// (`true` needs the device's subgroup capability).
    ///
    /// # Errors
    /// As [`PrefixScan::new`].
    pub fn with_subgroups(
        gpu: &Gpu,
        op: &ScanOp<T>,
        kind: ScanKind,
        subgroups: bool,
    ) -> Result<Self, DispatchError> {
        let limits = gpu.target_limits();
        let compile = |k: wgsl_dsl_core::KernelBuilder| -> Result<Kernel, DispatchError> {
            gpu.compile(&k.build_for(&limits)?)
        };
        Ok(PrefixScan {
            first: compile(scan_blocks::<T, BLOCK>(op, kind, subgroups))?,
            exclusive: compile(scan_blocks::<T, BLOCK>(op, ScanKind::Exclusive, subgroups))?,
            offsets: compile(add_block_offsets::<T, BLOCK>(op))?,
            _t: std::marker::PhantomData,
        })
    }

    /// Scan `input` into `output` (its first `input.len()` elements), and submit. Temporary
    /// buffers of `ceil(n / BLOCK) + ceil(n / BLOCK^2) + ...` elements (twice) are allocated
    /// for the block totals and offsets.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`] if `output` is shorter than `input`; the errors of
    /// [`Recorder::dispatch`] and of buffer allocation.
    #[track_caller]
    pub fn run(
        &self,
        gpu: &Gpu,
        input: &GpuBuffer<T>,
        output: &mut GpuBuffer<T>,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        self.run_levels(gpu, input, output)
            .map_err(|e| e.called_at(caller))
    }

    /// [`PrefixScan::run`], its errors without the caller.
    fn run_levels(
        &self,
        gpu: &Gpu,
        input: &GpuBuffer<T>,
        output: &mut GpuBuffer<T>,
    ) -> Result<(), DispatchError> {
        let n = input.len();
        if output.len() < n {
            return Err(DispatchError::from(DispatchErrorKind::Length {
                what: "PrefixScan::run output",
                expected: n,
                found: output.len(),
            }));
        }
        if n == 0 {
            return Ok(());
        }
        let mut rec = gpu.recorder();
        // Temporaries live until the submit.
        let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
        self.level(gpu, &mut rec, &mut keep, input, output, n, &self.first)?;
        rec.submit()
    }

    /// One level: block scans of `x` into `y`, then (for more than one block) the scan of the
    /// totals and the offsets.
    #[allow(clippy::too_many_arguments)]
    fn level(
        &self,
        gpu: &Gpu,
        rec: &mut Recorder<'_>,
        keep: &mut Vec<Box<dyn std::any::Any>>,
        x: &GpuBuffer<T>,
        y: &GpuBuffer<T>,
        n: usize,
        kernel: &Kernel,
    ) -> Result<(), DispatchError> {
        let count = u32::try_from(n).map_err(|_| {
            DispatchError::from(DispatchErrorKind::Limit {
                what: "PrefixScan length".into(),
                value: n as u64,
                limit: u64::from(u32::MAX),
            })
        })?;
        let blocks = ceil_div(count, BLOCK as u32);
        let n_buf = GpuBuffer::from_value(gpu, count)?;
        let totals = GpuBuffer::<T>::zeroed(gpu, blocks as usize)?;
        rec.dispatch(
            kernel,
            &[&n_buf as &dyn BindArg, x, y, &totals],
            [blocks, 1, 1],
        )?;
        if blocks > 1 {
            let offsets = GpuBuffer::<T>::zeroed(gpu, blocks as usize)?;
            self.level(
                gpu,
                rec,
                keep,
                &totals,
                &offsets,
                blocks as usize,
                &self.exclusive,
            )?;
            rec.dispatch(
                &self.offsets,
                &[&n_buf as &dyn BindArg, &offsets, y],
                [blocks, 1, 1],
            )?;
            keep.push(Box::new(offsets));
        }
        keep.push(Box::new(totals));
        keep.push(Box::new(n_buf));
        Ok(())
    }
}
