//! Meeting points: the classes below a set of roots that two roots reach by paths with
//! no class in common but the meeting point itself, that is, reached from two roots
//! and dominated by no other class of the region (Cooper, Harvey and Kennedy's
//! iterative dominator algorithm over the region below a virtual top whose operands
//! are the roots). [`super::sharing`] reads them as the values that two transferred
//! values can share: below a single dominating class, every use goes through it.

/// No local index yet / no dominator yet.
const NONE: u32 = u32::MAX;

/// Scratch space reused across calls: the local index of each node.
pub struct Meet {
    local: Vec<u32>,
}

/// The region below the roots, locally numbered: index 0 is the virtual top.
struct Region {
    /// Node of each local index (index 0 holds an arbitrary root, never read).
    nodes: Vec<u32>,
    /// The operands of each local index.
    succ: Adjacency,
}

/// A directed graph over nodes `0..n`: node `v`'s targets are
/// `targets[ranges[v].0..ranges[v].1]` (one list, no allocation per node).
#[derive(Default)]
pub struct Adjacency {
    ranges: Vec<(u32, u32)>,
    targets: Vec<u32>,
}

impl Adjacency {
    /// The targets of `v`.
    pub fn of(&self, v: u32) -> &[u32] {
        let (a, b) = self.ranges[v as usize];
        &self.targets[a as usize..b as usize]
    }

    fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Adds the next node, with its targets sorted and without repeats.
    pub fn push_node(&mut self, targets: impl IntoIterator<Item = u32>) {
        let first = self.targets.len();
        self.targets.extend(targets);
        self.targets[first..].sort_unstable();
        let mut kept = first;
        for i in first..self.targets.len() {
            if kept == first || self.targets[kept - 1] != self.targets[i] {
                self.targets[kept] = self.targets[i];
                kept += 1;
            }
        }
        self.targets.truncate(kept);
        self.ranges.push((first as u32, kept as u32));
    }

    /// The same graph without the targets `drop` rejects.
    pub fn without(&self, drop: impl Fn(u32) -> bool) -> Adjacency {
        let mut out = Adjacency::default();
        for v in 0..self.len() as u32 {
            out.push_node(self.of(v).iter().copied().filter(|&w| !drop(w)));
        }
        out
    }

    /// The same graph with every edge reversed (a counting sort by target).
    fn reversed(&self) -> Adjacency {
        let n = self.len();
        let mut count = vec![0u32; n + 1];
        for &w in &self.targets {
            count[w as usize + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let ranges: Vec<(u32, u32)> = (0..n).map(|i| (count[i], count[i + 1])).collect();
        let mut fill: Vec<u32> = count[..n].to_vec();
        let mut targets = vec![0; self.targets.len()];
        for v in 0..n as u32 {
            for &w in self.of(v) {
                targets[fill[w as usize] as usize] = v;
                fill[w as usize] += 1;
            }
        }
        Adjacency { ranges, targets }
    }
}

impl Meet {
    /// Scratch space for a graph of `n` nodes, numbered `0..n`.
    pub fn new(n: usize) -> Meet {
        Meet {
            local: vec![NONE; n],
        }
    }

    /// Calls `hit` on every meeting point below `roots`, walking down through the
    /// nodes `operands` gives.
    pub fn meeting_points<'a>(
        &mut self,
        roots: &[u32],
        operands: impl Fn(u32) -> &'a [u32],
        mut hit: impl FnMut(u32),
    ) {
        let Some(&first) = roots.first() else {
            return;
        };
        let region = self.discover(first, roots, operands);
        let preds = region.succ.reversed();
        let idom = dominators(&region.succ, &preds);
        for (v, &node) in region.nodes.iter().enumerate().skip(1) {
            if idom[v] == 0 && preds.of(v as u32).len() >= 2 {
                hit(node);
            }
        }
        for &node in &region.nodes {
            self.local[node as usize] = NONE;
        }
    }

    /// Numbers the nodes below `roots` and records their operand edges (each node's
    /// operands without repeats, as `operands` gives them).
    fn discover<'a>(
        &mut self,
        first: u32,
        roots: &[u32],
        operands: impl Fn(u32) -> &'a [u32],
    ) -> Region {
        let mut nodes = vec![first];
        let mut targets = vec![];
        let mut work = vec![];
        for &root in roots {
            targets.push(self.visit(root, &mut nodes, &mut work));
        }
        let mut ranges = vec![(0, targets.len() as u32)];
        while let Some(v) = work.pop() {
            let from = targets.len() as u32;
            for &k in operands(nodes[v as usize]) {
                targets.push(self.visit(k, &mut nodes, &mut work));
            }
            if ranges.len() <= v as usize {
                ranges.resize(v as usize + 1, (0, 0));
            }
            ranges[v as usize] = (from, targets.len() as u32);
        }
        ranges.resize(nodes.len(), (0, 0));
        Region {
            nodes,
            succ: Adjacency { ranges, targets },
        }
    }

