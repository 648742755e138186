//! Writes a synthetic SDFG (see `benches/synth.rs`) to a file:
//!
//!     cargo run --release --example synth -- SHAPE NODES OUT.sdfg
//!
//! SHAPE is chain, states, tree or loops; prints the actual node count.

#[path = "../benches/synth.rs"]
mod synth;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 {
        eprintln!("usage: synth SHAPE NODES OUT.sdfg   (SHAPE: chain|states|tree|loops)");
        std::process::exit(2);
    }
    let shape = synth::Shape::parse(&args[0]).unwrap_or_else(|| {
        eprintln!("unknown shape '{}'", args[0]);
        std::process::exit(2)
    });
    let n: usize = args[1].parse().expect("NODES is a number");
    let s = synth::generate(shape, n);
    std::fs::write(&args[2], &s.json).expect("write");
    println!("{}", s.nodes);
}
