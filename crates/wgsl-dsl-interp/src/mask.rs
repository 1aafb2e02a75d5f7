//! Sets of invocations of one workgroup (the lanes executing a statement), as bit sets.

/// Most invocations in one workgroup the interpreter runs (WebGPU's largest
/// `maxComputeInvocationsPerWorkgroup` on current hardware).
pub(crate) const MAX_LANES: usize = 1024;
const WORDS: usize = MAX_LANES / 64;

/// A set of lanes (local invocation indices) of one workgroup.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mask {
    words: [u64; WORDS],
}

impl std::fmt::Debug for Mask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl Default for Mask {
    fn default() -> Self {
        Mask::EMPTY
    }
}

impl Mask {
    /// No lane.
    pub const EMPTY: Mask = Mask { words: [0; WORDS] };

    /// Lanes `0..n`.
    pub fn first(n: usize) -> Mask {
        let mut m = Mask::EMPTY;
        for (i, w) in m.words.iter_mut().enumerate() {
            let lo = i * 64;
            if n >= lo + 64 {
                *w = u64::MAX;
            } else if n > lo {
                *w = (1u64 << (n - lo)) - 1;
            }
        }
        m
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn contains(&self, lane: usize) -> bool {
        self.words[lane / 64] >> (lane % 64) & 1 == 1
    }

    pub fn insert(&mut self, lane: usize) {
        self.words[lane / 64] |= 1 << (lane % 64);
    }

    pub fn union(&self, other: &Mask) -> Mask {
        let mut m = *self;
        for (a, b) in m.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        m
    }

    pub fn minus(&self, other: &Mask) -> Mask {
        let mut m = *self;
        for (a, b) in m.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
        m
    }

    /// The lowest lane, if any.
    pub fn lowest(&self) -> Option<usize> {
        self.words
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }

    /// The lanes, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(i * 64 + b)
            })
        })
    }

    /// Call `f` for every lane, in increasing order; `full` is the number of lanes of the
    /// workgroup when this set holds all of them (a faster loop), else 0.
    #[inline(always)]
    pub fn for_each(&self, full: usize, mut f: impl FnMut(usize)) {
        if full > 0 {
            for l in 0..full {
                f(l);
            }
            return;
        }
        for (i, &w) in self.words.iter().enumerate() {
            let mut bits = w;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f(i * 64 + b);
            }
        }
    }

    /// As [`Mask::for_each`], stopping at the first error.
    #[inline(always)]
    pub fn try_for_each<E>(
        &self,
        full: usize,
        mut f: impl FnMut(usize) -> Result<(), E>,
    ) -> Result<(), E> {
        if full > 0 {
            for l in 0..full {
                f(l)?;
            }
            return Ok(());
        }
        for (i, &w) in self.words.iter().enumerate() {
            let mut bits = w;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f(i * 64 + b)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a = Mask::first(70);
        assert_eq!(a.iter().count(), 70);
        assert!(a.contains(69) && !a.contains(70));
        let mut b = Mask::EMPTY;
        b.insert(3);
        b.insert(65);
        b.insert(700);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![3, 65, 700]);
        assert_eq!(a.minus(&b).iter().count(), 68);
        assert_eq!(a.union(&b).iter().count(), 71);
        assert_eq!(b.lowest(), Some(3));
        assert_eq!(Mask::EMPTY.lowest(), None);
        let mut seen = Vec::new();
        b.for_each(0, |l| seen.push(l));
        assert_eq!(seen, vec![3, 65, 700]);
        assert_eq!(Mask::first(MAX_LANES).iter().count(), MAX_LANES);
    }
}
