//! `--stats-svg` and `sdfgc plan --svg`: the workspace as a picture.
//!
//! For each program and storage, two panels side by side on one byte
//! scale: sdfgc's packed layout and DaCe's sequential one. x is the
//! program's positions (its top-level dataflow nodes in execution order,
//! shaded and labelled by state, loops drawn under the axis), y is the byte
//! offset from the top. Each transient is a rectangle over its live range
//! at its offset, labelled with its name and size; in DaCe's panel a pale
//! band shows the bytes it keeps for the whole call. Sizes that differ by
//! orders of magnitude stay visible: every band is at least [`MIN_H`] high.
//! Without values for the symbols the bands are of equal height (not to
//! scale) and sizes are formulas.
//!
//! The text is written by hand, in a fixed order with fixed number
//! formats, so the same input gives the same bytes. Every transient
//! rectangle has `class="transient"` and `data-*` attributes (name, bytes,
//! offset, live range), every panel total `class="total"` and
//! `data-bytes`, for tools and tests.

use std::fmt::Write;

use super::picture::{ProgramPicture, Size, StoragePicture, Transient};

/// Font size of every label, in pixels (monospace).
const FONT: f64 = 11.0;
/// Width of one character of the monospace font.
const CHAR_W: f64 = 6.6;
/// Margin around the picture.
const MARGIN: f64 = 20.0;
/// Room left of a plot for its offset labels.
const AXIS_W: f64 = 84.0;
/// Smallest plot width.
const PLOT_W: f64 = 480.0;
/// Smallest width of one position, while the plot stays under [`MAX_PLOT_W`].
const MIN_POS_W: f64 = 3.0;
/// Largest plot width: programs with more than 800 positions get narrower ones.
const MAX_PLOT_W: f64 = 2400.0;
/// Gap between the packed and DaCe's panel.
const GAP: f64 = 36.0;
/// Smallest height of a band (a shelf, or one transient in DaCe's layout).
pub const MIN_H: f64 = 16.0;
/// Height of a band when the picture is not to scale.
const UNIT_H: f64 = 22.0;
/// Height of the taller panel's bytes before bands are raised to [`MIN_H`].
const TARGET_H: f64 = 320.0;
/// Longest state label under the axis, in characters.
const STATE_CHARS: usize = 20;

/// The one buffer of a storage that `sdfgc plan` asks for.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// DaCe's name of the storage.
    pub storage: String,
    /// The largest packed size over the programs.
    pub size: Size,
    /// The program that needs it (when every size is known).
    pub largest: Option<String>,
}

/// Colours of a storage: two fills (alternating by shelf) and a stroke.
fn colours(storage: &str) -> (&'static str, &'static str, &'static str) {
    match storage {
        "CPU_Heap" => ("#9ecae1", "#c6dbef", "#2171b5"),
        "GPU_Global" => ("#a1d99b", "#c7e9c0", "#238b45"),
        "CPU_Pinned" => ("#fdae6b", "#fdd0a2", "#d94801"),
        "GPU_Shared" => ("#bcbddc", "#dadaeb", "#6a51a3"),
        "CPU_ThreadLocal" => ("#fcbba1", "#fee0d2", "#cb181d"),
        _ => ("#d9d9d9", "#f0f0f0", "#525252"),
    }
}

