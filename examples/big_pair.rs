//! Writes a generated VS→FS pair of about N instructions (`varysat::internals::gen::synth_pair`)
//! as `.pair` text, for measuring whole-run budgets on large inputs:
//!
//!     cargo run --release --example big_pair -- 100000 > /tmp/big.pair
//!     time target/release/varysat opt --time-limit 0.5 --report json /tmp/big.pair >/dev/null
//!
//! Arguments: instruction count (default 100000), seed (default 1).

use varysat::internals::gen::synth_pair;
use varysat::Stage;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let p = synth_pair((Stage::Vertex, Stage::Fragment), n, seed);
    print!("{}", varysat::text::print(&p));
}
