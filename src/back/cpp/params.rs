//! The ABI's parameter lists as the translation unit and the header spell
//! them.

use crate::passes::Program;
use crate::passes::abi::ParamKind;

/// The parameter and argument lists of the exported functions, in the
/// translation unit's spelling and in the header's.
pub(super) struct AbiLists {
    /// `__program_*`'s parameters after the state (`, double * __restrict__ a, ...`).
    pub program_params: String,
    /// The same in the header (C types).
    pub header_program_params: String,
    /// The arguments `__program_*` passes on (`, a, ...`).
    pub program_args: String,
    /// `__dace_init_*`'s parameters (`void` when none).
    pub init_params: String,
    /// The init parameters after another parameter (`, int64_t N, ...`).
    pub init_params_tail: String,
    /// The init arguments after another argument (`, N, ...`).
    pub init_args_tail: String,
    /// `(void)N;` for every init symbol: a workspace layout need not use them all.
    pub init_unused: String,
    /// `__dace_init_*`'s parameters in the header (`void` when none).
    pub header_init_params: String,
    /// The header's init parameters after another parameter.
    pub header_init_tail: String,
    /// A parameter is complex: the header needs its complex typedefs.
    pub header_complex: bool,
}

impl AbiLists {
    /// The lists of `p`'s ABI.
    pub fn of(p: &Program) -> AbiLists {
        let program_params: String = p
            .abi
            .program
            .iter()
            .map(|x| format!(", {}", x.c_decl(x.kind == ParamKind::Array)))
            .collect();
        let header_program_params: String = p
            .abi
            .program
            .iter()
            .map(|x| format!(", {}", x.header_decl()))
            .collect();
        let header_complex = p
            .abi
            .program
            .iter()
            .chain(&p.abi.init)
            .any(|x| x.dtype.is_complex());
        let program_args: String = p
            .abi
            .program
            .iter()
            .map(|x| format!(", {}", x.name))
            .collect();
        let init_list: Vec<String> = p.abi.init.iter().map(|x| x.c_decl(false)).collect();
        let init_params = if init_list.is_empty() {
            "void".to_string()
        } else {
            init_list.join(", ")
        };
        let header_init_list: Vec<String> = p.abi.init.iter().map(|x| x.header_decl()).collect();
        let header_init_params = if header_init_list.is_empty() {
            "void".to_string()
        } else {
            header_init_list.join(", ")
        };
        let header_init_tail: String = header_init_list.iter().map(|x| format!(", {x}")).collect();
        let init_params_tail: String = init_list.iter().map(|x| format!(", {x}")).collect();
        AbiLists {
            program_params,
            header_program_params,
            program_args,
            init_params,
            init_params_tail,
            init_args_tail: p.abi.init.iter().map(|x| format!(", {}", x.name)).collect(),
            init_unused: p
                .abi
                .init
                .iter()
                .map(|x| format!("(void){};", x.name))
                .collect::<Vec<_>>()
                .join(" "),
            header_init_params,
            header_init_tail,
            header_complex,
        }
    }
}
