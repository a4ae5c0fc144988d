//! What `ksim check` says about a kernel that loads: one line, the same for every caller.

use crate::cl::lower::KernelInfo;
use crate::core::Kernel;

/// "kernel `k` is well-typed and generic in T (parameters: n)".
pub fn kernel(k: &Kernel) -> String {
    let params: Vec<_> = k.params.iter().map(|p| p.name.as_str()).collect();
    format!(
        "kernel `{}` is well-typed{} (parameters: {})",
        k.name,
        if k.generic { " and generic in T" } else { "" },
        if params.is_empty() {
            "none".into()
        } else {
            params.join(", ")
        }
    )
}

/// "OpenCL kernel `k` lowers to the core and is well-typed (launch needs: --input a=SPEC:N
/// --arg x=VALUE)": the flags a `ksim run` of it needs beyond the NDRange.
pub fn opencl(info: &KernelInfo) -> String {
    let mut needs: Vec<String> = (info.buffers.iter())
        .map(|b| format!("--input {}=SPEC:N", b.name))
        .collect();
    needs.extend(info.images.iter().map(|i| {
        let size = ["W", "WxH", "WxHxD"][i.dims.len() - 1];
        format!("--input {}={size}:SPEC", i.name)
    }));
    needs.extend(info.scalars.iter().map(|s| {
        let what = if info.samplers.contains(&s.name) {
            "SAMPLER"
        } else {
            "VALUE"
        };
        format!("--arg {}={what}", s.name)
    }));
    format!(
        "OpenCL kernel `{}` lowers to the core and is well-typed (launch needs: {})",
        info.name,
        if needs.is_empty() {
            "--global/--local only".to_string()
        } else {
            needs.join(" ")
        }
    )
}
