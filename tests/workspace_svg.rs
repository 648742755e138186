//! The workspace pictures (`--stats-svg`, `sdfgc plan --svg`): snapshots of
//! a few, every one of the corpus parsed as XML with one rectangle per
//! transient in each panel and the totals of `--stats-json`, the CLI on
//! every corpus file, byte-identical output, escaped labels, and one
//! picture rendered by a real renderer (resvg).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sdfgc::driver::{CompileOptions, Mode, Target};
use sdfgc::report::{self, FileSymbols, Symbols};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sdfgc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sdfgc"));
    c.current_dir(root());
    c
}

fn external(target: Target) -> CompileOptions {
    CompileOptions {
        mode: Some(Mode::External),
        ..CompileOptions::new(target)
    }
}

/// The integer symbols of a case folder's case.json.
fn case_symbols(dir: &Path) -> Symbols {
    let Ok(text) = std::fs::read_to_string(dir.join("case.json")) else {
        return Symbols::new();
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["symbols"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_i64().map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default()
}

/// Every SDFG of the corpus and of the gt4py fixtures (paths relative to
/// the repository), with its target and its case's symbols.
fn programs() -> Vec<(PathBuf, Target, Symbols)> {
    let mut out = Vec::new();
    for family in [
        "fixtures/corpus",
        "fixtures/gt4py",
        "fixtures/gt4py/icon4py",
    ] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join(family))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("case.json").exists())
            .collect();
        dirs.sort();
        for dir in dirs {
            let symbols = case_symbols(&dir);
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "sdfg"))
                .collect();
            files.sort();
            for f in files {
                let name = f.file_name().unwrap().to_string_lossy().to_string();
                let target = if name.contains("gpu") {
                    Target::Cuda
                } else if name.contains("hip") {
                    Target::Hip
                } else {
                    Target::Cpp
                };
                let rel = f.strip_prefix(root()).unwrap().to_path_buf();
                out.push((rel, target, symbols.clone()));
            }
        }
    }
    out
}

/// The `--stats-svg` picture of one file, made in process.
fn picture(file: &Path, target: Target, symbols: &Symbols) -> String {
    let (programs, errors) = report::prepare(&[root().join(file)], &external(target));
    assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    // The path as the user typed it (relative), as the CLI would show it.
    let programs: Vec<_> = programs
        .into_iter()
        .map(|(_, p)| (file.to_path_buf(), p))
        .collect();
    report::stats_svg(&programs, symbols)
}

/// The `--stats-json` report of one file, made in process.
fn stats_json(file: &Path, target: Target, symbols: &Symbols) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stats.json");
    report::stats(
        &[root().join(file)],
        &external(target),
        symbols,
        false,
        Some(&json),
        None,
        &mut std::io::sink(),
    )
    .unwrap();
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn class<'a>(doc: &'a roxmltree::Document, tag: &str, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.has_tag_name(tag) && n.attribute("class") == Some(class))
        .collect()
}

fn number(n: &roxmltree::Node, attr: &str) -> f64 {
    n.attribute(attr)
        .unwrap_or_else(|| panic!("no {attr} on {n:?}"))
        .parse()
        .unwrap()
}