    /// The local index of `node`, numbering it (and queueing it) when new.
    fn visit(&mut self, node: u32, nodes: &mut Vec<u32>, work: &mut Vec<u32>) -> u32 {
        let slot = &mut self.local[node as usize];
        if *slot == NONE {
            *slot = nodes.len() as u32;
            nodes.push(node);
            work.push(*slot);
        }
        *slot
    }
}

/// Postorder numbers from the top, and the indices in reverse postorder.
fn postorder(succ: &Adjacency) -> (Vec<u32>, Vec<u32>) {
    let n = succ.len();
    let mut number = vec![NONE; n];
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some((v, next)) = stack.last_mut() {
        if let Some(&w) = succ.of(*v).get(*next) {
            *next += 1;
            if !seen[w as usize] {
                seen[w as usize] = true;
                stack.push((w, 0));
            }
        } else {
            number[*v as usize] = order.len() as u32;
            order.push(*v);
            stack.pop();
        }
    }
    order.reverse();
    (number, order)
}

/// The immediate dominator of each local index (the top dominates itself), iterated
/// in reverse postorder to a fixed point (one pass and a check on a DAG).
fn dominators(succ: &Adjacency, preds: &Adjacency) -> Vec<u32> {
    let (number, rpo) = postorder(succ);
    let mut idom = vec![NONE; succ.len()];
    idom[0] = 0;
    let intersect = |idom: &[u32], mut a: u32, mut b: u32| {
        while a != b {
            while number[a as usize] < number[b as usize] {
                a = idom[a as usize];
            }
            while number[b as usize] < number[a as usize] {
                b = idom[b as usize];
            }
        }
        a
    };
    loop {
        let mut changed = false;
        for &v in rpo.iter().skip(1) {
            let mut new = NONE;
            for &p in preds.of(v) {
                if idom[p as usize] != NONE {
                    new = if new == NONE {
                        p
                    } else {
                        intersect(&idom, p, new)
                    };
                }
            }
            if idom[v as usize] != new {
                idom[v as usize] = new;
                changed = true;
            }
        }
        if !changed {
            return idom;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idom_of(n: usize, edges: &[(u32, u32)]) -> Vec<u32> {
        let mut ranges = vec![];
        let mut targets = vec![];
        for v in 0..n as u32 {
            let from = targets.len() as u32;
            targets.extend(edges.iter().filter(|e| e.0 == v).map(|e| e.1));
            ranges.push((from, targets.len() as u32));
        }
        let succ = Adjacency { ranges, targets };
        dominators(&succ, &succ.reversed())
    }

    #[test]
    fn dominators_of_a_diamond_and_a_chain() {
        // top -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 4.
        let idom = idom_of(5, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)]);
        assert_eq!(idom, vec![0, 0, 0, 0, 3]);
    }

    #[test]
    fn meeting_points_are_reached_twice_and_dominated_by_no_node() {
        // Roots 0 and 1 both use 2; 2 alone uses 3; 0 also uses 4, as does 3.
        let ops: Vec<Vec<u32>> = vec![vec![2, 4], vec![2], vec![3], vec![4], vec![]];
        let mut hits = vec![];
        Meet::new(5).meeting_points(&[0, 1], |n| &ops[n as usize], |n| hits.push(n));
        hits.sort_unstable();
        assert_eq!(hits, [2, 4]);
    }

    #[test]
    fn a_cycle_below_the_top_still_converges() {
        // top -> 1; 1 -> 2; 2 -> 1, 3.
        let idom = idom_of(4, &[(0, 1), (1, 2), (2, 1), (2, 3)]);
        assert_eq!(idom, vec![0, 0, 1, 2]);
    }
}
