//! user: a small crate for rustc to compile under heapsift (tests/integration/
//! rust_rustc.sh): hold!() first (hold_macro.rs: where an attach waits), then enough
//! generic code, derives and iterator chains for rustc's type checker, MIR passes and
//! LLVM (its operator new reaches rustc's own malloc) to allocate for a while at -O.
hold_macro::hold!();

use std::collections::{BTreeMap, HashMap};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    Circle { r: u32 },
    Rect { w: u32, h: u32 },
    Poly(Vec<(i32, i32)>),
}

#[derive(Debug, Clone, Default)]
pub struct Scene {
    pub shapes: Vec<Shape>,
    pub names: HashMap<String, usize>,
    pub layers: BTreeMap<u32, Vec<usize>>,
}

pub trait Area {
    fn area(&self) -> f64;
}

impl Area for Shape {
    fn area(&self) -> f64 {
        match self {
            Shape::Circle { r } => 3.14159 * (*r as f64) * (*r as f64),
            Shape::Rect { w, h } => (*w as f64) * (*h as f64),
            Shape::Poly(p) => {
                let n = p.len();
                let s: i64 = (0..n)
                    .map(|i| {
                        let (a, b) = (p[i], p[(i + 1) % n]);
                        a.0 as i64 * b.1 as i64 - b.0 as i64 * a.1 as i64
                    })
                    .sum();
                (s.abs() as f64) / 2.0
            }
        }
    }
}

impl fmt::Display for Scene {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, v) in &self.layers {
            writeln!(f, "layer {}: {:?}", k, v)?;
        }
        write!(f, "{} shapes", self.shapes.len())
    }
}

impl Scene {
    pub fn add(&mut self, name: &str, layer: u32, s: Shape) -> usize {
        let i = self.shapes.len();
        self.shapes.push(s);
        self.names.insert(name.to_string(), i);
        self.layers.entry(layer).or_default().push(i);
        i
    }

    pub fn total<T: Area + ?Sized>(items: &[&T]) -> f64 {
        items.iter().map(|x| x.area()).sum()
    }

    pub fn largest(&self, k: usize) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = self
            .names
            .iter()
            .map(|(n, &i)| (n.clone(), self.shapes[i].area()))
            .collect();
        v.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then_with(|| a.0.cmp(&b.0)));
        v.truncate(k);
        v
    }
}

fn build(n: u32) -> Scene {
    let mut s = Scene::default();
    for i in 0..n {
        let shape = match i % 3 {
            0 => Shape::Circle { r: i },
            1 => Shape::Rect { w: i, h: i + 1 },
            _ => Shape::Poly((0..(i % 7 + 3) as i32).map(|k| (k * 3, k * k - 2)).collect()),
        };
        s.add(&format!("s{}", i), i % 5, shape);
    }
    s
}

fn main() {
    let s = build(100);
    let refs: Vec<&Shape> = s.shapes.iter().collect();
    println!("{}", s);
    println!("total {:.1}", Scene::total(&refs));
    for (n, a) in s.largest(3) {
        println!("{} {:.1}", n, a);
    }
}
