//! The whole-DAG cost of the global search's selection kept by reference counts, so a
//! candidate is priced by the part of the DAG its re-extraction adds and removes
//! instead of by a walk from the roots (`super::priced::Table::cost`, which stays the
//! yardstick). Each (class, stage) key of the table counts the roots and the chosen
//! entries of keys in the DAG that have it as a child; a key is in the DAG while its
//! count is positive, and only then are its entry's ALU cost and varying counted.
//! When a candidate changes entries, the new entries' children gain their references
//! before the old entries' children lose theirs, so a child both use never leaves and
//! re-enters. Counts stay consistent through any selection, but "positive count" means
//! "reachable from the roots" only for an acyclic one: `super::reprice` guarantees
//! that for every selection it asks this tally to price.

use super::cost::{Cost, CostModel};
use super::dag::VaryingCounts;
use super::priced::Table;
use crate::ir::StageInfo;

/// Reference counts and running totals of the DAG a dense selection reaches.
pub(crate) struct Tally {
    /// The entry per key the counts stand for.
    applied: Vec<Option<u32>>,
    /// Per key: the roots it is, plus the children slots of the entries of keys in
    /// the DAG that name it. Positive: the key is in the DAG.
    refs: Vec<u32>,
    /// ALU cost of the entries of keys in the DAG, wide so that the sum never
    /// saturates before the end (as `Table::cost`'s saturating sum ends at the
    /// clamped total).
    alu: u128,
    /// Per varying: the keys in the DAG whose entry reads it.
    readers: Vec<u32>,
    /// Per interpolation qualifier: the varyings in use read with it.
    qualifier_uses: Vec<u32>,
    /// What the varyings in use cost, as counts.
    counts: VaryingCounts,
    /// Keys in the DAG without an entry (the selection is then infinitely dear).
    missing: u32,
    /// Scratch: keys whose reference count changes next; entries whose children
    /// lose a reference once the new ones are in.
    stack: Vec<u32>,
    replaced: Vec<u32>,
}

impl Tally {
    /// The counts of selection `choice` over the table's roots.
    pub(crate) fn new(t: &Table, choice: &[Option<u32>]) -> Tally {
        let mut tally = Tally {
            applied: choice.to_vec(),
            refs: vec![0; t.key_count()],
            alu: 0,
            readers: vec![0; t.varying_count()],
            qualifier_uses: vec![0; t.qualifier_count()],
            counts: VaryingCounts::default(),
            missing: 0,
            stack: t.roots().to_vec(),
            replaced: vec![],
        };
        tally.add_refs(t);
        tally
    }

    /// Makes `choice` the counted selection; `changed` holds every key where it may
    /// differ from the one counted so far (a key may appear more than once).
    pub(crate) fn update(&mut self, t: &Table, choice: &[Option<u32>], changed: &[u32]) {
        for &k in changed {
            let (old, new) = (self.applied[k as usize], choice[k as usize]);
            if old == new {
                continue;
            }
            self.applied[k as usize] = new;
            if self.refs[k as usize] == 0 {
                // Outside the DAG nothing was counted; entering it counts `new`.
                continue;
            }
            self.uncount(t, old);
            self.count(t, new);
            if let Some(e) = new {
                self.stack.extend_from_slice(t.kids(e));
            }
            if let Some(e) = old {
                self.replaced.push(e);
            }
        }
        // Add before removing, so children both entries use stay in the DAG.
        self.add_refs(t);
        // (Drained by index: taking the vector would drop its capacity each time.)
        for i in 0..self.replaced.len() {
            self.stack.extend_from_slice(t.kids(self.replaced[i]));
        }
        self.replaced.clear();
        self.remove_refs(t);
    }

    /// The whole-DAG cost of the counted selection, as `Table::cost` gives it for an
    /// acyclic one.
    pub(crate) fn cost(&self, model: &CostModel, consumer: &StageInfo) -> Cost {
        if self.missing > 0 {
            return Cost::INFINITE;
        }
        let alu = Cost(self.alu.min(u128::from(u64::MAX)) as u64);
        self.counts.price(model, consumer).0 + alu
    }

