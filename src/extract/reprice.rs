//! Incremental re-extraction for the global search: the priced fixed point of
//! `super::priced::Table` kept up to date as varying prices change, instead of being
//! recomputed over every key for each candidate set. A price change touches only the
//! entries that read the varying; values then move only at keys above them (through
//! the table's users index), so a worklist from those keys upward re-prices what can
//! change. A rise (a varying no longer free, or forbidden) first clears every key
//! whose chosen tree contains a dearer entry, since only those can lose their value;
//! everything else keeps a value that is still reachable and can only fall. Each key
//! re-chooses with `Table::best_entry` (of the entries of least value, the one the
//! full pass meets first, a function of the children's state), and values are strictly
//! larger than their chosen children's, so the fixed point is unique: the result is
//! the full pass's table exactly, whatever order the worklist takes. Every
//! change is logged so that a candidate is taken back cheaply (`rollback`) to the
//! committed base the search moves from. The whole-DAG cost of the current choice is
//! kept by `super::tally` from the keys whose choice changed since it was last asked.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cost::Cost;
use super::dag::Problem;
use super::priced::{Best, Dense, Price, Table};
use super::tally::Tally;

/// One logged change, undone by restoring the old state.
enum Change {
    /// A key's state before a re-pricing.
    Key(u32, Option<Best>),
    /// A varying's price before a change.
    Price(u32, Price),
}

/// The table's fixed point under the current prices, with an undo log back to the
/// last commit.
pub(crate) struct Reprice<'t> {
    t: &'t Table,
    prices: Vec<Price>,
    best: Vec<Option<Best>>,
    /// The entries of `best`, as the search reads a selection.
    choice: Dense,
    log: Vec<Change>,
    /// Scratch: keys waiting in `queue`, keys cleared by a rise; keys whose chosen
    /// entry got dearer, keys to clear (kept for their capacity).
    queued: Vec<bool>,
    cleared: Vec<bool>,
    rises: Vec<u32>,
    to_clear: Vec<u32>,
    /// Keys to re-price, lowest index first: keys are in class-id order and lowering
    /// adds children before parents, so this mostly visits children first.
    queue: BinaryHeap<Reverse<u32>>,
    /// The whole-DAG cost of `choice` as of the last `cost`.
    tally: Tally,
    /// Keys whose choice changed since the tally last caught up (`changed` marks
    /// them, so each is listed once).
    stale: Vec<u32>,
    changed: Vec<bool>,
    /// Keys whose value's term size saturated. Sizes grow strictly from a chosen
    /// entry's children to its key unless they saturate, so with none saturated the
    /// choice is acyclic, which the tally's counts need; otherwise the walk, which
    /// notes a cycle, prices it.
    saturated: usize,
    /// The varyings the last cost's walk found, when a walk priced it.
    walked: Option<Vec<u32>>,
}

/// Whether a key's value has a saturated term size (see `Reprice::saturated`).
fn saturates(b: Option<Best>) -> bool {
    b.is_some_and(|b| b.value.1 == u64::MAX)
}

/// Free < priced < forbidden: how dear a price makes the entries that read it.
fn rank(p: Price) -> u8 {
    match p {
        Price::Free => 0,
        Price::Priced => 1,
        Price::Forbidden => 2,
    }
}

