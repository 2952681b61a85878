//! The Python package (`python/interpreter`): its pytest suite runs
//! against this test's mock model server, with the `interpreter` binary
//! built here, in the test's own home. One test per item of the API lives
//! in `python/tests`; this runs them all and shows pytest's report when
//! one fails.

use crate::support::{TestEnv, run_command};

#[tokio::test]
async fn the_python_package_passes_its_pytest_suite() {
    let Some(python) = oi_testkit::pip_package("pytest", "pytest") else {
        return;
    };
    let env = TestEnv::new().await;
    let package = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python");
    let tests = format!("{package}/tests");
    let mut cmd = env.program(
        &python,
        &[
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            &tests,
            &tests,
        ],
    );
    cmd.env("OI_BINARY", env!("CARGO_BIN_EXE_interpreter"))
        .env("OI_MOCK_URL", env.server.base_url())
        .env("PYTHONPATH", package)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = run_command(cmd, None).await;
    assert_eq!(
        out.code, 0,
        "pytest failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    assert!(out.stdout.contains(" passed"), "{}", out.stdout);
    assert!(!out.stdout.contains("skipped"), "{}", out.stdout);
}