    /// The varyings the counted selection reads, in index order.
    pub(crate) fn used(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.readers.len() as u32).filter(|v| self.readers[*v as usize] > 0)
    }

    /// Gives every key on the stack one more reference; a key entering the DAG
    /// counts its entry and refers to its children.
    fn add_refs(&mut self, t: &Table) {
        while let Some(k) = self.stack.pop() {
            let r = &mut self.refs[k as usize];
            *r += 1;
            if *r == 1 {
                let e = self.applied[k as usize];
                self.count(t, e);
                if let Some(e) = e {
                    self.stack.extend_from_slice(t.kids(e));
                }
            }
        }
    }

    /// Takes one reference from every key on the stack; a key leaving the DAG
    /// uncounts its entry and lets go of its children.
    fn remove_refs(&mut self, t: &Table) {
        while let Some(k) = self.stack.pop() {
            let r = &mut self.refs[k as usize];
            *r -= 1;
            if *r == 0 {
                let e = self.applied[k as usize];
                self.uncount(t, e);
                if let Some(e) = e {
                    self.stack.extend_from_slice(t.kids(e));
                }
            }
        }
    }

    /// Counts the entry of a key entering the DAG (`None`: a key without one).
    fn count(&mut self, t: &Table, e: Option<u32>) {
        let Some(e) = e else {
            self.missing += 1;
            return;
        };
        self.alu += u128::from(t.alu(e).0);
        let Some(v) = t.reads(e) else {
            return;
        };
        self.readers[v as usize] += 1;
        if self.readers[v as usize] > 1 {
            return;
        }
        self.counts.add(t.varying(v));
        if let Some(q) = t.qualifier(v) {
            self.qualifier_uses[q as usize] += 1;
            if self.qualifier_uses[q as usize] == 1 {
                self.counts.qualifiers += 1;
            }
        }
    }

    /// Takes back what [`Tally::count`] counted for the same entry.
    fn uncount(&mut self, t: &Table, e: Option<u32>) {
        let Some(e) = e else {
            self.missing -= 1;
            return;
        };
        self.alu -= u128::from(t.alu(e).0);
        let Some(v) = t.reads(e) else {
            return;
        };
        self.readers[v as usize] -= 1;
        if self.readers[v as usize] > 0 {
            return;
        }
        self.counts.remove(t.varying(v));
        if let Some(q) = t.qualifier(v) {
            self.qualifier_uses[q as usize] -= 1;
            if self.qualifier_uses[q as usize] == 0 {
                self.counts.qualifiers -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::dag::Problem;
    use crate::extract::incremental::tests::graphs;
    use crate::extract::priced::Price;
    use crate::extract::reprice::tests::{Rng, PRICES};
    use crate::extract::reprice::Reprice;
    use crate::extract::CostModel;

    /// The tally's price of the current choice is the walk's (`Table::cost`), and so
    /// are the varyings it reads when the price is finite. Returns the price.
    fn check(r: &mut Reprice<'_>, t: &Table, p: &Problem<'_>, what: &str) -> Cost {
        let cost = r.cost(p);
        let (walked, used) = t.cost(p, r.choice());
        assert_eq!(cost, walked, "{what}: counted and walked costs");
        if cost < Cost::INFINITE {
            assert_eq!(r.used(), used, "{what}: counted and walked varyings");
        }
        cost
    }

    /// On the shipped pairs and generated ones, every move of the global search's
    /// kind (one varying's price changed from a committed base, then taken back or
    /// committed) and rebases changing several prices at once are priced by the
    /// counts as the whole-DAG walk prices them. The tally is asked after some
    /// moves only, so it also catches up over several re-extractions at once.
    #[test]
    fn every_move_is_priced_as_the_walk_prices_it() {
        let model = CostModel::default();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut priced, mut finite, mut changed) = (0, 0, 0);
        for (pair, g, roots) in graphs() {
            let p = Problem::new(&g, roots, &model, &pair.consumer.info);
            let t = Table::new(&p);
            let n = t.varying_count();
            if n == 0 {
                continue;
            }
            let mut base = vec![Price::Free; n];
            let mut r = Reprice::new(&t, base.clone());
            assert!(
                !t.prices_emits(),
                "no GS producer pricing in these problems"
            );
            let mut last = check(&mut r, &t, &p, "start");
            for step in 0..(4 * n).min(120) {
                r.rollback();
                let v = rng.below(n);
                r.set_one(v as u32, PRICES[rng.below(3)]);
                if rng.below(4) > 0 {
                    let cost = check(&mut r, &t, &p, "move");
                    priced += 1;
                    finite += usize::from(cost < Cost::INFINITE);
                    changed += usize::from(cost != last);
                    last = cost;
                }
                if rng.below(3) == 0 {
                    r.commit();
                    base = r.prices().to_vec();
                }
                if step % 8 == 7 {
                    for _ in 0..1 + rng.below(n) {
                        base[rng.below(n)] = PRICES[rng.below(3)];
                    }
                    r.rollback();
                    r.set(&base);
                    r.commit();
                    last = check(&mut r, &t, &p, "rebase");
                }
            }
            r.rollback();
            check(&mut r, &t, &p, "rollback");
        }
        // Floors against a graph set whose moves price (almost) nothing.
        assert!(priced > 1000, "{priced} moves priced");
        assert!(finite > priced / 2, "{finite} of {priced} moves finite");
        assert!(
            changed > priced / 8,
            "{changed} of {priced} moves change the price"
        );
    }

    /// Counts moved straight from one extraction to an unrelated one (most keys
    /// change at once: old and new choices mix while the counts move) price the new
    /// one as the walk does.
    #[test]
    fn jumps_between_extractions_are_priced_as_the_walk_prices_them() {
        let model = CostModel::default();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut jumps = 0;
        for (pair, g, roots) in graphs() {
            let p = Problem::new(&g, roots, &model, &pair.consumer.info);
            let t = Table::new(&p);
            let n = t.varying_count();
            let all: Vec<u32> = (0..t.key_count() as u32).collect();
            let random =
                |rng: &mut Rng| -> Vec<Price> { (0..n).map(|_| PRICES[rng.below(3)]).collect() };
            let first = t.extract(&random(&mut rng));
            let mut tally = Tally::new(&t, &first);
            for _ in 0..12 {
                let next = t.extract(&random(&mut rng));
                tally.update(&t, &next, &all);
                let (walked, used) = t.cost(&p, &next);
                assert_eq!(tally.cost(p.model, p.consumer), walked);
                if walked < Cost::INFINITE {
                    assert_eq!(tally.used().collect::<Vec<_>>(), used);
                }
                // Back to the counts of a fresh tally, entry for entry.
                let fresh = Tally::new(&t, &next);
                assert_eq!(tally.refs, fresh.refs);
                assert_eq!(tally.readers, fresh.readers);
                jumps += 1;
            }
        }
        assert!(jumps > 300, "{jumps} jumps");
    }
}
