//! What changed in the e-graph since when: the tables the incremental scheduler
//! ([`super::incremental`]) keeps from one iteration to the next, and the filter a
//! search reads from them to skip root e-nodes whose matches it found before.
//!
//! Two tables. Per class, for each distance `k`, the last iteration in which a class at
//! most `k` edges below it was *touched* (its canonical e-nodes or analysis data
//! changed, or it is new): a root class with nothing touched within a pattern's depth
//! has the matches it had at the rule's last search. And per e-node, the iteration in
//! which its class first held it in its canonical form: a class touched because it
//! gained an e-node still holds old ones, and an old root e-node none of whose
//! children has anything touched within the pattern's depth less one has exactly the
//! matches it had then. On a saturating run most dirty root classes are dirty for that
//! reason alone (each motion law adds its right-hand side to the class of the term it
//! matched, which dirties the class for every law rooted there), and re-finding those
//! matches was over half of all matches on real pairs.
//!
//! Iterations are stored as stamps shifted by one, so that 0 means "never".

use std::cell::RefCell;
use std::hash::{Hash, Hasher};

use egg::{Id, Language};
use fxhash::FxHasher;

use super::analysis::VGraph;
use super::lang::VNode;
use super::rules::condition_inputs;

/// The deepest pattern the touched-distance table tracks; a deeper left-hand side
/// searches every class of its root operator (none of the shipped rules is that deep).
pub const MAX_TRACKED_DEPTH: usize = 7;

/// One class's touched stamps by distance.
pub type Touched = [u32; MAX_TRACKED_DEPTH + 1];

/// The stamp of an iteration.
pub fn stamp(iteration: usize) -> u32 {
    u32::try_from(iteration + 1).unwrap_or(u32::MAX)
}

/// The tables, indexed by class id (ids are dense: egg numbers every e-node it adds).
#[derive(Debug, Default)]
pub struct Freshness {
    /// Class fingerprints at the last update (0: none).
    fingerprints: Vec<u64>,
    /// Per class, for each distance `k`, the last stamp at which a class at most `k`
    /// edges below it was touched.
    pub touched: Vec<Touched>,
    /// Per class, for each of its e-nodes by position in the class's node list, its
    /// hash and the stamp at which the class first held it (the hash carries the stamp
    /// over when the class changes).
    born: Vec<Vec<(u64, u32)>>,
    /// Per class, a hash of what rule conditions read of it
    /// ([`super::rules::condition_inputs`]) and the stamp at which that last changed.
    inputs: Vec<(u64, u32)>,
}

impl Freshness {
    /// Brings the tables up to date with the graph at the start of the iteration
    /// stamped `stamp` (egg has rebuilt it: its classes' node lists are canonical and
    /// sorted, and stay so until the next update).
    pub fn update(&mut self, g: &VGraph, stamp: u32) {
        let ids = g.nodes().len();
        let mut next = vec![0; ids];
        self.touched.resize(ids, [0; MAX_TRACKED_DEPTH + 1]);
        self.born.resize(ids, Vec::new());
        self.inputs.resize(ids, (0, 0));
        let mut frontier = Vec::new();
        let mut hashes = Vec::new();
        for class in g.classes() {
            let i = usize::from(class.id);
            hashes.clear();
            hashes.extend(class.nodes.iter().map(hash));
            // Never 0, which marks a class the last update did not see.
            let fp = hash(&(&hashes, &class.data)) | 1;
            if self.fingerprints.get(i) != Some(&fp) {
                frontier.push(class.id);
                self.restamp(i, &hashes, stamp);
                let inputs = hash(&condition_inputs(class));
                if self.inputs[i].1 == 0 || self.inputs[i].0 != inputs {
                    self.inputs[i] = (inputs, stamp);
                }
            }
            next[i] = fp;
        }
        self.fingerprints = next;
        // Breadth-first up the parent links: distance d is reached from distance d - 1,
        // so each class gets the shortest distance to something touched.
        for d in 0..=MAX_TRACKED_DEPTH {
            let mut up = Vec::new();
            for id in frontier {
                let row = &mut self.touched[usize::from(id)];
                if row[d] == stamp {
                    continue;
                }
                for slot in &mut row[d..] {
                    *slot = stamp;
                }
                if d < MAX_TRACKED_DEPTH {
                    up.extend(g[id].parents().map(|p| g.find(p)));
                }
            }
            frontier = up;
        }
    }

