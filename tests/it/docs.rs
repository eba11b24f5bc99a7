//! The README's limits table matches the code.

use toolhost::Limits;

/// The rows of the README's limits table: key, applies to, default, most accepted.
fn readme_limit_rows() -> Vec<(String, String, u64, u64)> {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("| key | applies to | default | most accepted | bounds |")
        .expect("the README has the limits table");
    readme[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let number = |cell: &str| {
                cell.parse::<u64>()
                    .unwrap_or_else(|_| panic!("not a number: {cell} in {line}"))
            };
            (
                cells[1].trim_matches('`').to_string(),
                cells[2].to_string(),
                number(cells[3]),
                number(cells[4]),
            )
        })
        .collect()
}

#[test]
fn readme_limits_table_matches_the_code() {
    let rows = readme_limit_rows();
    assert_eq!(rows.len(), Limits::SPECS.len(), "one row per limit");
    for (row, spec) in rows.iter().zip(Limits::SPECS) {
        assert_eq!(
            row,
            &(
                spec.key.to_string(),
                spec.applies.as_str().to_string(),
                spec.default,
                spec.max
            )
        );
    }
}
