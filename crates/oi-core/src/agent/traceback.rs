//! Python tracebacks told short, for small models: the frames inside
//! installed libraries (pandas' merge machinery, the standard library) are
//! folded into one line, leaving the lines of the model's own code and the
//! error itself. A pandas error is otherwise ten frames of library
//! internals that fill a small context and hide the one line that
//! matters; the user still sees the whole output.

/// [`compact`] for the output of each run, as the model will read it.
pub(super) fn compact_reports(reports: &mut [crate::harness::Report]) {
    for report in reports {
        if !report.language.is_empty() {
            report.text = compact(&report.text);
        }
    }
}

/// `output` with each run of library frames of a Python traceback folded
/// into one line; unchanged when it holds no traceback.
pub(super) fn compact(output: &str) -> String {
    if !output.contains("Traceback (most recent call last):") {
        return output.to_owned();
    }
    let mut out: Vec<String> = Vec::new();
    let mut lines = output.lines().peekable();
    let mut folded = 0usize;
    let flush = |out: &mut Vec<String>, folded: &mut usize| {
        if *folded > 0 {
            let frames = if *folded == 1 { "frame" } else { "frames" };
            out.push(format!("  [{folded} {frames} inside libraries]"));
            *folded = 0;
        }
    };
    while let Some(line) = lines.next() {
        if let Some(path) = frame_path(line) {
            // The frame's own lines: its source line and the ^^^ marks.
            let mut body = Vec::new();
            while let Some(next) = lines.peek() {
                if next.starts_with("    ") && frame_path(next).is_none() {
                    body.push(*next);
                    lines.next();
                } else {
                    break;
                }
            }
            if in_library(path) {
                folded += 1;
            } else {
                flush(&mut out, &mut folded);
                out.push(line.to_owned());
                out.extend(body.into_iter().map(str::to_owned));
            }
            continue;
        }
        flush(&mut out, &mut folded);
        out.push(line.to_owned());
    }
    flush(&mut out, &mut folded);
    let mut text = out.join("\n");
    if output.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The file of a traceback frame's first line (`  File "…", line 3, in f`).
fn frame_path(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("  File \"")?;
    let end = rest.find("\", line ")?;
    Some(&rest[..end])
}

fn in_library(path: &str) -> bool {
    path.contains("/site-packages/")
        || path.contains("/dist-packages/")
        || path.starts_with("<frozen ")
        || path.ends_with(".pyx")
        || path.contains("/lib/python3")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn library_frames_are_folded_and_the_code_and_error_kept() {
        let output = "\
Traceback (most recent call last):
  File \"<cell-1>\", line 8, in <module>
    merged = pd.merge(customers, payments, on='customer')
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File \"/home/u/.local/lib/python3.11/site-packages/pandas/core/reshape/merge.py\", line 391, in merge
    op = _MergeOperation(
         ^^^^^^^^^^^^^^^^
  File \"/home/u/.local/lib/python3.11/site-packages/pandas/core/generic.py\", line 1708, in _get_label_or_level_values
    raise KeyError(key)
KeyError: 'customer'
";
        assert_eq!(
            compact(output),
            "\
Traceback (most recent call last):
  File \"<cell-1>\", line 8, in <module>
    merged = pd.merge(customers, payments, on='customer')
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  [2 frames inside libraries]
KeyError: 'customer'
"
        );
    }

    #[test]
    fn frames_of_the_users_files_and_chained_errors_stay() {
        let output = "\
Traceback (most recent call last):
  File \"pandas/_libs/index.pyx\", line 167, in pandas._libs.index.IndexEngine.get_loc
KeyError: 'Region'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File \"/work/report.py\", line 3, in <module>
    print(df['Region'])
  File \"/usr/lib/python3.11/json/__init__.py\", line 293, in load
    return loads(fp.read(),
KeyError: 'Region'";
        assert_eq!(
            compact(output),
            "\
Traceback (most recent call last):
  [1 frame inside libraries]
KeyError: 'Region'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File \"/work/report.py\", line 3, in <module>
    print(df['Region'])
  [1 frame inside libraries]
KeyError: 'Region'"
        );
    }

    #[test]
    fn output_without_a_traceback_is_unchanged() {
        let output = "  File \"/usr/lib/python3.11/x.py\", line 1, in f\n    is only text here\n";
        assert_eq!(compact(output), output);
    }
}
