//! Dataflow nodes: access nodes, maps, tasklets, nested SDFGs and library nodes.

use super::*;

impl Reader {
    pub(super) fn node(&mut self, v: &mut Json, path: &str, ids: &Ids) -> Result<Node> {
        let t = type_of(v, path)?;
        let ap = ptr(path, "attributes");
        let attrs = v.get("attributes");
        let kind = match t {
            "AccessNode" => {
                let a: AccessDto = dto(attrs, &ap)?;
                let data = a
                    .data
                    .ok_or_else(|| Error::format(&ap, "access node without 'data'"))?;
                let instrument = data_instrument(
                    a.instrument.as_deref(),
                    a.instrument_condition,
                    &ap,
                    "instrument",
                )?;
                NodeKind::Access(AccessNode {
                    data,
                    setzero: a.setzero,
                    instrument,
                })
            }
            "MapEntry" => {
                let a: MapDto = dto(attrs, &ap)?;
                let range = match member(attrs, "range") {
                    Some(r) => subset(r, &|| ptr(&ap, "range"))?.unwrap_or_default(),
                    None => Vec::new(),
                };
                if range.len() != a.params.len() {
                    return Err(Error::invalid(
                        &ap,
                        format!(
                            "map '{}' has {} parameters but {} ranges",
                            a.label,
                            a.params.len(),
                            range.len()
                        ),
                    ));
                }
                let exit = NodeId(lookup(
                    ids,
                    v.get("scope_exit"),
                    || ptr(path, "scope_exit"),
                    "map exit",
                )?);
                let gpu_block_size = match &a.gpu_block_size {
                    None => None,
                    Some(_) => Some(
                        elements(attrs, "gpu_block_size")
                            .iter()
                            .enumerate()
                            .map(|(i, x)| {
                                let p = ptr(&ptr(&ap, "gpu_block_size"), i);
                                match sym(x, &p)? {
                                    Expr::Int(n) if n > 0 => Ok(n),
                                    _ => Err(Error::unsupported(
                                        p,
                                        "a GPU block size that is not a positive integer",
                                    )),
                                }
                            })
                            .collect::<Result<Vec<i64>>>()?,
                    ),
                };
                // Input connectors not named `IN_*` are dynamic map inputs
                // (values the range and the scope read by name).
                // (The types of the `IN_*` connectors are not read: nothing uses them.)
                let mut dynamic_inputs = NameMap::default();
                for (k, c) in entries(attrs, "in_connectors") {
                    if MapEntry::is_dynamic_connector(k) {
                        let t =
                            located(|p| conn_type(c, p), || ptr(&ptr(&ap, "in_connectors"), k))?;
                        dynamic_inputs.insert(k.to_string(), t);
                    }
                }
                dynamic_inputs.sort_keys();
                NodeKind::MapEntry(MapEntry {
                    dynamic_inputs,
                    label: a.label,
                    params: a.params,
                    range,
                    schedule: schedule(Some(&a.schedule), &ptr(&ap, "schedule"))?,
                    collapse: a.collapse,
                    gpu_block_size,
                    omp_num_threads: a.omp_num_threads,
                    unroll: a.unroll,
                    exit,
                    consume: None,
                })
            }
            "MapExit" => {
                let entry = NodeId(lookup(
                    ids,
                    v.get("scope_entry"),
                    || ptr(path, "scope_entry"),
                    "map entry",
                )?);
                NodeKind::MapExit { entry }
            }
            "Tasklet" => NodeKind::Tasklet(self.tasklet(attrs, &ap, &label_of(v))?),
            "NestedSDFG" => {
                let a: NestedDto = dto(attrs, &ap)?;
                let sp = ptr(&ap, "sdfg");
                let inner = v
                    .get_mut("attributes")
                    .and_then(|x| x.get_mut("sdfg"))
                    .filter(|x| !x.is_null())
                    .ok_or_else(|| Error::format(&ap, "nested SDFG node without 'sdfg'"))?;
                let mut sdfg = self.sdfg(inner, &sp)?;
                let attrs = v.get("attributes");
                // DaCe's expansions into a nested SDFG put their library
                // environment on the nested node (cuSPARSE's SpMV with copies).
                let envs: Vec<String> = attrs
                    .and_then(|a| a.get("environments"))
                    .and_then(|e| e.as_array())
                    .map(|e| {
                        e.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                crate::back::gpu::libs::inherit(&mut sdfg, &envs);
                let mp = ptr(&ap, "symbol_mapping");
                let mut symbol_mapping: NameMap<Expr> = NameMap::default();
                for (k, e) in entries(attrs, "symbol_mapping") {
                    symbol_mapping.insert(k.to_string(), sym(e, &ptr(&mp, k))?);
                }
                symbol_mapping.sort_keys();
                NodeKind::Nested(NestedSdfg {
                    sdfg: Box::new(sdfg),
                    symbol_mapping,
                    inputs: connectors(attrs, "in_connectors", &ap)?,
                    outputs: connectors(attrs, "out_connectors", &ap)?,
                    schedule: schedule(a.schedule.as_deref(), &ptr(&ap, "schedule"))?,
                    used_symbols: Default::default(),
                })
            }
            "LibraryNode" => NodeKind::Library(self.library(v, path)?),
            "ConsumeEntry" => self.consume_entry(v, path, ids)?,
            "ConsumeExit" => {
                let entry = NodeId(lookup(
                    ids,
                    v.get("scope_entry"),
                    || ptr(path, "scope_entry"),
                    "consume entry",
                )?);
                NodeKind::MapExit { entry }
            }
            "PipelineEntry" | "PipelineExit" => {
                return Err(Error::unsupported(
                    ptr(path, "type"),
                    format!("dataflow node type '{t}'"),
                ));
            }
            other => {
                return Err(Error::unsupported(
                    ptr(path, "type"),
                    format!("dataflow node type '{other}'"),
                ));
            }
        };
        Ok(Node {
            label: label_of(v),
            scope: None,
            kind,
            path: path.to_string(),
        })
    }

    /// A `ConsumeEntry`, as a [`MapEntry`] over its processing elements
    /// (`pe_index` in `0:num_pes`) with the consume's own attributes.
    fn consume_entry(&mut self, v: &Json, path: &str, ids: &Ids) -> Result<NodeKind> {
        let ap = ptr(path, "attributes");
        let attrs = v.get("attributes");
        let a: ConsumeDto = dto(attrs, &ap)?;
        if a.pe_index.is_empty() {
            return Err(Error::format(&ap, "consume entry without 'pe_index'"));
        }
        let num_pes = match member(attrs, "num_pes") {
            Some(n) => located(|p| sym(n, p), || ptr(&ap, "num_pes"))?,
            None => Expr::Int(1),
        };
        let exit = NodeId(lookup(
            ids,
            v.get("scope_exit"),
            || ptr(path, "scope_exit"),
            "consume exit",
        )?);
        let condition = match a.condition {
            Some(c) if !c.string_data.trim().is_empty() => Some(code_block(
                Some(c),
                Language::Python,
                &ptr(&ap, "condition"),
                &|| format!("the condition of consume '{}'", a.label),
            )?),
            _ => None,
        };
        Ok(NodeKind::MapEntry(MapEntry {
            label: a.label,
            params: vec![a.pe_index],
            range: vec![RangeDim {
                start: Expr::Int(0),
                end: Expr::bin(BinaryOp::Sub, num_pes.clone(), Expr::Int(1)),
                step: Expr::Int(1),
                tile: Expr::Int(1),
            }],
            schedule: schedule(Some(&a.schedule), &ptr(&ap, "schedule"))?,
            collapse: 1,
            gpu_block_size: None,
            omp_num_threads: 0,
            unroll: false,
            exit,
            consume: Some(Consume {
                num_pes,
                chunksize: a.chunksize,
                condition,
            }),
            dynamic_inputs: NameMap::default(),
        }))
    }

    pub(super) fn tasklet(
        &mut self,
        attrs: Option<&Json>,
        ap: &str,
        label: &str,
    ) -> Result<Tasklet> {
        let a: TaskletDto = dto(attrs, ap)?;
        let what = |part: &'static str| move || format!("{part} of tasklet '{label}'");
        let code = code_block(
            a.code,
            Language::Python,
            &ptr(ap, "code"),
            &what("the code"),
        )?;
        let stmts = match code.language {
            Language::Python => python::parse_tasklet_calling(
                &code.code,
                &self.callbacks,
                if self.dace2_math {
                    python::MathRuntime::Dace2
                } else {
                    python::MathRuntime::Dace1
                },
            )
            .map_err(|e| py_err(e, &ptr(ap, "code"), &format!("tasklet '{label}'")))?,
            Language::Cpp => Vec::new(),
        };
        let callback = a.side_effects == Some(true);
        let side_effects = a.side_effects.unwrap_or(code.language == Language::Cpp);
        Ok(Tasklet {
            environments: a.environments,
            state_fields: a.state_fields.unwrap_or_default(),
            code,
            stmts,
            code_global: code_block(
                a.code_global,
                Language::Cpp,
                &ptr(ap, "code_global"),
                &what("the global code"),
            )?,
            code_init: code_block(
                a.code_init,
                Language::Cpp,
                &ptr(ap, "code_init"),
                &what("the init code"),
            )?,
            code_exit: code_block(
                a.code_exit,
                Language::Cpp,
                &ptr(ap, "code_exit"),
                &what("the exit code"),
            )?,
            side_effects,
            callback,
            inputs: connectors(attrs, "in_connectors", ap)?,
            outputs: connectors(attrs, "out_connectors", ap)?,
        })
    }

    pub(super) fn library(&mut self, v: &Json, path: &str) -> Result<LibraryNode> {
        let classpath = get(v, "classpath", path)?
            .as_str()
            .ok_or_else(|| Error::format(ptr(path, "classpath"), "'classpath' must be a string"))?
            .to_string();
        let ap = ptr(path, "attributes");
        let attrs = v.get("attributes");
        let a: LibraryDto = dto(attrs, &ap)?;
        let class = classpath.rsplit('.').next().unwrap_or("");
        let opt = |k: &str| -> Result<Option<Expr>> {
            match member(attrs, k) {
                None | Some(Json::Null) => Ok(None),
                Some(x) => sym(x, &ptr(&ap, k)).map(Some),
            }
        };
        let flag = |k: &str| matches!(member(attrs, k), Some(Json::Bool(true)));
        let mpi = classpath.contains("libraries.mpi.nodes.");
        let text = |k: &str| -> Option<String> {
            member(attrs, k).and_then(Json::as_str).map(str::to_string)
        };
        let kind = match class {
            _ if mpi => {
                let Some(call) = MpiCall::from_class(class) else {
                    return Err(Error::unsupported(
                        ptr(path, "classpath"),
                        format!(
                            "MPI library node '{}' ({classpath}): not implemented",
                            label_of(v)
                        ),
                    ));
                };
                let fields = match member(attrs, "fields") {
                    Some(Json::Array(xs)) => xs
                        .iter()
                        .map(|x| x.as_str().unwrap_or_default().to_string())
                        .collect(),
                    _ => Vec::new(),
                };
                let names = [
                    "subarray_type",
                    "scatter_grid",
                    "bcast_grid",
                    "gather_grid",
                    "reduce_grid",
                    "redistr",
                ]
                .into_iter()
                .filter_map(|k| text(k).map(|v| (k.to_string(), v)))
                .collect();
                LibraryKind::Mpi {
                    call,
                    op: text("op"),
                    grid: text("grid"),
                    fcomm: text("fcomm"),
                    fields,
                    names,
                    descriptors: false,
                }
            }
            "Reduce" => {
                let w = a
                    .wcr
                    .as_deref()
                    .ok_or_else(|| Error::format(&ap, "Reduce without 'wcr'"))?;
                LibraryKind::Reduce {
                    axes: a.axes.clone(),
                    wcr: parse_wcr(w, &ptr(&ap, "wcr"))?,
                    identity: opt("identity")?,
                    block: text("implementation").as_deref() == Some("CUDA (block)"),
                }
            }
            "MatMul" => LibraryKind::MatMul {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
            },
            "Dot" => LibraryKind::Dot,
            "Gemv" => LibraryKind::Gemv {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
                trans_a: flag("transA"),
            },
            "Gemm" => LibraryKind::Gemm {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
                trans_a: flag("transA"),
                trans_b: flag("transB"),
            },
            "Ger" => LibraryKind::Ger {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
            },
            "Axpy" => LibraryKind::Axpy {
                a: opt("a")?.unwrap_or_else(|| Expr::sym("a")),
            },
            "Transpose" => LibraryKind::Transpose,
            "TensorTranspose" => LibraryKind::TensorTranspose {
                axes: a.axes.clone().unwrap_or_default(),
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
            },
            "BatchedMatMul" => LibraryKind::BatchedMatMul {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
            },
            "Einsum" => LibraryKind::Einsum {
                spec: text("einsum_str").unwrap_or_default(),
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
            },
            "TensorDot" => {
                let axes = |k: &str| -> Result<Option<Vec<i64>>> {
                    match member(attrs, k) {
                        None | Some(Json::Null) => Ok(None),
                        Some(Json::Array(xs)) => xs
                            .iter()
                            .map(|x| {
                                let n = match x {
                                    Json::Number(n) => n.as_i64(),
                                    _ => None,
                                };
                                n.ok_or_else(|| {
                                    Error::format(ptr(&ap, k), format!("'{k}' must list integers"))
                                })
                            })
                            .collect::<Result<Vec<i64>>>()
                            .map(Some),
                        Some(_) => Err(Error::format(ptr(&ap, k), format!("'{k}' must be a list"))),
                    }
                };
                LibraryKind::TensorDot {
                    left_axes: axes("left_axes")?.unwrap_or_default(),
                    right_axes: axes("right_axes")?.unwrap_or_default(),
                    permutation: axes("permutation")?,
                }
            }
            "Getrf" | "Getrs" | "Potrf" | "Cholesky" | "Solve" | "Inv"
                if (classpath.contains("libraries.lapack.")
                    || classpath.contains("libraries.linalg."))
                    && text("implementation").as_deref() == Some("cuSolverDn") =>
            {
                LibraryKind::Solver {
                    op: match class {
                        "Getrf" => SolverOp::Getrf,
                        "Getrs" => SolverOp::Getrs,
                        "Potrf" => SolverOp::Potrf,
                        "Cholesky" => SolverOp::Cholesky,
                        "Inv" => SolverOp::Inv,
                        _ => SolverOp::Solve,
                    },
                    lower: !matches!(member(attrs, "lower"), Some(Json::Bool(false))),
                }
            }
            "FFT" | "IFFT" if classpath.contains("libraries.fft.") => LibraryKind::Fft {
                inverse: class == "IFFT",
                factor: opt("factor")?.unwrap_or(Expr::Int(1)),
            },
            "ReduceWithSkipValues" => {
                let required = |k: &str| -> Result<Expr> {
                    opt(k)?.ok_or_else(|| {
                        Error::unsupported(
                            ptr(&ap, k),
                            format!("ReduceWithSkipValues without '{k}'"),
                        )
                    })
                };
                let conn = |k: &str| -> Result<String> {
                    member(attrs, k)
                        .and_then(Json::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| {
                            Error::format(ptr(&ap, k), format!("'{k}' must be a string"))
                        })
                };
                let w = a.wcr.as_deref().ok_or_else(|| {
                    Error::unsupported(ptr(&ap, "wcr"), "ReduceWithSkipValues without 'wcr'")
                })?;
                LibraryKind::ReduceWithSkipValues {
                    wcr: parse_wcr(w, &ptr(&ap, "wcr"))?,
                    identity: required("identity")?,
                    init: required("init")?,
                    input_conn: conn("input_conn")?,
                    output_conn: conn("output_conn")?,
                    mask_conn: conn("mask_conn")?,
                }
            }
            _ => {
                return Err(Error::unsupported(
                    ptr(path, "classpath"),
                    format!("library node '{}' ({classpath})", label_of(v)),
                ));
            }
        };
        Ok(LibraryNode {
            name: a.name.clone(),
            classpath,
            kind,
            inputs: entries(attrs, "in_connectors")
                .map(|(k, _)| k.to_string())
                .collect(),
            outputs: entries(attrs, "out_connectors")
                .map(|(k, _)| k.to_string())
                .collect(),
            schedule: schedule(a.schedule.as_deref(), &ptr(&ap, "schedule"))?,
        })
    }
}