    /// New birth stamps for class `i`, whose nodes now hash to `hashes`: a node the
    /// class held before keeps its stamp, any other gets `stamp`.
    fn restamp(&mut self, i: usize, hashes: &[u64], stamp: u32) {
        /// Classes up to this size are searched by a scan (most hold one to three
        /// e-nodes); larger ones through a sorted copy.
        const SCAN_MAX: usize = 16;
        let old = std::mem::take(&mut self.born[i]);
        let sorted = (old.len() > SCAN_MAX).then(|| {
            let mut s = old.clone();
            s.sort_unstable();
            s
        });
        let born_of = |h: u64| match &sorted {
            Some(s) => s.binary_search_by_key(&h, |e| e.0).ok().map(|k| s[k].1),
            None => old.iter().find(|e| e.0 == h).map(|e| e.1),
        };
        self.born[i] = hashes
            .iter()
            .map(|&h| (h, born_of(h).unwrap_or(stamp)))
            .collect();
    }
}

/// The tables as a search reads them: for a rule last searched at the iteration
/// stamped `since`, with a pattern `depth` edges deep.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    fresh: &'a Freshness,
    since: u32,
    depth: usize,
}

impl View<'_> {
    /// Whether the `index`th e-node of `class` was there at the rule's last search.
    pub fn old_node(&self, class: Id, index: usize) -> bool {
        let born = self
            .fresh
            .born
            .get(usize::from(class))
            .and_then(|b| b.get(index));
        born.is_some_and(|b| b.1 <= self.since)
    }

    /// Whether `class`, a variable's, reads to every condition as at the rule's last
    /// search (a variable matches any class: only the conditions look into it).
    pub fn old_class(&self, class: Id) -> bool {
        let changed = self.fresh.inputs.get(usize::from(class)).map(|i| i.1);
        changed.is_some_and(|c| c != 0 && c <= self.since)
    }

    /// Whether the `index`th e-node of `class`, `node`, has the matches it had at the
    /// rule's last search: the class held it then, and nothing at most `depth - 1`
    /// edges below any of its children was touched since (so every e-node and
    /// variable class a match rooted at it reads is old).
    pub fn stale_root(&self, class: Id, index: usize, node: &VNode) -> bool {
        let Some(below) = self.depth.checked_sub(1) else {
            return false;
        };
        self.old_node(class, index) && node.children().iter().all(|c| self.untouched(*c, below))
    }

    /// Whether nothing at most `k` edges below `class` was touched since the search.
    fn untouched(&self, class: Id, k: usize) -> bool {
        k <= MAX_TRACKED_DEPTH
            && self
                .fresh
                .touched
                .get(usize::from(class))
                .is_some_and(|row| row[k] <= self.since)
    }
}

/// A 64-bit hash (a fingerprint: a collision could hide a change, at odds of about
/// one in 2^64 per comparison, as for any hashed change detection).
fn hash(x: &impl Hash) -> u64 {
    let mut h = FxHasher::default();
    x.hash(&mut h);
    h.finish()
}

/// The filter of the search running on this thread: the tables, the stamp of the
/// rule's last search and its pattern's depth.
type Filter = (Freshness, u32, usize);

thread_local! {
    static FILTER: RefCell<Option<Filter>> = const { RefCell::new(None) };
}

/// Runs `search`, the search of a rule last searched at the iteration stamped `since`
/// with a pattern `depth` edges deep, with the filter set for the searchers that read
/// it ([`with_view`]), and gives the tables back. egg's searcher interface has no room
/// for the filter, hence this thread-local scope.
pub fn filtering<R>(
    fresh: Freshness,
    since: u32,
    depth: usize,
    search: impl FnOnce() -> R,
) -> (R, Freshness) {
    FILTER.with(|f| *f.borrow_mut() = Some((fresh, since, depth)));
    let out = search();
    let (fresh, _, _) = FILTER.with(|f| f.borrow_mut().take()).unwrap_or_default();
    (out, fresh)
}