/// Escapes text for SVG content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `1234567` as `1,234,567`.
fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// Bytes for a label: `216 B`, `2.5 KiB`, `1.2 GiB`.
pub fn human(n: i64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n.unsigned_abs() < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A size for a label: its value in human units, else its formula.
fn size_label(s: &Size) -> String {
    s.value.map_or_else(|| s.formula.clone(), human)
}

/// A size in full: `2.5 KiB (2,560 B)`, `216 B`, or its formula.
fn size_full(s: &Size) -> String {
    match s.value {
        Some(v) if v.unsigned_abs() >= 1024 => format!("{} ({} B)", human(v), grouped(v)),
        Some(v) => format!("{v} B"),
        None => s.formula.clone(),
    }
}

/// Text cut to `chars` characters, with an ellipsis if cut.
fn fit(s: &str, chars: usize) -> Option<String> {
    let n = s.chars().count();
    if n <= chars {
        Some(s.to_string())
    } else if chars >= 4 {
        Some(s.chars().take(chars - 1).chain(['…']).collect())
    } else {
        None
    }
}

/// The SVG text being written, and how far down it reaches.
struct Canvas {
    body: String,
    width: f64,
    y: f64,
}

impl Canvas {
    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, attrs: &str, title: Option<&str>) {
        let _ = write!(
            self.body,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" {attrs}"
        );
        match title {
            Some(t) => {
                let _ = writeln!(self.body, "><title>{}</title></rect>", escape(t));
            }
            None => self.body.push_str("/>\n"),
        }
        self.width = self.width.max(x + w);
    }

    fn text(&mut self, x: f64, y: f64, attrs: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" {attrs}>{}</text>",
            escape(text)
        );
        if !attrs.contains("text-anchor=\"end\"") && !attrs.contains("rotate(") {
            // Labels in a larger font say so first: `font-size="14"`.
            let size = attrs
                .strip_prefix("font-size=\"")
                .and_then(|r| r.split('"').next())
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(FONT);
            let chars = text.chars().count() as f64;
            self.width = self.width.max(x + chars * CHAR_W * size / FONT);
        }
    }

    fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, attrs: &str) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" {attrs}/>"
        );
    }
}

/// The picture: a title, a legend, for `plan` the allocation of each
/// storage with every program's need (and the programs that need none),
/// then every program's panels.
pub fn render(title: &str, programs: &[ProgramPicture], plan: Option<&[Allocation]>) -> String {
    let mut c = Canvas {
        body: String::new(),
        width: 0.0,
        y: MARGIN,
    };
    c.y += 16.0;
    c.text(
        MARGIN,
        c.y,
        "font-size=\"16\" font-weight=\"bold\" class=\"title\"",
        title,
    );
    c.y += 10.0;
    legend(&mut c, programs);
    if let Some(allocations) = plan {
        plan_summary(&mut c, programs, allocations);
    }
    // A plan names the programs without a workspace in its summary.
    for p in programs {
        if plan.is_none() || !p.storages.is_empty() {
            program(&mut c, p);
        }
    }
    let width = (c.width + MARGIN).ceil();
    let height = (c.y + MARGIN).ceil();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"{FONT}\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\" class=\"background\"/>"
    );
    out.push_str(&c.body);
    out.push_str("</svg>\n");
    out
}

/// One swatch per storage shown, and what the shading means.
fn legend(c: &mut Canvas, programs: &[ProgramPicture]) {
    let mut storages: Vec<&str> = programs
        .iter()
        .flat_map(|p| p.storages.iter().map(|s| s.storage.as_str()))
        .collect();
    storages.sort_unstable();
    storages.dedup();
    c.y += 8.0;
    let mut x = MARGIN;
    for s in &storages {
        let (fill, _, stroke) = colours(s);
        c.rect(
            x,
            c.y,
            14.0,
            12.0,
            &format!("fill=\"{fill}\" stroke=\"{stroke}\" class=\"legend\""),
            None,
        );
        c.text(x + 20.0, c.y + 10.0, "class=\"legend-label\"", s);
        x += 20.0 + s.len() as f64 * CHAR_W + 24.0;
    }
    let (fill, _, stroke) = colours(storages.first().copied().unwrap_or(""));
    c.rect(
        x,
        c.y,
        14.0,
        12.0,
        &format!(
            "fill=\"{fill}\" fill-opacity=\"0.25\" stroke=\"{stroke}\" stroke-dasharray=\"3 2\""
        ),
        None,
    );
    c.text(
        x + 20.0,
        c.y + 10.0,
        "class=\"legend-label\"",
        "DaCe: bytes kept for the whole call",
    );
    x += 20.0 + 35.0 * CHAR_W + 24.0;
    c.line(
        x,
        c.y + 6.0,
        x + 14.0,
        c.y + 6.0,
        "stroke=\"#888888\" stroke-width=\"3\"",
    );
    c.text(
        x + 20.0,
        c.y + 10.0,
        "class=\"legend-label\"",
        "a loop (under the axis)",
    );
    c.y += 30.0;
    c.text(
        MARGIN,
        c.y,
        "fill=\"#555555\"",
        "x: positions (top-level dataflow nodes) in execution order, shaded by state; y: byte offset from the start of the workspace",
    );
    c.y += 12.0;
}

