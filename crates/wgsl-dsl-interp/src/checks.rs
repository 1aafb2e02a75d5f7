//! The data-race check: shadow memory for every read-write storage buffer and workgroup
//! variable, one entry per memory location (4 bytes, or 2 for `f16` data).
//!
//! Two accesses to one location race (WGSL spec "Memory Model", `#memory-model`) when they
//! come from different invocations, at least one writes, neither is atomic, and no barrier
//! orders them: they are in different workgroups (nothing orders those within a dispatch),
//! or in one workgroup in the same *phase*. A phase of a workgroup's storage memory ends at
//! each `storageBarrier`, of its workgroup memory at each `workgroupBarrier` (spec §17.11).
//! Atomic locations are never checked (WGSL only reaches them through atomic built-ins).
//!
//! Per location the shadow keeps, for writes and for reads alike, the latest access, the
//! latest by another invocation than that one, and the latest from another workgroup. That
//! is exact: the accesses that can conflict with a new one are those of its own phase (the
//! most recent ones, so one of the first two is by another invocation if any is) and those of
//! other workgroups (one of the first and third is from another workgroup if any is).

/// One access: the invocation (its index in the dispatch, plus one; 0 is "none"), its phase,
/// and the start of the naga span of the load or store (the Rust call site).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Acc {
    pub inv: u32,
    pub phase: u32,
    pub span: u32,
}

/// The recent accesses of one kind (reads or writes) to one location.
#[derive(Clone, Copy, Debug, Default)]
struct Recent {
    /// The latest.
    last: Acc,
    /// The latest by another invocation than `last`'s.
    other_inv: Acc,
    /// The latest from another workgroup than `last`'s.
    other_wg: Acc,
}

impl Recent {
    fn record(&mut self, a: Acc, lanes: u32) {
        if self.last.inv != 0 {
            if self.last.inv != a.inv {
                self.other_inv = self.last;
            }
            if workgroup(self.last, lanes) != workgroup(a, lanes) {
                self.other_wg = self.last;
            }
        }
        self.last = a;
    }

    /// A recorded access that `a` races with, if any.
    fn conflict(&self, a: Acc, lanes: u32) -> Option<Acc> {
        [self.last, self.other_inv, self.other_wg]
            .into_iter()
            .find(|&p| concurrent(p, a, lanes))
    }
}

fn workgroup(a: Acc, lanes: u32) -> u32 {
    (a.inv - 1) / lanes
}

/// True if nothing orders `p` (earlier) before `a`.
fn concurrent(p: Acc, a: Acc, lanes: u32) -> bool {
    p.inv != 0
        && p.inv != a.inv
        && (workgroup(p, lanes) != workgroup(a, lanes) || p.phase == a.phase)
}

/// The shadow of one memory location.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Shadow {
    writes: Recent,
    reads: Recent,
}

/// A race found: the earlier access, and whether it was a write.
pub(crate) struct Conflict {
    pub earlier: Acc,
    pub earlier_wrote: bool,
}

impl Shadow {
    /// Record a read by `a`. `Err` if it races with a write; `Ok(true)` if nothing was ever
    /// written here (in this workgroup, for workgroup memory).
    #[inline]
    pub fn read(&mut self, a: Acc, lanes: u32) -> Result<bool, Conflict> {
        let unwritten = self.probe_read(a, lanes)?;
        self.reads.record(a, lanes);
        Ok(unwritten)
    }

    /// Record a write by `a`. `Err` if it races with a read or a write.
    #[inline]
    pub fn write(&mut self, a: Acc, lanes: u32) -> Result<(), Conflict> {
        self.probe_write(a, lanes)?;
        self.writes.record(a, lanes);
        Ok(())
    }

    /// [`Shadow::read`] without recording it.
    #[inline]
    pub fn probe_read(&self, a: Acc, lanes: u32) -> Result<bool, Conflict> {
        if let Some(earlier) = self.writes.conflict(a, lanes) {
            return Err(Conflict {
                earlier,
                earlier_wrote: true,
            });
        }
        Ok(self.writes.last.inv == 0)
    }

    /// [`Shadow::write`] without recording it.
    #[inline]
    pub fn probe_write(&self, a: Acc, lanes: u32) -> Result<(), Conflict> {
        if let Some(earlier) = self.writes.conflict(a, lanes) {
            return Err(Conflict {
                earlier,
                earlier_wrote: true,
            });
        }
        if let Some(earlier) = self.reads.conflict(a, lanes) {
            return Err(Conflict {
                earlier,
                earlier_wrote: false,
            });
        }
        Ok(())
    }

