// Reads the versions Cargo.lock resolved (the installed artifacts) into
// LOCKED_<NAME>_VERSION, e.g. env!("LOCKED_RSLOCK_VERSION"), for hello.
fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").expect("Cargo.lock");
    let mut name = String::new();
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = n.trim_matches('"').to_string();
        } else if let Some(v) = line.strip_prefix("version = ") {
            let var = format!("LOCKED_{}_VERSION", name.to_uppercase().replace('-', "_"));
            println!("cargo:rustc-env={}={}", var, v.trim_matches('"'));
        }
    }
}