/// `plan`: per storage, the one size to allocate and each program's need.
fn plan_summary(c: &mut Canvas, programs: &[ProgramPicture], allocations: &[Allocation]) {
    const NAME_W: f64 = 300.0;
    const BAR_W: f64 = 360.0;
    for a in allocations {
        c.y += 26.0;
        let who = a
            .largest
            .as_ref()
            .map(|l| format!(" (largest: {l})"))
            .unwrap_or_default();
        let attrs = format!(
            "font-size=\"14\" font-weight=\"bold\" class=\"allocate\" data-storage=\"{}\"{}",
            escape(&a.storage),
            a.size
                .value
                .map(|v| format!(" data-bytes=\"{v}\""))
                .unwrap_or_default()
        );
        c.text(
            MARGIN,
            c.y,
            &attrs,
            &format!("{}: allocate {} once{who}", a.storage, size_full(&a.size)),
        );
        c.y += 8.0;
        let (fill, _, stroke) = colours(&a.storage);
        for p in programs {
            let Some(s) = p.storages.iter().find(|s| s.storage == a.storage) else {
                continue;
            };
            c.y += 16.0;
            c.text(
                MARGIN + 12.0,
                c.y,
                "",
                &fit(&p.name, (NAME_W / CHAR_W) as usize - 3).unwrap_or_default(),
            );
            let x = MARGIN + NAME_W;
            let w = match (s.packed.value, a.size.value) {
                (Some(v), Some(m)) if m > 0 => (v as f64 / m as f64 * BAR_W).max(2.0),
                _ => BAR_W,
            };
            let data = s
                .packed
                .value
                .map(|v| format!(" data-bytes=\"{v}\""))
                .unwrap_or_default();
            c.rect(
                x,
                c.y - 10.0,
                w,
                12.0,
                &format!(
                    "fill=\"{fill}\" stroke=\"{stroke}\" class=\"need\" data-name=\"{}\"{data}",
                    escape(&p.name)
                ),
                Some(&format!("{}: {}", p.name, size_full(&s.packed))),
            );
            c.text(x + w + 6.0, c.y, "", &size_full(&s.packed));
        }
    }
    let none: Vec<&str> = programs
        .iter()
        .filter(|p| p.storages.is_empty())
        .map(|p| p.name.as_str())
        .collect();
    // Wrapped at about the width of the two panels.
    let mut line = String::from("no workspace:");
    for (i, name) in none.iter().enumerate() {
        let comma = if i + 1 < none.len() { "," } else { "" };
        if line.chars().count() + name.len() + 2 > 150 {
            c.y += 16.0;
            c.text(MARGIN, c.y, "fill=\"#555555\" class=\"none\"", &line);
            line = String::from("   ");
        }
        line.push(' ');
        line.push_str(name);
        line.push_str(comma);
    }
    if !none.is_empty() {
        c.y += 16.0;
        c.text(MARGIN, c.y, "fill=\"#555555\" class=\"none\"", &line);
    }
    c.y += 8.0;
}

