// sqlx::migrate! embeds migrations/ at compile time: rebuild when a file
// there is added or changed, not only when Rust sources change.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