    /// An access by a whole subgroup (a cooperative-matrix load or store), which may be
    /// performed by any of its invocations: checked as by `x` and by `y` (two invocations of
    /// the subgroup, or `x` twice for a subgroup of one), so that it races with every other
    /// invocation's access, and recorded as by both, so that every later access in the phase
    /// races with it, the subgroup's own invocations' included. Reads return whether the
    /// location was never written.
    pub fn subgroup(
        &mut self,
        write: bool,
        x: Acc,
        y: Acc,
        lanes: u32,
    ) -> Result<bool, (Conflict, Acc)> {
        let mut unwritten = false;
        for a in [x, y] {
            if write {
                self.probe_write(a, lanes).map_err(|c| (c, a))?;
            } else {
                unwritten = self.probe_read(a, lanes).map_err(|c| (c, a))?;
            }
        }
        for a in [x, y] {
            if write {
                self.writes.record(a, lanes);
            } else {
                self.reads.record(a, lanes);
            }
        }
        Ok(unwritten)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LANES: u32 = 4;
    fn acc(wg: u32, lane: u32, phase: u32) -> Acc {
        Acc {
            inv: wg * LANES + lane + 1,
            phase,
            span: 7,
        }
    }

    #[test]
    fn same_phase_writes_by_two_invocations_race() {
        let mut s = Shadow::default();
        assert!(s.write(acc(0, 0, 0), LANES).is_ok());
        let c = s.write(acc(0, 1, 0), LANES).expect_err("race");
        assert_eq!(c.earlier, acc(0, 0, 0));
        assert!(c.earlier_wrote);
    }

    #[test]
    fn a_barrier_between_orders_accesses_in_one_workgroup_only() {
        let mut s = Shadow::default();
        s.write(acc(0, 0, 0), LANES).ok().expect("first write");
        assert_eq!(s.read(acc(0, 1, 1), LANES).ok(), Some(false));
        // Another workgroup: no barrier orders it.
        assert!(s.write(acc(1, 0, 5), LANES).is_err());
    }

    #[test]
    fn the_same_invocation_never_races_with_itself() {
        let mut s = Shadow::default();
        assert_eq!(s.read(acc(0, 2, 0), LANES).ok(), Some(true));
        assert!(s.write(acc(0, 2, 0), LANES).is_ok());
        assert!(s.write(acc(0, 2, 0), LANES).is_ok());
    }

    #[test]
    fn an_older_read_by_another_invocation_is_remembered() {
        // lane 1 reads, lane 0 reads, lane 0 writes: the write races with lane 1's read.
        let mut s = Shadow::default();
        s.read(acc(0, 1, 0), LANES).ok().expect("read");
        s.read(acc(0, 0, 0), LANES).ok().expect("read");
        let c = s.write(acc(0, 0, 0), LANES).expect_err("race");
        assert_eq!(c.earlier, acc(0, 1, 0));
        assert!(!c.earlier_wrote);
    }

    #[test]
    fn a_subgroup_store_races_with_its_own_invocations_later_reads() {
        let mut s = Shadow::default();
        assert!(s.subgroup(true, acc(0, 0, 0), acc(0, 1, 0), LANES).is_ok());
        for lane in 0..LANES {
            assert!(s.probe_read(acc(0, lane, 0), LANES).is_err(), "lane {lane}");
            assert_eq!(s.probe_read(acc(0, lane, 1), LANES).ok(), Some(false));
        }
        // A read by lane 0 then a subgroup store in the same phase: a race, whichever
        // invocation of the subgroup stores.
        let mut s = Shadow::default();
        s.read(acc(0, 0, 0), LANES).ok().expect("read");
        let (c, _) = s
            .subgroup(true, acc(0, 0, 0), acc(0, 1, 0), LANES)
            .expect_err("race");
        assert_eq!(c.earlier, acc(0, 0, 0));
    }

    #[test]
    fn a_read_from_an_earlier_workgroup_is_remembered() {
        // workgroup 0 reads; workgroup 1 reads in two phases, then writes.
        let mut s = Shadow::default();
        s.read(acc(0, 3, 0), LANES).ok().expect("read");
        s.read(acc(1, 0, 0), LANES).ok().expect("read");
        s.read(acc(1, 1, 1), LANES).ok().expect("read");
        let c = s.write(acc(1, 0, 2), LANES).expect_err("race");
        assert_eq!(c.earlier, acc(0, 3, 0));
    }
}
