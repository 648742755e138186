//! Attribute bags of each element as serde DTOs; their `Default`s are
//! DaCe's defaults (DaCe omits every property equal to its default).

use super::*;

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct CodeDto {
    pub(super) string_data: String,
    pub(super) language: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct SdfgAttrsDto {
    pub(super) name: Option<String>,
    pub(super) arg_names: Vec<String>,
    pub(super) _arrays: AnyMap,
    pub(super) symbols: AnyMap,
    pub(super) constants_prop: AnyMap,
    pub(super) global_code: IndexMap<String, CodeDto>,
    pub(super) init_code: IndexMap<String, CodeDto>,
    pub(super) exit_code: IndexMap<String, CodeDto>,
}

/// Also read by reference: `dtype` (default "int32"), `shape` (default
/// `["1"]`), `strides`, `total_size`, `offset`, `start_offset` (default 0).
#[derive(Deserialize)]
#[serde(default)]
pub(super) struct DataAttrsDto {
    pub(super) shape: AnySeq,
    pub(super) strides: Option<AnySeq>,
    pub(super) offset: Option<AnySeq>,
    pub(super) transient: bool,
    pub(super) storage: String,
    pub(super) lifetime: String,
    pub(super) pool: bool,
    pub(super) may_alias: bool,
}

impl Default for DataAttrsDto {
    fn default() -> Self {
        DataAttrsDto {
            shape: AnySeq,
            strides: None,
            offset: None,
            transient: false,
            storage: "Default".into(),
            lifetime: "Scope".into(),
            pool: false,
            may_alias: false,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct LoopAttrsDto {
    pub(super) loop_variable: Option<String>,
    pub(super) init_statement: Option<CodeDto>,
    pub(super) loop_condition: Option<CodeDto>,
    pub(super) update_statement: Option<CodeDto>,
    pub(super) inverted: bool,
    pub(super) update_before_condition: Option<bool>,
}

/// Also read by reference: `assignments`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct InterstateDto {
    pub(super) condition: Option<CodeDto>,
    pub(super) assignments: AnyMap,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct AccessDto {
    pub(super) data: Option<String>,
    pub(super) setzero: bool,
    pub(super) instrument: Option<String>,
    pub(super) instrument_condition: Option<CodeDto>,
}

/// A state's own attributes that sdfgc reads (its nodes and edges are read apart).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct StateAttrsDto {
    pub(super) symbol_instrument: Option<String>,
    pub(super) symbol_instrument_condition: Option<CodeDto>,
}

/// Also read by reference: `range`, `gpu_block_size`.
#[derive(Deserialize)]
#[serde(default)]
pub(super) struct MapDto {
    pub(super) label: String,
    pub(super) params: Vec<String>,
    pub(super) schedule: String,
    pub(super) collapse: i64,
    pub(super) gpu_block_size: Option<AnySeq>,
    pub(super) omp_num_threads: i64,
    pub(super) unroll: bool,
}

impl Default for MapDto {
    fn default() -> Self {
        MapDto {
            label: String::new(),
            params: Vec::new(),
            schedule: "Default".into(),
            collapse: 1,
            gpu_block_size: None,
            omp_num_threads: 0,
            unroll: false,
        }
    }
}

/// `ConsumeEntry` attributes (DaCe's `Consume`).
#[derive(Deserialize)]
#[serde(default)]
pub(super) struct ConsumeDto {
    pub(super) label: String,
    pub(super) pe_index: String,
    pub(super) schedule: String,
    pub(super) chunksize: i64,
    pub(super) condition: Option<CodeDto>,
}

impl Default for ConsumeDto {
    fn default() -> Self {
        ConsumeDto {
            label: String::new(),
            pe_index: String::new(),
            schedule: "Default".into(),
            chunksize: 1,
            condition: None,
        }
    }
}

/// Also read by reference: the connectors.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct TaskletDto {
    pub(super) code: Option<CodeDto>,
    pub(super) code_global: Option<CodeDto>,
    pub(super) code_init: Option<CodeDto>,
    pub(super) code_exit: Option<CodeDto>,
    pub(super) side_effects: Option<bool>,
    pub(super) in_connectors: AnyMap,
    pub(super) out_connectors: AnyMap,
    pub(super) environments: Vec<String>,
    pub(super) state_fields: Option<Vec<String>>,
}

/// Also read by reference: `sdfg` (the nested SDFG), `symbol_mapping`, the connectors.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct NestedDto {
    pub(super) symbol_mapping: AnyMap,
    pub(super) in_connectors: AnyMap,
    pub(super) out_connectors: AnyMap,
    pub(super) schedule: Option<String>,
}

/// Also read by reference: `identity`, `alpha`, `beta`, the connectors.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct LibraryDto {
    pub(super) name: String,
    pub(super) axes: Option<Vec<i64>>,
    pub(super) wcr: Option<String>,
    pub(super) schedule: Option<String>,
    pub(super) in_connectors: AnyMap,
    pub(super) out_connectors: AnyMap,
}

/// Also read by reference: `subset`, `other_subset`, `volume`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct MemletDto {
    pub(super) data: Option<String>,
    pub(super) wcr: Option<String>,
    pub(super) dynamic: bool,
    pub(super) is_data_src: Option<bool>,
}
