//! The timestamp state of a timed [`Recorder`](super::Recorder): [`Timing`] (what the recorder
//! does about timestamps), its [`Queries`], and the [`TimestampMethod`]. Below both the
//! recorder, which writes the timestamps, and `profile`, which starts timed recordings and
//! reads the results back.

use std::collections::HashMap;
use std::sync::Arc;

/// How [`Gpu::profile_with`](super::Gpu::profile_with) places its timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampMethod {
    /// One compute pass, a timestamp after every dispatch (`TIMESTAMP_QUERY_INSIDE_PASSES`).
    InsidePasses,
    /// One compute pass per dispatch, timestamps at its start and end (`TIMESTAMP_QUERY`).
    PassPerDispatch,
}

/// Timestamp queries, allocated in sets of `QUERY_SET_MAX_QUERIES` as they are needed.
pub(crate) struct Queries {
    sets: Vec<wgpu::QuerySet>,
    pub(super) used: u32,
}

const PER_SET: u32 = wgpu::QUERY_SET_MAX_QUERIES;

impl Queries {
    pub(super) fn new() -> Queries {
        Queries {
            sets: Vec::new(),
            used: 0,
        }
    }

    /// The next free query: its global index, its set and its index in the set.
    fn next(&mut self, device: &wgpu::Device) -> (u32, &wgpu::QuerySet, u32) {
        let g = self.used;
        self.used += 1;
        let set = (g / PER_SET) as usize;
        if set == self.sets.len() {
            self.sets
                .push(device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("wgsl-dsl timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: PER_SET,
                }));
        }
        (g, &self.sets[set], g % PER_SET)
    }

    /// Record the resolution of every used query into a mappable buffer.
    pub(super) fn resolve(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
    ) -> wgpu::Buffer {
        let bytes = u64::from(self.used) * u64::from(wgpu::QUERY_SIZE);
        let per_set_bytes = u64::from(PER_SET) * u64::from(wgpu::QUERY_SIZE);
        let size = (self.sets.len() as u64 * per_set_bytes).max(8);
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgsl-dsl timestamps resolve"),
            size,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgsl-dsl timestamps read-back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        for (s, set) in self.sets.iter().enumerate() {
            let first = s as u32 * PER_SET;
            let count = self.used.saturating_sub(first).min(PER_SET);
            encoder.resolve_query_set(set, 0..count, &resolve, s as u64 * per_set_bytes);
        }
        encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, bytes.max(8));
        readback
    }
}

/// What a [`Recorder`](super::Recorder) does about timestamps.
pub(crate) enum Timing {
    /// [`Gpu::time`](super::Gpu::time): query 0 at the start of the first pass, 1 at the end of every pass (the
    /// last write wins).
    Span(Queries),
    /// [`Gpu::profile`](super::Gpu::profile): per dispatch.
    PerDispatch(PerDispatch),
}

pub(crate) struct PerDispatch {
    pub(super) method: TimestampMethod,
    pub(super) queries: Queries,
    /// Per dispatch: label, grid, start query, end query.
    pub(super) spans: Vec<(Arc<str>, [u32; 3], u32, u32)>,
    /// The query that ends the previous dispatch of the open pass, or opens it.
    pub(super) last: Option<u32>,
    pub(super) labels: HashMap<String, Arc<str>>,
}

impl Timing {
    /// Timestamp writes for a pass about to open (the pass-level ones), given how many passes
    /// were opened before it.
    pub(crate) fn pass_writes(
        &mut self,
        device: &wgpu::Device,
        passes_before: usize,
    ) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        match self {
            Timing::Span(q) => {
                if q.used == 0 {
                    q.next(device);
                    q.next(device);
                }
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: &q.sets[0],
                    beginning_of_pass_write_index: (passes_before == 0).then_some(0),
                    end_of_pass_write_index: Some(1),
                })
            }
            Timing::PerDispatch(p) => {
                p.last = None;
                match p.method {
                    TimestampMethod::InsidePasses => None,
                    TimestampMethod::PassPerDispatch => {
                        // Pairs start at even indices and a set holds an even number of
                        // queries, so both queries of a pass are in one set.
                        let (start, _, _) = p.queries.next(device);
                        let (end, _, _) = p.queries.next(device);
                        p.last = Some(start);
                        p.spans.push((Arc::from(""), [0; 3], start, end));
                        let set = &p.queries.sets[(start / PER_SET) as usize];
                        Some(wgpu::ComputePassTimestampWrites {
                            query_set: set,
                            beginning_of_pass_write_index: Some(start % PER_SET),
                            end_of_pass_write_index: Some(end % PER_SET),
                        })
                    }
                }
            }
        }
    }

    /// True when every dispatch must have a pass of its own.
    pub(crate) fn pass_per_dispatch(&self) -> bool {
        matches!(
            self,
            Timing::PerDispatch(PerDispatch {
                method: TimestampMethod::PassPerDispatch,
                ..
            })
        )
    }

    /// Called in the open pass just before a dispatch.
    pub(crate) fn before_dispatch(
        &mut self,
        device: &wgpu::Device,
        pass: &mut wgpu::ComputePass<'_>,
    ) {
        if let Timing::PerDispatch(p) = self
            && p.method == TimestampMethod::InsidePasses
            && p.last.is_none()
        {
            let (g, set, i) = p.queries.next(device);
            pass.write_timestamp(set, i);
            p.last = Some(g);
        }
    }

    /// Called in the open pass just after a dispatch of `kernel` over `workgroups`.
    pub(crate) fn after_dispatch(
        &mut self,
        device: &wgpu::Device,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: &str,
        workgroups: [u32; 3],
    ) {
        let Timing::PerDispatch(p) = self else {
            return;
        };
        let label = match p.labels.get(kernel) {
            Some(l) => Arc::clone(l),
            None => {
                let l: Arc<str> = Arc::from(kernel);
                p.labels.insert(kernel.to_string(), Arc::clone(&l));
                l
            }
        };
        match p.method {
            TimestampMethod::InsidePasses => {
                let (g, set, i) = p.queries.next(device);
                pass.write_timestamp(set, i);
                let start = p.last.unwrap_or(g);
                p.spans.push((label, workgroups, start, g));
                p.last = Some(g);
            }
            TimestampMethod::PassPerDispatch => {
                if let Some(span) = p.spans.last_mut() {
                    span.0 = label;
                    span.1 = workgroups;
                }
            }
        }
    }
}
