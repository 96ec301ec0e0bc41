// Build script: lets napi-build set the linker arguments a Node addon needs (undefined Node-API symbols
// resolved by the node binary at load time).
fn main() {
    napi_build::setup();
}
