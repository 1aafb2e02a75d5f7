//! Bind groups cached per (pipeline, buffers): a training step binds the same buffers to the
//! same kernels thousands of times, so the bind group (and the argument checks that preceded
//! its creation) are made once, on first use, and looked up afterwards.
//!
//! A bind group keeps its buffers alive on the device, so an entry must not outlive the
//! [`GpuBuffer`](super::GpuBuffer)s it binds: each entry holds a `Weak` of every buffer's
//! liveness token and [`BindGroupCache::sweep`] drops the entries of dropped buffers. The
//! [`Gpu`](super::Gpu) sweeps before every buffer allocation and whenever the cache grows past
//! twice its size after the last sweep, so the memory of a dropped buffer comes back before
//! more is allocated.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// At most this many entries live at once; past it (after a sweep) the cache starts over.
const MAX_ENTRIES: usize = 1 << 14;

/// Buffer ids of a dispatch, prefixed by the pipeline's id: the cache key.
pub(crate) type Key = [u64];

struct Entry {
    group: wgpu::BindGroup,
    alive: Vec<Weak<()>>,
}

/// See the [module docs](self).
#[derive(Default)]
pub(crate) struct BindGroupCache {
    map: HashMap<Box<Key>, Entry>,
    /// Sweep again when the cache holds this many entries.
    next_sweep: usize,
    hits: u64,
    misses: u64,
}

impl std::fmt::Debug for BindGroupCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BindGroupCache")
            .field("entries", &self.map.len())
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish()
    }
}

impl BindGroupCache {
    /// The bind group made before for `key`, if any.
    pub(crate) fn get(&mut self, key: &Key) -> Option<wgpu::BindGroup> {
        let group = self.map.get(key).map(|e| e.group.clone());
        match group {
            Some(_) => self.hits += 1,
            None => self.misses += 1,
        }
        group
    }

    /// Remember `group` for `key`; `alive` are the liveness tokens of the bound buffers.
    pub(crate) fn insert(&mut self, key: &Key, group: wgpu::BindGroup, alive: &[&Arc<()>]) {
        if self.map.len() >= self.next_sweep {
            self.sweep();
            if self.map.len() >= MAX_ENTRIES {
                self.map.clear();
            }
            self.next_sweep = (2 * self.map.len()).max(64);
        }
        let alive = alive.iter().map(|a| Arc::downgrade(a)).collect();
        self.map.insert(key.into(), Entry { group, alive });
    }

    /// Drop the entries that bind a buffer that no longer exists.
    pub(crate) fn sweep(&mut self) {
        self.map
            .retain(|_, e| e.alive.iter().all(|w| w.strong_count() > 0));
    }

    /// `(entries, hits, misses)`.
    pub(crate) fn stats(&self) -> (usize, u64, u64) {
        (self.map.len(), self.hits, self.misses)
    }
}
