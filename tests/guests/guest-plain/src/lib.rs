//! Test guest: a component written for no host in particular. It exports
//! typed functions (at the world level and in the interfaces `text` and
//! `counter`), not toolhost's `tool-info` and `call`, so that toolhost
//! serves each exported function as a tool typed from its WIT.

// `scalars` takes one parameter of each scalar type, on purpose.
#![allow(clippy::too_many_arguments)]

use std::cell::Cell;

wit_bindgen::generate!({
    path: "wit",
    world: "plain",
    generate_all,
});

use exports::test::plain::counter::{self, GuestTally};
use exports::test::plain::text;
use wasi::config::store;

struct Plain;

export!(Plain);

impl Guest for Plain {
    fn scalars(
        b: bool,
        i8v: i8,
        u8v: u8,
        i16v: i16,
        u16v: u16,
        i32v: i32,
        u32v: u32,
        i64v: i64,
        u64v: u64,
        f32v: f32,
        f64v: f64,
        c: char,
        s: String,
    ) -> Scalars {
        Scalars {
            b,
            i8v,
            u8v,
            i16v,
            u16v,
            i32v,
            u32v,
            i64v,
            u64v,
            f32v,
            f64v,
            c,
            s,
        }
    }

    fn compound(c: Compound) -> Compound {
        c
    }

    fn echo(text: String) -> String {
        text
    }

    fn read_file(path: String, limit: Option<u32>) -> Result<Vec<u8>, String> {
        let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let limit = limit.map_or(bytes.len(), |l| l as usize);
        Ok(bytes.into_iter().take(limit).collect())
    }

    fn fallible(ok: bool, text: String) -> Result<String, String> {
        if ok { Ok(text) } else { Err(text) }
    }

    fn fails_typed() -> Result<u32, Point> {
        Err(Point { x: 1, y: -2 })
    }

    fn nothing() {}

    fn next_color(c: Color) -> Color {
        match c {
            Color::Red => Color::Green,
            Color::Green => Color::DarkBlue,
            Color::DarkBlue => Color::Red,
        }
    }

    fn config_get(key: String) -> Option<String> {
        store::get(&key).ok().flatten()
    }

    fn config_keys() -> Vec<String> {
        let mut keys: Vec<String> = store::get_all()
            .map(|all| all.into_iter().map(|(k, _)| k).collect())
            .unwrap_or_default();
        keys.sort();
        keys
    }

    fn big(mib: u32) -> Vec<u8> {
        vec![7; mib as usize * 1024 * 1024]
    }

    fn spin() {
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }

    fn classify(x: f64) -> String {
        if x.is_nan() {
            "nan".into()
        } else if x.is_infinite() {
            if x > 0.0 {
                "+inf".into()
            } else {
                "-inf".into()
            }
        } else {
            format!("finite {x}")
        }
    }
}

impl text::Guest for Plain {
    fn reverse(s: String) -> String {
        s.chars().rev().collect()
    }

    fn echo(s: String) -> String {
        format!("text:{s}")
    }
}

/// A tally that counts from its start.
struct Tally(Cell<u32>);

impl GuestTally for Tally {
    fn new(start: u32) -> Self {
        Tally(Cell::new(start))
    }

    fn get(&self) -> u32 {
        self.0.get()
    }
}

impl counter::Guest for Plain {
    type Tally = Tally;

    fn read(t: counter::TallyBorrow<'_>) -> u32 {
        t.get::<Tally>().get()
    }

    fn zero() -> u32 {
        0
    }
}