impl<'t> Reprice<'t> {
    /// The fixed point of `t` under `prices`, by the full pass; nothing to undo.
    pub(crate) fn new(t: &'t Table, prices: Vec<Price>) -> Reprice<'t> {
        let best = t.extract_best(&prices);
        let choice: Dense = best.iter().map(|b| b.map(|b| b.entry)).collect();
        let n = t.key_count();
        Reprice {
            t,
            prices,
            saturated: best.iter().filter(|b| saturates(**b)).count(),
            best,
            tally: Tally::new(t, &choice),
            choice,
            log: vec![],
            queued: vec![false; n],
            cleared: vec![false; n],
            rises: vec![],
            to_clear: vec![],
            queue: BinaryHeap::new(),
            stale: vec![],
            changed: vec![false; n],
            walked: None,
        }
    }

    /// The whole-DAG cost of the current choice (`Table::cost`'s): by the tally's
    /// counts, caught up with the keys changed since the last call, or by a walk
    /// where the counts do not apply (a GS producer's per-emit pricing, a possibly
    /// cyclic choice).
    pub(crate) fn cost(&mut self, p: &Problem<'_>) -> Cost {
        if self.t.prices_emits() || self.saturated > 0 {
            let (cost, used) = self.t.cost(p, &self.choice);
            self.walked = Some(used);
            return cost;
        }
        self.walked = None;
        self.tally.update(self.t, &self.choice, &self.stale);
        for k in self.stale.drain(..) {
            self.changed[k as usize] = false;
        }
        self.tally.cost(p.model, p.consumer)
    }

    /// The varyings the choice priced by the last [`Reprice::cost`] reads, sorted (when
    /// finite; otherwise some of them). No re-pricing may come between the two.
    pub(crate) fn used(&self) -> Vec<u32> {
        match &self.walked {
            Some(used) => used.clone(),
            None => self.tally.used().collect(),
        }
    }

    /// The price of each varying.
    pub(crate) fn prices(&self) -> &[Price] {
        &self.prices
    }

    /// The chosen entry per key under the current prices.
    pub(crate) fn choice(&self) -> &Dense {
        &self.choice
    }

    /// The state per key under the current prices.
    #[cfg(test)]
    pub(crate) fn best(&self) -> &[Option<Best>] {
        &self.best
    }

    /// Makes the current state the one `rollback` returns to.
    pub(crate) fn commit(&mut self) {
        self.log.clear();
    }

    /// Takes back every change since the last commit.
    pub(crate) fn rollback(&mut self) {
        while let Some(c) = self.log.pop() {
            match c {
                Change::Key(k, b) => self.put(k, b),
                Change::Price(v, p) => self.prices[v as usize] = p,
            }
        }
    }

    /// Re-prices the table for `prices` (one per varying), logging every change.
    pub(crate) fn set(&mut self, prices: &[Price]) {
        let mut rises = std::mem::take(&mut self.rises);
        for (v, &p) in prices.iter().enumerate() {
            self.change(v as u32, p, &mut rises);
        }
        self.clear_dependents(rises);
        self.drain();
    }

    /// Re-prices the table for varying `v` at price `p`, the others unchanged.
    pub(crate) fn set_one(&mut self, v: u32, p: Price) {
        let mut rises = std::mem::take(&mut self.rises);
        self.change(v, p, &mut rises);
        self.clear_dependents(rises);
        self.drain();
    }

    /// Gives varying `v` price `p` and queues the keys of the entries that read it;
    /// on a rise, the keys whose chosen entry reads it go to `rises`.
    fn change(&mut self, v: u32, p: Price, rises: &mut Vec<u32>) {
        let old = self.prices[v as usize];
        if old == p {
            return;
        }
        self.log.push(Change::Price(v, old));
        self.prices[v as usize] = p;
        let rise = rank(p) > rank(old);
        for &e in self.t.readers(v) {
            let k = self.t.key_of_entry(e);
            if rise && self.choice[k as usize] == Some(e) {
                rises.push(k);
            }
            self.push(k);
        }
    }

    /// Clears (value and choice) every key whose chosen tree contains one of `keys`,
    /// and queues it: its value may rise, so it is rebuilt from below.
    fn clear_dependents(&mut self, mut keys: Vec<u32>) {
        let mut cleared = std::mem::take(&mut self.to_clear);
        while let Some(k) = keys.pop() {
            if std::mem::replace(&mut self.cleared[k as usize], true) {
                continue;
            }
            cleared.push(k);
            for &e in self.t.users(k) {
                let parent = self.t.key_of_entry(e);
                if self.choice[parent as usize] == Some(e) {
                    keys.push(parent);
                }
            }
        }
        // The closure is taken over the old choices before any is cleared.
        for &k in &cleared {
            self.cleared[k as usize] = false;
            self.record(k, None);
            self.push(k);
        }
        // Both scratch vectors go back, empty, with their capacity.
        cleared.clear();
        self.to_clear = cleared;
        self.rises = keys;
    }

    /// Re-prices queued keys until none changes; a key whose state changed queues
    /// the keys of the entries that use it (their values and passes depend on it).
    fn drain(&mut self) {
        while let Some(Reverse(k)) = self.queue.pop() {
            self.queued[k as usize] = false;
            let best = self.t.best_entry(k, &self.prices, &self.best);
            if best == self.best[k as usize] {
                continue;
            }
            self.record(k, best);
            for &e in self.t.users(k) {
                self.push(self.t.key_of_entry(e));
            }
        }
    }

    fn push(&mut self, k: u32) {
        if !std::mem::replace(&mut self.queued[k as usize], true) {
            self.queue.push(Reverse(k));
        }
    }

    /// Sets key `k` to `best`, logging the old state.
    fn record(&mut self, k: u32, best: Option<Best>) {
        self.log.push(Change::Key(k, self.best[k as usize]));
        self.put(k, best);
    }

    /// Sets key `k` to `best`, noting it for the tally and the saturation count.
    fn put(&mut self, k: u32, best: Option<Best>) {
        let i = k as usize;
        self.saturated -= usize::from(saturates(self.best[i]));
        self.saturated += usize::from(saturates(best));
        self.best[i] = best;
        self.choice[i] = best.map(|b| b.entry);
        if !std::mem::replace(&mut self.changed[i], true) {
            self.stale.push(k);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::extract::dag::Problem;
    use crate::extract::incremental::tests::graphs;
    use crate::extract::CostModel;

    /// A small deterministic generator (xorshift) for the move sequence.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        /// The next number in `0..n`.
        pub(crate) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    pub(crate) const PRICES: [Price; 3] = [Price::Free, Price::Priced, Price::Forbidden];

    /// The incremental state equals the full pass's (values, passes and entries).
    fn check(r: &Reprice<'_>, t: &Table, prices: &[Price], what: &str) {
        let full = t.extract_best(prices);
        let first = (0..full.len()).find(|k| r.best()[*k] != full[*k]);
        if let Some(k) = first {
            panic!(
                "{what}: key {k} is {:?} incrementally, {:?} by the full pass",
                r.best()[k],
                full[k]
            );
        }
        assert_eq!(r.choice(), &t.extract(prices), "{what}");
    }

    /// On the shipped pairs and generated ones, every move the global search makes
    /// (one varying's price changed from a committed base, then taken back) and
    /// rebases changing several prices at once leave the same table as the full pass:
    /// after the move, after its rollback and after every commit.
    #[test]
    fn every_move_agrees_with_the_full_pass() {
        let model = CostModel::default();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut moves, mut changed) = (0, 0);
        for (pair, g, roots) in graphs() {
            let p = Problem::new(&g, roots, &model, &pair.consumer.info);
            let t = Table::new(&p);
            let n = t.varying_count();
            if n == 0 {
                continue;
            }
            let mut base = vec![Price::Free; n];
            let mut r = Reprice::new(&t, base.clone());
            check(&r, &t, &base, "start");
            for step in 0..(4 * n).min(120) {
                let mut cand = base.clone();
                cand[rng.below(n)] = PRICES[rng.below(3)];
                let before = r.choice().clone();
                r.set(&cand);
                moves += 1;
                changed += usize::from(*r.choice() != before);
                check(&r, &t, &cand, "move");
                if rng.below(3) == 0 {
                    r.commit();
                    base = cand;
                } else {
                    r.rollback();
                    check(&r, &t, &base, "rollback");
                }
                if step % 8 == 7 {
                    for _ in 0..1 + rng.below(n) {
                        base[rng.below(n)] = PRICES[rng.below(3)];
                    }
                    r.rollback();
                    r.set(&base);
                    r.commit();
                    check(&r, &t, &base, "rebase");
                }
            }
        }
        // Floors against a graph set whose moves change (almost) nothing.
        assert!(moves > 1000, "{moves} moves");
        assert!(
            changed > moves / 4,
            "{changed} of {moves} moves change the table"
        );
    }
}