/// Parses a picture and checks it against the `--stats-json` report of the
/// same programs: one transient rectangle per transient in the packed panel
/// and one in DaCe's, named and sized as the report says, inside its
/// plot; two totals per storage with the report's packed and DaCe bytes.
fn check_structure(svg: &str, report: &serde_json::Value, what: &str) {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{what}: {e}\n{svg}"));
    let root = doc.root_element();
    assert!(
        root.has_tag_name(("http://www.w3.org/2000/svg", "svg")),
        "{what}"
    );
    let (width, height) = (number(&root, "width"), number(&root, "height"));
    let rects = class(&doc, "rect", "transient");
    let totals = class(&doc, "text", "total");
    let frames = class(&doc, "rect", "frame");
    let mut expected_rects: BTreeMap<String, usize> = BTreeMap::new();
    let mut expected_totals: Vec<Option<i64>> = Vec::new();
    for program in report.as_array().unwrap() {
        for (_, s) in program["storages"].as_object().unwrap() {
            for t in s["transients"].as_array().unwrap() {
                *expected_rects
                    .entry(t["name"].as_str().unwrap().to_string())
                    .or_default() += 2;
            }
            expected_totals.push(s["packed_bytes"].as_i64());
            expected_totals.push(s["dace_bytes"].as_i64());
        }
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for r in &rects {
        *seen
            .entry(r.attribute("data-name").unwrap().to_string())
            .or_default() += 1;
        let (x, y, w, h) = (
            number(r, "x"),
            number(r, "y"),
            number(r, "width"),
            number(r, "height"),
        );
        assert!(w > 0.0 && h >= 15.9, "{what}: {r:?} too small");
        assert!(x + w <= width && y + h <= height, "{what}: {r:?} outside");
        assert!(
            r.children().any(|c| c.has_tag_name("title")),
            "{what}: {r:?} has no tooltip"
        );
    }
    assert_eq!(seen, expected_rects, "{what}: transient rectangles");
    assert_eq!(frames.len(), expected_totals.len(), "{what}: panels");
    let totals: Vec<Option<i64>> = totals
        .iter()
        .map(|t| t.attribute("data-bytes").map(|b| b.parse().unwrap()))
        .collect();
    assert_eq!(totals, expected_totals, "{what}: totals");
    // Every transient rectangle lies inside a frame (its panel).
    for r in &rects {
        let (x, y) = (number(r, "x"), number(r, "y"));
        assert!(
            frames.iter().any(|f| {
                let (fx, fy) = (number(f, "x"), number(f, "y"));
                x >= fx - 0.15
                    && y >= fy - 0.15
                    && x + number(r, "width") <= fx + number(f, "width") + 0.15
                    && y + number(r, "height") <= fy + number(f, "height") + 0.15
            }),
            "{what}: {r:?} outside every panel"
        );
    }
}

#[test]
fn pictures_match_the_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (file, target) in [
            (
                "fixtures/gt4py/icon4py/calculate_nabla4/cpu.sdfg",
                Target::Cpp,
            ),
            (
                "fixtures/corpus/control_flow_regions/program.sdfg",
                Target::Cpp,
            ),
            (
                "fixtures/corpus/nested_program/program.gpu.sdfg",
                Target::Cuda,
            ),
        ] {
            let file = Path::new(file);
            let svg = picture(
                file,
                target,
                &case_symbols(&root().join(file.parent().unwrap())),
            );
            let key = format!("workspace_svg__{}", file.display())
                .replace(['/', '.'], "_")
                .to_lowercase();
            insta::assert_snapshot!(key, svg);
        }
        insta::assert_snapshot!("workspace_svg__plan_gt4py", plan_svg(&gt4py_cpu()).0);
    });
}

/// The CPU SDFGs of the gt4py fixtures (ICON4Py's first), with their symbols.
fn gt4py_cpu() -> Vec<(PathBuf, Symbols)> {
    let mut out: Vec<(PathBuf, Symbols)> = programs()
        .into_iter()
        .filter(|(f, _, _)| f.starts_with("fixtures/gt4py") && f.ends_with("cpu.sdfg"))
        .map(|(f, _, s)| (f, s))
        .collect();
    out.sort_by_key(|(f, _)| (!f.starts_with("fixtures/gt4py/icon4py"), f.clone()));
    out
}

