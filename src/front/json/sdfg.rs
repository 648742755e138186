//! SDFGs, their data descriptors and constants.

use super::*;

impl Reader {
    pub(super) fn enter(&mut self, path: &str) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error::unsupported(
                path,
                format!("nesting deeper than {MAX_NESTING} levels of SDFGs and regions"),
            ));
        }
        Ok(())
    }

    /// Reads an SDFG; with [`discard_read_subtrees`], every block, node and
    /// edge of its graphs is freed from the tree once read, so that the IR
    /// reuses the tree's memory instead of adding to it.
    pub(super) fn sdfg(&mut self, v: &mut Json, path: &str) -> Result<Sdfg> {
        self.enter(path)?;
        let t = type_of(v, path)?;
        if t != "SDFG" {
            return Err(Error::format(
                ptr(path, "type"),
                format!("expected an SDFG, found type '{t}'"),
            ));
        }
        let id = self.next_id;
        self.next_id += 1;
        let ap = ptr(path, "attributes");
        let version = v
            .get("dace_version")
            .and_then(|x| x.as_str())
            .map(str::to_string);
        // Tasklet code reads `math.f` as the DaCe version that saved the
        // SDFG computes it; a nested SDFG without a version is its parent's.
        let outer_math = self.dace2_math;
        if let Some(v) = &version {
            self.dace2_math = !(v.starts_with("1.") || v.starts_with("0."));
        }
        let av = v.get("attributes");
        let attrs: SdfgAttrsDto = dto(av, &ap)?;
        let name = attrs
            .name
            .clone()
            .ok_or_else(|| Error::format(&ap, "the SDFG has no 'name'"))?;
        if name.is_empty()
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(Error::invalid(
                ptr(&ap, "name"),
                format!("SDFG name '{name}' is not a C identifier"),
            ));
        }
        let arrp = ptr(&ap, "_arrays");
        let mut arrays = NameMap::default();
        let mut distributed = NameMap::default();
        let mut vectors = NameMap::default();
        let flat = structure::flatten(self, av, &arrp)?;
        for (k, d) in entries(av, "_arrays") {
            let p = ptr(&arrp, k);
            if matches!(type_of(d, &p)?, "Structure" | "StructureView" | "Tensor") {
                continue;
            }
            match distributed::descriptor(type_of(d, &p)?, d, &p)? {
                Some(x) => {
                    distributed.insert(k.to_string(), x);
                }
                None => {
                    let mut desc = self.data(d, &p, k)?;
                    let n = vector::container_veclen(d, &p)?;
                    if n > 1 {
                        vector::widen(&mut desc, n, k)?;
                        vectors.insert(k.to_string(), (desc.dtype, n));
                    }
                    arrays.insert(k.to_string(), desc);
                }
            }
        }
        for (k, d) in &flat.descs {
            arrays.insert(k.clone(), d.clone());
        }
        distributed.sort_keys();
        let symp = ptr(&ap, "symbols");
        let mut symbols = NameMap::default();
        let mut callbacks = NameMap::default();
        for (k, t) in entries(av, "symbols") {
            if is_callback_type(t) {
                callbacks.insert(
                    k.to_string(),
                    located(|p| callback_type(t, p), || ptr(&symp, k))?,
                );
            } else {
                symbols.insert(k.to_string(), located(|p| dtype(t, p), || ptr(&symp, k))?);
            }
        }
        let cp = ptr(&ap, "constants_prop");
        let mut constants = NameMap::default();
        for (k, c) in entries(av, "constants_prop") {
            constants.insert(k.to_string(), self.constant(c, &ptr(&cp, k))?);
        }
        // Names, not JSON key order, decide everything downstream (output
        // must not change when a tool reorders the keys of an object).
        arrays.sort_keys();
        symbols.sort_keys();
        callbacks.sort_keys();
        constants.sort_keys();
        let mut redistributions = redistributions(av, &ap)?;
        for (k, v) in distributed::redistributions(&distributed, &ap)? {
            redistributions.insert(k, v);
        }
        redistributions.sort_keys();
        let outer_callbacks =
            std::mem::replace(&mut self.callbacks, callbacks.keys().cloned().collect());
        structure::rewrite(&flat, v, path)?;
        let body = self.region(v, path, RegionKind::Plain);
        self.callbacks = outer_callbacks;
        let mut body = body?;
        vector::lower(&mut body, &vectors)?;
        distributed::attach(&mut body, &distributed)?;
        number_instruments(&mut body, id);
        self.depth -= 1;
        self.dace2_math = outer_math;
        Ok(Sdfg {
            id,
            name,
            arg_names: attrs.arg_names,
            arrays,
            symbols,
            callbacks,
            redistributions,
            assigned_types: NameMap::default(),
            constants,
            struct_types: flat.types,
            global_code: code_map(attrs.global_code, &ptr(&ap, "global_code"))?,
            init_code: code_map(attrs.init_code, &ptr(&ap, "init_code"))?,
            exit_code: code_map(attrs.exit_code, &ptr(&ap, "exit_code"))?,
            body,
            path: path.to_string(),
            dace_version: version.unwrap_or_default(),
        })
    }

    pub(super) fn data(&mut self, v: &Json, path: &str, name: &str) -> Result<DataDesc> {
        fn kind_is_container(t: &str) -> bool {
            matches!(t, "ContainerArray" | "ContainerView")
        }
        let t = type_of(v, path)?;
        let kind = match t {
            "Array" => DataKind::Array,
            "Scalar" => DataKind::Scalar,
            "View" | "ArrayView" => DataKind::View,
            "Stream" => DataKind::Stream,
            "ArrayReference" | "Reference" => DataKind::Reference,
            "ContainerArray" => DataKind::Array,
            "ContainerView" => DataKind::View,
            "Structure" | "StructureView" | "StructureReference" | "ContainerArrayReference" => {
                return Err(Error::unsupported(
                    path,
                    format!(
                        "data container '{name}' of type {t}{}",
                        if t == "Structure" {
                            " here (structures are supported as containers of an SDFG only)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            // A subclass of DaCe's `Array` (the JSON names the subclass; its
            // attributes are an array's): an array, as DaCe's generator
            // treats it through `isinstance`.
            _ if ["shape", "strides", "total_size", "dtype"]
                .iter()
                .all(|k| member(v.get("attributes"), k).is_some()) =>
            {
                DataKind::Array
            }
            other => {
                return Err(Error::format(
                    ptr(path, "type"),
                    format!("unknown data type '{other}'"),
                ));
            }
        };
        let ap = ptr(path, "attributes");
        let av = v.get("attributes");
        let a: DataAttrsDto = dto(av, &ap)?;
        let dt = if kind_is_container(t) {
            structure::container_dtype(v, path, name)?
        } else {
            match member(av, "dtype") {
                Some(d) => located(|p| vdtype(d, p), || ptr(&ap, "dtype"))?.0,
                None => DType::from_dace_name("int32").expect("int32 is a DaCe type"),
            }
        };
        let shape = match member(av, "shape") {
            Some(_) => sym_list(elements(av, "shape"), || ptr(&ap, "shape"))?,
            None => vec![Expr::Int(1)],
        };
        let rank = shape.len();
        let strides = match &a.strides {
            Some(_) => sym_list(elements(av, "strides"), || ptr(&ap, "strides"))?,
            None => row_major_strides(&shape),
        };
        let mut offset = match &a.offset {
            Some(_) => sym_list(elements(av, "offset"), || ptr(&ap, "offset"))?,
            None => vec![Expr::Int(0); rank],
        };
        // DaCe's GPU reduce expansion can leave a reshaped container with its
        // old offsets, all zero; DaCe's code pairs them with the dimensions
        // (the extra ones are never read), and so does sdfgc.
        if offset.len() > rank && offset[rank..].iter().all(|o| *o == Expr::Int(0)) {
            offset.truncate(rank);
        }
        if strides.len() != rank || offset.len() != rank {
            return Err(Error::invalid(
                &ap,
                format!(
                    "'{name}' has {rank} dimensions but {} strides and {} offsets",
                    strides.len(),
                    offset.len()
                ),
            ));
        }
        let total_size = match member(av, "total_size").filter(|t| !t.is_null()) {
            Some(t) => located(|p| sym(t, p), || ptr(&ap, "total_size"))?,
            None => shape
                .iter()
                .cloned()
                .reduce(|x, y| Expr::bin(BinaryOp::Mul, x, y))
                .unwrap_or(Expr::Int(1)),
        };
        let storage = Storage::from_dace_name(&a.storage).ok_or_else(|| {
            Error::unsupported(ptr(&ap, "storage"), format!("storage '{}'", a.storage))
        })?;
        let lifetime = Lifetime::from_dace_name(&a.lifetime).ok_or_else(|| {
            Error::unsupported(ptr(&ap, "lifetime"), format!("lifetime '{}'", a.lifetime))
        })?;
        if kind_is_container(t) {
            if storage.is_gpu() || !matches!(storage, Storage::Default | Storage::CpuHeap) {
                return Err(Error::unsupported(
                    ptr(&ap, "storage"),
                    format!(
                        "{t} '{name}' in storage {} (container arrays are CPU only)",
                        a.storage
                    ),
                ));
            }
            if kind == DataKind::Array && a.transient {
                return Err(Error::unsupported(
                    path,
                    format!("transient ContainerArray '{name}' (only arguments are supported)"),
                ));
            }
        }
        Ok(DataDesc {
            kind,
            dtype: dt,
            shape,
            strides,
            total_size,
            offset,
            start_offset: match member(av, "start_offset") {
                Some(x) => located(|p| sym(x, p), || ptr(&ap, "start_offset"))?,
                None => Expr::Int(0),
            },
            transient: a.transient,
            storage,
            lifetime,
            pool: a.pool,
            may_alias: a.may_alias,
            path: path.to_string(),
            member: None,
        })
    }

    pub(super) fn constant(&mut self, v: &Json, path: &str) -> Result<Constant> {
        let pair = v
            .as_array()
            .filter(|a| a.len() == 2)
            .ok_or_else(|| Error::format(path, "a constant must be [descriptor, value]"))?;
        let desc = self.data(&pair[0], &ptr(path, 0), "constant")?;
        if matches!(desc.dtype, DType::Pointer(_)) {
            return Err(Error::unsupported(path, "a constant container array"));
        }
        if vector::container_veclen(&pair[0], &ptr(path, 0))? > 1 {
            return Err(Error::unsupported(path, "a constant of vector type"));
        }
        let vp = ptr(path, 1);
        let complex = desc.dtype.is_complex();
        let (values, shape) = match &pair[1] {
            Json::Object(o) => {
                let data = o
                    .get("data")
                    .ok_or_else(|| Error::format(&vp, "ndarray without 'data'"))?;
                let mut flat = Vec::new();
                let mut shape = Vec::new();
                flatten(data, &mut flat, &mut shape, 0, &ptr(&vp, "data"), complex)?;
                (flat, shape)
            }
            scalar => (vec![element_value(scalar, &vp, complex)?], Vec::new()),
        };
        let (values, imag): (Vec<ConstValue>, Vec<f64>) = values.into_iter().unzip();
        for (i, v) in values.iter().enumerate() {
            check_constant_value(*v, desc.dtype).map_err(|m| {
                let at = if shape.is_empty() {
                    vp.clone()
                } else {
                    format!("{vp}/data (element {i})")
                };
                Error::invalid(at, m)
            })?;
        }
        Ok(Constant {
            dtype: desc.dtype,
            shape,
            values,
            imag: if complex { imag } else { Vec::new() },
        })
    }
}

pub(super) fn row_major_strides(shape: &[Expr]) -> Vec<Expr> {
    let mut strides = vec![Expr::Int(1); shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = Expr::bin(BinaryOp::Mul, strides[i + 1].clone(), shape[i + 1].clone());
    }
    strides
}

/// `_rdistrarrays`: each redistribution's input and output process grids,
/// through its subarrays (`_subarrays`).
fn redistributions(av: Option<&Json>, ap: &str) -> Result<NameMap<(String, String)>> {
    let text = |v: &Json, k: &str| -> Option<String> {
        v.get("attributes")
            .and_then(|a| a.get(k))
            .and_then(Json::as_str)
            .map(str::to_string)
    };
    let mut out = NameMap::default();
    for (name, r) in entries(av, "_rdistrarrays") {
        let path = ptr(&ptr(ap, "_rdistrarrays"), name);
        let mut grids = Vec::new();
        for side in ["array_a", "array_b"] {
            let grid = text(r, side).and_then(|sa| {
                entries(av, "_subarrays")
                    .find(|(k, _)| *k == sa)
                    .and_then(|(_, v)| text(v, "pgrid"))
            });
            grids.push(grid.ok_or_else(|| {
                Error::format(
                    &path,
                    format!("redistribution '{name}': its {side} names no subarray with a process grid in '_subarrays'"),
                )
            })?);
        }
        out.insert(name.to_string(), (grids[0].clone(), grids[1].clone()));
    }
    out.sort_keys();
    Ok(out)
}

/// Gives every instrumented access node and state of `r` (and of the
/// regions inside it, not of nested SDFGs) DaCe's file stem: the state's
/// position in its region, and for an access node `<cfg id>_<state>_<node>`.
fn number_instruments(r: &mut Region, cfg_id: u32) {
    for (i, b) in r.blocks.iter_mut().enumerate() {
        match &mut b.kind {
            BlockKind::State(st) => {
                if let Some(x) = &mut st.symbol_instrument {
                    x.uuid = i.to_string();
                }
                for (n, node) in st.nodes.iter_mut().enumerate() {
                    if let NodeKind::Access(a) = &mut node.kind
                        && let Some(x) = &mut a.instrument
                    {
                        x.uuid = format!("{cfg_id}_{i}_{n}");
                    }
                }
            }
            BlockKind::Region(inner) => number_instruments(inner, cfg_id),
            BlockKind::Conditional(branches) => {
                for (_, inner) in branches {
                    number_instruments(inner, cfg_id);
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}