/// Runs `f` with the view of the filter set by [`filtering`] on this
/// thread, if any: a searcher that reads it reports only the matches that read some
/// e-node or variable class that is new since the rule's last search (the others were
/// found and applied then).
pub fn with_view<R>(f: impl FnOnce(Option<View<'_>>) -> R) -> R {
    FILTER.with(|cell| {
        let filter = cell.borrow();
        let view = filter.as_ref().map(|(fresh, since, depth)| View {
            fresh,
            since: *since,
            depth: *depth,
        });
        f(view)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::analysis::VAnalysis;

    fn view(fresh: &Freshness, since: u32, depth: usize) -> View<'_> {
        View {
            fresh,
            since,
            depth,
        }
    }

    fn index_of(g: &VGraph, class: Id, n: &VNode) -> usize {
        g[class].nodes.iter().position(|m| m == n).unwrap()
    }

    /// A class that gains an e-node keeps its old e-nodes' stamps and stamps the new
    /// one; a root whose children are untouched is stale until something below changes.
    #[test]
    fn old_nodes_keep_their_stamps_when_their_class_grows() {
        let mut g = VGraph::new(VAnalysis::default());
        let u0 = g.add_expr(&"uniform:0".parse().unwrap());
        let neg = g.add_expr(&"(fneg uniform:0)".parse().unwrap());
        let abs = g.add_expr(&"(fabs uniform:1)".parse().unwrap());
        let sq = g.add_expr(&"(fmul uniform:2 uniform:2)".parse().unwrap());
        let two = g.add_expr(&"2f32".parse().unwrap());
        g.rebuild();
        let mut fresh = Freshness::default();
        fresh.update(&g, stamp(0));
        let neg_node = g[neg].nodes[0].clone();
        let inputs = |g: &VGraph, id: Id| hash(&condition_inputs(&g[id]));
        let before = [(neg, inputs(&g, neg)), (abs, inputs(&g, abs))];
        // Iteration 1: `(fabs uniform:1)` joins the class of `(fneg uniform:0)`.
        g.union(neg, abs);
        // And the square is found to be a constant: its analysis data changes.
        g.union(sq, two);
        g.rebuild();
        let class = g.find(neg);
        fresh.update(&g, stamp(1));
        let v = view(&fresh, stamp(0), 1);
        let abs_node = g[class]
            .nodes
            .iter()
            .find(|n| matches!(n, VNode::Alu { children, .. } if children[0] != u0))
            .unwrap()
            .clone();
        let (i_neg, i_abs) = (
            index_of(&g, class, &neg_node),
            index_of(&g, class, &abs_node),
        );
        // The surviving class saw `fneg` at iteration 0 only if it is `neg`'s class.
        assert_eq!(v.old_node(class, i_neg), class == neg);
        if class == neg {
            assert!(!v.old_node(class, i_abs), "fabs is new to the class");
            // `fneg`'s child, uniform 0, is untouched: its matches are those of then.
            assert!(v.stale_root(class, i_neg, &neg_node));
        }
        // As a variable's class, only what conditions read counts: a class that gained
        // a constant is new, one that only gained an e-node of the same data is not.
        assert!(!v.old_class(g.find(sq)));
        let was = before.iter().find(|(id, _)| *id == class).map(|b| b.1);
        assert_eq!(v.old_class(class), was == Some(inputs(&g, class)));
        assert!(v.old_class(g.find(u0)));
        // Nothing is old to a search that has never run (stamp 0).
        assert!(!view(&fresh, 0, 1).old_node(class, i_neg));
        // A pattern of depth 0 has no children to vouch for.
        assert!(!view(&fresh, stamp(1), 0).stale_root(class, i_neg, &neg_node));
    }

    /// Outside a filtering scope searchers see no view; inside, the tables come back.
    #[test]
    fn the_view_exists_only_while_filtering() {
        assert!(with_view(|v| v.is_none()));
        let mut fresh = Freshness::default();
        fresh.touched.push([3; MAX_TRACKED_DEPTH + 1]);
        let (seen, back) = filtering(fresh, 5, 2, || with_view(|v| v.map(|v| (v.since, v.depth))));
        assert_eq!(seen, Some((5, 2)));
        assert_eq!(back.touched.len(), 1);
        assert!(with_view(|v| v.is_none()));
    }
}
