//! GPU time per dispatch from timestamp queries: [`Gpu::profile`] records like
//! [`Gpu::recorder`], submits, waits, and returns a [`Profile`]: every dispatch with its label
//! (the kernel's entry point name), its grid and its GPU time.
//!
//! # How the time is taken
//! - [`TimestampMethod::InsidePasses`] (devices with `TIMESTAMP_QUERY_INSIDE_PASSES`, e.g. an
//!   NVIDIA H200 through Vulkan): the dispatches stay in one compute pass, as without
//!   profiling; a timestamp is written when the pass opens and after every dispatch. On Vulkan
//!   wgpu writes them at the bottom of the pipe, so a dispatch's time runs from the end of the
//!   work before it to its own end: its launch, the barrier wgpu puts before it, and its run.
//!   The times of a pass add up to the pass.
//! - [`TimestampMethod::PassPerDispatch`] (devices with `TIMESTAMP_QUERY` only, e.g. Mesa
//!   lavapipe): each dispatch gets its own compute pass with timestamps at its start and end.
//!   A pass costs more than a dispatch inside one (~23 us against ~4 us on an H200), so this
//!   profile shows the kernels' shares, not the cost of a step as it runs unprofiled.
//!
//! Timestamps cost little but not nothing; time a whole submit with [`Gpu::time`] (two
//! timestamps) to compare.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::gpu::{Gpu, take_mapped};
use super::recorder::Recorder;
use super::timing::{PerDispatch, Queries, TimestampMethod, Timing};
use wgsl_dsl_exec::{DispatchError, DispatchErrorKind};

/// One dispatch of a [`Profile`].
#[derive(Clone, Debug, PartialEq)]
pub struct DispatchTime {
    /// The kernel's entry point name.
    pub label: Arc<str>,
    /// Workgroups dispatched, `[x, y, z]`.
    pub workgroups: [u32; 3],
    /// GPU time (see [`TimestampMethod`] for what it includes).
    pub time: Duration,
}

/// The dispatches of one label in a [`Profile`]: see [`Profile::per_label`].
#[derive(Clone, Debug, PartialEq)]
pub struct LabelTotal {
    /// The kernel's entry point name.
    pub label: Arc<str>,
    /// How many dispatches had this label.
    pub dispatches: usize,
    /// Their GPU time, summed.
    pub total: Duration,
}

/// What [`Gpu::profile`] measured for one submit.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Every recorded dispatch, in recording order (empty grids are not recorded).
    pub dispatches: Vec<DispatchTime>,
    /// Host time spent in the recording closure (checks, bind groups, wgpu's recording and
    /// the timestamp writes), not counting the submit and the wait.
    pub recording: Duration,
    /// How the timestamps were placed.
    pub method: TimestampMethod,
}

impl Profile {
    /// The dispatches' GPU times, summed.
    pub fn total(&self) -> Duration {
        self.dispatches.iter().map(|d| d.time).sum()
    }

    /// Dispatch count and summed time per label, in the order labels first appear.
    pub fn per_label(&self) -> Vec<LabelTotal> {
        let mut out: Vec<LabelTotal> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for d in &self.dispatches {
            let i = *index.entry(&d.label).or_insert_with(|| {
                out.push(LabelTotal {
                    label: Arc::clone(&d.label),
                    dispatches: 0,
                    total: Duration::ZERO,
                });
                out.len() - 1
            });
            out[i].dispatches += 1;
            out[i].total += d.time;
        }
        out
    }
}