/// `sdfgc plan --svg` over files with their own symbols (`--symbols-json`):
/// the picture and the JSON plan.
fn plan_svg(files: &[(PathBuf, Symbols)]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("plan.svg");
    let symbols = dir.path().join("symbols.json");
    let per_file: BTreeMap<String, &Symbols> = files
        .iter()
        .map(|(f, s)| (f.display().to_string(), s))
        .collect();
    std::fs::write(&symbols, serde_json::to_string(&per_file).unwrap()).unwrap();
    let out = sdfgc()
        .args(["plan", "--mode", "external", "--json", "--svg"])
        .arg(&svg)
        .arg("--symbols-json")
        .arg(&symbols)
        .args(files.iter().map(|(f, _)| f))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        std::fs::read_to_string(svg).unwrap(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

#[test]
fn every_picture_parses_with_one_rectangle_per_transient_and_the_totals() {
    let mut checked = 0;
    let mut with_workspace = 0;
    for (file, target, symbols) in programs() {
        for symbols in [symbols, Symbols::new()] {
            let what = format!("{} ({} symbols)", file.display(), symbols.len());
            let report = stats_json(&file, target, &symbols);
            let svg = picture(&file, target, &symbols);
            check_structure(&svg, &report, &what);
            checked += 1;
            with_workspace += usize::from(svg.contains("class=\"transient\""));
        }
    }
    assert!(checked > 400, "{checked} pictures");
    assert!(
        with_workspace > 150,
        "{with_workspace} pictures with a workspace"
    );
}

#[test]
fn stats_svg_on_every_corpus_file_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for (file, target, symbols) in programs() {
        let svg = dir.path().join(format!("{n}.svg"));
        let mut cmd = sdfgc();
        cmd.arg(&file)
            .args(["--mode", "external", "--target"])
            .arg(format!("{target:?}").to_lowercase())
            .arg("--stats-svg")
            .arg(&svg);
        for (k, v) in &symbols {
            cmd.arg("--symbol").arg(format!("{k}={v}"));
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&svg).unwrap();
        // The CLI's picture is the library's, byte for byte.
        assert_eq!(text, picture(&file, target, &symbols), "{}", file.display());
        n += 1;
    }
    assert!(n > 250, "{n} files");
}

#[test]
fn plan_svg_stacks_the_programs_under_the_size_to_allocate() {
    let files = gt4py_cpu();
    let (svg, plan) = plan_svg(&files);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    // A section for each program with a workspace, the others named at the top.
    let headings = class(&doc, "text", "program");
    assert_eq!(headings.len(), files.len() - 3);
    let allocate = class(&doc, "text", "allocate");
    let storages = plan.as_object().unwrap();
    assert_eq!(allocate.len(), storages.len());
    for a in &allocate {
        let storage = a.attribute("data-storage").unwrap();
        let bytes: i64 = a.attribute("data-bytes").unwrap().parse().unwrap();
        assert_eq!(Some(bytes), storages[storage]["max_bytes"].as_i64());
        assert!(a.text().unwrap().contains("allocate"));
        // One bar per program that uses the storage, none longer than the allocation's.
        let needs: Vec<_> = class(&doc, "rect", "need");
        assert_eq!(
            needs.len(),
            storages[storage]["programs"].as_array().unwrap().len()
        );
    }
    // Programs without a workspace are named.
    let none: Vec<&str> = class(&doc, "text", "none")
        .iter()
        .map(|n| n.text().unwrap())
        .collect();
    assert_eq!(
        none.concat(),
        "no workspace: interpolate_vn_to_half_levels_and_compute_kinetic_energy_on_edges, \
         mo_math_divrot_rot_vertex_ri_dsl, nested_tuple_output"
    );
    // The whole corpus in one plan, without symbol values (formulas).
    let corpus: Vec<PathBuf> = programs()
        .into_iter()
        .filter(|(f, t, _)| f.starts_with("fixtures/corpus") && *t == Target::Cpp)
        .map(|(f, _, _)| f)
        .collect();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("corpus.svg");
    let run = sdfgc()
        .args(["plan", "--mode", "external", "--svg"])
        .arg(&file)
        .args(&corpus)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let named = class(&doc, "text", "program").len()
        + class(&doc, "text", "none")
            .iter()
            .map(|n| {
                let names = n.text().unwrap().trim_start_matches("no workspace:");
                names.split(',').filter(|x| !x.trim().is_empty()).count()
            })
            .sum::<usize>();
    assert_eq!(named, corpus.len());
}

#[test]
fn pictures_are_byte_identical_run_to_run() {
    let file = Path::new("fixtures/gt4py/icon4py/calculate_nabla4/cpu.sdfg");
    let symbols = case_symbols(&root().join(file.parent().unwrap()));
    let a = picture(file, Target::Cpp, &symbols);
    let b = picture(file, Target::Cpp, &symbols);
    assert_eq!(a, b);
    let files = gt4py_cpu();
    assert_eq!(plan_svg(&files).0, plan_svg(&files).0);
}

#[test]
fn names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a&b<\"c\">'.sdfg");
    std::fs::copy(
        root().join("fixtures/corpus/control_flow_regions/program.sdfg"),
        &file,
    )
    .unwrap();
    let svg = dir.path().join("out.svg");
    let out = sdfgc()
        .arg(&file)
        .args(["--mode", "external", "--symbol", "N=10", "--stats-svg"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let heading = class(&doc, "text", "program");
    assert!(heading[0].text().unwrap().contains("a&b<\"c\">'.sdfg"));
}

#[test]
fn per_file_symbols_size_each_program() {
    let files: Vec<(PathBuf, Symbols)> = ["jacobi_2d", "heat_3d"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            (
                PathBuf::from(format!("fixtures/corpus/{n}/program.sdfg")),
                [("N".to_string(), 16 << i)].into_iter().collect(),
            )
        })
        .collect();
    let (_, plan) = plan_svg(&files);
    for ((file, symbols), listed) in files
        .iter()
        .zip(plan["CPU_Heap"]["programs"].as_array().unwrap())
    {
        let report = stats_json(file, Target::Cpp, symbols);
        assert_eq!(
            listed["bytes_value"],
            report[0]["storages"]["CPU_Heap"]["packed_bytes"],
            "{}",
            file.display()
        );
    }
    // --symbol applies to every file, a file's own values win.
    let all = FileSymbols {
        all: [("N".to_string(), 8)].into_iter().collect(),
        per_file: [(files[0].0.clone(), files[0].1.clone())]
            .into_iter()
            .collect(),
    };
    assert_eq!(all.of(&files[0].0)["N"], 16);
    assert_eq!(all.of(&files[1].0)["N"], 8);
}