/// Width of one position and of the plot.
fn x_scale(p: &ProgramPicture) -> (f64, f64) {
    let n = f64::from(p.positions.max(1));
    let w = (PLOT_W / n).max(MIN_POS_W.min(MAX_PLOT_W / n));
    (w, w * n)
}

/// A program: its heading, then per storage the two panels.
fn program(c: &mut Canvas, p: &ProgramPicture) {
    c.y += 34.0;
    c.line(
        MARGIN,
        c.y - 20.0,
        MARGIN + 2.0 * (AXIS_W + x_scale(p).1) + GAP,
        c.y - 20.0,
        "stroke=\"#bbbbbb\"",
    );
    c.text(
        MARGIN,
        c.y,
        &format!(
            "font-size=\"14\" font-weight=\"bold\" class=\"program\" data-name=\"{}\"",
            escape(&p.name)
        ),
        &format!("{} ({})", p.name, p.file),
    );
    if p.storages.is_empty() {
        c.y += 18.0;
        c.text(
            MARGIN,
            c.y,
            "fill=\"#555555\"",
            "no workspace (no External transients; try --mode external)",
        );
        return;
    }
    if let Some(t) = p.threads {
        c.y += 16.0;
        c.text(
            MARGIN,
            c.y,
            "fill=\"#555555\"",
            &format!("per-thread transients sized for T = {t} threads"),
        );
    }
    for s in &p.storages {
        storage(c, p, s);
    }
}

/// The bands of both panels (top and height in pixels) and the byte scale.
struct Bands {
    /// Top and height of every shelf.
    packed: Vec<(f64, f64)>,
    /// Top and height of every transient in DaCe's layout.
    dace: Vec<(f64, f64)>,
    /// Pixels per byte (0 when not to scale).
    scale: f64,
}

impl Bands {
    fn of(s: &StoragePicture) -> Bands {
        let scale = if s.to_scale() {
            let largest = s
                .packed
                .value
                .unwrap_or(0)
                .max(s.dace.value.unwrap_or(0))
                .max(1);
            TARGET_H / largest as f64
        } else {
            0.0
        };
        let height = |bytes: Option<i64>| {
            if scale > 0.0 {
                (bytes.unwrap_or(0) as f64 * scale).max(MIN_H)
            } else {
                UNIT_H
            }
        };
        let stack = |heights: Vec<f64>| {
            let mut top = 0.0;
            heights
                .into_iter()
                .map(|h| {
                    let band = (top, h);
                    top += h;
                    band
                })
                .collect()
        };
        Bands {
            packed: stack(s.shelves.iter().map(|(_, z)| height(z.value)).collect()),
            dace: stack(s.transients.iter().map(|t| height(t.bytes.value)).collect()),
            scale,
        }
    }

    fn height(bands: &[(f64, f64)]) -> f64 {
        bands.last().map_or(MIN_H, |(t, h)| t + h)
    }
}

/// One storage of a program: heading, packed panel, DaCe's panel.
fn storage(c: &mut Canvas, p: &ProgramPicture, s: &StoragePicture) {
    c.y += 22.0;
    let ratio = match (s.packed.value, s.dace.value) {
        (Some(a), Some(b)) if b > 0 => format!(", packed / DaCe = {:.3}", a as f64 / b as f64),
        _ => String::new(),
    };
    c.text(
        MARGIN,
        c.y,
        &format!(
            "font-weight=\"bold\" class=\"storage\" data-storage=\"{}\"",
            escape(&s.storage)
        ),
        &format!(
            "{}: {} transients, {} shelves, {}-byte alignment{ratio}",
            s.storage,
            s.transients.len(),
            s.shelves.len(),
            s.align
        ),
    );
    if s.to_scale() {
        c.y += 8.0;
    } else {
        c.y += 16.0;
        c.text(
            MARGIN,
            c.y,
            "fill=\"#b35806\"",
            "not to scale: sizes depend on symbols without values (--symbol NAME=VALUE)",
        );
        c.y += 8.0;
    }
    let bands = Bands::of(s);
    let (pos_w, plot_w) = x_scale(p);
    let top = c.y + 34.0;
    let left = MARGIN + AXIS_W;
    let right = left + plot_w + GAP + AXIS_W;
    let packed_h = Bands::height(&bands.packed);
    let dace_h = Bands::height(&bands.dace);
    let panel = Panel {
        p,
        s,
        top,
        pos_w,
        plot_w,
    };
    panel.draw(
        c,
        left,
        "sdfgc, packed",
        &s.packed,
        &bands.packed,
        true,
        &bands,
    );
    panel.draw(
        c,
        right,
        "DaCe, sequential",
        &s.dace,
        &bands.dace,
        false,
        &bands,
    );
    c.y = top + packed_h.max(dace_h);
    c.y = state_axis(c, p, left, pos_w).max(state_axis(c, p, right, pos_w));
}