impl Gpu {
    /// The [`TimestampMethod`] [`Gpu::profile`] uses on this device, `None` without
    /// `TIMESTAMP_QUERY`.
    pub fn timestamp_method(&self) -> Option<TimestampMethod> {
        let f = self.features();
        if f.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES) {
            Some(TimestampMethod::InsidePasses)
        } else if f.contains(wgpu::Features::TIMESTAMP_QUERY) {
            Some(TimestampMethod::PassPerDispatch)
        } else {
            None
        }
    }

    /// Record with `record`, submit, wait, and return the GPU time of every dispatch, with
    /// [`Gpu::timestamp_method`]. `Ok(None)` when the device lacks `TIMESTAMP_QUERY` (the work
    /// still runs).
    ///
    /// # Errors
    /// Any error of `record`, of [`Recorder::submit`], or of waiting and reading the
    /// timestamps back ([`DispatchErrorKind::Device`]).
    pub fn profile(
        &self,
        record: impl FnOnce(&mut Recorder<'_>) -> Result<(), DispatchError>,
    ) -> Result<Option<Profile>, DispatchError> {
        match self.timestamp_method() {
            Some(method) => self.profile_with(method, record),
            None => {
                let mut rec = self.recorder();
                record(&mut rec)?;
                rec.submit()?;
                self.wait()?;
                Ok(None)
            }
        }
    }

    /// As [`Gpu::profile`] with the given method.
    ///
    /// # Errors
    /// As [`Gpu::profile`]; [`DispatchErrorKind::Wgpu`] if the device lacks the method's feature.
    pub fn profile_with(
        &self,
        method: TimestampMethod,
        record: impl FnOnce(&mut Recorder<'_>) -> Result<(), DispatchError>,
    ) -> Result<Option<Profile>, DispatchError> {
        let needed = match method {
            TimestampMethod::InsidePasses => wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
            TimestampMethod::PassPerDispatch => wgpu::Features::TIMESTAMP_QUERY,
        };
        if !self.features().contains(needed) {
            return Err(DispatchError::from(DispatchErrorKind::Wgpu(format!(
                "profiling with {method:?} needs the device feature {needed:?}"
            ))));
        }
        let mut rec = self.recorder();
        rec.timing = Some(Timing::PerDispatch(PerDispatch {
            method,
            queries: Queries::new(),
            spans: Vec::new(),
            last: None,
            labels: HashMap::new(),
        }));
        let started = Instant::now();
        record(&mut rec)?;
        let recording = started.elapsed();
        let Some(Timing::PerDispatch(p)) = rec.timing.take() else {
            unreachable!("set above");
        };
        let ticks = self.finish_timed(rec, &p.queries)?;
        let period = f64::from(self.queue.get_timestamp_period());
        let at = |q: u32| ticks.get(q as usize).copied().unwrap_or(0);
        let dispatches = p
            .spans
            .into_iter()
            .map(|(label, workgroups, start, end)| DispatchTime {
                label,
                workgroups,
                time: ticks_to_duration(at(end).saturating_sub(at(start)), period),
            })
            .collect();
        Ok(Some(Profile {
            dispatches,
            recording,
            method,
        }))
    }

    /// Record with `record`, submit, wait, and return the GPU time from the start of the
    /// first compute pass to the end of the last one, measured with timestamp queries.
    /// `Ok(None)` when the device lacks `TIMESTAMP_QUERY` or nothing was dispatched (the work
    /// still runs).
    ///
    /// # Errors
    /// Any error of `record`, of [`Recorder::submit`], or of waiting ([`DispatchErrorKind::Device`]).
    pub fn time(
        &self,
        record: impl FnOnce(&mut Recorder<'_>) -> Result<(), DispatchError>,
    ) -> Result<Option<Duration>, DispatchError> {
        let mut rec = self.recorder();
        if self.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            rec.timing = Some(Timing::Span(Queries::new()));
        }
        record(&mut rec)?;
        let timing = rec.timing.take().filter(|_| rec.passes() > 0);
        let Some(Timing::Span(queries)) = timing else {
            rec.submit()?;
            self.wait()?;
            return Ok(None);
        };
        let ticks = self.finish_timed(rec, &queries)?;
        let period = f64::from(self.queue.get_timestamp_period());
        Ok(Some(ticks_to_duration(
            ticks[1].saturating_sub(ticks[0]),
            period,
        )))
    }

    /// End `rec`'s pass, resolve `queries`, submit, wait, and read the ticks back.
    fn finish_timed(
        &self,
        mut rec: Recorder<'_>,
        queries: &Queries,
    ) -> Result<Vec<u64>, DispatchError> {
        rec.end_pass()?;
        if queries.used == 0 {
            rec.submit()?;
            self.wait()?;
            return Ok(Vec::new());
        }
        let readback = queries.resolve(&self.device, rec.encoder_mut());
        rec.submit()?;
        self.map_read(&readback, None)?;
        let bytes = queries.used as usize * wgpu::QUERY_SIZE as usize;
        Ok(take_mapped(&readback, bytes)?)
    }
}

fn ticks_to_duration(ticks: u64, period_ns: f64) -> Duration {
    Duration::from_nanos((ticks as f64 * period_ns) as u64)
}