#[test]
fn a_real_renderer_draws_the_transients() {
    use resvg::{tiny_skia, usvg};
    let file = Path::new("fixtures/gt4py/icon4py/calculate_nabla4/cpu.sdfg");
    let svg = picture(
        file,
        Target::Cpp,
        &case_symbols(&root().join(file.parent().unwrap())),
    );
    let tree = usvg::Tree::from_str(&svg, &usvg::Options::default()).expect("resvg parses it");
    let size = tree.size().to_int_size();
    assert!(size.width() > 600 && size.height() > 300, "{size:?}");
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    // The centre of every transient rectangle has its fill colour (alpha
    // blending aside: not the white background, blue dominating).
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let rects = class(&doc, "rect", "transient");
    assert_eq!(rects.len(), 20);
    for r in rects {
        let x = (number(&r, "x") + number(&r, "width") / 2.0) as u32;
        let y = (number(&r, "y") + number(&r, "height") / 2.0) as u32;
        let p = pixmap.pixel(x, y).unwrap();
        assert!(
            p.blue() > p.red() && p.blue() > 150 && p.red() < 230,
            "pixel at {x},{y} of {:?} is {p:?}",
            r.attribute("data-name")
        );
    }
    let coloured = pixmap
        .pixels()
        .iter()
        .filter(|p| p.red() != 255 || p.green() != 255 || p.blue() != 255)
        .count();
    assert!(
        coloured * 10 > pixmap.pixels().len(),
        "{coloured} of {} pixels drawn",
        pixmap.pixels().len()
    );
}