/// Where a panel goes and its x scale.
struct Panel<'a> {
    p: &'a ProgramPicture,
    s: &'a StoragePicture,
    top: f64,
    pos_w: f64,
    plot_w: f64,
}

impl Panel<'_> {
    #[allow(clippy::too_many_arguments)]
    fn draw(
        &self,
        c: &mut Canvas,
        left: f64,
        name: &str,
        total: &Size,
        bands: &[(f64, f64)],
        packed: bool,
        all: &Bands,
    ) {
        let (top, plot_w) = (self.top, self.plot_w);
        let height = Bands::height(bands);
        c.text(
            left,
            top - 20.0,
            "font-weight=\"bold\" class=\"panel\"",
            &format!("{name}: {}", size_full(total)),
        );
        // States: alternating shading over the whole plot.
        for (i, (label, span)) in self.p.states.iter().enumerate() {
            let x = left + f64::from(span.start) * self.pos_w;
            let w = f64::from(span.end - span.start + 1) * self.pos_w;
            let fill = if i % 2 == 0 { "#f4f4f4" } else { "#ffffff" };
            c.rect(
                x,
                top,
                w,
                height,
                &format!("fill=\"{fill}\" class=\"state\""),
                Some(&format!(
                    "state {label}: positions {}..{}",
                    span.start, span.end
                )),
            );
        }
        // Band boundaries and offset labels.
        let (fill_a, fill_b, stroke) = colours(&self.s.storage);
        let mut last_label = f64::NEG_INFINITY;
        for (k, &(band_top, h)) in bands.iter().enumerate() {
            let y = top + band_top;
            c.line(left, y, left + plot_w, y, "stroke=\"#e0e0e0\"");
            let offset = if packed {
                self.s.shelves[k].0.value
            } else {
                self.s.transients[k].dace_offset
            };
            if y - last_label >= FONT + 1.0 && offset.is_some() {
                c.text(
                    left - 4.0,
                    y + 4.0,
                    "text-anchor=\"end\" fill=\"#555555\" class=\"offset\"",
                    &human(offset.unwrap_or(0)),
                );
                last_label = y;
            }
            if !packed {
                let t = &self.s.transients[k];
                c.rect(
                    left,
                    y,
                    plot_w,
                    h,
                    &format!(
                        "fill=\"{fill_a}\" fill-opacity=\"0.25\" stroke=\"{stroke}\" stroke-opacity=\"0.5\" stroke-dasharray=\"3 2\" class=\"reserved\""
                    ),
                    Some(&format!("{} keeps {} for the whole call", t.name, size_full(&t.bytes))),
                );
            }
        }
        // The transients.
        let rects: Vec<(f64, f64, f64, f64)> = self
            .s
            .transients
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (band_top, band_h) = if packed { bands[t.shelf] } else { bands[i] };
                let h = if all.scale > 0.0 {
                    (t.bytes.value.unwrap_or(0) as f64 * all.scale)
                        .max(MIN_H)
                        .min(band_h)
                } else {
                    band_h
                };
                let x = left + f64::from(t.live.start) * self.pos_w;
                let w = f64::from(t.live.end - t.live.start + 1) * self.pos_w;
                (x, top + band_top, w, h)
            })
            .collect();
        for (i, t) in self.s.transients.iter().enumerate() {
            let (x, y, w, h) = rects[i];
            let fill = if t.shelf % 2 == 0 { fill_a } else { fill_b };
            let offset = if packed {
                self.s.shelves[t.shelf].0.value
            } else {
                t.dace_offset
            };
            let mut data = format!(
                "data-name=\"{}\" data-live=\"{}..{}\"",
                escape(&t.name),
                t.live.start,
                t.live.end
            );
            if let Some(b) = t.bytes.value {
                let _ = write!(data, " data-bytes=\"{b}\"");
            }
            if let Some(o) = offset {
                let _ = write!(data, " data-offset=\"{o}\"");
            }
            if packed {
                let _ = write!(data, " data-shelf=\"{}\"", t.shelf);
            }
            c.rect(
                x,
                y,
                w,
                h,
                &format!("fill=\"{fill}\" stroke=\"{stroke}\" class=\"transient\" {data}"),
                Some(&tooltip(t, offset, packed)),
            );
            // The label may run on into the empty part of its band, up to
            // the next transient that starts later there.
            let room = self
                .s
                .transients
                .iter()
                .enumerate()
                .filter(|&(j, u)| {
                    j != i
                        && u.live.start > t.live.start
                        && if packed { u.shelf == t.shelf } else { false }
                })
                .map(|(j, _)| rects[j].0)
                .fold(left + plot_w, f64::min)
                - x;
            let chars = ((room - 6.0) / CHAR_W).floor().max(0.0) as usize;
            let full = format!("{} {}", t.name, size_label(&t.bytes));
            let label = if full.chars().count() <= chars {
                Some(full)
            } else {
                fit(&t.name, chars)
            };
            if let Some(label) = label {
                c.text(
                    x + 3.0,
                    y + h / 2.0 + 4.0,
                    "fill=\"#111111\" class=\"label\"",
                    &label,
                );
            }
        }
        // Frame and total.
        c.rect(
            left,
            top,
            plot_w,
            height,
            "fill=\"none\" stroke=\"#333333\" class=\"frame\"",
            None,
        );
        c.text(
            left - 4.0,
            top + height + 4.0,
            &format!(
                "text-anchor=\"end\" font-weight=\"bold\" class=\"total\"{}",
                total
                    .value
                    .map(|v| format!(" data-bytes=\"{v}\""))
                    .unwrap_or_default()
            ),
            &size_label(total),
        );
    }
}

