//! Compiles `lore/v1/*.proto` with protox (pure Rust, no system `protoc`) and
//! feeds the descriptor set to tonic-prost-build. The same descriptor set is
//! written to `OUT_DIR` so the server can serve it over gRPC reflection.

use std::path::PathBuf;

use prost::Message;

const PROTO_FILES: &[&str] = &[
    "lore/v1/common.proto",
    "lore/v1/knowledge.proto",
    "lore/v1/qa.proto",
    "lore/v1/actions.proto",
    "lore/v1/agent.proto",
    "lore/v1/sidecar.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // The crate directory is the include root: files live at lore/v1/*.proto.
    let proto_root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    for file in PROTO_FILES {
        println!("cargo:rerun-if-changed={}", proto_root.join(file).display());
    }

    // Source info keeps the doc comments: they become rustdoc on the generated
    // types and `grpcurl describe` shows them through reflection.
    let descriptor_set = protox::Compiler::new([&proto_root])?
        .include_source_info(true)
        .include_imports(true)
        .open_files(PROTO_FILES)?
        .file_descriptor_set();
    std::fs::write(out_dir.join("lore_descriptor.bin"), descriptor_set.encode_to_vec())?;

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // The sidecar serves agents a subset of the services on its local
        // socket; what it leaves out answers UNIMPLEMENTED through these
        // defaults. The server serves every method, which a test checks
        // (server/tests/api/auth.rs), since these defaults would let a
        // missing handler compile.
        .generate_default_stubs(true)
        // Bad requests are INVALID_ARGUMENT, not INTERNAL (see codec.rs).
        .codec_path("crate::codec::LoreCodec")
        .compile_fds(descriptor_set)?;
    Ok(())
}