/// What hovering over a transient says.
fn tooltip(t: &Transient, offset: Option<i64>, packed: bool) -> String {
    let mut s = format!(
        "{}: {}, live {}..{}",
        t.name,
        size_full(&t.bytes),
        t.live.start,
        t.live.end
    );
    if let Some(o) = offset {
        let _ = write!(s, ", offset {}", grouped(o));
    }
    if packed {
        let _ = write!(s, ", shelf {}", t.shelf);
    }
    if t.per_thread {
        s.push_str(", one copy per thread");
    }
    s
}

/// Loops and state labels under a plot; returns the bottom.
fn state_axis(c: &mut Canvas, p: &ProgramPicture, left: f64, pos_w: f64) -> f64 {
    let top = c.y + 4.0;
    // Loops, one row per nesting depth.
    let mut rows = 0;
    for (i, l) in p.loops.iter().enumerate() {
        let depth = p
            .loops
            .iter()
            .enumerate()
            .filter(|&(j, o)| {
                j != i
                    && o.start <= l.start
                    && l.end <= o.end
                    && (o.start < l.start || l.end < o.end || j < i)
            })
            .count()
            .min(5);
        rows = rows.max(depth + 1);
        let y = top + 3.0 + depth as f64 * 5.0;
        let x1 = left + f64::from(l.start) * pos_w;
        let x2 = left + f64::from(l.end + 1) * pos_w;
        let _ = writeln!(
            c.body,
            "<line x1=\"{x1:.1}\" y1=\"{y:.1}\" x2=\"{x2:.1}\" y2=\"{y:.1}\" stroke=\"#888888\" stroke-width=\"3\" class=\"loop\"><title>loop over positions {}..{}</title></line>",
            l.start, l.end
        );
    }
    let labels_top = top + 6.0 + rows as f64 * 5.0;
    let mut longest = 0usize;
    for (label, span) in &p.states {
        let w = f64::from(span.end - span.start + 1) * pos_w;
        if w < FONT + 1.0 {
            continue;
        }
        let x = left + (f64::from(span.start) + f64::from(span.end + 1)) / 2.0 * pos_w - 4.0;
        let text = fit(label, STATE_CHARS).unwrap_or_default();
        longest = longest.max(text.chars().count());
        c.text(
            x,
            labels_top,
            &format!("transform=\"rotate(90 {x:.1} {labels_top:.1})\" fill=\"#333333\" class=\"state-label\""),
            &text,
        );
    }
    labels_top + longest as f64 * CHAR_W + 4.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_text() {
        assert_eq!(human(216), "216 B");
        assert_eq!(human(2560), "2.5 KiB");
        assert_eq!(human(3 << 30), "3.0 GiB");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(999), "999");
        assert_eq!(escape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&apos;");
        assert_eq!(fit("abcdefgh", 5).as_deref(), Some("abcd…"));
        assert_eq!(fit("abc", 5).as_deref(), Some("abc"));
        assert_eq!(fit("abcdefgh", 3), None);
    }

    #[test]
    fn tiny_transients_beside_huge_ones_stay_visible_and_labelled() {
        use crate::passes::liveness::Live;
        let size = |v: i64| Size {
            formula: v.to_string(),
            value: Some(v),
        };
        let transient =
            |name: &str, bytes: i64, shelf: usize, dace: i64, live: (u32, u32)| Transient {
                name: name.into(),
                bytes: size(bytes),
                shelf,
                dace_offset: Some(dace),
                live: Live {
                    start: live.0,
                    end: live.1,
                },
                per_thread: false,
            };
        let storage = StoragePicture {
            storage: "GPU_Global".into(),
            align: 256,
            shelves: vec![(size(0), size(1 << 30)), (size(1 << 30), size(256))],
            transients: vec![
                transient("huge", 1 << 30, 0, 0, (0, 3)),
                transient("tiny", 100, 1, 1 << 30, (1, 2)),
            ],
            packed: size((1 << 30) + 256),
            dace: size((1 << 30) + 100),
        };
        let program = ProgramPicture {
            name: "p<&>".into(),
            file: "f.sdfg".into(),
            positions: 4,
            states: vec![("s".into(), Live { start: 0, end: 3 })],
            loops: vec![],
            storages: vec![storage],
            threads: None,
        };
        let svg = render("t", &[program], None);
        let rect = |name: &str| {
            svg.lines()
                .find(|l| l.contains(&format!("class=\"transient\" data-name=\"{name}\"")))
                .unwrap()
                .to_string()
        };
        assert!(
            rect("tiny").contains(&format!("height=\"{MIN_H:.1}\"")),
            "{svg}"
        );
        assert!(rect("huge").contains("height=\"320.0\""), "{svg}");
        assert!(svg.contains(">tiny 100 B</text>"), "{svg}");
        assert!(svg.contains(">huge 1.0 GiB</text>"), "{svg}");
        assert!(svg.contains("p&lt;&amp;&gt; (f.sdfg)"), "{svg}");
        assert!(svg.contains("class=\"total\" data-bytes=\"1073742080\">1.0 GiB</text>"));
    }
}
